"""`heuristic`: a sensible rule-based agent with no privileged information.

It reads only what any agent sees (the brief, the user's messages, tool results) and dispatches on
the public task family to a strategy in `agentgym.agents.strategies`.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentgym.agents.base import Agent

__all__ = ["HeuristicAgent", "STRATEGIES"]

#: Task family -> "module:Class" of its strategy.
STRATEGIES: dict[str, str] = {
    "dialog": "agentgym.agents.strategies.dialog:DialogStrategy",
    "crosstask": "agentgym.agents.strategies.crosstask:CrossTaskStrategy",
    "tooluse": "agentgym.agents.strategies.tooluse:ToolUseStrategy",
}


def make_strategy(family: str) -> Any:
    """A fresh strategy for `family`; ValueError for a family without one."""
    target = STRATEGIES.get(family)
    if target is None:
        raise ValueError(f"the heuristic agent has no strategy for family {family!r}")
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)()


class HeuristicAgent(Agent):
    """Plays each episode with the strategy of its task family."""

    name = "heuristic"

    def __init__(self) -> None:
        self._strategy: Any = None

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._strategy = make_strategy(info.get("task", {}).get("family", ""))
        self._strategy.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self._strategy.act(obs, info)
