"""Digests of what the agents' layer decides: every built-in agent's actions (heuristic, expert,
random, the exploit and defect agents), every candidate list the builders offer (each family's
own and the generic one) and the PPO featurizer's feature ids over those lists.

A refactor of how the agents read the transcript must leave every digest as it was. Run it
before and after, and compare the two outputs:

    .venv/bin/python benchmarks/agent_decisions.py --seeds 200 > before.txt
    ... change ...
    .venv/bin/python benchmarks/agent_decisions.py --seeds 200 > after.txt
    diff before.txt after.txt
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from typing import Any, Callable, Iterator

import gymnasium as gym
import numpy as np

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.candidates.wrapper import ActionCandidates
from agentgym.agents.exploits import EXPLOITS
from agentgym.testing.defects import DEFECTS

IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
NOISES: tuple[str | None, ...] = (None, "medium")


def _agents() -> Iterator[tuple[str, Callable[[], Any]]]:
    for name in ("heuristic", "expert", "random"):
        yield name, lambda name=name: make_agent(name)
    for name, cls in EXPLOITS.items():
        yield f"exploit:{name}", cls
    for d in DEFECTS:
        if d.agent not in ("random",):
            yield f"defect:{d.name}", lambda d=d: make_agent(d.agent, **dict(d.kwargs))


def _actions(env: gym.Env, agent: Any, seed: int) -> str:
    h = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    if getattr(agent, "privileged", False):
        agent.bind(env.unwrapped)
    agent.reset(obs, info)
    for _ in range(200):
        action = agent.act(obs, info)
        h.update(json.dumps(action, sort_keys=True, default=str).encode())
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return h.hexdigest()


class _Picker:
    """Picks one of ``info["candidates"]`` at random (seeded): the states a policy in training
    explores, which the heuristic's own choices never reach."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        pass

    def act(self, obs: str, info: dict[str, Any]) -> str:
        cands = info.get("candidates") or ["OK."]
        return cands[int(self.rng.integers(len(cands)))]


def _candidates(env: gym.Env, seed: int, features: bool, picker: bool = False) -> tuple[str, str]:
    """The heuristic (or a random picker of candidates) plays; every candidate list, and the PPO
    features of each list, hashed."""
    from agentgym.baselines.ppo.features import HashFeaturizer, Transcript

    agent = _Picker(seed) if picker else make_agent("heuristic")
    lists, feats = hashlib.sha256(), hashlib.sha256()
    featurizer, transcript = HashFeaturizer(), Transcript()
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    transcript.reset(info)

    def fold(info: dict[str, Any]) -> None:
        cands = info.get("candidates", [])
        lists.update(json.dumps(cands).encode())
        if features and cands:
            feats.update(np.asarray(featurizer.history(transcript)).tobytes())
            cf = featurizer.candidates(cands, transcript)
            for arrays in (cf.own, cf.shape, cf.entities):
                for a in arrays:
                    feats.update(np.asarray(a).tobytes() + b"|")
            feats.update(json.dumps(cf.links).encode())

    fold(info)
    for _ in range(200):
        action = agent.act(obs, info)
        obs, _, terminated, truncated, info = env.step(action)
        transcript.add(action, info)
        if terminated or truncated:
            break
        fold(info)
    return lists.hexdigest(), feats.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--only", default="", help="run only the groups whose name contains this")
    args = ap.parse_args()
    start = time.perf_counter()
    episodes = 0
    for env_id in IDS:
        for noise in NOISES:
            kw = {} if noise is None else {"noise": noise}
            groups: dict[str, hashlib._Hash] = {}
            env = gym.make(env_id, **kw)
            for name, factory in _agents():
                if args.only and args.only not in name:
                    continue
                h = groups.setdefault(name, hashlib.sha256())
                for seed in range(args.seeds):
                    h.update(_actions(env, factory(), seed).encode())
                    episodes += 1
            env.close()
            for builder, picker in ((None, False), ("generic", False), (None, True)):
                label = f"candidates:{builder or 'family'}" + (":picked" if picker else "")
                if args.only and args.only not in label:
                    continue
                wrapped = ActionCandidates(gym.make(env_id, **kw), builder=builder)
                lists, feats = hashlib.sha256(), hashlib.sha256()
                for seed in range(args.seeds):
                    a, b = _candidates(wrapped, seed, features=builder is None, picker=picker)
                    lists.update(a.encode())
                    feats.update(b.encode())
                    episodes += 1
                wrapped.close()
                groups[label] = lists
                if builder is None:
                    groups["ppo-features" + (":picked" if picker else "")] = feats
            for name, h in groups.items():
                print(f"{env_id} {noise} {name} {h.hexdigest()[:16]}", flush=True)
    print(f"# {episodes} episodes in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
