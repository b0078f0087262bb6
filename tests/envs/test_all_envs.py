"""Conformance over the LIVE registry: every AgentRL/* id is tested the moment it is registered.

Parametrised by id: `check_agent_env`, distinct tasks per seed, replay of agent episodes in a
fresh process (docs/RELIABILITY.md E1, E2), and the vector envs with gymnasium's defaults
(`AsyncVectorEnv` with shared memory carries our text observations exactly).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.heuristic import STRATEGIES
from agentgym.core.spaces import UnicodeText
from agentgym.testing import TrajectoryHasher, canonical_json, check_agent_env, fresh_process_hashes, probe_actions


def _is_remote(env_id: str) -> bool:
    spec = gym.registry[env_id]
    entry = " ".join(str(x) for x in (spec.entry_point, spec.kwargs.get("env_entry_point", "")))
    return ("Remote" in env_id or "remote" in entry.lower() or "server" in entry.lower()
            or any(k in spec.kwargs for k in ("url", "base_url", "endpoint")))


ENV_IDS = sorted(i for i in gym.registry if i.startswith("AgentRL/") and not _is_remote(i))
N_REPLAY_SEEDS = 20


def test_the_registry_is_not_empty() -> None:
    assert "AgentRL/Dialog-v0" in ENV_IDS


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_agent_env(env_id: str) -> None:
    check_agent_env(env_id)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_brief_states_the_turn_budget_the_episode_ends_at(env_id: str) -> None:
    """An agent plays to a limit it is told: every difficulty's brief states the budget, and a
    budget set on the env is the one stated where the brief does not state its own."""
    import re

    from agentgym.core.env import AgentEnv

    env = gym.make(env_id)
    unwrapped = env.unwrapped
    if not isinstance(unwrapped, AgentEnv):
        pytest.skip("not an AgentEnv")
    for seed in range(12):
        _, info = env.reset(seed=seed)
        brief = info["messages"][0]["content"]
        stated = [int(n) for n in re.findall(r"\b(\d+) turns\b", brief)]
        assert stated and unwrapped.episode_max_turns in stated, (env_id, seed, info["task"]["id"], stated)
    env.close()
    for difficulty in ("easy", "hard"):
        capped = gym.make(env_id, difficulty=difficulty, max_turns=7)
        _, info = capped.reset(seed=1)
        assert re.findall(r"\b(\d+) turns\b", info["messages"][0]["content"]) == ["7"], (env_id, difficulty)
        capped.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_distinct_seeds_give_distinct_tasks(env_id: str) -> None:
    env = gym.make(env_id)
    task_ids, golds = set(), set()
    for seed in range(20):
        _, info = env.reset(seed=seed)
        task_ids.add(info["task"]["id"])
        task = getattr(env.unwrapped, "task", None)
        if task is not None:  # AgentEnv: the hidden gold itself differs, not only the id's seed
            gold = task.gold.to_dict() if hasattr(task.gold, "to_dict") else task.gold
            golds.add(canonical_json(gold))
    assert len(task_ids) == 20
    if golds:
        assert len(golds) == 20, f"{env_id}: only {len(golds)} distinct golds over 20 seeds"
    env.close()


# ------------------------------------------------------------------ replay (E2)
def _agent_for(env_id: str, info: dict[str, Any]) -> Any:
    # The heuristic when it knows the family; the random agent (schema-sampled calls) otherwise.
    return make_agent("heuristic") if info["task"]["family"] in STRATEGIES else make_agent("random", seed=1)


def _play_agent(env: gym.Env, env_id: str, seed: int) -> tuple[list[str], str]:
    """One agent episode; returns its actions and its trajectory hash."""
    hasher = TrajectoryHasher()
    obs, info = env.reset(seed=seed)
    hasher.reset(obs, info)
    agent = _agent_for(env_id, info)
    agent.reset(obs, info)
    actions = []
    while True:
        action = agent.act(obs, info)
        actions.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        hasher.step(obs, reward, terminated, truncated, info)
        if terminated or truncated:
            return actions, hasher.hexdigest()


NOISE_SETTINGS = [None, "medium"]


@pytest.mark.parametrize("noise", NOISE_SETTINGS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_agent_episodes_replay_in_a_fresh_process_and_any_order(env_id: str, noise: str | None) -> None:
    kwargs = {"noise": noise} if noise else {}
    env = gym.make(env_id, **kwargs)
    seeds = list(range(N_REPLAY_SEEDS))
    played = {seed: _play_agent(env, env_id, seed) for seed in seeds}
    episodes = [(seed, played[seed][0]) for seed in seeds]
    expected = [played[seed][1] for seed in seeds]

    # A fresh process with another PYTHONHASHSEED: all 20 episodes in one child.
    assert fresh_process_hashes(env_id, episodes, make_kwargs=kwargs) == expected

    # In this process, in reverse order, with a second env stepped between every two steps.
    other = gym.make(env_id, **kwargs)
    for seed in reversed(seeds):
        hasher = TrajectoryHasher()
        hasher.reset(*env.reset(seed=seed))
        other.reset(seed=seed + 1000)
        other_done = False
        for action in played[seed][0]:
            if not other_done:
                r = other.step(action)
                other_done = r[2] or r[3]
            r = env.step(action)
            hasher.step(*r)
        assert hasher.hexdigest() == played[seed][1], f"{env_id} seed {seed}: replay differs"
    other.close()
    env.close()


# ------------------------------------------------------------------ vector envs
N_VECTOR_STEPS = 30
VECTOR_SEEDS = [3, 4, 5]


def _vector_actions(env_id: str) -> list[list[str]]:
    """Per sub-env, N_VECTOR_STEPS actions: probes (tool calls, questions) then "OK." to the end."""
    env = gym.make(env_id)
    out = []
    for seed in VECTOR_SEEDS:
        _, info = env.reset(seed=seed)
        probes = probe_actions(info["tools"], seed, n=8)
        out.append(probes + ["OK."] * (N_VECTOR_STEPS - len(probes)))
    env.close()
    return out


def _single_env_reference(env_id: str, seed: int, actions: list[str]) -> list[tuple[Any, ...]]:
    """What one sub-env of a vector env must return, with gymnasium 1.x's next-step autoreset:
    the step after an episode ends resets (without a seed) and ignores the action."""
    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed)
    out: list[tuple[Any, ...]] = [(obs, 0.0, False, False)]
    done = False
    for action in actions:
        if done:
            obs, _ = env.reset()
            out.append((obs, 0.0, False, False))
            done = False
            continue
        obs, reward, terminated, truncated, _ = env.step(action)
        out.append((obs, reward, terminated, truncated))
        done = terminated or truncated
    env.close()
    return out


def _run_vector(venv: gym.vector.VectorEnv, actions: list[list[str]]) -> list[list[tuple[Any, ...]]]:
    obs, _ = venv.reset(seed=VECTOR_SEEDS)
    per_env: list[list[tuple[Any, ...]]] = [[(obs[i], 0.0, False, False)] for i in range(len(VECTOR_SEEDS))]
    for t in range(N_VECTOR_STEPS):
        obs, rewards, terminations, truncations, _ = venv.step(tuple(a[t] for a in actions))
        for i in range(len(VECTOR_SEEDS)):
            per_env[i].append((obs[i], float(rewards[i]), bool(terminations[i]), bool(truncations[i])))
    venv.close()
    return per_env


def _makers(env_id: str) -> list[Callable[[], gym.Env]]:
    return [lambda: gym.make(env_id) for _ in VECTOR_SEEDS]


@pytest.mark.parametrize("vector", ["sync", "async", "async-no-shared-memory", "make_vec-async"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_envs_step_like_single_envs(env_id: str, vector: str) -> None:
    actions = _vector_actions(env_id)
    expected = [_single_env_reference(env_id, seed, a) for seed, a in zip(VECTOR_SEEDS, actions)]
    assert any(any(s[2] or s[3] for s in e) for e in expected), "the run should cross an autoreset"
    if vector == "sync":
        venv: gym.vector.VectorEnv = SyncVectorEnv(_makers(env_id))
    elif vector == "async":  # gymnasium's defaults: shared memory on, copies returned
        venv = AsyncVectorEnv(_makers(env_id))
    elif vector == "make_vec-async":
        venv = gym.make_vec(env_id, len(VECTOR_SEEDS), vectorization_mode="async")
    else:
        venv = AsyncVectorEnv(_makers(env_id), shared_memory=False)
    got = _run_vector(venv, actions)
    for i, seed in enumerate(VECTOR_SEEDS):
        for t, (g, e) in enumerate(zip(got[i], expected[i])):
            assert type(g[0]) is str and g == e, f"{env_id} {vector}: sub-env {i} (seed {seed}) differs at step {t}"


def test_shared_memory_carries_any_text_exactly() -> None:
    """Observations with newlines, any Unicode and lone surrogates round-trip through the shared
    buffer of `AsyncVectorEnv`, and a returned batch is a snapshot (later writes do not show)."""
    space = UnicodeText(64)
    buffer = create_shared_memory(space, n=2)
    view = read_from_shared_memory(space, buffer, n=2)
    texts = ["[user] line one\nline two \u00e9\u4e2d\U0001f600 \ud800 \x00", ""]
    for i, text in enumerate(texts):
        write_to_shared_memory(space, i, text, buffer)
    snapshot = copy.deepcopy(view)
    assert snapshot == tuple(texts) and view[0] == texts[0] and len(view) == 2
    write_to_shared_memory(space, 0, "later", buffer)
    assert view[0] == "later" and snapshot[0] == texts[0]
    with pytest.raises(ValueError, match="does not fit"):
        write_to_shared_memory(space, 1, "x" * 65, buffer)


# ------------------------------------------------------------------ aliasing of handed-out data
# Callers (agents, wrappers, record writers) may edit the infos they get; that must not reach
# back into the env. Each test below plants one edit and flips on its own when it is fixed.
_EDIT = " [edited by the caller]"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_editing_reset_tools_does_not_change_other_envs(env_id: str) -> None:
    a, b = gym.make(env_id), gym.make(env_id)
    _, info = a.reset(seed=1)
    expected = copy.deepcopy(info["tools"])
    assert expected, "no tools to edit"
    for t in info["tools"]:
        t["function"]["description"] += _EDIT
    _, other = b.reset(seed=1)
    assert other["tools"] == expected, "editing info['tools'] of one env changed another env's tools"
    a.close()
    b.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_editing_messages_does_not_change_the_transcript(env_id: str) -> None:
    env = gym.make(env_id, render_mode="ansi")
    _, info = env.reset(seed=1)
    _, _, _, _, step_info = env.step("Hello, what do you need?")
    before = env.render()
    for m in info["messages"] + step_info["messages"]:
        m["content"] += _EDIT
    assert env.render() == before, "editing info['messages'] changed render()"
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_editing_step_calls_does_not_change_the_episode_record(env_id: str) -> None:
    env = gym.make(env_id, max_turns=2)
    _, info = env.reset(seed=1)
    call = probe_actions(info["tools"], 1, n=2)[1]
    _, _, _, _, step_info = env.step(call)
    assert step_info["calls"], "the probe made no call"
    expected = copy.deepcopy(step_info["calls"])
    for record in step_info["calls"]:
        record["name"] += _EDIT
        record["valid"] = not record["valid"]
    _, _, terminated, truncated, last = env.step("OK.")
    assert terminated or truncated
    assert last["episode_summary"]["calls"][: len(expected)] == expected, \
        "editing info['calls'] changed info['episode_summary']"
    env.close()
