"""Scoring and the final state of an env built with `make_tool_env`.

The task's score is the scorer's, on the final world: the one you give (``scorer(task, world)``
returning a bool, a number in [0, 1] or a `Score`), or by default the gold plan's writes: each
write step of the gold must be completed by a successful write call, and every other successful
write is an extra effect the user did not ask for (``score = met / (write steps + extras)``,
success when all are met and there is none extra).

The final state, for goal consistency, is the writes that succeeded, each judged by the user as
it judges a call, against every constraint stated by the end: a write made before a goal shift
and never put right counts against it.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from agentgym.core.commitments import CommitmentJudge
from agentgym.core.gold import call_matches
from agentgym.core.task import Score, SimulatedUser, Task
from agentgym.toolenv.task import ToolTask

__all__ = ["Scorer", "make_scorer", "gold_writes_score", "final_state", "JUDGE"]

#: ``scorer(task, world) -> bool | float | Score``: the task as it stands (after any goal shift).
Scorer = Callable[[ToolTask, Any], Any]


def _writes(task: Task) -> list[dict[str, Any]]:
    return task.extra.setdefault("writes", [])


def gold_writes_score(task: Task, write_tools: frozenset[str]) -> Score:
    """The default score: the gold plan's write steps met by successful writes, diluted by extras."""
    steps = [s for s in task.gold.calls if s["name"] in write_tools]
    met = [False] * len(steps)
    extras: list[dict[str, Any]] = []
    for w in _writes(task):
        i = next((i for i, s in enumerate(steps) if not met[i] and call_matches(w["name"], w["arguments"], s)), None)
        if i is None:
            extras.append(w)
        else:
            met[i] = True
    denominator = len(steps) + len(extras)
    score = sum(met) / denominator if denominator else 0.0
    success = bool(steps) and all(met) and not extras
    return Score(round(score, 6), success, {"met": met, "extras": extras})


def make_scorer(scorer: Scorer | None, write_tools: frozenset[str]) -> Callable[[Task], Score]:
    """The episode scorer ``task -> Score`` of a built env (see the module docstring).

    Raises (when called):
        TypeError: the scorer returned something other than a bool, a number or a `Score`.
        ValueError: it returned a number outside [0, 1], or (default scorer) the gold plan has no
            write step to score.
    """
    if scorer is None:
        def score_gold(task: Task) -> Score:
            if not any(s["name"] in write_tools for s in task.gold.calls):
                raise ValueError("the task's gold_calls have no write call, so there is nothing to score: "
                                 "pass scorer=... to make_tool_env")
            return gold_writes_score(task, write_tools)

        return score_gold

    def score(task: Task) -> Score:
        return as_score(scorer(task.goal, task.world))

    return score


def as_score(result: Any) -> Score:
    """A scorer's answer as a `Score`: True/False, a number in [0, 1] (success at 1), or a Score."""
    if isinstance(result, Score):
        return result
    if isinstance(result, bool):
        return Score(float(result), result)
    if isinstance(result, (int, float)):
        value = float(result)
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"a scorer's number must be in [0, 1], got {result!r}")
        return Score(value, value >= 1.0)
    raise TypeError(f"a scorer returns a bool, a number in [0, 1] or a Score, got {type(result).__name__}")


def final_state(task: Task, user: SimulatedUser) -> list[str] | None:
    """The stated constraints the successful writes break, judged at the end; None when no write succeeded."""
    writes = _writes(task)
    if not writes:
        return None
    broken: list[str] = []
    for w in writes:
        for cid in user.contradictions(w["name"], w["arguments"]):
            if cid not in broken:
                broken.append(cid)
    return broken


#: The built envs' judge: no proposals (commitments are tool calls), and the final state.
JUDGE = CommitmentJudge(final_state=final_state)
