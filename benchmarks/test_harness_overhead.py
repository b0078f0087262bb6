"""The harness's overhead over the bare env loop: same episodes, same agent (target: <= 20% CPU).

Both loops play the heuristic agent on the same 200 seeds of one id in this process: the bare
loop is `agentgym.eval.episode.run_episode` on one `gym.make` env; the harness is
`agentgym.eval.runner.run_jobs` with one worker, which also builds step summaries and appends one
flushed JSON record per episode to a file. Each round runs both loops, alternating which goes
first, after a `gc.collect()`; the overhead is the median of the rounds' CPU-time ratios
(`time.process_time`: other jobs on a shared machine disturb it less than the wall clock), as in
`benchmarks/perf/harness.py`. Episodes per second with 1 and 2 workers: `test_harness_workers`.
"""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
import time
from typing import Callable

import gymnasium as gym
import pytest

import agentgym  # noqa: F401
from agentgym.agents import make_agent
from agentgym.eval.episode import run_episode
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

SEEDS = range(200)
ROUNDS = 7


def _cpu(fn: Callable[[], None]) -> float:
    gc.collect()  # each loop starts from the same heap, so neither pays the other's garbage
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def test_harness_overhead(benchmark: pytest.FixtureRequest, env_id: str) -> None:
    env, agent = gym.make(env_id), make_agent("heuristic")
    cpu: dict[str, list[float]] = {"bare": [], "harness": []}

    def bare() -> None:
        for s in SEEDS:
            run_episode(env, agent, s)

    def harness() -> None:
        with tempfile.TemporaryDirectory() as d:
            run_jobs([EpisodeJob(env_id, seed=s) for s in SEEDS], AgentSpec("heuristic"),
                     os.path.join(d, "r.jsonl"), workers=1, progress=False)

    def one_round() -> None:
        loops = [("bare", bare), ("harness", harness)]
        for name, fn in loops if len(cpu["bare"]) % 2 == 0 else loops[::-1]:
            cpu[name].append(_cpu(fn))

    one_round()  # warm-up: caches, lazy imports, provenance's git call
    for times in cpu.values():
        times.clear()
    benchmark.pedantic(one_round, rounds=ROUNDS, warmup_rounds=0)
    ratios = [h / b - 1 for b, h in zip(cpu["bare"], cpu["harness"])]
    benchmark.extra_info.update({
        "cpu_overhead": statistics.median(ratios),
        "cpu_overhead_range": (min(ratios), max(ratios)),
        "bare_cpu_ms_per_episode": statistics.median(cpu["bare"]) / len(SEEDS) * 1e3,
        "harness_cpu_ms_per_episode": statistics.median(cpu["harness"]) / len(SEEDS) * 1e3,
    })


@pytest.mark.parametrize("workers", [1, 2])
def test_harness_workers(benchmark: pytest.FixtureRequest, workers: int) -> None:
    """Episodes per second of the heuristic on Dialog-v0 with 1 and 2 worker processes (2,000 episodes)."""

    def run() -> None:
        with tempfile.TemporaryDirectory() as d:
            run_jobs([EpisodeJob("AgentRL/Dialog-v0", seed=s) for s in range(2000)], AgentSpec("heuristic"),
                     os.path.join(d, "r.jsonl"), workers=workers, progress=False)

    t0 = time.perf_counter()
    benchmark.pedantic(run, rounds=2, warmup_rounds=0)
    benchmark.extra_info["episodes_per_s"] = 2000 * 2 / (time.perf_counter() - t0)
