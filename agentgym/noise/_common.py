"""What every noise wrapper shares: its base class, finding the `AgentEnv` underneath, checking
a rate, and telling whether a fault met at some turn still leaves the agent a way to recover."""

from __future__ import annotations

import copy
import math
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils import RecordConstructorArgs

from agentgym.core.env import AgentEnv
from agentgym.core.hooks import RESET_POINTS, STEP_POINTS

__all__ = ["NoiseWrapper", "agent_env", "check_rate", "check_count", "check_ms", "recoverable_at", "event_detail"]


class NoiseWrapper(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """A noise layer: a Gymnasium wrapper that acts while its own `reset` or `step` runs.

    A fault must land inside the env's step (a failed call never runs), so the env has fixed
    points where a layer may act (`agentgym.core.hooks`). A layer's `reset` and `step` enter its
    points on the `AgentEnv` underneath, call the env beneath the layer as any wrapper does, and
    leave its points when that call returns: nothing is registered on the env, every wrapper of
    the stack runs on the way down, and the unwrapped env, stepped on its own, injects nothing.
    Layers act innermost first (see `agentgym.core.hooks`), so the order of a stack is the order
    its faults compose in; `gym.make(id, noise=...)` applies them in the canonical order of
    `agentgym.noise.spec.KINDS`.

    A subclass's arguments are checked by its `check` alone and applied by its `_configure`;
    its `__init__` is ``super().__init__(env, **self.check(...))``. `from_checked` builds a
    layer from arguments `check` has already passed (a parsed noise spec), so every value is
    checked once whichever way the layer is made.

    A layer keeps the episode's stream of its kind once it has drawn from it (`_stream`, from
    `AgentEnv.noise_rng`) and forgets it in its own `reset`: like any wrapper that keeps episode
    state (Gymnasium's `TimeLimit`), it expects every episode's reset to pass through it.

    `spec` equals `gym.Wrapper.spec`, built afresh on each access (`gym.make` puts
    `OrderEnforcing` on top, which caches it): `gym.Wrapper` deep-copies the spec underneath at
    every layer and keeps each copy, so a stack of layers would hold one growing copy per layer.
    Here the spec under the noise stack is copied once per access and no layer keeps one.

    Args:
        env: an agentgym env (any stack over an `AgentEnv`).
        **checked: the constructor arguments, as `check` returned them; recorded as they are
            (fresh plain values, lists rather than tuples: they must survive the spec's JSON
            round trip), so not copied.
    """

    #: The episode's stream of this layer's kind, once drawn from in this episode (else None).
    _stream: Any = None
    #: Whether the layer's per-call draws are keyed on the call (the call layers' ``keyed``).
    _keyed = False

    def __init__(self, env: gym.Env, **checked: Any) -> None:
        RecordConstructorArgs.__init__(self, _disable_deepcopy=True, **checked)
        gym.Wrapper.__init__(self, env)
        self._base = agent_env(env, type(self))
        hooks = self._base.hooks
        # The point lists this layer enters in its reset (each layer's reset forgets its own
        # stream, so every reset passes through every layer). What its step enters: per point
        # list, the layers that enter it, this one and the plain layers' beneath it (`_entries`),
        # and the env that step calls.
        self._reset_points = hooks.lists(type(self), RESET_POINTS)
        self._step_entries, self._step_below = _entries(self, env, hooks.lists(type(self), STEP_POINTS))
        self._configure(**checked)

    @classmethod
    def check(cls, **kwargs: Any) -> dict[str, Any]:
        """The constructor arguments checked: every one, defaults included, as the layer records
        them. Raises ValueError naming the bad one."""
        return kwargs

    @classmethod
    def from_checked(cls, env: gym.Env, checked: dict[str, Any]) -> "NoiseWrapper":
        """The layer over `env` with arguments `check` returned (not checked again)."""
        layer = cls.__new__(cls)
        NoiseWrapper.__init__(layer, env, **checked)
        return layer

    def _configure(self, **checked: Any) -> None:
        """Keep the checked arguments in the form the layer acts with."""

    def _strikes(self, env: AgentEnv, kind: str, call: Any, rate: float) -> Any:
        """The generator of this layer's further draws when a fault of `kind` strikes `call` (at
        `rate`), else None: the episode's stream of the kind, or, for a layer that is ``keyed``
        (the spec's ``draws=call``), draws keyed on the call (`AgentEnv.call_uniform`,
        `AgentEnv.call_rng`)."""
        if self._keyed:
            return env.call_rng(kind, call) if env.call_uniform(kind, call) < rate else None
        rng = self._stream or self._first_draw(kind)
        return rng if rng.random() < rate else None

    def _first_draw(self, kind: str) -> Any:
        """The episode's stream for `kind` (`AgentEnv.noise_rng`), kept as `_stream` for the
        episode's later draws: ``rng = self._stream or self._first_draw(kind)``."""
        self._stream = self._base.noise_rng(kind)
        return self._stream

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        self._stream = None
        points = self._reset_points
        if not points:
            return self.env.reset(seed=seed, options=options)
        for acting in points:
            acting.insert(0, self)
        try:
            return self.env.reset(seed=seed, options=options)
        finally:
            for acting in points:
                del acting[0]

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        entries = self._step_entries
        if not entries:
            return self._step_below.step(action)
        for acting, layers, entered in entries:
            acting[_FRONT] = layers
        try:
            return self._step_below.step(action)
        finally:
            for acting, _layers, entered in entries:
                del acting[entered]

    @property
    def spec(self) -> EnvSpec | None:
        """`gym.Wrapper.spec`'s value, built afresh on each access (see the class docstring)."""
        inner = self.env
        # A noise layer underneath builds a new spec for this call alone: ours to extend.
        spec = inner.spec if isinstance(inner, NoiseWrapper) else _copied(inner.spec)
        if spec is not None:
            spec.additional_wrappers += (self.wrapper_spec(**copy.deepcopy(self._saved_kwargs)),)
        return spec


#: Where a step's layers enter a point list: at its front, innermost first (`_entries`).
_FRONT = slice(0, 0)


def _passes_plainly(env: gym.Env) -> bool:
    """Whether `env` is a noise layer whose step is `NoiseWrapper`'s own."""
    return isinstance(env, NoiseWrapper) and type(env).step is NoiseWrapper.step


def _entries(layer: NoiseWrapper, env: gym.Env,
             points: tuple[list[Any], ...]) -> tuple[tuple[tuple[list[Any], tuple[Any, ...], slice], ...], gym.Env]:
    """What `layer`'s step enters, and the env it then calls.

    A layer that passes a step plainly (`_passes_plainly`) does nothing but enter its points and
    call the env beneath it. So a layer over such a layer enters both layers' points at once
    and calls the env beneath both: the point lists hold what the nested calls would put there
    (innermost first, `agentgym.core.hooks`), and every layer of the stack still acts while its
    call runs. Returns ((point list, layers entering it, innermost first, the slice of the list
    they fill), ...) and that env.
    """
    own: dict[int, tuple[list[Any], list[Any]]] = {id(p): (p, [layer]) for p in points}
    below = env
    if _passes_plainly(env):
        below = env._step_below
        for acting, layers, _entered in env._step_entries:
            own.setdefault(id(acting), (acting, []))[1][0:0] = layers
    return tuple((acting, tuple(layers), _front(len(layers))) for acting, layers in own.values()), below


#: ``slice(0, n)`` by n: slices are immutable, so every layer of every env shares these (a stack
#: holds one layer per noise kind, fewer than these).
_FRONTS = tuple(slice(0, n) for n in range(16))


def _front(n: int) -> slice:
    """``slice(0, n)``, shared for the n a stack of noise layers can have."""
    return _FRONTS[n] if n < len(_FRONTS) else slice(0, n)


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
    """The `AgentEnv` at the bottom of `env`'s stack (whose points a layer enters while it acts).

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


def check_keyed(keyed: Any) -> dict[str, bool]:
    """A call layer's ``keyed`` argument as its recorded arguments hold it: ``{"keyed": True}``,
    or nothing for the default (the episode's stream), so a spec without it records as before."""
    if not isinstance(keyed, bool):
        raise ValueError(f"keyed must be true or false, got {keyed!r}")
    return {"keyed": True} if keyed else {}


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
