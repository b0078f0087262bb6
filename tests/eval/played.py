"""Real records for the results tests: the heuristic played on every family under every noise kind.

`played` plays the episodes once per test session (a few seconds); `write_run` lays records
out as a run folder, the way `agentgym eval` and `agentgym bench` leave them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Iterable

from agentgym.agents.base import Agent
from agentgym.eval.records import RecordWriter
from agentgym.eval.runner import AgentSpec, EpisodeJob, play_job

#: Every noise kind, at rates that give each episode several faults.
NOISY = "tool_failure=0.3,corruption=0.3,ambiguity=0.5,goal_shift=0.5,latency=300,distractors=2,typos=0.2"
ENV_IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
#: The agent of turns that fail to parse or to validate (`SloppyAgent`).
SLOPPY = "played:SloppyAgent"


class SloppyAgent(Agent):
    """Sends what a careless model does, in turn: broken JSON, an unknown tool, a call with bad
    arguments, a turn of two calls, a huge message; then the heuristic's turns (`played:SloppyAgent`)."""

    name = "sloppy"
    TURNS = ('{"name": "search", "arguments": {', '{"name": "teleport", "arguments": {}}',
             '{"name": "search", "arguments": {"max_price": "cheap"}}',
             '<tool_call>{"name": "search", "arguments": {}}</tool_call><tool_call>{"name": "nope", "arguments": {}}'
             '</tool_call>', "x" * 70_000)

    def __init__(self) -> None:
        from agentgym.agents import make_agent

        self._then = make_agent("heuristic")

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._turn = 0
        self._then.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._turn += 1
        if self._turn <= len(self.TURNS):
            return self.TURNS[self._turn - 1]
        return self._then.act(obs, info)


@functools.lru_cache(maxsize=None)
def played(env_id: str, seeds: int = 6, noise: str | None = NOISY, agent: str = "heuristic") -> tuple[dict[str, Any], ...]:
    """The records of `agent` on seeds 0..seeds-1 of `env_id` (do not edit them: they are shared)."""
    return tuple(play_job(EpisodeJob(env_id, seed=s, noise=noise), AgentSpec(agent)) for s in range(seeds))


def every_family(seeds: int = 6) -> list[dict[str, Any]]:
    """The noisy records of every family, a few clean ones (no latency: no simulated time) and a
    few of an agent whose turns fail to parse or validate."""
    out = [r for env_id in ENV_IDS for r in played(env_id, seeds)]
    return out + list(played("AgentRL/Dialog-v0", 3, None)) + list(played("AgentRL/Dialog-v0", 2, NOISY, SLOPPY))


def write_run(folder: Path, records: Iterable[dict[str, Any]]) -> Path:
    """A run folder holding `records` in its records.jsonl."""
    with RecordWriter(folder / "records.jsonl") as w:
        for rec in records:
            w.write(rec)
    return folder
