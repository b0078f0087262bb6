"""Extension points of `AgentEnv`, used by the noise wrappers.

A wrapper registers its hooks on the unwrapped env once, at construction. The env calls them at
fixed points of the episode, so a wrapper can fail or corrupt one tool call, add tools, or
perturb the user, without forwarding attributes or re-implementing the episode logic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from agentgym.core.protocol import ToolCall
from agentgym.core.tools import ToolSpec

if TYPE_CHECKING:
    from agentgym.core.env import AgentEnv
    from agentgym.core.task import SimulatedUser

__all__ = ["Intercept", "ExtraTool", "EnvHooks"]


@dataclass(frozen=True, slots=True)
class Intercept:
    """A hook's answer to a tool call, given instead of running the tool.

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
    """A tool added by a wrapper (a distractor): its spec and what calling it does."""

    spec: ToolSpec
    handler: Callable[["AgentEnv", dict[str, Any]], Any]


@dataclass
class EnvHooks:
    """The hook lists of one env; each runs in registration order."""

    #: ``(env, call, turn) -> Intercept | None``: before a valid call runs; the first non-None wins.
    before_call: list[Callable[["AgentEnv", ToolCall, int], Intercept | None]] = field(default_factory=list)
    #: ``(env, call, turn, result) -> result``: after a call succeeded, may replace its result.
    after_call: list[Callable[["AgentEnv", ToolCall, int, Any], Any]] = field(default_factory=list)
    #: ``(env, user) -> None``: at reset, after the user is made and before its opening.
    on_user: list[Callable[["AgentEnv", "SimulatedUser"], None]] = field(default_factory=list)
    #: Tools added by wrappers, by name.
    extra_tools: dict[str, ExtraTool] = field(default_factory=dict)
