#!/usr/bin/env python
"""How long the leaderboard takes to verify a 2,400-episode submission, and its schema stage.

Plays an agent (default: the heuristic) on the `core-v0` suite in this process, encodes and
decodes the submission as the board does, then times over several rounds, interleaved:

- ``verify``: `agentgym.leaderboard.verify.verify_submission` end to end (one process: schema,
  completeness, replay of every episode, the numbers);
- ``verify, plain schema``: the same with the native fast path of the schema stage turned off,
  so every record goes through the `jsonschema` validator;
- ``schema stage`` and ``schema stage, plain``: that stage alone, over every record.

Prints the median, min and max of each (CPU time of this process, steadier than the wall clock on
a shared machine). Runs against any checkout: a tree without the schema stage's modules (an older
agentgym) times ``verify`` alone, for an A/B of two trees run alternately.

    .venv/bin/python benchmarks/bench_verify.py               # 5 rounds
    .venv/bin/python benchmarks/bench_verify.py --rounds 3 --agent random --json out.json
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import time
from typing import Any, Callable


def _submission(agent: str) -> Any:
    import agentgym
    from agentgym.bench.suites import SUITES
    from agentgym.eval.records import SCHEMA_VERSION, dumps
    from agentgym.eval.runner import AgentSpec, play_job
    from agentgym.leaderboard.submission import Manifest, decode_submission, encode_submission

    records = [{"schema_version": SCHEMA_VERSION, **play_job(job, AgentSpec(agent))} for job in SUITES["core-v0"].jobs()]
    raw = b"".join(dumps(r).encode("ascii") + b"\n" for r in records)
    manifest = Manifest(agent=agent, model="bench/model", revision="r", organisation="bench", description="",
                        suite="core-v0", package_version=agentgym.__version__,
                        records_sha256=hashlib.sha256(raw).hexdigest())
    return decode_submission(encode_submission(manifest, raw))


def _cpu(fn: Callable[[], Any]) -> float:
    gc.collect()
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def _jobs(sub: Any) -> dict[str, Callable[[], Any]]:
    from agentgym.leaderboard import verify

    jobs: dict[str, Callable[[], Any]] = {"verify": lambda: verify.verify_submission(sub, workers=1)}
    try:
        from agentgym.leaderboard import record_schema, record_schema_fast
    except ImportError:  # a tree from before the schema stage used jsonschema
        return jobs

    def plain_verify() -> None:
        fast, verify.known_valid = verify.known_valid, lambda rec: False
        try:
            verify.verify_submission(sub, workers=1)
        finally:
            verify.known_valid = fast

    def stage(plain: bool) -> None:
        for i, rec in enumerate(sub.records, start=1):
            if plain or not record_schema_fast.known_valid(rec):
                record_schema.check_record(rec, i)

    jobs["verify, plain schema"] = plain_verify
    jobs["schema stage"] = lambda: stage(False)
    jobs["schema stage, plain"] = lambda: stage(True)
    return jobs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--agent", default="heuristic")
    parser.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    sub = _submission(args.agent)
    steps = sum(len(r["steps"]) for r in sub.records)
    print(f"{len(sub.records)} core-v0 episodes ({steps} steps) of {args.agent} played in "
          f"{time.perf_counter() - t0:.1f} s")
    jobs = _jobs(sub)
    for fn in jobs.values():  # warm-up: envs made, validators built
        fn()
    times: dict[str, list[float]] = {name: [] for name in jobs}
    names = list(jobs)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(_cpu(jobs[name]))
    out: dict[str, Any] = {"agent": args.agent, "episodes": len(sub.records), "steps": steps, "rounds": args.rounds,
                           "results": {}}
    for name, ts in times.items():
        med = statistics.median(ts)
        out["results"][name] = {"median_s": med, "min_s": min(ts), "max_s": max(ts)}
        print(f"{name:24s} median {med:7.3f} s CPU (min {min(ts):.3f}, max {max(ts):.3f}); "
              f"{len(sub.records) / med:,.0f} episodes/s")
    if "verify, plain schema" in times:
        ratio = statistics.median(times["verify, plain schema"]) / statistics.median(times["verify"])
        print(f"plain schema stage / fast path, end to end: {ratio:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
