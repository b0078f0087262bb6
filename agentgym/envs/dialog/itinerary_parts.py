"""The parts an itinerary of Dialog's hard tier plays with (`agentgym.envs.dialog.itinerary`):
the toolkit with its `submit_plan` (a terminal tool: the plan is judged once, when the agent
submits it, all or nothing), and the family's scorer over both kinds of task. The user is
`agentgym.envs.dialog.itinerary_user`'s.
"""

from __future__ import annotations

from typing import Any

from agentgym.core.task import Score, Task
from agentgym.core.tools import WRITE, tool
from agentgym.envs.dialog.itinerary import score_plan
from agentgym.envs.dialog.tasks import score_task
from agentgym.envs.dialog.tools import DialogToolkit

__all__ = ["PlanToolkit", "make_plan_toolkit", "score_dialog"]


class PlanToolkit(DialogToolkit):
    """The dialog tools and `submit_plan`, which ends the conversation."""

    @tool(kind=WRITE, terminal=True)
    def submit_plan(self) -> dict[str, Any]:
        """Submit the plan: every active booking as it stands. This ends the conversation; the plan
        is judged then, all of it."""
        world = self.world
        return {"status": "submitted", "active_bookings": [b.id for b in world.active_bookings()]}


def make_plan_toolkit(task: Task) -> DialogToolkit:
    """The toolkit of a dialog task: with `submit_plan` on an itinerary."""
    if task.extra.get("kind") == "itinerary":
        return PlanToolkit(task.world)
    return DialogToolkit(task.world)


def score_dialog(task: Task, toolkit: Any) -> Score:
    """The score of a dialog task: an itinerary's plan (`score_plan`), else its one booking."""
    if task.extra.get("kind") == "itinerary":
        return score_plan(task)
    return score_task(task, toolkit)
