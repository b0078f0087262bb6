"""Tests for agentgym.core.summary_alias: the 0.1 key ``info["episode"]`` is the summary's alias
wherever no Gymnasium layer owns the key, and absent wherever one does."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.wrappers import Autoreset, RecordEpisodeStatistics
from gymnasium.wrappers.vector import RecordEpisodeStatistics as VectorRecordEpisodeStatistics

import agentgym  # noqa: F401  (registers the ids)
from agentgym.eval.episode import agent_view

IDS = ["AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"]


def _last_info(env: gym.Env, seed: int = 3) -> dict:
    env.reset(seed=seed)
    while True:
        _, _, terminated, truncated, info = env.step("OK.")
        if terminated or truncated:
            return info


@pytest.mark.parametrize("env_id", IDS)
def test_a_plain_env_keeps_the_alias_as_the_same_dict(env_id: str) -> None:
    info = _last_info(gym.make(env_id, noise="medium"))
    assert info["episode"] is info["episode_summary"]
    assert "episode" not in agent_view(info) and "episode_summary" not in agent_view(info)


@pytest.mark.parametrize("env_id", IDS)
def test_record_episode_statistics_owns_the_key(env_id: str) -> None:
    info = _last_info(RecordEpisodeStatistics(gym.make(env_id)))
    assert set(info["episode"]) == {"r", "l", "t"} and "success" in info["episode_summary"]


def test_an_autoreset_inside_record_episode_statistics_never_brings_the_alias_back() -> None:
    env = RecordEpisodeStatistics(Autoreset(gym.make("AgentRL/Dialog-v0")))
    env.reset(seed=0)
    ends = 0
    for _ in range(60):
        _, _, terminated, truncated, info = env.step("OK.")
        if terminated or truncated:
            ends += 1
            assert set(info["episode"]) == {"r", "l", "t"}
    assert ends >= 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_leave_the_key_to_the_vector_wrapper(mode: str) -> None:
    envs = VectorRecordEpisodeStatistics(gym.make_vec("AgentRL/Dialog-v0", 2, vectorization_mode=mode))
    envs.reset(seed=0)
    ended = 0
    try:
        for _ in range(60):  # several episodes per sub-env, auto-reset in between
            _, _, terminated, truncated, infos = envs.step(["OK."] * 2)
            if terminated.any() or truncated.any():
                ended += 1
                assert set(infos["episode"]) >= {"r", "l", "t"}
    finally:
        envs.close()
    assert ended >= 2
