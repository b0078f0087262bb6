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

__all__ = ["HeuristicAgent", "StrategyAgent", "STRATEGIES", "make_strategy"]

#: Task family -> "module:Class" of its strategy (from `agentgym.families`).
STRATEGIES: dict[str, str] = {f.name: f.strategy for f in families.FAMILIES}


def make_strategy(family: str) -> Any:
    """A fresh heuristic strategy for `family`; ValueError for a family without one."""
    target = STRATEGIES.get(family)
    if target is None:
        raise ValueError(f"the heuristic agent has no strategy for family {family!r}")
    return families.load(target)()


class StrategyAgent(Agent):
    """Plays each episode with a strategy of its task family, inside the careful layers.

    Subclasses say which strategy a family gets (`make_strategy`); the careful layers are shared.

    Args:
        retries: attempts after the first of a call that failed transiently (0: never retry).
        retry_delay: turns it waits (telling the user to hold on) before each retry.
        recheck_ids: read a result again when an id it returned does not resolve when used.
    """

    def __init__(self, retries: int = 3, retry_delay: int = 0, recheck_ids: bool = True) -> None:
        for label, value in (("retries", retries), ("retry_delay", retry_delay)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{label} must be a non-negative int, got {value!r}")
        self.retries, self.retry_delay, self.recheck_ids = retries, retry_delay, bool(recheck_ids)
        self._policy: Any = None

    def make_strategy(self, family: str) -> Any:
        """A fresh strategy for `family`; ValueError for a family without one."""
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        return {"retries": self.retries, "retry_delay": self.retry_delay, "recheck_ids": self.recheck_ids}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        family = info.get("task", {}).get("family", "")
        self.make_strategy(family)  # an unknown family fails here, before any layer is built
        policy: Any = (RecheckIds(lambda: self.make_strategy(family)) if self.recheck_ids
                       else self.make_strategy(family))
        self._policy = RetryTransient(policy, self.retries, self.retry_delay)
        self._policy.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self._policy.act(obs, info)


class HeuristicAgent(StrategyAgent):
    """Plays each episode with the heuristic strategy of its task family (`STRATEGIES`), inside
    the careful layers; see `StrategyAgent` for the arguments."""

    name = "heuristic"

    def make_strategy(self, family: str) -> Any:
        return make_strategy(family)
