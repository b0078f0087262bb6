"""The assistant's word that the work is done, which every user waits for before it signs off."""

from __future__ import annotations

from typing import Any

#: What a test's assistant says once its last write is in.
DONE = "All done: it's booked and in place as you asked."


def told_done(env: Any) -> tuple[Any, ...]:
    """The step after the write that finished the work: the user said nothing at the write and
    waits to hear it; told, it signs off (the step's five values)."""
    assert env.unwrapped.awaiting_report, "the user does not wait for a report"
    return env.step(DONE)
