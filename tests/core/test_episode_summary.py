"""`AgentEnv.episode_summary`: the summary a loop asks for when a wrapper ended the episode."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded

import agentgym  # noqa: F401  (registers the ids)
from agentgym import ENV_IDS


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_after_the_env_ended_the_episode_it_is_the_summary_of_the_last_info(env_id: str) -> None:
    env = gym.make(env_id, max_turns=2)
    env.reset(seed=1)
    env.step("OK.")
    *_, truncated, info = env.step("OK.")
    assert truncated and env.unwrapped.episode_summary() is info["episode_summary"]
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_asked_while_the_episode_goes_on_it_ends_the_episode(env_id: str) -> None:
    env = gym.make(env_id)
    _, info = env.reset(seed=2)
    env.step("OK.")
    summary = env.unwrapped.episode_summary()
    assert summary["outcome"] == "truncated" and summary["turns"] == 1 and summary["seed"] == 2
    assert summary["max_turns"] == info["max_turns"] and type(summary["score"]) is float
    assert env.unwrapped.episode_summary() is summary  # asked again: the same summary
    with pytest.raises(ResetNeeded):
        env.step("OK.")
    env.reset(seed=2)
    env.step("OK.")
    again = env.unwrapped.episode_summary()
    assert again is not summary and again == summary  # a new episode, replayed
    env.close()


def test_before_the_first_reset_there_is_no_summary() -> None:
    env = gym.make("AgentRL/Dialog-v0")
    with pytest.raises(ResetNeeded):
        env.unwrapped.episode_summary()
    env.close()
