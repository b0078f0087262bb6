"""What every noise wrapper shares: finding the `AgentEnv` underneath, checking a rate, and
telling whether a fault met at some turn still leaves the agent a way to recover."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym

from agentgym.core.env import AgentEnv

__all__ = ["agent_env", "check_rate", "check_count", "check_ms", "recoverable_at", "event_detail"]


def agent_env(env: gym.Env, wrapper: type[gym.Wrapper]) -> AgentEnv:
    """The `AgentEnv` at the bottom of `env`'s stack (its hooks are where noise plugs in).

    Raises:
        TypeError: `env` is not an agentgym env.
        ValueError: the stack already has a `wrapper` (one per kind: a second one would draw
            from the same stream and compound the rate).
    """
    layer = env
    while isinstance(layer, gym.Wrapper):
        if type(layer) is wrapper:
            raise ValueError(f"the env already has a {wrapper.__name__} wrapper: apply each noise kind once")
        layer = layer.env
    base = env.unwrapped
    if not isinstance(base, AgentEnv):
        raise TypeError(f"{wrapper.__name__} needs an agentgym AgentEnv underneath, got {type(base).__name__}")
    return base


def check_rate(name: str, rate: Any) -> float:
    """`rate` as a float in [0, 1]; ValueError naming `name` otherwise (bools and NaN included)."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= rate <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {rate!r}")
    return float(rate)


def check_count(name: str, n: Any, upper: int) -> int:
    """`n` as an int in [0, upper]; ValueError naming `name` otherwise."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= upper:
        raise ValueError(f"{name} must be an integer in [0, {upper}], got {n!r}")
    return n


def check_ms(name: str, ms: Any) -> float:
    """`ms` as a finite float >= 0; ValueError naming `name` otherwise."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms) or ms < 0:
        raise ValueError(f"{name} must be a finite number >= 0 (milliseconds), got {ms!r}")
    return float(ms)


def recoverable_at(env: AgentEnv, turn: int) -> bool:
    """Whether a fault met during `turn` leaves the agent a turn to recover in.

    The episode ends after the turn budget's last turn, and after a turn that ran over the task's
    time budget; a fault met then cannot be answered (a retry, a re-query) by any agent.
    """
    return turn < env.episode_max_turns and env.elapsed_ms <= env.task.time_budget_ms


def event_detail(detail: Any, recoverable: bool) -> dict[str, Any]:
    """A family's `NoiseEvent.detail` as a log detail dict that always says `recoverable`."""
    if isinstance(detail, dict):
        return {**detail, "recoverable": recoverable}
    return {"description": detail, "recoverable": recoverable}
