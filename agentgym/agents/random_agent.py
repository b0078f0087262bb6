"""`random`: random messages and tool calls with arguments sampled from the tool schemas."""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from agentgym.agents.base import Agent, call
from agentgym.core.seeding import stream

__all__ = ["RandomAgent", "sample_arguments", "sample_value"]

_WORDS = ("hello", "yes", "no", "book", "it", "please", "what", "the", "price", "area", "time", "ok", "thanks",
          "search", "anything", "else", "?", "monday", "evening")


def sample_value(schema: dict[str, Any], rng: np.random.Generator) -> Any:
    """A value drawn from a JSON-schema fragment (the subset our tool schemas use)."""
    if "anyOf" in schema:
        options = schema["anyOf"]
        return sample_value(options[int(rng.integers(len(options)))], rng)
    if "enum" in schema:
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    t = schema.get("type")
    if isinstance(t, list):
        t = t[int(rng.integers(len(t)))]
    if t == "null":
        return None
    if t == "boolean":
        return bool(rng.integers(2))
    if t == "integer":
        lo = int(schema.get("minimum", 0))
        hi = int(schema.get("maximum", lo + 100))
        return int(rng.integers(lo, hi + 1))
    if t == "number":
        lo = float(schema.get("minimum", 0.0))
        hi = float(schema.get("maximum", lo + 100.0))
        return round(float(rng.uniform(lo, hi)), 2)
    if t == "array":
        return [sample_value(schema.get("items", {"type": "string"}), rng) for _ in range(int(rng.integers(0, 3)))]
    if t == "object":
        return {}
    n = int(rng.integers(1, min(int(schema.get("maxLength", 12)), 12) + 1))
    return "".join(string.ascii_lowercase[int(i)] for i in rng.integers(0, 26, size=n))


def sample_arguments(parameters: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """Arguments for a tool: every required one, and each optional one with probability 1/2."""
    required = set(parameters.get("required", ()))
    return {
        k: sample_value(v, rng)
        for k, v in parameters.get("properties", {}).items()
        if k in required or rng.random() < 0.5
    }


class RandomAgent(Agent):
    """Half the time a random message, half the time a random tool call.

    Args:
        seed: seeds the agent's own stream; episode seeds are mixed in at reset, so runs are
            reproducible and episodes differ.
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._rng = stream(seed, "agent/random")
        self._tools: list[dict[str, Any]] = []

    def config(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._rng = stream(self.seed, f"agent/random/{info.get('seed', 0)}")
        self._tools = [t["function"] for t in info.get("tools", ())]

    def act(self, obs: str, info: dict[str, Any]) -> str:
        rng = self._rng
        if self._tools and rng.random() < 0.5:
            fn = self._tools[int(rng.integers(len(self._tools)))]
            return call(fn["name"], **sample_arguments(fn.get("parameters", {}), rng))
        return " ".join(_WORDS[int(i)] for i in rng.integers(0, len(_WORDS), size=int(rng.integers(1, 8))))
