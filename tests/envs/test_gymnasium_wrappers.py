"""Gymnasium's own wrappers over every live id: the episode statistics wrappers (single and vector,
sync and async), given a key of their own (the env's summary is ``info["episode"]``, which they
refuse to find set), and `TimeLimit` from ``gym.make(id,
max_episode_steps=N)`` or applied by hand, which truncates in its own step without the env knowing:
the loop asks the env for the summary (`AgentEnv.episode_summary`)."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from gymnasium.wrappers import Autoreset, RecordEpisodeStatistics, TimeLimit
from gymnasium.wrappers.vector import RecordEpisodeStatistics as VectorRecordEpisodeStatistics

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.heuristic import STRATEGIES
from agentgym.eval.episode import play_job, run_episode
from agentgym.eval.jobs import AgentSpec, EpisodeJob
from agentgym.eval.records import spec_dict
from agentgym.registration import REMOTE_ID
from agentgym.testing import canonical_json, probe_actions
from agentgym.testing.conformance import STATS_KEY

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
    env = RecordEpisodeStatistics(gym.make(env_id), stats_key=STATS_KEY)
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
        summary, stats = info["episode"], info[STATS_KEY]
        assert summary is info["episode_summary"] and set(stats) == {"r", "l", "t"}
        assert stats["r"] == pytest.approx(total) == summary["score"]
        assert stats["l"] == summary["turns"]
    assert len(env.return_queue) == 2
    env.close()


@pytest.mark.parametrize("vector", ["sync", "async"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_record_episode_statistics_counts_our_episodes(env_id: str, vector: str) -> None:
    makers = [lambda: gym.make(env_id, max_turns=3) for _ in range(2)]
    inner = SyncVectorEnv(makers) if vector == "sync" else AsyncVectorEnv(makers)
    venv = VectorRecordEpisodeStatistics(inner, stats_key=STATS_KEY)
    venv.reset(seed=[11, 12])
    ended = np.zeros(2, dtype=bool)
    for _ in range(4):
        _, rewards, terminated, truncated, infos = venv.step(("Which area do you prefer?", "OK."))
        done = terminated | truncated
        if done.any():
            assert list(infos[f"_{STATS_KEY}"]) == list(done) == list(infos["_episode"])
            for i in np.flatnonzero(done):
                assert infos[STATS_KEY]["l"][i] == infos["episode"]["turns"][i] == 3
                assert infos[STATS_KEY]["r"][i] == pytest.approx(infos["episode"]["score"][i])
                assert infos["episode_summary"]["outcome"][i] == "truncated"
            ended |= done
    assert ended.all()
    venv.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_only_the_last_info_holds_the_summary_under_episode(env_id: str) -> None:
    env = gym.make(env_id, noise="medium")
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        agent = _agent(info)
        agent.reset(obs, info)
        for _ in range(500):
            assert "episode" not in info and "episode_summary" not in info
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            if terminated or truncated:
                break
        assert info["episode"] is info["episode_summary"] and info["episode"]["turns"] >= 1
    env.close()


def test_an_autoreset_inside_record_episode_statistics_ends_every_episode_with_both() -> None:
    env = RecordEpisodeStatistics(Autoreset(gym.make("AgentRL/Dialog-v0")), stats_key=STATS_KEY)
    env.reset(seed=0)
    ends = 0
    for _ in range(60):
        _, _, terminated, truncated, info = env.step("OK.")
        if terminated or truncated:
            ends += 1
            assert set(info[STATS_KEY]) == {"r", "l", "t"} and "success" in info["episode"]
    assert ends >= 2
    env.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_carry_the_summary_beside_the_vector_wrapper_s_statistics(mode: str) -> None:
    envs = VectorRecordEpisodeStatistics(gym.make_vec("AgentRL/Dialog-v0", 2, vectorization_mode=mode),
                                         stats_key=STATS_KEY)
    envs.reset(seed=0)
    ended = 0
    try:
        for _ in range(60):  # several episodes per sub-env, auto-reset in between
            _, _, terminated, truncated, infos = envs.step(["OK."] * 2)
            if terminated.any() or truncated.any():
                ended += 1
                assert set(infos[STATS_KEY]) >= {"r", "l", "t"}
                assert list(infos["_episode"]) == list(terminated | truncated)
    finally:
        envs.close()
    assert ended >= 2


# ------------------------------------------------------------------ TimeLimit
def _without_flags(results: list[str]) -> list[Any]:
    """Each result less its flags and the summary: what a wrapper's truncation leaves alone."""
    out = []
    for text in results:
        result = json.loads(text)
        if len(result) == 5:
            obs, reward, _, _, info = result
            info.pop("episode_summary", None)
            result = [obs, reward, info]
        out.append(result)
    return out


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_max_episode_steps_truncates_outside_the_env_which_gives_its_summary_when_asked(env_id: str) -> None:
    limited = gym.make(env_id, max_episode_steps=3)
    plain = gym.make(env_id)
    budget = gym.make(env_id, max_turns=3)
    assert limited.spec.max_episode_steps == 3
    for seed in (0, 1, 2):
        got = _play(limited, seed, IDLE)
        assert len(got) == 4, f"{env_id} seed {seed}"
        # The env is untouched: every observation, reward and info is the plain env's.
        assert _without_flags(got) == _without_flags(_play(plain, seed, IDLE[:3]))
        _, info = limited.reset(seed=seed)
        assert info["max_turns"] == plain.reset(seed=seed)[1]["max_turns"]  # its own budget, not the wrapper's
        for action in IDLE[:3]:
            *_, terminated, truncated, info = limited.step(action)
        assert truncated and not terminated and "episode_summary" not in info
        summary = limited.unwrapped.episode_summary()
        assert summary["outcome"] == "truncated" and summary["turns"] == 3
        assert limited.unwrapped.episode_summary() is summary
        with pytest.raises(ResetNeeded):
            limited.step("OK.")
        # The same summary as the env's own budget of 3 turns, but for that budget.
        *_, info = _last(budget, seed, IDLE)
        assert {**summary, "max_turns": 3} == info["episode_summary"]
    for env in (limited, plain, budget):
        env.close()


