"""A deep copy of an env mid-episode (what tree search and rollouts from a state do) plays on
exactly as the original, with and without noise, and never shares a world with it."""

from __future__ import annotations

import copy

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent

IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")


@pytest.mark.parametrize("noise", [None, "medium"])
@pytest.mark.parametrize("env_id", IDS)
def test_a_deep_copy_mid_episode_plays_on_as_the_original(env_id: str, noise: str | None) -> None:
    env = gym.make(env_id, **({"noise": noise} if noise else {}))
    agent = make_agent("heuristic")
    obs, info = env.reset(seed=5)
    agent.reset(obs, info)
    for _ in range(3):
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        assert not (terminated or truncated)
    twin = copy.deepcopy(env)
    assert twin.unwrapped.task.world is not env.unwrapped.task.world
    played = []
    for _ in range(40):
        action = agent.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        played.append((action, (obs, reward, terminated, truncated), info.get("episode_summary")))
        if terminated or truncated:
            break
    for action, outcome, summary in played:
        *got, twin_info = twin.step(action)
        assert tuple(got) == outcome
        assert twin_info.get("episode_summary") == summary
