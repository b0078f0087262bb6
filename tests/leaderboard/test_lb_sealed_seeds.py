"""A sealed run's seeds and what its client is shown: unpredictable, fresh, tasks of their own for
each cell of the suite's layout, no seed."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from agentgym.bench.suites import SUITES
from agentgym.core.seeding import MAX_SEED
from agentgym.leaderboard.sealed.seeds import SEED_FLOOR, new_run_id, run_seeds, task_seed
from agentgym.leaderboard.sealed.view import WITHHELD_REWARD, SealLeak, client_info, encode, reset_view, step_view

CORE = SUITES["core-v0"]
SECRET = b"k" * 32


def test_seeds_are_keyed_by_secret_and_run_and_fresh_per_run() -> None:
    ids = {new_run_id() for _ in range(200)}
    assert len(ids) == 200 and all(len(i) == 32 for i in ids)
    runs = [run_seeds(SECRET, run_id, CORE) for run_id in sorted(ids)[:20]]
    assert run_seeds(SECRET, sorted(ids)[0], CORE) == runs[0]  # a pure function of secret and run id
    seen = [s for seeds in runs for s in seeds]
    assert len(seen) == len(set(seen)) == 20 * CORE.n_seeds * CORE.cells  # never reused, across runs or cells
    assert not set(seen) & set(CORE.seeds)  # nor a public seed
    assert all(SEED_FLOOR <= s <= MAX_SEED and len(str(s)) == 19 for s in seen)
    other = run_seeds(b"j" * 32, sorted(ids)[0], CORE)
    assert not set(other) & set(runs[0])  # another board's secret: other seeds
    assert task_seed(SECRET, "r", "core-v0", 0) != task_seed(SECRET, "r", "robustness-v0", 0)


def test_the_layout_is_the_public_suites_with_tasks_of_their_own_per_cell() -> None:
    seeds = run_seeds(SECRET, new_run_id(), CORE)
    public, sealed = CORE.jobs(), CORE.jobs(seeds)
    assert len(public) == len(sealed) == len(CORE)
    strip = [(j.env_id, j.noise, j.kwargs, j.trial, j.suite) for j in public]
    assert strip == [(j.env_id, j.noise, j.kwargs, j.trial, j.suite) for j in sealed]
    by_cell: dict[tuple, set[int]] = {}
    for j in sealed:
        by_cell.setdefault((j.env_id, j.noise), set()).add(j.seed)
    assert all(len(tasks) == CORE.n_seeds for tasks in by_cell.values())
    cells = list(by_cell.values())
    assert not any(a & b for i, a in enumerate(cells) for b in cells[i + 1:])  # no task in two cells
    trials = {}
    for j in sealed:
        trials.setdefault((j.env_id, j.noise, j.seed), []).append(j.trial)
    assert all(t == list(range(CORE.trials)) for t in trials.values())  # a task's trials share its seed
    # A sealed entry published before the per-cell deal (one seed per task index) still lays out.
    shared = CORE.jobs(seeds[:CORE.n_seeds])
    assert len({j.seed for j in shared}) == CORE.n_seeds and len(shared) == len(CORE)
    with pytest.raises(ValueError):
        CORE.jobs(seeds[:-1])


def test_the_deal_order_is_a_secret_permutation_per_run() -> None:
    from agentgym.leaderboard.sealed.seeds import deal_order

    a, b = deal_order(SECRET, "run-a", len(CORE)), deal_order(SECRET, "run-b", len(CORE))
    assert sorted(a) == sorted(b) == list(range(len(CORE))) and a != b != list(range(len(CORE)))
    assert deal_order(SECRET, "run-a", len(CORE)) == a


def test_the_test_split_draws_from_the_same_generators() -> None:
    # Over a suite's worth of tasks, sealed seeds give the same (domain, difficulty) kinds as the
    # public ones, all of the test split.
    seeds = run_seeds(SECRET, "a" * 20, CORE)
    for env_id in CORE.envs:
        env = gym.make(env_id, split="test")

        def kinds(tasks: list[int]) -> set[tuple[str, str, str]]:
            infos = (env.reset(seed=s)[1]["task"] for s in tasks)
            return {(t["domain"], t["difficulty"], t["split"]) for t in infos}

        public, sealed = kinds(list(CORE.seeds)), kinds(list(seeds))
        env.close()
        assert sealed == public and {split for _, _, split in sealed} == {"test"}, env_id


def test_the_view_holds_no_seed_and_nothing_the_harness_hides() -> None:
    seed = run_seeds(SECRET, new_run_id(), CORE)[0]
    env = gym.make("AgentRL/ToolUse-v0", split="test", noise="heavy")
    obs, info = env.reset(seed=seed)
    payload = reset_view(obs, info, sealed={"episode": 1})
    assert "seed" not in payload["info"] and "noise" not in payload["info"]
    assert payload["info"]["task"]["id"].endswith("/sealed") and str(seed) in info["task"]["id"]
    assert str(seed) not in json.dumps(payload) and info["seed"] == seed  # the env's own info is untouched
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step("I am not sure, can you say more?")
        view = step_view(obs, terminated, truncated, info)
        done = terminated or truncated
        assert view["reward"] == WITHHELD_REWARD and "noise" not in view["info"] and "episode" not in view["info"]
        assert str(seed).encode() not in encode(view, seed)
    assert "gold" in json.dumps(info["episode_summary"]) and "gold" not in json.dumps(client_info(info))
    env.close()


def test_encode_replaces_the_seed_in_text_and_refuses_it_elsewhere() -> None:
    seed = 1234567890123456789
    data = encode({"obs": f"your order {seed} is late", "info": {"m": [f"x{seed}y"]}}, seed, "sealed-3")
    assert str(seed).encode() not in data and b"sealed-3" in data
    with pytest.raises(SealLeak):
        encode({"obs": "", "info": {"n": seed}}, seed, "sealed-3")
    with pytest.raises(SealLeak):
        encode({"obs": "", "info": {str(seed): 1}}, seed, "sealed-3")
