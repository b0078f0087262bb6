"""CrossTask's hard tier: success of the built-in agents and reset/step medians against easy.

Prints, per split: the expert (noise off and `medium`) and the oracle on the explicit hard tier,
random and the exploit agents (noise off and `medium`), the heuristic on easy, medium and the
tier (with Wilson 95% intervals), and the medians of a reset and of a step (expert episodes) on
easy and on the tier. Figures go in RESULTS-crosstask-tier.md.

    python benchmarks/crosstask_tier.py [SEEDS] [FIRST_SEED]
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from typing import Any

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.exploits import EXPLOITS
from agentgym.eval.episode import run_episode

ENV_ID = "AgentRL/CrossTask-v0"


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n."""
    p, d = k / n, 1 + z * z / n
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (p + z * z / (2 * n) - half) / d, (p + z * z / (2 * n) + half) / d


def cell(agent: str, split: str, difficulty: str, noise: str | None, seeds: range) -> None:
    """Play `agent` on `seeds` and print its successes, interval and failed seeds."""
    env = gym.make(ENV_ID, split=split, difficulty=difficulty, **({"noise": noise} if noise else {}))
    wins, failed = 0, []
    for seed in seeds:
        player: Any = EXPLOITS[agent]() if agent in EXPLOITS else make_agent(agent)
        ok = run_episode(env, player, seed).success
        wins += ok
        failed += [] if ok else [seed]
    lo, hi = wilson(wins, len(seeds))
    shown = f" failed seeds {failed[:10]}" if agent in ("expert", "oracle") and failed else ""
    print(f"{agent:16s} {split:5s} {difficulty:6s} {noise or 'off':6s} {wins}/{len(seeds)} "
          f"= {wins / len(seeds):.3f} [{lo:.3f}, {hi:.3f}]{shown}", flush=True)


def medians(split: str, difficulty: str) -> None:
    """Median reset (200 seeds) and step (expert episodes of 60 seeds) times, in ms."""
    env = gym.make(ENV_ID, split=split, difficulty=difficulty)
    resets, steps = [], []
    for seed in range(200):
        t = time.perf_counter()
        obs, info = env.reset(seed=seed)
        resets.append(time.perf_counter() - t)
        if seed < 60:
            agent = make_agent("expert")
            agent.reset(obs, info)
            done = False
            while not done:
                action = agent.act(obs, info)
                t = time.perf_counter()
                obs, _, terminated, truncated, info = env.step(action)
                steps.append(time.perf_counter() - t)
                done = terminated or truncated
    print(f"timing {split:5s} {difficulty:6s} reset median {statistics.median(resets) * 1e3:.3f} ms, "
          f"step median {statistics.median(steps) * 1e3:.3f} ms", flush=True)


def main(n: int, first: int) -> None:
    seeds = range(first, first + n)
    for split in ("train", "test"):
        for noise in (None, "medium"):
            cell("expert", split, "hard", noise, seeds)
        cell("oracle", split, "hard", None, seeds)
        for agent in ("random", *EXPLOITS):
            for noise in (None, "medium"):
                cell(agent, split, "hard", noise, range(first, first + min(n, 300)))
        for difficulty in ("easy", "medium", "hard"):
            cell("heuristic", split, difficulty, None, range(first, first + 200))
        for difficulty in ("easy", "hard"):
            medians(split, difficulty)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500, int(sys.argv[2]) if len(sys.argv) > 2 else 0)
