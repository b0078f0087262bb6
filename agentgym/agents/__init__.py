"""Agents: the `Agent` protocol and the built-in reference agents, looked up by name."""

from __future__ import annotations

import importlib
from typing import Any

from agentgym.agents.base import Agent

__all__ = ["Agent", "AGENTS", "agent_class", "make_agent"]

#: Built-in agents by CLI name -> "module:Class" (imported lazily, so heavy agents cost nothing).
AGENTS: dict[str, str] = {
    "random": "agentgym.agents.random_agent:RandomAgent",
    "heuristic": "agentgym.agents.heuristic:HeuristicAgent",
    "expert": "agentgym.agents.expert:ExpertAgent",
    "oracle": "agentgym.agents.oracle:OracleAgent",
    "ppo": "agentgym.baselines.ppo.agent:PPOAgent",
    "transformers": "agentgym.agents.transformers_agent:TransformersAgent",
    "openai": "agentgym.agents.openai_agent:OpenAIAgent",
}


def agent_class(spec: str) -> type:
    """The class behind a built-in agent name or a ``module:Class`` path, imported, not built.

    Raises:
        ValueError: the name is unknown or the path does not resolve.
    """
    target = AGENTS.get(spec, spec)
    if ":" not in target:
        raise ValueError(f"unknown agent {spec!r}; built-in agents: {', '.join(AGENTS)}; or give module:Class")
    module_name, _, cls_name = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load agent {spec!r}: {exc}") from exc


def make_agent(spec: str, **kwargs: Any) -> Agent:
    """An agent from a built-in name or a ``module:Class`` path.

    Raises:
        ValueError: the name is unknown or the path does not resolve to an `Agent` class.
    """
    agent = agent_class(spec)(**kwargs)
    if not hasattr(agent, "act") or not hasattr(agent, "reset"):
        raise ValueError(f"{spec!r} is not an agent: it needs reset(obs, info) and act(obs, info)")
    return agent
