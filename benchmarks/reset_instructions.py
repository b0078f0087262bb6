#!/usr/bin/env python
"""Instructions per reset, per generated task or per part of it, counted by cachegrind.

    .venv/bin/python benchmarks/reset_instructions.py dialog [--n 200] [--noise medium] [--tree DIR]
    .venv/bin/python benchmarks/reset_instructions.py tooluse --difficulty hard --split test

The machine is shared, so wall-clock A/B swings; instruction counts do not. Each figure is the
count of a process that warms up and then runs the operation `--n` times, minus the count of
the same process with no operation after the warm-up, divided by `--n` (PYTHONHASHSEED=0 in
both). The warm-up (`--warm` operations on seeds outside those counted) fills what a process
builds once per domain (the users' matchers, the briefs, the domain tables): without it the
first resets carry that set-up and the figure depends on how many resets are counted.
`--tree` counts another checkout (put first on PYTHONPATH), e.g. an extracted 0.4.0.
`--difficulty` and `--split` are passed to ``gym.make`` of an env kind (default: neither, the
env's own defaults: a drawn difficulty on the train split); ``--difficulty hard`` is the hard tier.

Kinds: `dialog`, `crosstask`, `tooluse` (an env reset through ``gym.make``); `task` (Dialog's
`generate_task`); `world` (its world alone); `goal` (its goal search alone, on worlds made
before the count). Repeat a count before trusting a difference under ~3%: two counts of the
same code differ by up to ~30,000 instructions per operation at ``--n 100``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

IDS = {"dialog": "AgentRL/Dialog-v0", "crosstask": "AgentRL/CrossTask-v0", "tooluse": "AgentRL/ToolUse-v0"}
KINDS = (*IDS, "task", "world", "goal")
#: Seeds of the warm-up, far from the counted ones (0..n-1).
WARM_SEED = 10**6


def _world_and_rng(seed: int) -> tuple[Any, Any, str]:
    """A train-split Dialog world of `seed` as `generate_task` draws it, the stream after it,
    and the task's drawn difficulty."""
    from agentgym.core.seeding import fast_stream, stream_bits
    from agentgym.core.task import DIFFICULTIES
    from agentgym.envs.dialog.tasks import _make_world, domains_for, load_domains

    names = domains_for("train")
    bits = stream_bits(seed, "task")
    name = names[bits % len(names)]
    rng = fast_stream(seed, f"task/world/{name}")
    return _make_world(load_domains()[name], rng), rng, DIFFICULTIES[bits // len(names) % len(DIFFICULTIES)]


def operation(kind: str, noise: str | None, seeds: list[int], make: dict[str, str] | None = None
              ) -> Callable[[int], None]:
    """The operation counted, on seed `s`; set-up that must not be counted happens here, for
    every seed of `seeds` whether it runs or not. `make`: more keyword arguments of an env's
    ``gym.make`` (its difficulty, its split)."""
    if kind in IDS:
        import gymnasium as gym

        import agentgym  # noqa: F401  (registers the ids)

        env = gym.make(IDS[kind], **({"noise": noise} if noise else {}), **(make or {}))
        return lambda s: env.reset(seed=s) and None
    from agentgym.envs.dialog.tasks import _make_goal, generate_task

    if kind == "task":
        return lambda s: generate_task(s, {}) and None
    if kind == "world":
        return lambda s: _world_and_rng(s) and None
    made = {s: _world_and_rng(s) for s in seeds}
    return lambda s: _make_goal(made[s][0], made[s][2], made[s][1]) and None


def workload(kind: str, n: int, prepared: int, warm: int, noise: str | None,
             make: dict[str, str] | None = None) -> None:
    """Warm up, then run the operation on seeds 0..n-1 (`n` may be 0: the baseline); the set-up
    covers seeds 0..prepared-1 in both counts, so only the operations differ."""
    warm_seeds = list(range(WARM_SEED, WARM_SEED + warm))
    op = operation(kind, noise, [*warm_seeds, *range(prepared)], make)
    for s in warm_seeds:
        op(s)
    for s in range(n):
        op(s)


def _make_args(difficulty: str | None, split: str | None) -> dict[str, str]:
    """The ``gym.make`` keyword arguments of `--difficulty` and `--split` (those given)."""
    return {k: v for k, v in (("difficulty", difficulty), ("split", split)) if v is not None}


def count(kind: str, n: int, prepared: int, warm: int, noise: str | None, tree: Path,
          make: dict[str, str] | None = None) -> int:
    """The instructions cachegrind counts for a process running `workload`."""
    # One BLAS thread: numpy's idle thread pool otherwise spins for a varying number of
    # instructions, which moved a count by up to 15%.
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(tree), "OPENBLAS_NUM_THREADS": "1"}
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
           __file__, kind, "--run", str(n), "--n", str(prepared), "--warm", str(warm), "--noise", noise or "off",
           *(a for k, v in (make or {}).items() for a in (f"--{k}", v))]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    return int(re.search(r"I\s+refs:\s+([\d,]+)", out).group(1).replace(",", ""))  # type: ignore[union-attr]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=KINDS)
    ap.add_argument("--n", type=int, default=200, help="operations counted")
    ap.add_argument("--warm", type=int, default=40, help="operations before the count")
    ap.add_argument("--noise", default="off", help="noise preset of an env reset (off, light, medium, heavy)")
    ap.add_argument("--difficulty", default=None, help="an env's difficulty (easy, medium, hard: the hard tier)")
    ap.add_argument("--split", default=None, help="an env's split (train, test)")
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="the checkout to count (default: this one)")
    ap.add_argument("--run", type=int, default=None, help=argparse.SUPPRESS)  # the counted process
    args = ap.parse_args()
    noise = None if args.noise == "off" else args.noise
    make = _make_args(args.difficulty, args.split)
    if make and args.kind not in IDS:
        ap.error("--difficulty and --split apply to an env kind only")
    if args.run is not None:
        workload(args.kind, args.run, args.n, args.warm, noise, make)
        return 0
    base = count(args.kind, 0, args.n, args.warm, noise, args.tree, make)
    full = count(args.kind, args.n, args.n, args.warm, noise, args.tree, make)
    made = "".join(f" {k}={v}" for k, v in make.items())
    print(f"{args.kind}{made} noise={args.noise} n={args.n} warm={args.warm}: {(full - base) / args.n / 1e6:.3f}M "
          f"instructions per operation ({args.tree})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
