"""An agent that replays recorded actions: the harness and the bare loop play real episodes with it.

`agentgym.eval.runner.run_jobs` builds its agent by name in the process that plays, so the
actions come from a file: a JSON object from ``"<difficulty>|<split>|<seed>"`` to the episode's
actions, one id and noise preset per file (`episode_key` picks an episode out of a reset's info).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym.agents.base import Agent


def episode_key(difficulty: str, split: str, seed: int) -> str:
    """The key of one episode in a replay file."""
    return f"{difficulty}|{split}|{seed}"


class ReplayAgent(Agent):
    """Plays the recorded actions of the episode the env was reset to.

    Args:
        path: the replay file (see the module docstring).
    """

    name = "replay"

    def __init__(self, path: str) -> None:
        self.path = path
        self._episodes: dict[str, list[Any]] = json.loads(Path(path).read_text("utf-8"))
        self._actions: list[Any] = []
        self._next = 0

    def config(self) -> dict[str, Any]:
        return {"path": self.path}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        task = info["task"]
        self._actions = self._episodes[episode_key(task["difficulty"], task["split"], info["seed"])]
        self._next = 0

    def act(self, obs: str, info: dict[str, Any]) -> Any:
        """The next recorded action; IndexError when the episode outlives its recording."""
        action = self._actions[self._next]
        self._next += 1
        return action
