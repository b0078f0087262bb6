"""`oracle`: reads the task's gold outcome and plays the shortest correct dialog.

It is an upper bound, and a check that every generated task is solvable: it must succeed on 100%
of tasks with noise off. Each family ships its own oracle policy in
``agentgym.envs.<family>.solver`` (a class ``Oracle(env)`` with ``act(obs, info) -> str``), since
only the family knows how to read its gold.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentgym.agents.base import Agent

__all__ = ["OracleAgent"]


class OracleAgent(Agent):
    """The privileged reference agent."""

    name = "oracle"
    privileged = True

    def __init__(self) -> None:
        self._env: Any = None
        self._policy: Any = None

    def bind(self, env: Any) -> None:
        self._env = env

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        if self._env is None:
            raise RuntimeError("the oracle needs the env: the runner must call bind(env.unwrapped) after reset")
        family = self._env.task.family
        module = importlib.import_module(f"agentgym.envs.{family}.solver")
        self._policy = module.Oracle(self._env)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self._policy.act(obs, info)
