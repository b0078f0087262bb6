"""`SubtaskRewards` moves when a cross-task session's reward is paid, never how much: every
episode's return is the env's, each sub-task that succeeds is paid its share on the step it ends,
and an env without sub-tasks passes through untouched."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

from agentgym.agents import make_agent
from agentgym.wrappers import SubtaskRewards


def _play(env_id: str, seed: int, wrap: bool, agent: str = "heuristic") -> tuple[list[float], list[dict[str, Any]]]:
    """The rewards of one episode and its infos, the reset's first."""
    env = gym.make(env_id, split="train")
    if wrap:
        env = SubtaskRewards(env)
    player = make_agent(agent, seed=seed) if agent == "random" else make_agent(agent)
    obs, info = env.reset(seed=seed)
    player.reset(obs, info)
    rewards, infos, done = [], [info], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(player.act(obs, info))
        rewards.append(float(reward))
        infos.append(info)
        done = terminated or truncated
    env.close()
    return rewards, infos


@pytest.mark.parametrize("agent", ["heuristic", "random"])
@pytest.mark.parametrize("seed", range(6))
def test_the_return_is_the_envs(agent: str, seed: int) -> None:
    plain, _ = _play("AgentRL/CrossTask-v0", seed, wrap=False, agent=agent)
    paid, infos = _play("AgentRL/CrossTask-v0", seed, wrap=True, agent=agent)
    assert len(paid) == len(plain) == len(infos) - 1
    assert sum(paid) == pytest.approx(sum(plain), abs=1e-9)
    assert infos[-1]["episode_summary"]["score"] == pytest.approx(sum(plain), abs=1e-9)


def test_a_sub_task_that_succeeds_is_paid_its_share_when_it_ends() -> None:
    paid_early = 0
    for seed in range(8):
        rewards, infos = _play("AgentRL/CrossTask-v0", seed, wrap=True)
        share = 1 / len(infos[0]["task"]["domain"].split("+"))
        for reward, info in zip(rewards[:-1], infos[1:-1]):
            ended = [s["ended"] for s in info.get("segment_switch") or () if s.get("ended")]
            assert reward == pytest.approx(share * sum(e["success"] for e in ended))
            paid_early += bool(reward)
    assert paid_early >= 8, "the heuristic's sessions should have sub-tasks that succeed before the last"


@pytest.mark.parametrize("env_id", ["AgentRL/Dialog-v0", "AgentRL/ToolUse-v0"])
def test_an_env_without_sub_tasks_passes_through(env_id: str) -> None:
    for seed in range(3):
        assert _play(env_id, seed, wrap=True)[0] == _play(env_id, seed, wrap=False)[0]
