"""Where a policy fitted to a built-in agent's demonstrations leaves that agent's path.

A fitted policy plays its demonstrations' steps as the agent did (98-99% on CrossTask) yet
succeeds half as often; this finds where its greedy episodes part from the agent's. Each
evaluation seed is played by the policy (greedy, calibration on, as `evaluate` plays) with the
agent beside it: at every step the agent acts on what the episode showed, its action is mapped
to a candidate as the demonstrations map it (`demos.nearest`), and the first step where the
policy picks another candidate is recorded (its turn, and what each of the two would have
done). Until that step the agent's state is the one it had in its own demonstrations, so a
divergence there is the fit's error on an unseen episode, not the agent's confusion. The same
seeds are then played by the agent through the candidates alone (the ceiling imitation can
reach).

    .venv/bin/python benchmarks/ppo/bench_divergence.py --family crosstask --mix crosstask --seed 1
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

import torch

from agentgym.agents import make_agent
from agentgym.baselines.ppo import Args
from agentgym.baselines.ppo.acting import Acting, act, make_env
from agentgym.baselines.ppo.demos import canonical, demonstrated
from agentgym.baselines.ppo.features import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_demos_fit import fitted_policy  # noqa: E402
from bench_families import FAMILIES  # noqa: E402


def what(action: str) -> str:
    """A candidate as a short label: the tools it calls, or 'message'."""
    kind, body = canonical(action)
    return "+".join(name for name, _ in body) if kind == "call" else "message"


@torch.no_grad()
def play(policy: Any, args: Args, env: Any, seed: int, agent_name: str, follow_agent: bool) -> dict[str, Any]:
    """One episode: the policy's greedy choices (or the agent's, `follow_agent`), the agent beside."""
    acting = Acting.of(args, "on")
    agent = make_agent(agent_name)
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    transcript = Transcript()
    transcript.reset(info)
    first: dict[str, Any] | None = None
    turn, done = 0, False
    while not done:
        turn += 1
        candidates = info["candidates"]
        target = demonstrated(agent, obs, info)[1] if first is None else None
        if follow_agent:
            played = target
        else:
            acted = act(policy, [policy.encode((transcript, candidates))], [candidates], acting)
            played = candidates[int(acted.logits[0].argmax())]
            if first is None and canonical(played) != canonical(target):
                first = {"turn": turn, "agent": what(target), "policy": what(played),
                         "same_tool": what(target) == what(played)}
        obs, _reward, terminated, truncated, info = env.step(played)
        done = bool(terminated or truncated)
        if not done:
            transcript.add(played, info)
    summary = info.get("episode_summary") if isinstance(info.get("episode_summary"), dict) else {}
    return {"seed": seed, "success": bool(summary.get("success")), "turns": turn, "first": first}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--family", default="crosstask", help="the family played")
    p.add_argument("--mix", default="dialog,tooluse,crosstask", help="the families the demonstrations come from")
    p.add_argument("--demos", default="heuristic")
    p.add_argument("--demo-episodes", type=int, default=1000)
    p.add_argument("--demo-epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--eval-seed", type=int, default=5_000_000)
    p.add_argument("--json", default=None, help="write the per-episode rows here")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="another PPO setting (Args field), e.g. hash_dim=64")
    a = p.parse_args()
    policy, args, record = fitted_policy(a.mix.split(","), a)
    env = make_env(FAMILIES[a.family], args, split="train")
    rows = []
    for k in range(a.episodes):
        seed = a.eval_seed + k
        mine = play(policy, args, env, seed, a.demos, follow_agent=False)
        ceiling = play(policy, args, env, seed, a.demos, follow_agent=True)
        rows.append({**mine, "agent_success": ceiling["success"]})
    n = len(rows)
    print(f"fit: {record['kept_episodes']} of {record['episodes']} demonstrations kept, "
          f"accuracy {record['fit']['accuracy']:.3f}")
    print(f"{a.family}, {n} seeds: policy {sum(r['success'] for r in rows) / n:.1%}, "
          f"{a.demos} through the candidates {sum(r['agent_success'] for r in rows) / n:.1%}")
    parted = [r for r in rows if r["first"] is not None]
    print(f"episodes where the policy left the {a.demos}'s path: {len(parted)} "
          f"({sum(r['agent_success'] for r in parted)} of them the {a.demos} solves through the candidates; "
          f"{sum(r['success'] for r in parted)} the policy still solves)")
    kinds = collections.Counter((r["first"]["agent"], r["first"]["policy"]) for r in parted if r["agent_success"])
    print("first divergence on seeds the agent solves (agent's choice -> policy's), count:")
    for (want, got), c in kinds.most_common(20):
        print(f"  {c:4d}  {want} -> {got}")
    turns = collections.Counter(min(r["first"]["turn"], 30) // 5 * 5 for r in parted if r["agent_success"])
    print("by turn (5-turn bins):", dict(sorted(turns.items())))
    if a.json:
        Path(a.json).write_text(json.dumps({"record": record, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
