"""The harness's overhead over the bare env loop: same episodes, same agent (target: < 20%).

Both loops play the heuristic agent on the same 200 Dialog-v0 seeds in this process: the bare
loop calls reset/act/step only; the harness loop is `agentgym.eval.runner.run_jobs` with one
worker, which also builds step summaries and records and writes them (fsynced) to a file.
Episodes per second with 1 and 2 workers are measured too (`test_harness_workers`).
"""

from __future__ import annotations

import os
import tempfile
import time

import gymnasium as gym
import pytest

import agentgym  # noqa: F401
from agentgym.agents import make_agent
from agentgym.eval.episode import run_episode
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

ENV_ID = "AgentRL/Dialog-v0"
SEEDS = range(200)


def _bare() -> None:
    env = gym.make(ENV_ID)
    agent = make_agent("heuristic")
    for s in SEEDS:
        run_episode(env, agent, s)


def _harness(fsync: bool = True) -> None:
    with tempfile.TemporaryDirectory() as d:
        run_jobs([EpisodeJob(ENV_ID, seed=s) for s in SEEDS], AgentSpec("heuristic"), os.path.join(d, "r.jsonl"),
                 workers=1, progress=False)


def test_bare_env_loop(benchmark: pytest.FixtureRequest) -> None:
    benchmark.pedantic(_bare, rounds=5, warmup_rounds=1)


def test_harness_loop(benchmark: pytest.FixtureRequest) -> None:
    benchmark.pedantic(_harness, rounds=5, warmup_rounds=1)


@pytest.mark.parametrize("workers", [1, 2])
def test_harness_workers(benchmark: pytest.FixtureRequest, workers: int) -> None:
    """Episodes per second of the heuristic with 1 and 2 worker processes (2,000 episodes)."""

    def run() -> None:
        with tempfile.TemporaryDirectory() as d:
            run_jobs([EpisodeJob(ENV_ID, seed=s) for s in range(2000)], AgentSpec("heuristic"),
                     os.path.join(d, "r.jsonl"), workers=workers, progress=False)

    t0 = time.perf_counter()
    benchmark.pedantic(run, rounds=2, warmup_rounds=0)
    benchmark.extra_info["episodes_per_s"] = 2000 * 2 / (time.perf_counter() - t0)
