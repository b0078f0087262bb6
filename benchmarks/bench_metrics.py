#!/usr/bin/env python
"""How long every metric of a 2,400-episode run takes (target: under 2 s).

Plays the heuristic on the `core-v0` suite (2,400 episodes: every family on the test domains,
without noise and with the medium preset, 200 seeds, 2 trials) in this process, then times, over
several rounds, what the leaderboard computes for a submission
(`agentgym.leaderboard.scoring.summarise_submission`: every headline metric with 2,000 bootstrap
resamples, pass^2, and every env and noise cell with 500) and `agentgym.eval.metrics.headline`
alone. Prints the median, min and max of each (CPU time of this process, which other jobs on a
shared machine disturb less than the wall clock; the wall clock beside it).

    .venv/bin/python benchmarks/bench_metrics.py              # 7 rounds
    .venv/bin/python benchmarks/bench_metrics.py --rounds 3 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from typing import Any, Callable

TARGET_S = 2.0


def suite_records(suite_id: str = "core-v0", agent: str = "heuristic") -> list[dict[str, Any]]:
    """The records of `agent` on every episode of the suite, played in this process."""
    from agentgym.bench.suites import SUITES
    from agentgym.eval.runner import AgentSpec, play_job

    return [play_job(job, AgentSpec(agent)) for job in SUITES[suite_id].jobs()]


def _time(fn: Callable[[], Any]) -> tuple[float, float]:
    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    from agentgym.bench.suites import SUITES
    from agentgym.eval import metrics
    from agentgym.leaderboard.scoring import summarise_submission

    t0 = time.perf_counter()
    records = suite_records()
    print(f"{len(records)} core-v0 episodes of the heuristic played in {time.perf_counter() - t0:.1f} s")
    suite = SUITES["core-v0"]
    jobs = {"every metric of a submission (summarise_submission)": lambda: summarise_submission(records, suite),
            "headline metrics alone (metrics.headline)": lambda: metrics.headline(records)}
    out: dict[str, Any] = {"episodes": len(records), "rounds": args.rounds, "target_s": TARGET_S, "results": {}}
    for name, fn in jobs.items():
        fn()  # warm-up: imports, caches
        cpu, wall = zip(*(_time(fn) for _ in range(args.rounds)))
        row = {"median_cpu_s": statistics.median(cpu), "min_cpu_s": min(cpu), "max_cpu_s": max(cpu),
               "median_wall_s": statistics.median(wall)}
        out["results"][name] = row
        verdict = "within" if row["median_cpu_s"] < TARGET_S else "OVER"
        print(f"{name}: median {row['median_cpu_s']:.3f} s CPU (min {row['min_cpu_s']:.3f}, max "
              f"{row['max_cpu_s']:.3f}; wall {row['median_wall_s']:.3f} s) over {args.rounds} rounds: {verdict} "
              f"the {TARGET_S:g} s target")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
