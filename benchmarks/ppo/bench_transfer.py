"""Transfer to unseen domains: a PPO policy trained on the train split, scored on core-v0's test
split beside the heuristic agent.

The policy trains on the ``train`` split of ``--train-env`` ids (all difficulties, no noise)
for ``--minutes`` (or comes from ``--checkpoint``), then plays every core-v0 episode of the ids
that are registered (test split: unseen domains, e.g. coworking and event venues for dialog;
without noise and with the medium preset), as does the heuristic. The table has success and
score with bootstrap 95% CIs, tool F1 and goal consistency per env and noise.

    .venv/bin/python benchmarks/ppo/bench_transfer.py --minutes 8
    .venv/bin/python benchmarks/ppo/bench_transfer.py --checkpoint runs/ppo/RUN/checkpoint.pt
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", default=None, help="a trained checkpoint (default: train one now)")
    p.add_argument("--train-env", action="append", default=None,
                   help="ids to train on (repeatable; default: AgentRL/Dialog-v0 and AgentRL/ToolUse-v0)")
    p.add_argument("--minutes", type=float, default=8.0, help="training time when no checkpoint is given")
    p.add_argument("--suite", default="core-v0")
    p.add_argument("--n-seeds", type=int, default=None, help="use the first N seeds of the suite (default: all)")
    p.add_argument("--n-seeds-for", action="append", default=[], metavar="ID=N",
                   help="fewer seeds for one id, e.g. AgentRL/CrossTask-v0=50 (long sessions; repeatable)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--out", default=None, help="records and runs (default: a temporary folder)")
    a = p.parse_args()

    import gymnasium as gym

    import agentgym  # noqa: F401
    from agentgym.bench.suites import get_suite
    from agentgym.eval.metrics import summarise
    from agentgym.eval.records import read_records
    from agentgym.eval.runner import AgentSpec, run_jobs

    out = Path(a.out or tempfile.mkdtemp(prefix="ppo-transfer-"))
    checkpoint = a.checkpoint
    train_info = None
    if checkpoint is None:
        import torch

        from agentgym.baselines.ppo import Args, train

        torch.set_num_threads(1)
        envs = tuple(a.train_env or ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0"))
        result = train(Args(env=envs, max_seconds=60 * a.minutes, eval_every=25, eval_episodes=100, out=str(out),
                            run_name="train", plot=True))
        checkpoint = str(result.checkpoint)
        train_info = {"env": envs, "steps": result.global_step, "train_s": result.train_s,
                      "initial": result.initial_eval, "final": result.final_eval}
        print(result.summary(), flush=True)

    suite = get_suite(a.suite)
    live = [e for e in suite.envs if e in gym.registry]
    limits = {k: int(v) for k, _, v in (x.partition("=") for x in a.n_seeds_for)}
    jobs = [j for j in suite.jobs() if j.env_id in live
            and (a.n_seeds is None or j.seed < suite.seed_base + a.n_seeds)
            and (j.env_id not in limits or j.seed < suite.seed_base + limits[j.env_id])]
    rows = {}
    for name, spec in (("ppo", AgentSpec("ppo", (("checkpoint", checkpoint),))), ("heuristic", AgentSpec("heuristic"))):
        records_path = out / f"{name}.jsonl"
        run_jobs(jobs, spec, records_path, workers=a.workers, progress=False)
        keys = {j.key for j in jobs}
        frame = summarise([r for r in read_records(records_path) if r["key"] in keys], group_by=("env", "noise"),
                          n_boot=1000)
        rows[name] = frame.to_dict(orient="records")
    lines = ["| env | noise | agent | n | success [95% CI] | score | tool F1 | goal consistency |",
             "|---|---|---|---|---|---|---|---|"]
    for name, table in rows.items():
        for r in table:
            lines.append(f"| {r['env']} | {r['noise']} | {name} | {r['n']} | {r['success']:.1%} "
                         f"[{r['success_lo']:.1%}, {r['success_hi']:.1%}] | {r['score']:.3f} | {r['tool_f1']:.3f} | "
                         f"{r['goal_consistency']:.3f} |")
    table_md = "\n".join(lines)
    print(table_md)
    skipped = [e for e in suite.envs if e not in live]
    if skipped:
        print(f"(not registered yet, skipped: {', '.join(skipped)})")
    path = HERE / "results" / "transfer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"suite": suite.id, "checkpoint": checkpoint, "train": train_info, "skipped": skipped,
                                "table": rows, "markdown": table_md}, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
