"""Commitments the env judges beyond tool calls: proposals in messages, and the final state.

Goal consistency (`agentgym.eval.metrics.goal_consistency`) asks of every commitment whether it
satisfies every constraint the user has stated so far. Write calls carry that answer in their
record (``contradicts``, from `SimulatedUser.contradictions`); a family whose assistant can also
commit in words (a proposal: "shall I book Blue Fern?") or whose world holds an outcome at the end
gives its env a `CommitmentJudge`, and the env records each judgement in
``info["episode_summary"]["commitments"]`` as ``{"turn", "kind": "proposal" | "final", "contradicts"}``.
Both functions answer with the ids of the stated constraints the commitment breaks, judged by the
family's user the way it judges the equivalent call, or None when there is no commitment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from agentgym.core.task import SimulatedUser, Task

__all__ = ["CommitmentJudge"]


@dataclass(frozen=True)
class CommitmentJudge:
    """How a family judges the commitments that are not tool calls."""

    #: ``(task, user, message) -> contradicted constraint ids``, or None when the assistant's
    #: message proposes no outcome. Called before the user reads the message, so "stated so
    #: far" means before this turn.
    proposal: Callable[[Task, SimulatedUser, str], list[str] | None] | None = None
    #: ``(task, user) -> contradicted constraint ids`` of the outcome the world holds when the
    #: episode ends, or None when it holds none (nothing booked, nothing written).
    final_state: Callable[[Task, SimulatedUser], list[str] | None] | None = None


#: The judge of a family without proposals or a final outcome to judge.
NO_JUDGE = CommitmentJudge()
