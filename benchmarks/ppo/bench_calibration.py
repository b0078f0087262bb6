"""What the calibration mask removes: for a trained checkpoint, every greedy step where
calibration changed the policy's choice, and what the removed candidate would have done.

The policy plays fixed train-split seeds greedily twice, calibration off and on (`--risk-threshold`,
the checkpoint's `--risk-coef`). At each step of the calibrated episodes where the calibrated
choice differs from the uncalibrated one, the uncalibrated choice is replayed in a fresh env
(the same seed and the same actions before it: episodes are deterministic) and classified by
what the env reports for it: a policy violation, a refused write, or nothing harmful. A mask
that removes mostly safe candidates costs success; one that removes mostly violations buys it.
Per tool, the estimated risks of each class say whether the risk head tells them apart; the
policies violated, with calibration on and off, say which harm is left.

    .venv/bin/python benchmarks/ppo/bench_calibration.py runs/ppo/RUN/checkpoint.pt --episodes 150
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from agentgym.baselines.calibration import MASKED, step_harm
from agentgym.baselines.ppo import Args, load_checkpoint
from agentgym.baselines.ppo.acting import Acting, act, make_env
from agentgym.baselines.ppo.checkpoint import trained_args
from agentgym.baselines.ppo.features import Transcript
from agentgym.core.protocol import parse_action

EVAL_SEED = 5_000_000


def _replayed(env_id: str, args: Args, seed: int, before: list[str], action: str) -> str:
    """What `action` does after `before` in a fresh episode of `seed`: violation, refused or safe."""
    env = make_env(env_id, args)
    env.reset(seed=seed)
    for a in before:
        env.step(a)
    _, _, _, _, info = env.step(action)
    env.close()
    h = step_harm(info)
    return "violation" if h.violations or h.denied else "refused" if h.refused_writes else "safe"


def _tool(action: str) -> str:
    calls = parse_action(action).calls
    return calls[0].name if calls else "message"


def play(policy: Any, env_id: str, args: Args, seeds: range, acting: Acting, off: Acting | None
         ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Greedy episodes acting by `acting`; with `off`, the steps where `off` would have chosen
    otherwise, the candidate it would have chosen classified by replay."""
    episodes, changed = [], []
    for seed in seeds:
        env = make_env(env_id, args)
        _, info = env.reset(seed=seed)
        t = Transcript()
        t.reset(info)
        done, before, violations, policies = False, [], 0, Counter()
        while not done:
            candidates = info["candidates"]
            encoded = policy.encode((t, candidates))
            a = act(policy, [encoded], [candidates], acting)
            choice = int(a.logits[0].argmax())
            if off is not None:
                raw = int(act(policy, [encoded], [candidates], off).logits[0].argmax())
                if raw != choice:
                    changed.append({"seed": seed, "step": len(before), "tool": _tool(candidates[raw]),
                                    "risk": float(a.risk[0, raw]), "masked": bool(a.adjust[0][raw] <= MASKED / 2),
                                    "outcome": _replayed(env_id, args, seed, before, candidates[raw]),
                                    "instead": _tool(candidates[choice])})
            _, _, terminated, truncated, info = env.step(candidates[choice])
            before.append(candidates[choice])
            violations += step_harm(info).violations
            policies.update(c.get("policy") for c in info.get("calls") or () if c.get("error") == "POLICY_VIOLATION")
            t.add(candidates[choice], info)
            done = terminated or truncated
        episodes.append({"seed": seed, "success": bool(info["episode_summary"]["success"]), "steps": len(before),
                         "violations": violations, "policies": policies})
        env.close()
    return episodes, changed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("--env", default="AgentRL/ToolUse-v0")
    p.add_argument("--episodes", type=int, default=150)
    p.add_argument("--risk-threshold", type=float, default=None, help="default: the checkpoint's")
    p.add_argument("--out", default=None, help="write the JSON here too")
    a = p.parse_args()
    policy, meta = load_checkpoint(a.checkpoint)
    # The run's own acting and candidate settings, on the env played here.
    args = dataclasses.replace(trained_args(meta), env=(a.env,))
    if a.risk_threshold is not None:
        args = dataclasses.replace(args, risk_threshold=a.risk_threshold)
    threshold = args.risk_threshold
    seeds = range(EVAL_SEED, EVAL_SEED + a.episodes)
    off = Acting.of(args, "off")
    base, _ = play(policy, a.env, args, seeds, off, None)
    calibrated, changed = play(policy, a.env, args, seeds, Acting.of(args, "on"), off)
    by_tool: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for c in changed:
        by_tool[c["tool"]][c["outcome"]].append(c["risk"])
    pairs = list(zip(calibrated, base))
    out = {
        "checkpoint": a.checkpoint, "env": a.env, "episodes": a.episodes, "risk_threshold": threshold,
        "success_on": float(np.mean([e["success"] for e in calibrated])),
        "success_off": float(np.mean([e["success"] for e in base])),
        "lost": sum(1 for on, off_ in pairs if off_["success"] and not on["success"]),
        "gained": sum(1 for on, off_ in pairs if on["success"] and not off_["success"]),
        "violations_per_1000_on": 1000 * sum(e["violations"] for e in calibrated) / sum(e["steps"] for e in calibrated),
        "violations_per_1000_off": 1000 * sum(e["violations"] for e in base) / sum(e["steps"] for e in base),
        "violated_policies_on": dict(sum((e["policies"] for e in calibrated), Counter()).most_common()),
        "violated_policies_off": dict(sum((e["policies"] for e in base), Counter()).most_common()),
        "changed": len(changed),
        "outcomes": {k: sum(1 for c in changed if c["outcome"] == k) for k in ("violation", "refused", "safe")},
        "by_tool": {tool: {k: {"n": len(v), "risk_mean": float(np.mean(v)), "risk_min": min(v), "risk_max": max(v)}
                           for k, v in sorted(kinds.items())} for tool, kinds in sorted(by_tool.items())},
    }
    text = json.dumps(out, indent=2)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
