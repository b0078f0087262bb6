"""The parts an itinerary of Dialog's hard tier plays with (`agentgym.envs.dialog.itinerary`):
the toolkit with its `submit_plan` (a terminal tool: the plan is judged once, when the agent
submits it, all or nothing), and the family's scorer over both kinds of task. The user is
`agentgym.envs.dialog.itinerary_user`'s.

`submit_plan` reads the task's `PlanState` (`agentgym.envs.dialog.itinerary_twists`): the plan
submitted counts only when its active bookings are the places of the plan the user last said
yes to; on a task whose world moves, the first such submission takes a place (cancelling a
booking of it), answers what changed and submits nothing, and the user's `on_commit` lets the
conversation go on.
"""

from __future__ import annotations

from typing import Any

from agentgym.core.task import Score, Task, WorldEvent
from agentgym.core.tools import WRITE, tool
from agentgym.envs.dialog.itinerary import score_plan
from agentgym.envs.dialog.itinerary_twists import PlanState
from agentgym.envs.dialog.tasks import open_bit, score_task
from agentgym.envs.dialog.tools import DialogToolkit

__all__ = ["PlanToolkit", "make_plan_toolkit", "score_dialog"]


class PlanToolkit(DialogToolkit):
    """The dialog tools and `submit_plan`, which ends the conversation."""

    def __init__(self, task: Task) -> None:
        super().__init__(task.world)
        self._task = task

    @tool(kind=WRITE, terminal=True)
    def submit_plan(self) -> dict[str, Any]:
        """Submit the plan: every active booking as it stands. This ends the conversation and the plan
        is judged then, all of it; should a place of it have just been taken, nothing is submitted and
        the answer says what changed."""
        world, task = self.world, self._task
        state: PlanState = task.extra["plan"]
        active = world.active_bookings()
        consented = state.agreed is not None and sorted(b.item_id for b in active) == sorted(state.agreed)
        if consented and state.move is not None and not state.moved:
            return self._move(state)
        state.consented = consented
        return {"status": "submitted", "active_bookings": [b.id for b in active]}

    def _move(self, state: PlanState) -> dict[str, Any]:
        """The world moves (once, at the first agreed submission): the drawn place is taken at
        its booking's time, a booking of it then cancelled; the gold becomes the new world's."""
        move, task, world = state.move, self._task, self.world
        assert move is not None
        leg = task.gold.legs[move.leg]
        place = world.by_id[move.item_id]
        place.open &= ~open_bit(leg.day, leg.slot)
        cancelled: list[str] = []
        for b in world.active_bookings():
            if b.item_id == place.id and (b.day, b.slot) == (leg.day, leg.slot):
                b.active = False
                cancelled.append(b.id)
                self._events.append(WorldEvent("cancelled", {"booking_id": b.id, "item_id": b.item_id}))
        state.moved, state.agreed = True, None
        task.gold = move.gold.replacing(task.gold, world)
        held = f" Your booking {cancelled[0]} of it was cancelled." if cancelled else ""
        return {"status": "not submitted", "cancelled_bookings": cancelled,
                "changed": f"{place.name} ({place.id}) was just taken on {leg.day} {leg.slot} and can no longer "
                           f"be booked then.{held} Nothing was submitted: plan again under every rule and get the "
                           f"user's yes to the new plan before you submit."}


def make_plan_toolkit(task: Task) -> DialogToolkit:
    """The toolkit of a dialog task: with `submit_plan` on an itinerary."""
    if task.extra.get("kind") == "itinerary":
        return PlanToolkit(task)
    return DialogToolkit(task.world)


def score_dialog(task: Task, toolkit: Any) -> Score:
    """The score of a dialog task: an itinerary's plan (`score_plan`), else its one booking."""
    if task.extra.get("kind") == "itinerary":
        return score_plan(task)
    return score_task(task, toolkit)
