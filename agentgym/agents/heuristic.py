"""`heuristic`: a sensible rule-based agent with no privileged information.

It reads only what any agent sees (the brief, the user's messages, tool results) and dispatches on
the public task family to a strategy in `agentgym.agents.strategies`. Around the strategy it
handles faults as a careful assistant does (`agentgym.agents.careful`): it retries a call that
failed for a passing reason, and reads a result again when an id from it does not resolve.
"""

from __future__ import annotations

from typing import Any

from agentgym import families
from agentgym.agents.base import Agent
from agentgym.agents.careful import RecheckIds, RetryTransient

__all__ = ["HeuristicAgent", "STRATEGIES"]

#: Task family -> "module:Class" of its strategy (from `agentgym.families`).
STRATEGIES: dict[str, str] = {f.name: f.strategy for f in families.FAMILIES}


def make_strategy(family: str) -> Any:
    """A fresh strategy for `family`; ValueError for a family without one."""
    target = STRATEGIES.get(family)
    if target is None:
        raise ValueError(f"the heuristic agent has no strategy for family {family!r}")
    return families.load(target)()


class HeuristicAgent(Agent):
    """Plays each episode with the strategy of its task family, inside the careful layers.

    Args:
        retries: attempts after the first of a call that failed transiently (0: never retry).
        retry_delay: turns it waits (telling the user to hold on) before each retry.
        recheck_ids: read a result again when an id it returned does not resolve when used.
    """

    name = "heuristic"

    def __init__(self, retries: int = 3, retry_delay: int = 0, recheck_ids: bool = True) -> None:
        for label, value in (("retries", retries), ("retry_delay", retry_delay)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{label} must be a non-negative int, got {value!r}")
        self.retries, self.retry_delay, self.recheck_ids = retries, retry_delay, bool(recheck_ids)
        self._policy: Any = None

    def config(self) -> dict[str, Any]:
        return {"retries": self.retries, "retry_delay": self.retry_delay, "recheck_ids": self.recheck_ids}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        family = info.get("task", {}).get("family", "")
        make_strategy(family)  # an unknown family fails here, before any layer is built
        policy: Any = RecheckIds(lambda: make_strategy(family)) if self.recheck_ids else make_strategy(family)
        self._policy = RetryTransient(policy, self.retries, self.retry_delay)
        self._policy.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self._policy.act(obs, info)
