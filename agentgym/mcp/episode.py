"""One MCP session's episode: the env's tools and `say` as MCP tools, each call one env step.

A tool call ``name(arguments)`` is stepped as an assistant message holding that one call (the
env names the call, as for any agent that sends no id); ``say(message)`` is stepped as an
assistant message to the user. What the call returns is the step's observation text, exactly as
the env returned it; the structured part says whether the episode ended (and its reward), never
the info (the task's hidden goal is in there). The episode's record is the record any run writes
(`agentgym.eval.episode.EpisodeState`), with the MCP client as its declared agent.
"""

from __future__ import annotations

from typing import Any

from agentgym.eval.episode import EpisodeState
from agentgym.eval.jobs import AgentSpec, EpisodeJob
from agentgym.eval.record_budget import RecordTooLarge

__all__ = ["SAY", "McpAgent", "McpEpisode", "StepResult", "tool_turn"]

#: The tool that speaks to the user.
SAY = "say"
_SAY_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "What to tell or ask the user."}},
    "required": ["message"],
    "additionalProperties": False,
}


def tool_turn(name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The assistant turn an MCP tool call is stepped as (`say`: a message to the user)."""
    if name == SAY:
        message = (arguments or {}).get("message", "")
        return {"role": "assistant", "content": message if isinstance(message, str) else str(message)}
    call = {"type": "function", "function": {"name": name, "arguments": arguments or {}}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class McpAgent:
    """The agent of an MCP session as its record names it: it acts elsewhere and never reads the
    env, so it is never privileged."""

    privileged = False

    def __init__(self, client: dict[str, Any]) -> None:
        self._config = {"client": client}

    def config(self) -> dict[str, Any]:
        return self._config


class StepResult:
    """What a tool call returns: the observation text, and how the step ended."""

    __slots__ = ("text", "reward", "terminated", "truncated", "error")

    def __init__(self, text: str, reward: float = 0.0, terminated: bool = False, truncated: bool = False,
                 error: bool = False) -> None:
        self.text, self.reward, self.terminated, self.truncated, self.error = text, reward, terminated, truncated, error

    def structured(self) -> dict[str, Any]:
        """The structured part of the result (no info: it holds the task's hidden goal)."""
        return {"reward": self.reward, "terminated": self.terminated, "truncated": self.truncated}


class McpEpisode:
    """An episode played through MCP tool calls.

    Args:
        job: the episode.
        env: the env to play it in (made by the caller, reset here).
        client: the MCP client's name and version, for the record.
    """

    def __init__(self, job: EpisodeJob, env: Any, client: dict[str, Any]) -> None:
        self.state = EpisodeState(job, AgentSpec("mcp"), env=env, agent=McpAgent(client))
        self.tools: list[dict[str, Any]] = [t["function"] for t in self.state.info.get("tools", ())]
        if any(t["name"] == SAY for t in self.tools):
            raise ValueError(f"env {job.env_id} has a tool named {SAY!r}, the name of the tool that speaks to the user")
        #: The record, once the episode ended (None before).
        self.record: dict[str, Any] | None = None

    @property
    def observation(self) -> str:
        """The reset's observation: the brief and the user's first message."""
        return str(self.state.reset_obs)

    @property
    def ended(self) -> bool:
        return self.record is not None

    def tool_specs(self) -> list[tuple[str, str, dict[str, Any]]]:
        """``(name, description, input JSON schema)`` of every tool: the env's, then `say`."""
        specs = [(t["name"], t.get("description", ""), t.get("parameters") or {"type": "object"}) for t in self.tools]
        return [*specs, (SAY, "Send a message to the user (answer, ask or confirm); returns the user's reply.",
                         _SAY_SCHEMA)]

    def call(self, name: str, arguments: dict[str, Any] | None) -> StepResult:
        """Step the env with the tool call; the record is made when the episode ends."""
        if self.ended:
            return StepResult("The episode has ended: no more calls.", error=True)
        state = self.state
        try:
            done = state.apply(tool_turn(name, arguments))
        except RecordTooLarge as exc:
            state.fail(exc)
            self.record = state.record()
            return StepResult(f"The episode ended: {exc}", error=True, truncated=True)
        reward = state.rewards[-1]
        if done:
            self.record = state.record()
        return StepResult(str(state.obs), reward, state.terminated, state.truncated)
