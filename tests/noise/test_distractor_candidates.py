"""The decoys looked up by a toolkit's key are those its tool specs give."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym import ENV_IDS
from agentgym.noise import distractors


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_candidates_by_key_are_the_decoys_of_the_episode_tool_specs(env_id: str) -> None:
    env = gym.make(env_id)
    for seed in range(16):
        options = {"difficulty": ("easy", "medium", "hard")[seed % 3]}
        env.reset(seed=seed, options=options)
        toolkit = env.unwrapped.toolkit
        want = distractors._extra_tools(tuple(toolkit.tool_specs().values()))
        assert distractors._candidates(toolkit) == want
