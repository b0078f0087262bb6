"""Trivial agents: the baselines a grader must not be fooled by (all score 0 by design).

`ConstantAgent` sends the same text every turn ("OK.", "", "{}" ...); `EchoAgent` sends back
the observation it got. Both exist so anyone can check a suite or a new env against them:
``agentgym eval ID --agent agentgym.agents.trivial:ConstantAgent --agent-arg text=OK.``
"""

from __future__ import annotations

from typing import Any

from agentgym.agents.base import Agent

__all__ = ["ConstantAgent", "EchoAgent"]


class ConstantAgent(Agent):
    """Says `text` every turn.

    Args:
        text: the turn to send (default "OK.").
    """

    name = "constant"

    def __init__(self, text: str = "OK.") -> None:
        self.text = text

    def config(self) -> dict[str, Any]:
        return {"text": self.text}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        pass

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self.text


class EchoAgent(Agent):
    """Sends back the observation it was given."""

    name = "echo"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        pass

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return obs
