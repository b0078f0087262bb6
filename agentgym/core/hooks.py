"""Extension points of `AgentEnv`, where the noise wrappers act.

A noise wrapper is a layer around the env. It registers itself once, at construction, on the
`AgentEnv` underneath (`EnvHooks.register`), for the points its class defines (the table below).
The env calls a registered layer only while the layer is *acting*, that is while a ``reset`` or
``step`` passes through the layer on its way to the env (`agentgym.noise._common.NoiseWrapper`). So
a fault lands inside the episode where only the env can put it (a failed call never runs, a
corrupted result is what the env records and reasons about), yet the unwrapped env, reset or stepped
on its own, injects nothing.

Registered layers act in stack order, innermost first: at each point the layer nearest the env
acts first, and each layer further out acts on what the layers beneath it left. A call that one
layer answers (an injected failure) is not seen by the layers outside it. The `policy` point is
the exception: every policy layer acting (`agentgym.noise.ActionConstraint`) checks a call before
any noise layer sees it, wherever it sits in the stack, since a refused call is never sent.

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
from typing import TYPE_CHECKING, Any, Callable

from agentgym.core.tools import ToolSpec

if TYPE_CHECKING:
    from agentgym.core.env import AgentEnv

__all__ = ["Intercept", "ExtraTool", "EnvHooks", "POINTS"]

#: The extension points, in the order an episode reaches them.
POINTS = ("on_reset", "extra_tools", "policy", "before_call", "after_call")


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
    """A tool a layer adds (a distractor): its spec and what calling it does."""

    spec: ToolSpec
    handler: Callable[["AgentEnv", dict[str, Any]], Any]


@dataclass
class EnvHooks:
    """The layers registered on one env, per point, innermost first (registration order: a layer
    is made around the stack beneath it, so it registers after every layer of that stack)."""

    on_reset: list[Any] = field(default_factory=list)
    extra_tools: list[Any] = field(default_factory=list)
    policy: list[Any] = field(default_factory=list)
    before_call: list[Any] = field(default_factory=list)
    after_call: list[Any] = field(default_factory=list)

    def register(self, layer: Any) -> None:
        """Register `layer` at every point its class defines (see the module docstring).

        The layer must have an `acting` attribute, True exactly while a reset or step passes
        through it.
        """
        for point in POINTS:
            if getattr(type(layer), point, None) is not None:
                getattr(self, point).append(layer)
