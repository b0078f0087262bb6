"""The agent protocol shared by the built-in agents, the harness and user code."""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, TypeVar

from agentgym.agents import transcript
from agentgym.core.render import call_text

__all__ = ["Agent", "call", "tool_results", "settings_from"]

_Config = TypeVar("_Config")


class Agent(abc.ABC):
    """An agent maps observations to assistant turns (strings).

    The runner calls `reset(obs, info)` after each `env.reset`, then `act(obs, info)` once per
    step with what the env returned. A privileged agent (the oracle) also gets the unwrapped env
    through `bind(env)` right after each reset; evaluation reports mark such agents.
    """

    #: The name used by the CLI and in records.
    name: str = "agent"
    #: True for agents that read hidden task state (only the oracle).
    privileged: bool = False

    def config(self) -> dict[str, Any]:
        """The agent's configuration, recorded with every episode."""
        return {}

    def bind(self, env: Any) -> None:
        """Give a privileged agent the unwrapped env of the episode just reset."""

    @abc.abstractmethod
    def reset(self, obs: str, info: dict[str, Any]) -> None:
        """Start a new episode."""

    @abc.abstractmethod
    def act(self, obs: str, info: dict[str, Any]) -> str:
        """The next assistant turn."""


#: A tool call as the JSON action string the envs accept: ``call("search", area="Harbor")``.
call = call_text


def tool_results(info: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (tool name, decoded result) pairs of a step; errors decode to their text."""
    return [(r.name, r.text if r.data is None else r.data) for r in transcript.tool_results(info.get("messages", ()))]


def settings_from(config_cls: type[_Config], kwargs: dict[str, Any], agent: str) -> _Config:
    """An agent's settings dataclass from its keyword arguments (``--agent-arg key=value``),
    naming any unknown setting and the known ones rather than failing on an unexpected keyword.

    Raises:
        ValueError: an unknown setting (the dataclass's own checks raise the rest).
    """
    known = {f.name for f in dataclasses.fields(config_cls)}  # type: ignore[arg-type]
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise ValueError(f"unknown {agent} agent settings {unknown}; known: {sorted(known)}")
    return config_cls(**kwargs)
