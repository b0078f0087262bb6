"""The thin PPO on AgentRL/Dialog-v0 (easy, no noise): time to 80% success, and steps per second
with asynchronous actors against the synchronous loop.

* ``time``: train with a fixed seed, evaluating the greedy policy on 100 fixed-seed episodes
  (train split, seeds apart from training's) every 4 updates (1024 steps), until it reaches 80%;
  report the training seconds (evaluation excluded) and steps it took. Target: under 10 minutes
  on 2 cores.
* ``throughput``: the same training, without evaluation, for a fixed number of steps with
  ``--actors 0``, ``1`` and ``2``, alternating; report steps per second of training (the
  actors' start-up, a fresh interpreter each, is reported apart).

    .venv/bin/python benchmarks/ppo/bench_dialog.py time
    .venv/bin/python benchmarks/ppo/bench_dialog.py throughput
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _args(**kw):
    from agentgym.baselines.ppo import Args

    base = dict(env=("AgentRL/Dialog-v0",), difficulty="easy", noise=None, plot=False, tensorboard=False,
                save_every=10**9)
    base.update(kw)
    return Args(**base)


def time_to_target(seed: int, actors: int, max_seconds: float, out: str) -> dict:
    from agentgym.baselines.ppo import train

    result = train(_args(seed=seed, actors=actors, eval_episodes=100, eval_every=4, eval_greedy=True,
                         target_success=0.8, stop_at_target=True, max_seconds=max_seconds, out=out,
                         run_name=f"time-s{seed}-a{actors}", plot=True))
    return {"seed": seed, "actors": actors, "time_to_80_s": result.time_to_target,
            "steps": result.global_step, "train_s": result.train_s, "sps": result.sps,
            "initial_success": result.initial_eval["success"], "final_success": result.final_eval["success"],
            "evals": [(s, round(t, 1), e["success"]) for s, t, e in result.evals], "run_dir": str(result.run_dir)}


def throughput(actors: int, steps: int, out: str) -> dict:
    from agentgym.baselines.ppo import train

    result = train(_args(seed=1, actors=actors, eval_episodes=0, total_timesteps=steps, out=out,
                         run_name=f"sps-a{actors}"))
    return {"actors": actors, "steps": result.global_step, "train_s": result.train_s, "sps": result.sps,
            "startup_s": result.startup_s, "dropped": result.dropped}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=("time", "throughput"))
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="time: training seeds")
    p.add_argument("--actors", type=int, default=0, help="time: rollout processes (default: 0, synchronous)")
    p.add_argument("--max-seconds", type=float, default=600.0, help="time: give up after this much training")
    p.add_argument("--steps", type=int, default=8192, help="throughput: steps per run")
    p.add_argument("--rounds", type=int, default=2, help="throughput: alternating runs of each mode")
    p.add_argument("--out", default=None, help="run folders (default: a temporary folder)")
    p.add_argument("--json", type=Path, default=None, help="the summary's file (default: results/dialog_WHAT.json)")
    a = p.parse_args()

    import torch

    torch.set_num_threads(1)
    out = a.out or tempfile.mkdtemp(prefix="ppo-bench-")
    cpus = len(os.sched_getaffinity(0))
    if a.what == "time":
        rows = []
        for seed in a.seeds:
            r = time_to_target(seed, a.actors, a.max_seconds, out)
            rows.append(r)
            reached = f"{r['time_to_80_s']:.0f} s" if r["time_to_80_s"] is not None else "not reached"
            print(f"seed {seed}: 80% greedy success after {reached} of training ({r['steps']} steps, "
                  f"{r['sps']:.0f} steps/s); {r['initial_success']:.0%} -> {r['final_success']:.0%}", flush=True)
        times = [r["time_to_80_s"] for r in rows if r["time_to_80_s"] is not None]
        summary = {"cpus": cpus, "loadavg_end": os.getloadavg(), "runs": rows,
                   "median_time_to_80_s": statistics.median(times) if len(times) == len(rows) else None}
        print(f"median time to 80%: {summary['median_time_to_80_s']} s on {cpus} CPUs (load {os.getloadavg()[0]:.1f})")
    else:
        runs: dict[int, list[dict]] = {0: [], 1: [], 2: []}
        for _ in range(a.rounds):
            for actors in runs:
                r = throughput(actors, a.steps, out)
                runs[actors].append(r)
                print(f"actors={actors}: {r['sps']:.0f} steps/s ({r['steps']} steps in {r['train_s']:.1f} s; start-up "
                      f"{r['startup_s']:.1f} s, dropped {r['dropped']})", flush=True)
        med = {k: statistics.median(x["sps"] for x in v) for k, v in runs.items()}
        summary = {"cpus": cpus, "loadavg_end": os.getloadavg(), "median_sps": med, "speedup_2": med[2] / med[0],
                   "speedup_1": med[1] / med[0], "runs": runs}
        print(f"median steps/s: sync {med[0]:.0f}, 1 actor {med[1]:.0f} (x{summary['speedup_1']:.2f}), "
              f"2 actors {med[2]:.0f} (x{summary['speedup_2']:.2f})")
    path = a.json or HERE / "results" / f"dialog_{a.what}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
