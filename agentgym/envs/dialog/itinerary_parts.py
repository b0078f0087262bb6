"""The parts an itinerary of Dialog's hard tier plays with (`agentgym.envs.dialog.itinerary`):
the toolkit with its `submit_plan`, and the user who filled in the request form.

The user has said everything on the form (the brief), so whatever the agent asks or proposes it
answers the same way, and it says nothing to bookings: the plan is judged once, when the agent
submits it (a terminal tool), all or nothing. So no reply leaks whether a booking is right.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentgym.core.task import Score, SimulatedUser, Task, UserTurn
from agentgym.core.tools import WRITE, tool
from agentgym.envs.dialog.itinerary import score_plan
from agentgym.envs.dialog.tasks import score_task
from agentgym.envs.dialog.tools import DialogToolkit

__all__ = ["PlanToolkit", "PlanUser", "make_plan_toolkit", "score_dialog", "FORM_ANSWER", "OPENING"]

#: The user's first message.
OPENING = "Hi! Could you book the plan from my request form, please?"
#: The user's answer to every message: all it needs is on the form.
FORM_ANSWER = ("Everything I need is on my request form; I have nothing to add. Please book the plan its rules "
               "pick, then submit it.")


class PlanToolkit(DialogToolkit):
    """The dialog tools and `submit_plan`, which ends the conversation."""

    @tool(kind=WRITE, terminal=True)
    def submit_plan(self) -> dict[str, Any]:
        """Submit the plan: every active booking as it stands. This ends the conversation; the plan
        is judged then, all of it."""
        world = self.world
        return {"status": "submitted", "active_bookings": [b.id for b in world.active_bookings()]}


class PlanUser(SimulatedUser):
    """See the module docstring."""

    def __init__(self, task: Task, rng: np.random.Generator) -> None:
        self._task = task

    def opening(self) -> str:
        return OPENING

    def reply(self, message: str, turn: int) -> UserTurn:
        return UserTurn(FORM_ANSWER)

    def perturb_text(self, text: str, rng: np.random.Generator) -> tuple[str, list[str]]:
        # Every reply is a stock one that carries nothing new: typos never touch it.
        return text, []


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
