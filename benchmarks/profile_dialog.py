#!/usr/bin/env python
"""cProfile a reset, a message step and a read-only tool step of AgentRL/Dialog-v0.

    .venv/bin/python benchmarks/profile_dialog.py [--n 2000] [--top 25] [--sort tottime]

Each operation runs `--n` times under cProfile (resets cycle over seeds 0..99; steps run on live
episodes, reset untimed every 8 steps with the profiler off), then the top functions print.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402
from envbench import MESSAGE, N_SEEDS, STEPS_PER_EPISODE  # noqa: E402

TOOL = '{"name": "search", "arguments": {}}'


def profile_reset(env: gym.Env, n: int) -> cProfile.Profile:
    prof = cProfile.Profile()
    seeds = itertools.cycle(range(N_SEEDS))
    for _ in range(n):
        s = next(seeds)
        prof.enable()
        env.reset(seed=s)
        prof.disable()
    return prof


def profile_step(env: gym.Env, action: str, n: int) -> cProfile.Profile:
    prof = cProfile.Profile()
    seeds = itertools.cycle(range(N_SEEDS))
    left = 0
    for _ in range(n):
        if left == 0:
            env.reset(seed=next(seeds))
            left = STEPS_PER_EPISODE
        prof.enable()
        out = env.step(action)
        prof.disable()
        left -= 1
        assert not (out[2] or out[3])
    return prof


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumulative, ...)")
    ap.add_argument("--only", choices=("reset", "message", "tool"), default=None)
    args = ap.parse_args()
    import agentgym  # noqa: F401

    env = gym.make("AgentRL/Dialog-v0")
    jobs = {
        "reset": lambda: profile_reset(env, args.n),
        "message": lambda: profile_step(env, MESSAGE, args.n),
        "tool": lambda: profile_step(env, TOOL, args.n),
    }
    for name, job in jobs.items():
        if args.only and name != args.only:
            continue
        print(f"\n===== {name} x{args.n} =====")
        pstats.Stats(job()).strip_dirs().sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
