"""A scripted agent that solves the library desk of `library_desk.py`, faults included.

It reads only what any agent sees: it asks for the card number and the weeks, finds the loan,
asks to confirm, renews, and finds the loan again when the renewal names a loan that does not
exist (a corrupted id); agentgym's retry layer (`RetryTransient`) retries passing failures.

    agentgym eval library_desk:MyOrg/Library-v0 --agent library_desk_agent:LibraryAgent   # in envs/examples/
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentgym.agents.base import Agent, call
from agentgym.agents.careful import RetryTransient

__all__ = ["LibraryAgent", "LibraryPolicy"]

_CARD = re.compile(r"\bLC-\d+\b")
_WEEKS = re.compile(r"\b(\d+) (?:more )?weeks?\b")


class LibraryPolicy:
    """The desk's steps, knowing nothing of faults but a renewal of an unknown loan."""

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self.card: str | None = None
        self.weeks: int | None = None
        self.loan_id: str | None = None
        self.confirmed = self.renewed = False
        self._read(info)

    def _read(self, info: dict[str, Any]) -> None:
        for m in info.get("messages", ()):
            text = str(m.get("content", ""))
            if m.get("role") == "user" and not text.startswith("[error"):
                cards, weeks = _CARD.findall(text), _WEEKS.findall(text)
                self.card = cards[-1] if cards else self.card
                self.weeks = int(weeks[-1]) if weeks else self.weeks
            elif m.get("role") == "tool" and m.get("name") == "find_loan" and not text.startswith("[error"):
                self.loan_id = json.loads(text).get("loan_id")
            elif m.get("role") == "tool" and m.get("name") == "renew":
                if text.startswith("[error") and "no loan" in text:
                    self.loan_id, self.renewed = None, False  # the id was wrong: find the loan again

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._read(info)
        if self.card is None or self.weeks is None:
            return "What is your library card number, and for how many weeks should I renew?"
        if self.loan_id is None:
            return call("find_loan", card_number=self.card)
        if not self.confirmed:
            self.confirmed = True
            return f"Shall I renew loan {self.loan_id} for {self.weeks} weeks?"
        if not self.renewed:
            self.renewed = True
            return call("renew", loan_id=self.loan_id, weeks=self.weeks)
        return "Is there anything else I can help with?"


class LibraryAgent(Agent):
    """`LibraryPolicy` inside agentgym's retry layer."""

    name = "library-desk"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._policy = RetryTransient(LibraryPolicy())
        self._policy.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self._policy.act(obs, info)
