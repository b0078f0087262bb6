"""Gymnasium's own wrappers over every live id: the episode statistics wrappers (single and vector,
sync and async), and `TimeLimit` from ``gym.make(id, max_episode_steps=N)`` or applied by hand,
which must end the episode with the same summary as running out of turns."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from gymnasium.wrappers import RecordEpisodeStatistics, TimeLimit
from gymnasium.wrappers.vector import RecordEpisodeStatistics as VectorRecordEpisodeStatistics

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.heuristic import STRATEGIES
from agentgym.eval.records import spec_dict
from agentgym.registration import REMOTE_ID
from agentgym.testing import canonical_json, probe_actions

ENV_IDS = sorted(i for i in gym.registry if i.startswith("AgentRL/") and i != REMOTE_ID)

#: Turns that end no episode within a few steps: questions and acknowledgements, no commitment.
IDLE = ["What else should I know?", "OK.", "Could you tell me more?", "Thanks.", "Go on.", "OK.", "Sure."]


def _play(env: gym.Env, seed: int, actions: list[Any]) -> list[str]:
    """Every result of an episode as canonical JSON, until it ends or the actions run out."""
    obs, info = env.reset(seed=seed)
    out = [canonical_json([obs, info])]
    for action in actions:
        result = env.step(action)
        out.append(canonical_json(list(result)))
        if result[2] or result[3]:
            break
    return out


def _agent(info: dict[str, Any]) -> Any:
    return make_agent("heuristic") if info["task"]["family"] in STRATEGIES else make_agent("random", seed=1)


# ------------------------------------------------------------------ RecordEpisodeStatistics
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_record_episode_statistics_counts_our_episodes(env_id: str) -> None:
    env = RecordEpisodeStatistics(gym.make(env_id))
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        agent = _agent(info)
        agent.reset(obs, info)
        total = 0.0
        for _ in range(500):
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            total += float(reward)
            if terminated or truncated:
                break
        summary, stats = info["episode_summary"], info["episode"]
        assert set(stats) == {"r", "l", "t"}
        assert stats["r"] == pytest.approx(total) == summary["score"]
        assert stats["l"] == summary["turns"]
    assert len(env.return_queue) == 2
    env.close()


@pytest.mark.parametrize("vector", ["sync", "async"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_record_episode_statistics_counts_our_episodes(env_id: str, vector: str) -> None:
    makers = [lambda: gym.make(env_id, max_turns=3) for _ in range(2)]
    inner = SyncVectorEnv(makers) if vector == "sync" else AsyncVectorEnv(makers)
    venv = VectorRecordEpisodeStatistics(inner)
    venv.reset(seed=[11, 12])
    ended = np.zeros(2, dtype=bool)
    for _ in range(4):
        _, rewards, terminated, truncated, infos = venv.step(("Which area do you prefer?", "OK."))
        done = terminated | truncated
        if done.any():
            assert list(infos["_episode"]) == list(done) == list(infos["_episode_summary"])
            for i in np.flatnonzero(done):
                assert infos["episode"]["l"][i] == infos["episode_summary"]["turns"][i] == 3
                assert infos["episode"]["r"][i] == pytest.approx(infos["episode_summary"]["score"][i])
                assert infos["episode_summary"]["outcome"][i] == "truncated"
            ended |= done
    assert ended.all()
    venv.close()


# ------------------------------------------------------------------ TimeLimit
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_max_episode_steps_truncates_like_the_turn_budget(env_id: str) -> None:
    limited = gym.make(env_id, max_episode_steps=3)
    budget = gym.make(env_id, max_turns=3)
    assert limited.spec.max_episode_steps == 3
    for seed in (0, 1, 2):
        got = _play(limited, seed, IDLE)
        assert got == _play(budget, seed, IDLE), f"{env_id} seed {seed}"
        _, info = limited.reset(seed=seed)
        assert info["max_turns"] == 3
        for action in IDLE[:3]:
            *_, terminated, truncated, info = limited.step(action)
        assert truncated and not terminated
        assert info["episode_summary"]["outcome"] == "truncated" and info["episode_summary"]["turns"] == 3
        assert info["episode_summary"]["max_turns"] == 3
    limited.close()
    budget.close()


@pytest.mark.parametrize("noise", [None, "medium"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_time_limit_applied_by_hand_truncates_like_the_turn_budget(env_id: str, noise: str | None) -> None:
    kwargs = {"noise": noise} if noise else {}
    by_hand = TimeLimit(gym.make(env_id, **kwargs), max_episode_steps=4)
    budget = gym.make(env_id, max_turns=4, **kwargs)
    probe = gym.make(env_id)
    for seed in (3, 4):
        _, info = probe.reset(seed=seed)
        actions = probe_actions(info["tools"], seed, n=3) + IDLE
        assert _play(by_hand, seed, actions) == _play(budget, seed, actions), f"{env_id} seed {seed}"
    for env in (by_hand, budget, probe):
        env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_time_limit_past_the_env_budget_changes_nothing(env_id: str) -> None:
    plain, loose = gym.make(env_id), TimeLimit(gym.make(env_id), max_episode_steps=10_000)
    actions = IDLE * 60
    assert _play(loose, 5, actions) == _play(plain, 5, actions)
    nested = TimeLimit(TimeLimit(gym.make(env_id), 5), 2)  # the tightest limit counts
    _, info = nested.reset(seed=5)
    assert info["max_turns"] == 2


def test_statistics_over_a_time_limit_see_the_summary_at_the_limit() -> None:
    env = RecordEpisodeStatistics(gym.make("AgentRL/Dialog-v0", max_episode_steps=2))
    env.reset(seed=7)
    env.step("Which area?")
    *_, truncated, info = env.step("OK.")
    assert truncated and info["episode"]["l"] == 2 and info["episode_summary"]["turns"] == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_with_a_time_limit_end_with_the_summary(mode: str) -> None:
    venv = gym.make_vec("AgentRL/ToolUse-v0", 2, vectorization_mode=mode,
                        wrappers=[lambda env: TimeLimit(env, max_episode_steps=2)])
    venv.reset(seed=[1, 2])
    venv.step(("OK.", "OK."))
    _, _, terminated, truncated, infos = venv.step(("OK.", "OK."))
    assert list(truncated) == [True, True] and not terminated.any()
    assert list(infos["_episode_summary"]) == [True, True]
    assert list(infos["episode_summary"]["outcome"]) == ["truncated", "truncated"]
    venv.close()


def test_records_name_the_time_limit_only_when_there_is_one() -> None:
    assert "max_episode_steps" not in spec_dict(gym.make("AgentRL/Dialog-v0"))
    limited = spec_dict(gym.make("AgentRL/Dialog-v0", max_episode_steps=5))
    assert limited["max_episode_steps"] == 5
    assert limited["entry_point"] == "agentgym.noise.factory:make_env"
