"""Determinism with noise on: byte-identical replay in a fresh process, and noise never moves the task."""

from __future__ import annotations

import gymnasium as gym
import pytest
from noise_helpers import LIVE_IDS, events

from agentgym.agents import make_agent
from agentgym.noise import KINDS, PRESETS
from agentgym.testing import TrajectoryHasher, fresh_process_hashes, probe_actions

EVERY_KIND = "tool_failure=0.3,corruption=0.3,ambiguity=0.5,goal_shift=0.5,distractors=3,typos=0.3,latency=3000"
N_SEEDS = 20


def _record(env: gym.Env, seed: int) -> tuple[list[str], str, list[str]]:
    """Play one episode (a random agent, with schema probes first) and hash it as it goes."""
    agent = make_agent("random", seed=seed)
    hasher = TrajectoryHasher()
    obs, info = env.reset(seed=seed)
    hasher.reset(obs, info)
    agent.reset(obs, info)
    probes = probe_actions(info["tools"], seed, n=6)
    actions: list[str] = []
    kinds = [e["kind"] for e in info["noise"]]
    while True:
        action = probes[len(actions)] if len(actions) < len(probes) else agent.act(obs, info)
        actions.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        hasher.step(obs, reward, terminated, truncated, info)
        kinds += [e["kind"] for e in info["noise"]]
        if terminated or truncated:
            return actions, hasher.hexdigest(), kinds


@pytest.mark.parametrize("env_id", LIVE_IDS)
@pytest.mark.parametrize("noise", [EVERY_KIND, "heavy"])
def test_noisy_episodes_replay_byte_identically_in_a_fresh_process(env_id: str, noise: str) -> None:
    env = gym.make(env_id, noise=noise)
    played = [(seed, *_record(env, seed)) for seed in range(N_SEEDS)]
    episodes = [(seed, actions) for seed, actions, _, _ in played]
    expected = [digest for _, _, digest, _ in played]
    fired = {k for *_, kinds in played for k in kinds}
    assert {"tool_failure", "typos", "distractors"} <= fired, fired  # the replay exercises the noise

    # One fresh process (another PYTHONHASHSEED) per case: for the preset from the id and make
    # kwargs, for the explicit mix from the instance's spec (its JSON, wrapper stack included).
    if noise in PRESETS:
        assert fresh_process_hashes(env_id, episodes, make_kwargs={"noise": noise}) == expected
    else:
        assert fresh_process_hashes(env, episodes) == expected
    # In this process, in reverse order, from a second env made from the first one's spec.
    again = gym.make(env.spec)
    for seed, actions, digest, _ in reversed(played):
        hasher = TrajectoryHasher()
        hasher.reset(*again.reset(seed=seed))
        for action in actions:
            hasher.step(*again.step(action))
        assert hasher.hexdigest() == digest, f"{env_id} seed {seed}: replay differs"
    assert len(set(expected)) == N_SEEDS
    env.close()


ALONE = {kind: {"latency": "latency=5000", "distractors": "distractors=4"}.get(kind, f"{kind}=1") for kind in KINDS}


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_adding_or_removing_noise_never_changes_the_task_drawn_for_a_seed(env_id: str) -> None:
    settings = [None, *ALONE.values(), "light", "medium", "heavy", EVERY_KIND]
    envs = [gym.make(env_id, **({"noise": s} if s else {})) for s in settings]
    for seed in range(40):
        seen = []
        for env in envs:
            _, info = env.reset(seed=seed)
            seen.append((info["task"], info["messages"][0]["content"]))  # the task card and the brief
        assert all(s == seen[0] for s in seen), f"seed {seed}: {[s[0]['id'] for s in seen]}"
    ids = {env.reset(seed=s)[1]["task"]["id"] for s in range(40) for env in envs[:1]}
    assert len(ids) == 40  # distinct seeds, distinct tasks
    for env in envs:
        env.close()


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_noise_streams_are_independent_of_each_other(env_id: str) -> None:
    """Adding one kind never shifts another kind's draws: the tool failures of a seed are the same
    with and without typos and distractors (the same actions reach the same calls)."""
    a = gym.make(env_id, noise="tool_failure=0.4")
    b = gym.make(env_id, noise="tool_failure=0.4,typos=0.5,distractors=2")
    for seed in range(10):
        _, info = a.reset(seed=seed)
        b.reset(seed=seed)
        for action in probe_actions(info["tools"], seed, n=12):
            ra, rb = a.step(action), b.step(action)
            assert events(ra[4], "tool_failure") == events(rb[4], "tool_failure")
            if ra[2] or ra[3]:
                break


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_the_trial_option_redraws_the_noise_not_the_task(env_id: str) -> None:
    env = gym.make(env_id, noise="typos=0.5,distractors=3")
    first = env.reset(seed=5)[1]
    trials = [env.reset(seed=5, options={"trial": t})[1] for t in (1, 2, 3)]
    assert all(t["task"] == first["task"] for t in trials)
    assert any(t["noise"] != first["noise"] for t in trials)
    assert env.reset(seed=5, options={"trial": 2})[1] == trials[1]
