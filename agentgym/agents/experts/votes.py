"""Agreeing on one result from several reads of the same thing, value by value.

A reply that comes back plausibly wrong is wrong in one place (one amount, one date, one flag),
so several reads of one result are compared value by value: each value is the one most reads
agree on. A value is settled when at least `copies` reads agree on it and, where some read
disagrees, the agreeing reads outnumber the others by two (one wrong reply, or two replies
wrong alike, never outvote the truth).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Vote", "vote"]

_MISSING = object()


class Vote:
    """The outcome of a vote: the agreed result, whether every value is settled, and whether
    some read disagreed."""

    __slots__ = ("value", "settled", "disputed")

    def __init__(self, value: Any, settled: bool, disputed: bool) -> None:
        self.value, self.settled, self.disputed = value, settled, disputed


def vote(values: list[Any], copies: int) -> Vote:
    """Agree on one result from `values` (decoded reads of one call, oldest first)."""
    state = {"settled": True, "disputed": False}
    agreed = _vote(values, copies, state)
    return Vote(agreed, state["settled"], state["disputed"])


def _vote(values: list[Any], copies: int, state: dict[str, bool]) -> Any:
    first = values[0]
    if isinstance(first, dict) and all(isinstance(v, dict) and v.keys() == first.keys() for v in values):
        return {k: _vote([v[k] for v in values], copies, state) for k in first}
    if isinstance(first, list) and all(isinstance(v, list) and len(v) == len(first) for v in values):
        return [_vote([v[i] for v in values], copies, state) for i in range(len(first))]
    counts: list[tuple[Any, int]] = []
    for v in values:
        for i, (seen, n) in enumerate(counts):
            if seen == v and type(seen) is type(v):
                counts[i] = (seen, n + 1)
                break
        else:
            counts.append((v, 1))
    # The likeliest value: the most reads, and the latest among equals.
    best, top = max(reversed(counts), key=lambda c: c[1])
    rest = max((n for v, n in counts if v is not best), default=0)
    if rest:
        state["disputed"] = True
    if top < copies or (rest and top < rest + 2):
        state["settled"] = False
    return best
