"""Misbehaving agents for the runner's fault tests (R3), importable as module:Class."""

from __future__ import annotations

import time
from typing import Any

from agentgym.agents.base import Agent


class RaisingAgent(Agent):
    """Raises on the second turn of every episode with an odd seed."""

    name = "raising"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._seed, self._turn = info["seed"], 0

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._turn += 1
        if self._seed % 2 and self._turn == 2:
            raise RuntimeError("the agent broke")
        return "Could you tell me more?"


class HangingAgent(Agent):
    """Sleeps far past any timeout on episodes whose seed is a multiple of 3."""

    name = "hanging"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._seed = info["seed"]

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._seed % 3 == 0:
            time.sleep(60)
        return "OK."


class NonStringAgent(Agent):
    """Returns a number instead of a turn on even seeds."""

    name = "non-string"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._seed = info["seed"]

    def act(self, obs: str, info: dict[str, Any]) -> Any:
        return 42 if self._seed % 2 == 0 else "OK."
