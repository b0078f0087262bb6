"""The values of the job a plan names, as the tool-use user reads them: which value of a slot a
message names (a currency code, a severity, a meeting's length in minutes), and the detail whose
value a plan names otherwise than the user said (`objected`)."""

from __future__ import annotations

import re
from typing import Any, Mapping

__all__ = ["JOB_SLOTS", "job_slots", "names", "names_one", "objected"]

#: The job's parameters whose value an assistant may name when it states a plan: a currency code
#: or a severity (the domain's own words for them), or a meeting's length in minutes.
JOB_SLOTS = ("currency", "severity", "duration")
_MINUTES = re.compile(r"\b(\d{2,3})[ -]?min")


def job_slots(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The job's parameters the user holds a value of (their details' ids are the slots' names)."""
    return tuple(slot for slot in JOB_SLOTS if slot in values)


def names_one(vocabulary: Mapping[str, tuple[str, ...]], slot: str, message: str) -> bool:
    """Whether a message names one value of a job's `slot`: several ("EUR, CAD or USD", a
    table's column) are options, and a question about the slot beside them asks which."""
    words = vocabulary.get(slot)
    if words:
        return sum(w in message for w in words) == 1
    return names(vocabulary, slot, message)


def names(vocabulary: Mapping[str, tuple[str, ...]], slot: str, message: str) -> bool:
    """Whether a message names some value of a job's `slot` (as `objected` reads them)."""
    words = vocabulary.get(slot)
    if words:
        return any(w in message for w in words)
    return slot == "duration" and _MINUTES.search(message) is not None


def objected(message: str, job: tuple[str, ...], values: Mapping[str, Any],
             vocabulary: Mapping[str, tuple[str, ...]]) -> str | None:
    """The first of the `job`'s slots whose values the message names without the user's own
    ("shall I pay it in EUR?" to a user who wants GBP); None when it names none of a slot, or
    the user's among them."""
    for slot in job:
        words = vocabulary.get(slot)
        if words:
            named: set[Any] = {w for w in words if w in message}
        elif "min" in message:
            named = {int(v) for v in _MINUTES.findall(message)}
        else:
            continue
        if named and values[slot] not in named:
            return slot
    return None
