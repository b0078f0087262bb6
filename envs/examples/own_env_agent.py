"""A scripted agent that solves the refund desk of `own_env.py`, faults included.

It reads only what any agent sees (the user's messages, tool results): it asks for the e-mail
address and the amount, finds the order, asks to confirm, refunds, and reads the order again when
the refund names an order that does not exist (a corrupted id). Around it, agentgym's own careful
layer retries a call that failed for a passing reason (`agentgym.agents.careful.RetryTransient`).

    agentgym eval own_env:MyOrg/Shop-v0 --agent own_env_agent:RefundAgent --noise medium   # in envs/examples/
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentgym.agents.base import Agent, call
from agentgym.agents.careful import RetryTransient

__all__ = ["RefundAgent", "RefundPolicy"]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"(?<![\w@.-])\d+(?:\.\d+)?(?![\w@-])")


class RefundPolicy:
    """The refund desk's steps, knowing nothing of faults but a refund of an unknown order."""

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self.email: str | None = None
        self.amount: float | None = None
        self.order_id: str | None = None
        self.confirmed = self.refunded = False
        self._read(info)

    def _read(self, info: dict[str, Any]) -> None:
        for m in info.get("messages", ()):
            text = str(m.get("content", ""))
            if m.get("role") == "user" and not text.startswith("[error"):
                emails = _EMAIL.findall(text)
                self.email = emails[-1] if emails else self.email
                numbers = _NUMBER.findall(_EMAIL.sub(" ", text))
                self.amount = float(numbers[-1]) if numbers else self.amount
            elif m.get("role") == "tool" and m.get("name") == "find_order" and not text.startswith("[error"):
                self.order_id = json.loads(text).get("order_id")
            elif m.get("role") == "tool" and m.get("name") == "refund":
                if text.startswith("[error") and "no order" in text:
                    self.order_id, self.refunded = None, False  # the id was wrong: read the order again

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._read(info)
        if self.email is None or self.amount is None:
            return "What is your e-mail address, and how much should I refund?"
        if self.order_id is None:
            return call("find_order", email=self.email)
        if not self.confirmed:
            self.confirmed = True
            return f"Shall I go ahead and refund {self.amount:g} euros on order {self.order_id}?"
        if not self.refunded:
            self.refunded = True
            return call("refund", order_id=self.order_id, amount=self.amount)
        return "Is there anything else I can help with?"


class RefundAgent(Agent):
    """`RefundPolicy` inside agentgym's retry layer."""

    name = "refund-desk"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._policy = RetryTransient(RefundPolicy())
        self._policy.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self._policy.act(obs, info)
