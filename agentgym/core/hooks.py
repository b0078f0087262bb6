"""Extension points of `AgentEnv`, where the noise layers act while their own call runs.

A fault must land inside the episode where only the env can put it (a failed call never runs, a
corrupted result is what the env records and reasons about), so the env has fixed points where a
noise layer may act (the table below). Nothing is registered on the env: a noise layer's own
``reset`` or ``step`` enters it at its points for the length of that call and leaves them when
the call returns (`agentgym.noise._common.NoiseWrapper`). So a layer acts exactly while a call
passes through it on its way to the env, every wrapper of the stack runs on that way, and the
unwrapped env, reset or stepped on its own, injects nothing.

Layers act in stack order, innermost first: at each point the layer nearest the env acts first,
and each layer further out acts on what the layers beneath it left. A call that one layer answers
(an injected failure) is not seen by the layers outside it. The `policy` point is the exception:
every policy layer acting (`agentgym.noise.ActionConstraint`) checks a call before any noise
layer sees it, wherever it sits in the stack, since a refused call is never sent.

| point | signature | when |
|---|---|---|
| ``on_reset`` | ``(env, user) -> None`` | at reset, after the user is made and before its opening |
| ``extra_tools`` | ``dict[str, ExtraTool]`` (an attribute) | listed at reset after the real tools; callable in steps |
| ``policy`` | ``(env, call, turn) -> Intercept or None`` | before a valid call runs; the first answer wins |
| ``before_call`` | ``(env, call, turn) -> Intercept or None`` | after the policy; the first answer wins |
| ``after_call`` | ``(env, call, spec, turn, result) -> result`` | after a call succeeded; may replace its result |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from agentgym.core.tools import ToolSpec

__all__ = ["Intercept", "ExtraTool", "EnvHooks", "POINTS", "RESET_POINTS", "STEP_POINTS"]

#: The extension points, in the order an episode reaches them.
POINTS = ("on_reset", "extra_tools", "policy", "before_call", "after_call")
#: The points a reset reaches, and those a step reaches (the decoys are listed at reset and
#: called in steps).
RESET_POINTS = ("on_reset", "extra_tools")
STEP_POINTS = ("extra_tools", "policy", "before_call", "after_call")


@dataclass(frozen=True, slots=True)
class Intercept:
    """A layer's answer to a tool call, given instead of running the tool.

    Attributes:
        content: the tool message the agent sees.
        error: an error code for the call record (e.g. ``TOOL_ERROR``, ``BLOCKED``), or None.
        injected: True when noise caused it, so metrics never blame the agent for it.
    """

    content: str
    error: str | None = None
    injected: bool = True


@dataclass(frozen=True, slots=True)
class ExtraTool:
    """A tool a layer adds (a decoy): its spec and what calling it does, ``handler(env,
    arguments) -> result`` with the `AgentEnv` running the call."""

    spec: ToolSpec
    handler: Callable[[Any, dict[str, Any]], Any]


@dataclass
class EnvHooks:
    """The layers acting on one env now, per point, innermost first; every list is empty
    between calls.

    A layer enters its points at the front of each list as its call begins and leaves the front
    as its call returns: calls nest (an outer layer's call runs the inner layer's), so the
    innermost layer acting is always first.
    """

    on_reset: list[Any] = field(default_factory=list)
    extra_tools: list[Any] = field(default_factory=list)
    policy: list[Any] = field(default_factory=list)
    before_call: list[Any] = field(default_factory=list)
    after_call: list[Any] = field(default_factory=list)

    def lists(self, layer_type: type, points: tuple[str, ...]) -> tuple[list[Any], ...]:
        """The lists, among `points`, of the points `layer_type` defines (see the module docstring)."""
        return tuple(getattr(self, p) for p in points if getattr(layer_type, p, None) is not None)
