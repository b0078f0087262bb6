"""Helpers of the noise tests: the live ids, which kinds a family supports, drivers, statistics."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentgym  # noqa: F401  (registers every AgentRL/* id)
from agentgym.agents.random_agent import sample_arguments
from agentgym.core.render import to_json
from agentgym.core.task import SimulatedUser
from agentgym.core.tools import ToolKind

#: Every live AgentRL/* id (remote ones excluded): a family is covered the moment it registers.
LIVE_IDS: list[str] = sorted(i for i in gym.registry if i.startswith("AgentRL/") and "Remote" not in i)

#: The SimulatedUser method a family must implement for each family-side kind.
FAMILY_METHODS = {"ambiguity": "blur", "goal_shift": "plan_goal_shift"}

#: Plain assistant messages that ask nothing in particular (each gets a user reply).
CHATTER = ("Could you tell me more about what you need?", "OK.", "Let me look into it.", "Anything else?")


def supports(env_id: str, kind: str) -> bool:
    """Whether `env_id`'s simulated user implements the family side of `kind` (always True for
    the kinds the wrappers do alone)."""
    method = FAMILY_METHODS.get(kind)
    if method is None:
        return True
    env = gym.make(env_id)
    try:
        env.reset(seed=0)
        user_cls = type(env.unwrapped.user)
        return getattr(user_cls, method) is not getattr(SimulatedUser, method)
    finally:
        env.close()


def require_support(env_id: str, kind: str) -> None:
    """Skip the calling test when the family of `env_id` does not offer `kind`."""
    if not supports(env_id, kind):
        pytest.skip(f"{env_id}: its simulated user does not implement {FAMILY_METHODS[kind]}(), "
                    f"so the {kind} noise has nothing to act on in this family")


def binomial_interval(n: int, p: float, level: float = 0.99) -> tuple[int, int]:
    """The central `level` acceptance interval [lo, hi] of a Binomial(n, p) count (exact)."""
    tail = (1.0 - level) / 2.0
    log_pmf = [math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
               + (k * math.log(p) if k else 0.0) + ((n - k) * math.log1p(-p) if n - k else 0.0)
               for k in range(n + 1)]
    pmf = [math.exp(x) for x in log_pmf]
    lo, acc = 0, 0.0
    while acc + pmf[lo] <= tail:
        acc += pmf[lo]
        lo += 1
    hi, acc = n, 0.0
    while acc + pmf[hi] <= tail:
        acc += pmf[hi]
        hi -= 1
    return lo, hi


def layer(env: gym.Env, cls: type) -> Any:
    """The `cls` layer of `env`'s wrapper stack."""
    while not isinstance(env, cls):
        env = env.env
    return env


def events(info: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The noise events of `kind` in one step's (or reset's) info."""
    return [e for e in info.get("noise", ()) if e["kind"] == kind]


def user_texts(info: dict[str, Any]) -> list[str]:
    """The user's own messages in a step's info (not the env's error reports)."""
    return [m["content"] for m in info["messages"] if m["role"] == "user" and not m["content"].startswith("[error ")]


def tool_contents(info: dict[str, Any]) -> list[tuple[str, str]]:
    """(tool name, content) of every tool message of a step."""
    return [(m["name"], m["content"]) for m in info["messages"] if m["role"] == "tool"]


class ReadProber:
    """Calls the episode's READ tools over and over: arguments sampled from each schema, and
    calls that succeeded replayed most of the time, so most calls return data. Only reads: the
    world never changes, so a twin env without noise stepped with the same actions gives the
    clean results to compare with."""

    def __init__(self, env: gym.Env, seed: int) -> None:
        self._rng = np.random.default_rng([seed, 20_07])
        toolkit = env.unwrapped.toolkit
        specs = [toolkit.spec(t["function"]["name"]) for t in toolkit.schemas()]
        self._reads = [s for s in specs if s.kind is ToolKind.READ]
        if not self._reads:
            pytest.skip(f"{env.spec.id if env.spec else env}: no READ tools to probe")
        self._good: list[str] = []
        self._last: str | None = None

    def act(self, info: dict[str, Any]) -> str:
        calls = info.get("calls") or ()
        if self._last is not None and calls and calls[0]["valid"] and calls[0]["error"] is None:
            if self._last not in self._good:
                self._good.append(self._last)
        rng = self._rng
        if self._good and rng.random() < 0.8:
            self._last = self._good[int(rng.integers(len(self._good)))]
        else:
            spec = self._reads[int(rng.integers(len(self._reads)))]
            self._last = tool_call(spec.name, sample_arguments(spec.parameters, rng))
        return self._last


def tool_call(name: str, arguments: dict[str, Any]) -> str:
    """A tool call action (arguments as a dict: some tools take an argument called ``name``)."""
    return to_json({"name": name, "arguments": arguments})


def chatter(i: int) -> str:
    """The i-th plain message of the message-only driver."""
    return CHATTER[i % len(CHATTER)]


def play(env: gym.Env, seed: int, policy: Any, max_steps: int | None = None) -> Iterator[tuple[str, tuple]]:
    """Reset `env` with `seed` and yield (action, step result) until the episode ends.

    `policy(i, info)` gives the i-th action from the last info.
    """
    _, info = env.reset(seed=seed)
    i = 0
    while max_steps is None or i < max_steps:
        action = policy(i, info)
        result = env.step(action)
        yield action, result
        info = result[4]
        i += 1
        if result[2] or result[3]:
            return


def gold_view(env: gym.Env) -> Any:
    """The current gold of an env's task, as comparable data."""
    gold = env.unwrapped.task.gold
    return json.dumps(gold.to_dict() if hasattr(gold, "to_dict") else gold, sort_keys=True, default=str)
