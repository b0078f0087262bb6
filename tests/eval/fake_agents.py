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


def _self_referencing() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def odd_values() -> dict[str, Any]:
    """Values an agent's dict action may hold that JSON cannot carry as they are."""
    import numpy as np

    return {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "np_nan": np.float64("nan"),
            "np_int": np.int64(3), "np_bool": np.bool_(True), "set": {1, 2}, "frozenset": frozenset({1}),
            "bytes": b"x", "bytearray": bytearray(b"x"), "complex": 1 + 2j, "huge_int": 10**5000,
            "2**1024": 2**1024, "self_referencing": _self_referencing(), "tuple": (1, 2), "object": object()}


class OddValueAgent(Agent):
    """Sends a tool call whose arguments hold `odd_values()[value]` (or a key that is not a string),
    on every turn, then says goodbye."""

    name = "odd-value"

    def __init__(self, value: str = "nan", where: str = "argument") -> None:
        self.value, self.where = value, where

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._turn = 0

    def act(self, obs: str, info: dict[str, Any]) -> Any:
        self._turn += 1
        if self._turn > 3:
            return "Thanks, that is all."
        odd = odd_values()[self.value]
        arguments: dict[Any, Any] = {odd: 1} if self.where == "key" else {"q": odd}
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": arguments}}]}


class LongTurnAgent(Agent):
    """Sends `chars` characters of `char` on every turn (over the env's 64 KiB cap, or just under it)."""

    name = "long-turn"

    def __init__(self, chars: int = 1 << 20, char: str = "x") -> None:
        self.text = char * chars

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        pass

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self.text
