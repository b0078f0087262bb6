"""The cross-task family's commitments, for goal consistency: each sub-task's, judged by its user.

A proposal is what the active sub-task's user reads as one (`SessionUser.proposed_call` hands the
message to it: a dialog segment's user, or a follow-up's, which hears a place named as the place
to move the booking to), judged by that user, its constraint ids prefixed with the segment index
as the session's user prefixes them. The final state is every sub-task's: a dialog or tool-use
segment's world judged by its own family, except a booking a follow-up came back to move, which
the follow-up's user judges (the user asked for the new time, so the dialog's old time no longer
stands); of several come-backs to one booking (the hard tier), the last one planned.
"""

from __future__ import annotations

from typing import Callable

from agentgym.core.commitments import CommitmentJudge, proposal_as_heard
from agentgym.core.task import SimulatedUser, Task
from agentgym.envs.crosstask.session import SessionUser
from agentgym.envs.dialog import commitments as dialog
from agentgym.envs.tooluse import commitments as tooluse

__all__ = ["final_state", "JUDGE"]

_FINAL: dict[str, Callable[[Task, SimulatedUser], list[str] | None]] = {
    "dialog": dialog.final_state,
    "tooluse": tooluse.final_state,
}


def _prefixed(index: int, ids: list[str] | None) -> list[str] | None:
    return None if ids is None else [f"{index}:{c}" for c in ids]


def final_state(task: Task, user: SimulatedUser) -> list[str] | None:
    """Every segment's final state judged by its user; None when no segment holds an outcome."""
    if not isinstance(user, SessionUser):
        return None
    segments = user.session.segments
    moved = {s.refers_to for s in segments if s.family == "followup" and s.move is not None}
    # On the hard tier several come-backs return to one booking: the last one planned stands.
    last = {s.refers_to: s.index for s in segments if s.family == "followup" and s.move is not None}
    out: list[str] | None = None
    for seg in segments:
        sub = user.user_of(seg.index)
        if sub is None:
            continue
        if seg.family == "followup" and last.get(seg.refers_to) != seg.index:
            continue
        if seg.family == "followup":
            ref = segments[seg.refers_to] if seg.refers_to is not None else None
            judged = dialog.final_state(ref.task, sub) if ref is not None and ref.task is not None else None
        elif seg.index in moved or seg.task is None:
            continue
        else:
            judged = _FINAL[seg.family](seg.task, sub)
        if judged is not None:
            out = (out or []) + (_prefixed(seg.index, judged) or [])
    return out


#: The cross-task family's judge (`EnvParts.judge`).
JUDGE = CommitmentJudge(proposal=proposal_as_heard, final_state=final_state)
