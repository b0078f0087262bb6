"""What a come-back of the hard tier reads of the sub-tasks before it: the values that make its
gold depend on earlier outcomes, each taken from that sub-task's reference solver (its gold), so
an assistant's earlier slip carries over to the come-back instead of being forgiven.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Sequence

from agentgym.envs.dialog.domain import DAYS

__all__ = ["Spent", "given_up", "held_needs", "in_force", "meeting_day", "spent", "visited"]


@dataclass(frozen=True)
class Spent:
    """The amount an earlier finance request came to: `cents` in `currency`; `paid` when it was
    a reimbursement the assistant transferred, not a total it answered."""

    cents: int
    currency: str
    paid: bool


def meeting_day(segments: Sequence[Any], index: int) -> str | None:
    """The weekday of the meeting the latest calendar request before segment `index` asked for
    (the date its user gave, as its reference solver books it), or None."""
    for s in reversed(segments[:index]):
        if s.family == "tooluse" and s.domain == "calendar" and s.task is not None:
            date = next(e.fields["date"] for e in s.task.gold.effects if "date" in e.fields)
            return DAYS[datetime.date.fromisoformat(date).weekday()]
    return None


def spent(segments: Sequence[Any], index: int) -> Spent | None:
    """What the latest finance request before segment `index` came to (the transfer of a
    reimbursement, or the answered total), or None when there is none."""
    for s in reversed(segments[:index]):
        if s.family == "tooluse" and s.domain == "finance" and s.task is not None:
            effects = {e.kind: e.fields for e in s.task.gold.effects}
            fields = effects.get("transfer") or effects.get("answer")
            if fields is None:
                return None
            return Spent(int(fields["amount"]), str(fields["currency"]), "transfer" in effects)
    return None


def visited(segments: Sequence[Any], index: int, refers_to: int) -> frozenset[tuple[str, str, str]]:
    """Every (place, day, slot) the booking of segment `refers_to` has stood at before segment
    `index`: its own, and each earlier come-back's target. A come-back never returns to one, so
    the booking never bounces back to where it was."""
    out: set[tuple[str, str, str]] = set()
    agreed = segments[refers_to].agreed
    if agreed is not None:
        out.add((agreed.item_id, agreed.day, agreed.slot))
    for s in segments[refers_to + 1:index]:
        if s.refers_to == refers_to and s.move is not None and s.move.place:
            out.add((s.move.place, s.move.day, s.move.slot))
    return frozenset(out)


def held_needs(segments: Sequence[Any], refers_to: int) -> tuple[Any, ...]:
    """The needs the user of booking sub-task `refers_to` stated for the booking: its gold's
    constraints (as any change of mind left them) but its time. A come-back keeps each one it
    does not change itself and no earlier one gave up (`given_up`)."""
    task = segments[refers_to].task
    return tuple(c for c in task.gold.constraints if c.kind != "time") if task is not None else ()


def given_up(segments: Sequence[Any], index: int, refers_to: int) -> tuple[Any, ...]:
    """The needs the come-backs on the booking of segment `refers_to` gave up before segment `index`."""
    return tuple(c for s in segments[refers_to + 1:index] if s.refers_to == refers_to
                 for c in getattr(s.move, "dropped", ()))


def in_force(segments: Sequence[Any], index: int, refers_to: int) -> tuple[float, str] | None:
    """The budget an earlier come-back on the booking of segment `refers_to` set before segment
    `index` (its limit and the user's words for it), or None: it holds for the come-backs after it."""
    for s in reversed(segments[refers_to + 1:index]):
        limit = getattr(s.move, "limit", None) if s.refers_to == refers_to else None
        if limit is not None:
            return limit, s.move.limit_words
    return None
