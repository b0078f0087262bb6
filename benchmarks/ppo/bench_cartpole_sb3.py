"""Throughput of the thin PPO against stable-baselines3 on CartPole-v1, side by side in one run.

Both run PPO with the same hyperparameters (SB3's defaults: 2048 steps per update from one env,
10 epochs, minibatches of 64, lr 3e-4, gamma 0.99, GAE lambda 0.95, clip 0.2, no entropy bonus,
64x64 tanh actor and critic), on the CPU with one torch thread each, in fresh processes that
alternate (ours, SB3, ours, SB3, ...), so both see the same machine load. Measured: environment
steps per second of training (`learn()` for SB3; `train()`'s training time for ours: rollouts,
updates and logging, with model construction excluded for both).

stable-baselines3 is a benchmark-only dependency: install it in its own venv
(``benchmarks/ppo/requirements.txt``) and point ``--sb3-python`` at it::

    python3 -m venv /tmp/sb3-venv && /tmp/sb3-venv/bin/pip install -r benchmarks/ppo/requirements.txt
    .venv/bin/python benchmarks/ppo/bench_cartpole_sb3.py --sb3-python /tmp/sb3-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HYPER = dict(n_steps=2048, batch_size=64, n_epochs=10, learning_rate=3e-4, gamma=0.99, gae_lambda=0.95,
             clip_range=0.2, ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5)


def run_ours(steps: int, seed: int) -> dict:
    import torch

    from agentgym.baselines.ppo import Args, train

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        args = Args(env=("CartPole-v1",), num_envs=1, num_steps=HYPER["n_steps"], minibatch_size=HYPER["batch_size"],
                    update_epochs=HYPER["n_epochs"], learning_rate=HYPER["learning_rate"], gamma=HYPER["gamma"],
                    gae_lambda=HYPER["gae_lambda"], clip_coef=HYPER["clip_range"], ent_coef=HYPER["ent_coef"],
                    vf_coef=HYPER["vf_coef"], max_grad_norm=HYPER["max_grad_norm"], adv_norm="batch",
                    total_timesteps=steps, seed=seed, eval_episodes=0, out=tmp, run_name="cartpole", plot=False,
                    tensorboard=False, save_every=10**9)
        result = train(args)
        import csv

        with open(result.run_dir / "progress.csv") as f:
            rows = list(csv.DictReader(f))
    returns = [float(r["return"]) for r in rows[-2:] if r["return"]]
    return {"impl": "agentgym", "steps": result.global_step, "seconds": result.train_s, "sps": result.sps,
            "final_return": statistics.mean(returns) if returns else None}


def run_sb3(steps: int, seed: int) -> dict:
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    model = PPO("MlpPolicy", "CartPole-v1", seed=seed, device="cpu", verbose=0, **HYPER)
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - t0
    eps = [e["r"] for e in model.ep_info_buffer]
    import stable_baselines3

    return {"impl": f"stable-baselines3 {stable_baselines3.__version__}", "steps": int(model.num_timesteps),
            "seconds": seconds, "sps": model.num_timesteps / seconds,
            "final_return": statistics.mean(eps[-20:]) if eps else None}


def child(python: str, impl: str, steps: int, seed: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([python, __file__, "--child", impl, "--steps", str(steps), "--seed", str(seed)],
                         capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{impl} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sb3-python", default=os.environ.get("SB3_PYTHON", "/tmp/sb3-venv/bin/python"),
                   help="a Python with stable-baselines3 and torch (default: $SB3_PYTHON or /tmp/sb3-venv)")
    p.add_argument("--steps", type=int, default=10 * 2048, help="environment steps per run (default: 10 updates)")
    p.add_argument("--rounds", type=int, default=3, help="alternating runs of each (default: 3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(HERE / "results" / "cartpole_sb3.json"))
    p.add_argument("--child", choices=("ours", "sb3"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(run_ours(a.steps, a.seed) if a.child == "ours" else run_sb3(a.steps, a.seed)))
        return 0
    runs: dict[str, list[dict]] = {"ours": [], "sb3": []}
    for r in range(a.rounds):
        for impl, python in (("ours", sys.executable), ("sb3", a.sb3_python)):
            res = child(python, impl, a.steps, a.seed + r)
            runs[impl].append(res)
            print(f"round {r}: {res['impl']:28s} {res['sps']:8.0f} steps/s  ({res['steps']} steps in "
                  f"{res['seconds']:.1f} s, last return {res['final_return']})", flush=True)
    med = {k: statistics.median(x["sps"] for x in v) for k, v in runs.items()}
    summary = {"hyperparameters": HYPER, "steps_per_run": a.steps, "rounds": a.rounds, "median_sps": med,
               "ratio": med["ours"] / med["sb3"], "runs": runs, "cpus": len(os.sched_getaffinity(0)),
               "loadavg_end": os.getloadavg()}
    print(f"median steps/s: agentgym {med['ours']:.0f}, stable-baselines3 {med['sb3']:.0f} "
          f"(ratio {summary['ratio']:.2f})")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