@pytest.mark.parametrize("noise", [None, "medium"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_time_limit_applied_by_hand_changes_nothing_but_the_flag(env_id: str, noise: str | None) -> None:
    kwargs = {"noise": noise} if noise else {}
    by_hand = TimeLimit(gym.make(env_id, **kwargs), max_episode_steps=4)
    plain = gym.make(env_id, **kwargs)
    for seed in (3, 4):
        _, info = plain.reset(seed=seed)
        actions = probe_actions(info["tools"], seed, n=3) + IDLE
        limited = _play(by_hand, seed, actions)
        assert _without_flags(limited) == _without_flags(_play(plain, seed, actions[:len(limited) - 1]))
        assert json.loads(limited[-1])[3] or json.loads(limited[-1])[2], f"{env_id} seed {seed}"
    by_hand.close()
    plain.close()


def _last(env: gym.Env, seed: int, actions: list[Any]) -> tuple[Any, ...]:
    env.reset(seed=seed)
    for action in actions:
        result = env.step(action)
        if result[2] or result[3]:
            return result
    raise AssertionError("the episode did not end")


@pytest.mark.parametrize("noise", [None, "medium"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_loop_asks_for_the_summary_when_a_time_limit_truncates(env_id: str, noise: str | None) -> None:
    kwargs = {"noise": noise} if noise else {}
    env = TimeLimit(gym.make(env_id, **kwargs), max_episode_steps=4)
    for seed in (3, 4):
        result = run_episode(env, make_agent("random", seed=1), seed)
        assert result.episode["turns"] == len(result.actions) <= 4
        assert result.episode["seed"] == seed and result.episode["outcome"]
    job = EpisodeJob(env_id, seed=5, noise=noise, kwargs=(("max_episode_steps", 2),))
    record = play_job(job, AgentSpec("random", (("seed", 1),)))
    assert record["agent_error"] is None, record["agent_error"]
    assert record["metrics"]["turns"] == len(record["actions"]) <= 2
    assert record["env"]["spec"]["max_episode_steps"] == 2


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_time_limit_past_the_env_budget_changes_nothing(env_id: str) -> None:
    plain, loose = gym.make(env_id), TimeLimit(gym.make(env_id), max_episode_steps=10_000)
    actions = IDLE * 60
    assert _play(loose, 5, actions) == _play(plain, 5, actions)
    nested = TimeLimit(TimeLimit(gym.make(env_id), 5), 2)  # the tightest limit truncates
    _, info = nested.reset(seed=5)
    assert info["max_turns"] == plain.reset(seed=5)[1]["max_turns"]
    nested.step("OK.")
    *_, truncated, info = nested.step("OK.")
    assert truncated and nested.unwrapped.episode_summary()["turns"] == 2


def test_statistics_over_a_time_limit_count_the_truncated_episode() -> None:
    env = RecordEpisodeStatistics(gym.make("AgentRL/Dialog-v0", max_episode_steps=2), stats_key=STATS_KEY)
    env.reset(seed=7)
    env.step("Which area?")
    *_, truncated, info = env.step("OK.")
    assert truncated and info[STATS_KEY]["l"] == 2 and env.unwrapped.episode_summary()["turns"] == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_end_with_the_summary_at_the_env_budget(mode: str) -> None:
    venv = gym.make_vec("AgentRL/ToolUse-v0", 2, vectorization_mode=mode, max_turns=2)
    venv.reset(seed=[1, 2])
    venv.step(("OK.", "OK."))
    _, _, terminated, truncated, infos = venv.step(("OK.", "OK."))
    assert list(truncated) == [True, True] and not terminated.any()
    assert list(infos["_episode_summary"]) == [True, True]
    assert list(infos["episode_summary"]["outcome"]) == ["truncated", "truncated"]
    venv.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_with_a_time_limit_truncate_with_their_defaults(mode: str) -> None:
    venv = gym.make_vec("AgentRL/ToolUse-v0", 2, vectorization_mode=mode,
                        wrappers=[lambda env: TimeLimit(env, max_episode_steps=2)])
    venv.reset(seed=[1, 2])
    venv.step(("OK.", "OK."))
    _, _, terminated, truncated, _ = venv.step(("OK.", "OK."))
    assert list(truncated) == [True, True] and not terminated.any()
    venv.step(("OK.", "OK."))  # the auto-reset after a wrapper's truncation
    _, _, _, truncated, _ = venv.step(("OK.", "OK."))
    assert not truncated.any()
    venv.close()


def test_records_name_the_time_limit_only_when_there_is_one() -> None:
    assert "max_episode_steps" not in spec_dict(gym.make("AgentRL/Dialog-v0"))
    limited = spec_dict(gym.make("AgentRL/Dialog-v0", max_episode_steps=5))
    assert limited["max_episode_steps"] == 5
    assert limited["entry_point"] == "agentgym.noise.factory:make_env"
