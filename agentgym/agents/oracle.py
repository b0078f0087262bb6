"""`oracle`: reads the task's gold outcome and plays the shortest correct dialog.

It is an upper bound, and a check that every generated task is solvable: it must succeed on 100%
of tasks with noise off. Each family ships its own oracle policy, named by its entry in
`agentgym.families` (a class made with the unwrapped env, ``act(obs, info) -> str``), since only
the family knows how to read its gold.
"""

from __future__ import annotations

from typing import Any

from agentgym import families
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
        oracle = families.load(families.get(self._env.task.family).oracle)
        self._policy = oracle(self._env)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self._policy.act(obs, info)
