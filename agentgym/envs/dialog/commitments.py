"""The dialog family's commitments beyond tool calls, for goal consistency.

A proposal is what the user reads as one (`DialogUser.proposed_call`: an assistant message naming
one place of the world by its longest exact name or its id, not booked already), judged as the
booking it stands for (`DialogUser.contradictions` of ``book``) at the day and slot the user
judges it at: those the message names, else the wanted ones. The final state is the world's
active bookings, each judged as its booking call.
"""

from __future__ import annotations

from agentgym.core.commitments import CommitmentJudge, proposal_as_heard
from agentgym.core.task import SimulatedUser, Task
from agentgym.envs.dialog.tasks import World

__all__ = ["final_state", "JUDGE"]


def final_state(task: Task, user: SimulatedUser) -> list[str] | None:
    """The stated constraints the world's active bookings break; None with nothing booked."""
    world = task.world
    if not isinstance(world, World):
        return None
    active = world.active_bookings()
    if not active:
        return None
    broken: list[str] = []
    for b in active:
        for cid in user.contradictions("book", {"item_id": b.item_id, "day": b.day, "slot": b.slot}):
            if cid not in broken:
                broken.append(cid)
    return broken


#: The dialog family's judge (`EnvParts.judge`).
JUDGE = CommitmentJudge(proposal=proposal_as_heard, final_state=final_state)
