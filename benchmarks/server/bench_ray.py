"""The capacity benchmark for env actors on a local Ray cluster (`agentgym.rayenv`).

A two-node `ray.cluster_utils.Cluster` on this machine (one CPU per node unless told), a pool of
env actors spread over both, and the grid of `bench_capacity.py`: each session (an env on an
actor) is created, reset, stepped five times with real Dialog-v0 turns and a think time before
each, and closed, all sessions at once from the driver's event loop (Ray's object refs are
awaited). Then steps per second without think time through `RayVectorEnv`.

    .venv/bin/python benchmarks/server/bench_ray.py [--grid 32,64,...,1024] [--reps 1] [--nodes 2]

The results go to `benchmarks/server/RESULTS.md`, between the ray markers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Any

from bench_capacity import ACTIONS, DIALOG, _machine, _percentile, write_block

BEGIN, END = "<!-- ray: begin (bench_ray.py) -->", "<!-- ray: end -->"


async def _session(pool: Any, seed: int, think_s: float, steps: list[float]) -> tuple[bool, float, str]:
    start = time.perf_counter()
    try:
        actor = pool.next_actor()
        sid = (await actor.open.remote(DIALOG, {}))[0]
        await actor.reset.remote(sid, seed, None)
        for action in ACTIONS:
            await asyncio.sleep(think_s)
            t = time.perf_counter()
            out = await actor.step.remote(sid, action)
            steps.append(time.perf_counter() - t)
            if out[2] or out[3]:
                await actor.reset.remote(sid, seed + 1, None)
        await actor.close.remote(sid)
        return True, time.perf_counter() - start, ""
    except Exception as exc:  # noqa: BLE001 - every failure is counted, by kind
        return False, time.perf_counter() - start, type(exc).__name__


def grid_point(pool: Any, n: int, think_s: float) -> dict[str, Any]:
    async def main() -> list[tuple[bool, float, str]]:
        return await asyncio.gather(*(_session(pool, s, think_s, steps) for s in range(n)))

    steps: list[float] = []
    t0 = time.perf_counter()
    results = asyncio.run(main())
    wall = time.perf_counter() - t0
    errors: dict[str, int] = {}
    for ok, _, err in results:
        if not ok:
            errors[err] = errors.get(err, 0) + 1
    sessions = [t for ok, t, _ in results if ok]
    return {"sessions": n, "success": len(sessions) / n, "step_p50_ms": 1e3 * _percentile(steps, 0.5),
            "step_p99_ms": 1e3 * _percentile(steps, 0.99), "session_p99_s": _percentile(sessions, 0.99),
            "steps_per_s": len(steps) / wall, "errors": errors}


def vector_throughput(pool: Any, num_envs: int, seconds: float) -> float:
    from agentgym.rayenv.vector import RayVectorEnv

    vec = RayVectorEnv(DIALOG, num_envs, pool)
    try:
        vec.reset(seed=0)
        done, i, start = 0, 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            vec.step([ACTIONS[i % len(ACTIONS)]] * num_envs)
            done, i = done + num_envs, i + 1
        return done / (time.perf_counter() - start)
    finally:
        vec.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", default="32,64,128,256,512,1024", help="session counts, comma-separated")
    parser.add_argument("--reps", type=int, default=1, help="repetitions of each point (default: 1)")
    parser.add_argument("--nodes", type=int, default=2, help="nodes of the local cluster (default: 2)")
    parser.add_argument("--cpus-per-node", type=int, default=1, help="CPUs each node offers (default: 1)")
    parser.add_argument("--think-s", type=float, default=1.0, help="think time before each step (default: 1)")
    parser.add_argument("--vector-envs", type=int, default=64, help="envs of the throughput run (default: 64)")
    parser.add_argument("--vector-seconds", type=float, default=10.0, help="seconds of the throughput run")
    parser.add_argument("--no-write", action="store_true", help="print the results, leave RESULTS.md alone")
    args = parser.parse_args()
    import ray
    from ray.cluster_utils import Cluster

    from agentgym.rayenv.pool import EnvActorPool

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": args.cpus_per_node})
    for _ in range(args.nodes - 1):
        cluster.add_node(num_cpus=args.cpus_per_node)
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    rows: list[dict[str, Any]] = []
    placed = actors = 0
    try:
        pool = EnvActorPool(size=args.nodes * args.cpus_per_node, num_cpus=1.0)
        placed, actors = len(set(pool.nodes())), len(pool)
        grid_point(pool, 16, 0.0)  # warm: every actor's imports and first env
        for n in (int(x) for x in args.grid.split(",") if x):
            for rep in range(1, args.reps + 1):
                row = {"rep": rep, **grid_point(pool, n, args.think_s)}
                rows.append(row)
                print(row, flush=True)
        tput = vector_throughput(pool, args.vector_envs, args.vector_seconds) if args.vector_seconds > 0 else None
        pool.shutdown()
    finally:
        ray.shutdown()
        cluster.shutdown()
    lines = [BEGIN, "## Env actors on a local Ray cluster", "",
             "Generated by `benchmarks/server/bench_ray.py`; do not edit by hand.", "",
             f"Machine: {_machine()}. A `ray.cluster_utils.Cluster` of {args.nodes} nodes x {args.cpus_per_node} "
             f"CPU on this machine; {actors} env actors "
             f"(`EnvActorPool`, spread: on {placed} nodes). Each session: an env opened on an actor, reset, "
             f"{len(ACTIONS)} real Dialog-v0 steps with {args.think_s:g} s of think time before each, closed; all at "
             "once from the driver's event loop.", "",
             "| sessions | rep | success | step P50 ms | step P99 ms | session P99 s | steps/s | errors |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        errors = ", ".join(f"{k} {v}" for k, v in sorted(r["errors"].items())) or "-"
        lines.append(f"| {r['sessions']:,} | {r['rep']} | {100 * r['success']:.2f}% | {r['step_p50_ms']:.1f} | "
                     f"{r['step_p99_ms']:.1f} | {r['session_p99_s']:.2f} | {r['steps_per_s']:,.0f} | {errors} |")
    if tput is not None:
        lines += ["", f"`RayVectorEnv` of {args.vector_envs} envs without think time: {tput:,.0f} steps per second."]
    lines += ["", END]
    if not args.no_write:
        write_block(BEGIN, END, lines)
    else:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
