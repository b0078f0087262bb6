"""The policy a ``--demos`` run has right after its fit, before any PPO update, on fixed seeds.

`train` evaluates that policy on ``--train-eval-episodes`` seeds only (the curve's second point at
step 0); this rebuilds it as `train` does (same seed, same weights drawn, same demonstrations and
minibatches) and plays it greedily, calibration on, on the benchmark's 200 fixed train-split seeds,
so the share of a run's final success that the fit alone gives can be read beside it.

    .venv/bin/python benchmarks/ppo/bench_demos_fit.py --families tooluse --demos heuristic --seed 1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import torch

from agentgym.baselines.ppo import Args, evaluate
from agentgym.baselines.ppo.acting import build_policy, make_env, resolve_env_ids
from agentgym.baselines.ppo.demos import run_demos

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_families import FAMILIES, MIX, LoadSampler, bootstrap, settings  # noqa: E402


def fitted_policy(mix: Sequence[str], a: argparse.Namespace) -> tuple[Any, Args, dict[str, Any]]:
    """The policy a ``--demos`` run over these families has right after its fit, built as `train`
    builds it (same seed, weights drawn, demonstrations and minibatches); with its Args and the
    run's record of the demonstrations."""
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)  # `train`'s first draw: the same fresh weights
    args = Args(env=resolve_env_ids([FAMILIES[f] for f in mix]), seed=a.seed, demos=a.demos,
                demo_episodes=a.demo_episodes, demo_epochs=a.demo_epochs, eval_seed=a.eval_seed, progress=False,
                **settings(getattr(a, "set", None) or []))
    probe = make_env(args.env[0], args)
    policy = build_policy(args, probe)
    probe.close()
    policy.eval()
    _, record = run_demos(policy, args, torch.Generator().manual_seed(args.seed + 0xDE30))
    return policy, args, record


def fitted(family: str, a: argparse.Namespace) -> dict:
    """Fit as `train` would for this family's run, then evaluate on the fixed seeds."""
    policy, _args, record = fitted_policy(MIX.get(family, (family,)), a)
    ev = evaluate(policy, Args(env=(FAMILIES[family],), eval_episodes=a.eval_episodes, eval_seed=a.eval_seed),
                  calibration="on")
    per = [float(e["success"]) for e in ev["per_episode"]]
    first = per[: a.train_eval_episodes]
    return {"family": family, "seed": a.seed, "demos": record, "success": ev["success"], "success_ci": bootstrap(per),
            "episodes": len(per), f"success_first_{a.train_eval_episodes}": sum(first) / max(len(first), 1)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--families", default="tooluse,crosstask")
    p.add_argument("--demos", default="heuristic")
    p.add_argument("--demo-episodes", type=int, default=1000)
    p.add_argument("--demo-epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--eval-episodes", type=int, default=200)
    p.add_argument("--eval-seed", type=int, default=5_000_000)
    p.add_argument("--train-eval-episodes", type=int, default=30, help="the run's in-training evaluation seeds")
    p.add_argument("--json", default=None, help="append one JSON line per family here")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="another PPO setting (Args field), e.g. hash_dim=64")
    a = p.parse_args()
    for family in a.families.split(","):
        t0, load = time.perf_counter(), LoadSampler()
        out = {**fitted(family, a), "seconds": round(time.perf_counter() - t0, 1), "load": load.stop()}
        print(json.dumps(out), flush=True)
        if a.json:
            with Path(a.json).open("a") as f:
                f.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
