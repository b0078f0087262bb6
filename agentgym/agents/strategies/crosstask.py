"""The heuristic's cross-task strategy: the family strategy of each sub-task, plus memory.

It reads the public sub-task boundaries (`info["segment"]`, `info["segment_switch"]`), starts
the matching family strategy on each new request, and remembers the bookings it made, which is
what a follow-up ("the cafe we booked earlier") needs.
"""

from __future__ import annotations

import re
from typing import Any

from agentgym.agents.base import call, tool_results
from agentgym.agents.strategies.dialog import DAYS, SLOTS
from agentgym.agents.transcript import brief_of

__all__ = ["CrossTaskStrategy", "FollowUpStrategy"]



class FollowUpStrategy:
    """Moves the remembered booking: books the same place at the asked time, then cancels the old
    booking, so the user is never left without one. It goes by what the tools returned (a call
    that failed is sent again by the careful layers around it), so each reply of the user after a
    write, whatever it says, leads to the part still to do."""

    def __init__(self, booking: tuple[str, str] | None) -> None:
        self._booking = booking
        self._when: tuple[str, str] | None = None
        self._booked = self._cancelled = False

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        text = " ".join(m["content"] for m in info.get("messages", ()) if m["role"] == "user").lower()
        day = next((d for d in DAYS if d in text), None)
        slot = next((s for s in SLOTS if s in text), None)
        self._when = (day, slot) if day and slot else None
        self._booked = self._cancelled = False

    def _observe(self, info: dict[str, Any]) -> None:
        if self._booking is None or self._when is None:
            return
        booking_id, item_id = self._booking
        for name, result in tool_results(info):
            if not isinstance(result, dict):
                continue
            if name == "book" and (result.get("item_id"), result.get("day"), result.get("slot")) == (item_id, *self._when):
                self._booked = True
            elif name == "cancel_booking" and result.get("booking_id") == booking_id:
                self._cancelled = True

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._booking is None or self._when is None:
            return "Which booking do you mean, and when should it be?"
        self._observe(info)
        booking_id, item_id = self._booking
        if not self._booked:
            return call("book", item_id=item_id, day=self._when[0], slot=self._when[1])
        if not self._cancelled:
            return call("cancel_booking", booking_id=booking_id)
        return "It's moved. Anything else?"


class CrossTaskStrategy:
    """See the module docstring."""

    def __init__(self) -> None:
        self._sub: Any = None
        self._brief = ""
        self._tools: list[dict[str, Any]] = []
        self._booking: tuple[str, str] | None = None

    def _start(self, segment: dict[str, Any], request: str, obs: str) -> None:
        from agentgym.agents.heuristic import make_strategy

        family = segment["family"]
        self._sub = FollowUpStrategy(self._booking) if family == "followup" else make_strategy(family)
        self._sub.reset(obs, {
            "messages": [{"role": "system", "content": self._brief}, {"role": "user", "content": request}],
            "tools": self._tools,
            "task": {"family": family, "domain": segment["domain"]},
        })

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._brief = brief_of(info["messages"])
        self._tools = info.get("tools", [])
        self._booking = None
        request = next((m["content"] for m in info["messages"] if m["role"] == "user"), "")
        self._start(info["segment"], request, obs)

    def _remember(self, info: dict[str, Any]) -> None:
        for name, result in tool_results(info):
            if name == "book" and isinstance(result, dict) and "booking_id" in result:
                self._booking = (result["booking_id"], result["item_id"])

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._remember(info)
        switches = [s for s in info.get("segment_switch") or () if s.get("started")]
        if switches:
            users = [m["content"] for m in info.get("messages", ()) if m["role"] == "user"]
            # The new request follows the switch phrase in the user's last message.
            request = re.split(r"(?:Next thing|Now something different|One more thing|Next): ", users[-1])[-1] \
                if users else ""
            self._start(switches[-1]["started"], request, obs)
            return self._sub.act(obs, {**info, "messages": [{"role": "user", "content": request}]})
        return self._sub.act(obs, info)
