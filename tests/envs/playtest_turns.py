"""A kept playtest's turns (`benchmarks/playtests/turns/`), replayed into a fresh env: the tests of
the users' readings that playtests found wanting start where the playtest stood."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)

TURNS = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns"


def replayed(env_id: str, seed: int, split: str, difficulty: str, turns: int,
             noise: str | None = None) -> tuple[Any, list[str]]:
    """The env of a kept playtest after its first `turns` turns, and all its turns (a ``.jsonl``
    file of the family, seed and split: one JSON string a line)."""
    family = env_id.split("/")[1].split("-")[0].lower()
    lines = (TURNS / f"{family}-{seed}-{split}.jsonl").read_text("utf-8").splitlines()
    actions = [json.loads(line) for line in lines if line.strip()]
    env = gym.make(env_id, split=split, difficulty=difficulty, **({"noise": noise} if noise else {}))
    env.reset(seed=seed)
    for action in actions[:turns]:
        env.step(action)
    return env, actions
