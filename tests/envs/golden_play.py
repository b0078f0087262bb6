"""Digests of whole episodes (every obs, reward, flag and info) of the built-in agents: the lock
that keeps performance work from changing behaviour.

`golden_trajectories.json` holds the digests computed from the code before the hot paths were
optimised; `test_golden_trajectories.py` recomputes them. Regenerate only for an intended change
of behaviour (which also needs a version bump of the ids and `make leaderboard`):

    .venv/bin/python tests/envs/golden_play.py --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.testing import TrajectoryHasher

GOLDEN_FILE = Path(__file__).with_name("golden_trajectories.json")
IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
AGENTS = ("random", "heuristic", "oracle")
#: Noise settings: off, the presets, and each kind alone at a high rate (so every wrapper acts).
NOISES: tuple[str | None, ...] = (
    None, "medium", "heavy", "tool_failure=0.5", "corruption=0.5", "ambiguity=0.8", "goal_shift=0.8",
    "distractors=3", "typos=0.5", "latency=400",
)
#: (make kwargs) variants beyond the defaults: fixed difficulty and the test split.
VARIANTS: tuple[dict[str, Any], ...] = ({}, {"difficulty": "hard"}, {"split": "test"})


def cases(seeds: int) -> Iterator[tuple[str, str, str | None, dict[str, Any], int]]:
    """Every (key, env id, noise, make kwargs, seed) the lock covers."""
    for env_id in IDS:
        for noise in NOISES:
            for i, variant in enumerate(VARIANTS):
                if noise not in (None, "medium") and i:
                    continue  # the variants run without noise and with the preset only
                for agent in AGENTS:
                    for seed in range(seeds):
                        key = f"{env_id}|{noise}|{json.dumps(variant, sort_keys=True)}|{agent}|{seed}"
                        yield key, env_id, noise, {**variant, "_agent": agent}, seed


def make(env_id: str, noise: str | None, kwargs: dict[str, Any]) -> gym.Env:
    kw = {k: v for k, v in kwargs.items() if not k.startswith("_")}
    if noise is not None:
        kw["noise"] = noise
    return gym.make(env_id, **kw)


def episode_digest(env: gym.Env, agent_name: str, seed: int) -> str:
    """Play `agent_name` from `seed` on `env`, hashing everything the env returns."""
    agent = make_agent(agent_name)
    hasher = TrajectoryHasher()
    obs, info = env.reset(seed=seed)
    hasher.reset(obs, info)
    if agent.privileged:
        agent.bind(env.unwrapped)
    agent.reset(obs, info)
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        hasher.step(obs, reward, terminated, truncated, info)
        if terminated or truncated:
            break
    return hasher.hexdigest()


def compute(seeds: int) -> dict[str, str]:
    """One digest per (id, noise, variant, agent) group: the sha256 of its episodes' digests."""
    out: dict[str, hashlib._Hash] = {}
    envs: dict[str, gym.Env] = {}
    for key, env_id, noise, kwargs, seed in cases(seeds):
        env_key = key.rsplit("|", 2)[0]
        env = envs.get(env_key)
        if env is None:
            env = envs[env_key] = make(env_id, noise, kwargs)
        group = key.rsplit("|", 1)[0]
        out.setdefault(group, hashlib.sha256()).update(episode_digest(env, kwargs["_agent"], seed).encode())
    for env in envs.values():
        env.close()
    return {k: h.hexdigest() for k, h in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--write", action="store_true", help="write golden_trajectories.json")
    args = ap.parse_args()
    digests = compute(args.seeds)
    if args.write:
        GOLDEN_FILE.write_text(json.dumps({"seeds": args.seeds, "digests": digests}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(digests)} digests to {GOLDEN_FILE}")
        return 0
    golden = json.loads(GOLDEN_FILE.read_text())["digests"]
    bad = [k for k, v in digests.items() if golden.get(k) != v]
    print(f"{len(digests) - len(bad)}/{len(digests)} equal")
    for k in bad[:20]:
        print("DIFFERS", k)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
