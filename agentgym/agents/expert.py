"""`expert`: a careful assistant that reads only observations, the suite's validity instrument.

Where the heuristic is a short script, the expert plays every family the way a careful assistant
would: it elicits every need before it commits, re-checks what a late need changes, reads back a
write whose result it could not see, and recovers from the faults the brief gives it means to
recover from. It is ordinary, not privileged: it sees the observations and the agent's view of
`info`, never the hidden goal. Where it fails with noise off, the task or the user is at fault,
not the agent (docs/USERS.md); its results per id, split, difficulty and noise preset are in
`benchmarks/expert/RESULTS.md`.

Each family names its expert strategy in `agentgym.families` (`Family.expert`); the careful
layers around it (retries of passing faults, re-reads of results whose ids do not resolve) are
the heuristic's (`agentgym.agents.heuristic.StrategyAgent`).
"""

from __future__ import annotations

from typing import Any

from agentgym import families
from agentgym.agents.heuristic import StrategyAgent

__all__ = ["ExpertAgent", "make_expert_strategy"]


def make_expert_strategy(family: str) -> Any:
    """A fresh expert strategy for `family`; ValueError for a family without one."""
    try:
        target = families.get(family).expert
    except KeyError:
        target = None
    if target is None:
        raise ValueError(f"the expert agent has no strategy for family {family!r}")
    return families.load(target)()


class ExpertAgent(StrategyAgent):
    """Plays each episode with its family's expert strategy, inside the careful layers."""

    name = "expert"

    def make_strategy(self, family: str) -> Any:
        return make_expert_strategy(family)
