"""What every noise wrapper shares: its base class, finding the `AgentEnv` underneath, checking
a rate, and telling whether a fault met at some turn still leaves the agent a way to recover."""

from __future__ import annotations

import copy
import math
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils import RecordConstructorArgs

from agentgym.core._fast import LayerRun
from agentgym.core.env import AgentEnv

__all__ = ["NoiseWrapper", "agent_env", "check_rate", "check_count", "check_ms", "recoverable_at", "event_detail"]


class NoiseWrapper(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """A noise layer: a Gymnasium wrapper that acts only while a `reset` or `step` passes through it.

    It records its constructor arguments (its layer of ``env.spec``) and registers itself on the
    `AgentEnv` underneath (`agentgym.core.hooks`), which calls it at fixed points of the episode
    while it is `acting`: a fault then lands inside the step (a failed call never runs), and the
    unwrapped env, stepped on its own, injects nothing. Layers act innermost first (see
    `agentgym.core.hooks`), so the order of a stack is the order its faults compose in;
    `gym.make(id, noise=...)` applies them in the canonical order of `agentgym.noise.spec.KINDS`.

    A layer that passes calls through plainly (it overrides neither `step` nor `reset`) shares
    one `agentgym.core._fast.LayerRun` with the plain layers directly beneath it.

    `spec` equals `gym.Wrapper.spec`, built afresh on each access (`gym.make` puts
    `OrderEnforcing` on top, which caches it): `gym.Wrapper` deep-copies the spec underneath at
    every layer and keeps each copy, so a stack of layers would hold one growing copy per layer.
    Here the spec under the noise stack is copied once per access and no layer keeps one.

    Args:
        env: an agentgym env (any stack over an `AgentEnv`).
        **recorded: the constructor arguments to record, already checked and fresh plain values
            (lists, not tuples: they must survive the spec's JSON round trip), so not copied.
    """

    def __init__(self, env: gym.Env, **recorded: Any) -> None:
        RecordConstructorArgs.__init__(self, _disable_deepcopy=True, **recorded)
        gym.Wrapper.__init__(self, env)
        self._base = agent_env(env, type(self))
        if _passes_plainly(self) and _passes_plainly(env):
            self._run, self._index = env._run, env._index + 1
        else:
            self._run, self._index = LayerRun(env), 0
        self._base.hooks.register(self)

    @property
    def acting(self) -> bool:
        """Whether a reset or step passes through this layer now (the env calls it only then)."""
        return self._index <= self._run.top

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        run = self._run
        outer, run.top = run.top, self._index
        try:
            return run.below.reset(seed=seed, options=options)
        finally:
            run.top = outer

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        run = self._run
        outer, run.top = run.top, self._index
        try:
            return run.below.step(action)
        finally:
            run.top = outer

    @property
    def spec(self) -> EnvSpec | None:
        """`gym.Wrapper.spec`'s value, built afresh on each access (see the class docstring)."""
        inner = self.env
        # A noise layer underneath builds a new spec for this call alone: ours to extend.
        spec = inner.spec if isinstance(inner, NoiseWrapper) else _copied(inner.spec)
        if spec is not None:
            spec.additional_wrappers += (self.wrapper_spec(**copy.deepcopy(self._saved_kwargs)),)
        return spec


def _passes_plainly(env: gym.Env) -> bool:
    """Whether `env` is a noise layer that passes reset and step through as `NoiseWrapper` does."""
    cls = type(env)
    return isinstance(env, NoiseWrapper) and cls.step is NoiseWrapper.step and cls.reset is NoiseWrapper.reset


def _copied(spec: EnvSpec | None) -> EnvSpec | None:
    """A deep copy of `spec`; None, as `gym.Wrapper.spec` gives, when it is None or cannot be copied."""
    if spec is None:
        return None
    try:
        return copy.deepcopy(spec)
    except Exception as exc:
        gym.logger.warn(f"An exception occurred ({exc}) while copying the environment spec={spec}")
        return None


def agent_env(env: gym.Env, wrapper: type[gym.Wrapper]) -> AgentEnv:
    """The `AgentEnv` at the bottom of `env`'s stack (where a layer registers).

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
