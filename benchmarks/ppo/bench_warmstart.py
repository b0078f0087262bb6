"""Warm against cold start on unseen domains: does a policy that learned some tasks learn a new one
faster than one that starts from nothing? (issue 32)

Per family and training seed:

1. source: PPO (hash policy, calibration on) trains on the ``train`` split for ``--source-steps``
   (CrossTask with the dialog and tool-use families its sessions are made of, as in
   `bench_families.py`);
2. warm: it trains on the ``test`` split (the family's unseen domains) for ``--steps``, starting
   from the source's checkpoint (``--init``: its weights, a fresh optimizer);
3. cold: the same run from fresh weights: the same budget, seed and evaluation seeds.

Both are evaluated greedily on fixed test-split seeds every ``--eval-every`` steps (the first
evaluation, before any test-domain step, is the zero-shot success). The target is the heuristic's
success on those seeds; where the heuristic carries a strategy written for the test domain
(ToolUse: ops), ``--expert-share`` of the expert's success instead. Reported per family: steps
and training minutes (evaluation excluded) to the target, zero-shot success, medians over seeds
with the seeds' range, a learning-curve plot, and the warm/cold ratio of steps.

Every run writes one JSON under ``--records`` and is skipped when that file exists, so a long
measurement can be stopped and resumed, or widened by seeds or families; the checkpoints live in
``--out``. The summary rewrites the marked section of ``RESULTS.md``.

    .venv/bin/python benchmarks/ppo/bench_warmstart.py --families dialog --source-steps 8192 --steps 8192
    .venv/bin/python benchmarks/ppo/bench_warmstart.py --summary-only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_families import FAMILIES, MIX, LoadSampler, bootstrap, write_section  # noqa: E402

#: Families whose heuristic has a strategy written for the test domain (ToolUse's ops,
#: `agents/strategies/tooluse.py`): their target is a share of the expert's success instead.
DOMAIN_STRATEGY = {"tooluse"}
BEGIN, END = "<!-- bench_warmstart: begin -->", "<!-- bench_warmstart: end -->"
BATCH = 256  # Args' default num_envs * num_steps: evaluations fall on whole updates


# ---------------------------------------------------------------------------- records
def _record(path: Path, make: Any) -> dict[str, Any]:
    """The JSON at `path`, or `make()`'s result written there first (resumable runs)."""
    if path.exists():
        return json.loads(path.read_text())
    value = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=2, default=str))
    tmp.replace(path)
    return value


#: The options a family's records depend on: a resumed run must use the same ones.
SETTINGS = ("source_steps", "steps", "eval_every", "eval_episodes", "eval_seed", "expert_share")


def _same_settings(folder: Path, a: argparse.Namespace) -> None:
    """Record the options of `folder`'s runs, or stop if its runs were made with other ones."""
    mine = {k: getattr(a, k) for k in SETTINGS}
    theirs = _record(folder / "settings.json", lambda: mine)
    if theirs != mine:
        differ = ", ".join(f"--{k.replace('_', '-')} {theirs.get(k)} (now {mine[k]})" for k in SETTINGS
                           if theirs.get(k) != mine[k])
        raise SystemExit(f"{folder} holds runs made with {differ}: give those, or another --records")


def agent_success(agent: str, env_id: str, split: str, seeds: Sequence[int]) -> dict[str, Any]:
    """A built-in agent's success on fixed seeds of `split`, with its bootstrap 95% CI."""
    import gymnasium as gym

    import agentgym  # noqa: F401
    from agentgym.agents import make_agent
    from agentgym.eval.episode import run_episode

    env, player = gym.make(env_id, split=split), make_agent(agent)
    wins = [float(run_episode(env, player, seed).episode["success"]) for seed in seeds]
    env.close()
    return {"agent": agent, "success": float(np.mean(wins)), "success_ci": bootstrap(wins), "episodes": len(wins)}


def target(family: str, a: argparse.Namespace) -> dict[str, Any]:
    seeds = range(a.eval_seed, a.eval_seed + a.eval_episodes)
    env_id = FAMILIES[family]
    out = {"heuristic": agent_success("heuristic", env_id, "test", seeds)}
    if family in DOMAIN_STRATEGY:
        out["expert"] = agent_success("expert", env_id, "test", seeds)
        out["success"], out["rule"] = a.expert_share * out["expert"]["success"], f"{a.expert_share:g} x expert"
    else:
        out["success"], out["rule"] = out["heuristic"]["success"], "heuristic"
    return out


def _args(a: argparse.Namespace, **kw: Any) -> Any:
    from agentgym.baselines.ppo import Args

    return Args(eval_every=max(1, a.eval_every // BATCH), eval_episodes=a.eval_episodes, eval_seed=a.eval_seed,
                calibration="on", out=str(Path(a.out).resolve()), tensorboard=False, plot=False, progress=a.progress, **kw)


def source(family: str, seed: int, a: argparse.Namespace) -> dict[str, Any]:
    from agentgym.baselines.ppo import train

    mix = tuple(FAMILIES[f] for f in MIX.get(family, (family,)))
    load = LoadSampler()
    r = train(_args(a, env=mix, target_env=FAMILIES[family], seed=seed, total_timesteps=a.source_steps,
                    run_name=f"{family}-source-s{seed}"))
    return {"family": family, "seed": seed, "trained_on": list(mix), "steps": r.global_step, "train_s": r.train_s,
            "checkpoint": str(r.checkpoint), "sha256": hashlib.sha256(r.checkpoint.read_bytes()).hexdigest(),
            "final_train_success": r.final_eval["by_env"][FAMILIES[family]]["success"] if r.final_eval else None,
            "load": load.stop()}


def test_run(family: str, seed: int, kind: str, goal: float, src: dict[str, Any] | None,
             a: argparse.Namespace) -> dict[str, Any]:
    """A run on the test split, warm (from `src`'s checkpoint) or cold."""
    from agentgym.baselines.ppo import train

    init = None
    if src is not None:
        init = src["checkpoint"]
        if not Path(init).is_file() or hashlib.sha256(Path(init).read_bytes()).hexdigest() != src["sha256"]:
            raise SystemExit(f"{init}: the source checkpoint is gone or changed; delete its source JSON to retrain")
    env_id = FAMILIES[family]
    load = LoadSampler()
    r = train(_args(a, env=(env_id,), split="test", init=init, seed=seed, total_timesteps=a.steps,
                    target_success=goal, run_name=f"{family}-{kind}-s{seed}"))
    curve = [{"step": step, "train_s": round(t, 2), "success": ev["by_env"][env_id]["success"]}
             for step, t, ev in r.evals]
    hit = next((p for p in curve if p["success"] >= goal), None)
    return {"family": family, "seed": seed, "kind": kind, "init": r.init, "target": goal, "curve": curve,
            "zero_shot": curve[0]["success"], "final": curve[-1]["success"],
            "steps_to_target": hit["step"] if hit else None, "seconds_to_target": hit["train_s"] if hit else None,
            "steps": r.global_step, "train_s": r.train_s, "sps": r.sps, "load": load.stop()}


# ---------------------------------------------------------------------------- summary
def _median(values: Sequence[float | None]) -> tuple[float | None, float | None, float | None, int]:
    """Median, min and max of the values that exist (a run that never reached the target has
    None), and how many exist; the median is None when half or more are missing."""
    have = sorted(v for v in values if v is not None)
    if len(have) * 2 <= len(values) or not have:
        return None, (have[0] if have else None), (have[-1] if have else None), len(have)
    padded = have + [float("inf")] * (len(values) - len(have))  # a miss counts as past the budget
    return float(np.median(padded)), have[0], have[-1], len(have)


def summarise(records: Path, families: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for family in families:
        folder = records / family
        runs = [json.loads(p.read_text()) for p in sorted(folder.glob("*-s*.json"))] if folder.is_dir() else []
        goal = json.loads((folder / "target.json").read_text()) if (folder / "target.json").exists() else None
        if not goal or not runs:
            continue
        fam: dict[str, Any] = {"target": goal, "sources": [r for r in runs if "kind" not in r]}
        for kind in ("warm", "cold"):
            rs = sorted((r for r in runs if r.get("kind") == kind), key=lambda r: r["seed"])
            fam[kind] = {"seeds": [r["seed"] for r in rs], "steps": _median([r["steps_to_target"] for r in rs]),
                         "minutes": _median([None if r["seconds_to_target"] is None else r["seconds_to_target"] / 60
                                             for r in rs]),
                         "zero_shot": _median([r["zero_shot"] for r in rs]), "final": _median([r["final"] for r in rs]),
                         "budget": max((r["steps"] for r in rs), default=0),
                         "load": float(np.median([r["load"]["median"] for r in rs])) if rs else None, "runs": rs}
        # Per seed: warm steps over cold steps to the target; none where either missed it (or the
        # cold run met it untrained, at step 0).
        cold = {r["seed"]: r["steps_to_target"] for r in fam["cold"]["runs"]}
        ratios = [w["steps_to_target"] / cold[w["seed"]] if w["steps_to_target"] is not None and cold.get(w["seed"])
                  else None for w in fam["warm"]["runs"]]
        fam["ratio"] = {"per_seed": ratios, "median": _median(ratios)}
        out[family] = fam
    return out


def plot(family: str, fam: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for kind, colour in (("warm", "tab:orange"), ("cold", "tab:blue")):
        for i, r in enumerate(fam[kind]["runs"]):
            ax.plot([p["step"] for p in r["curve"]], [p["success"] for p in r["curve"]], color=colour, alpha=0.8,
                    label=f"{kind} (seeds {', '.join(map(str, fam[kind]['seeds']))})" if i == 0 else None)
    goal = fam["target"]
    ax.axhline(goal["success"], color="grey", linestyle="--", label=f"target: {goal['rule']} ({goal['success']:.0%})")
    ax.set(xlabel="test-split steps", ylabel="greedy success, test split", ylim=(-0.02, 1.02),
           title=f"{FAMILIES[family]}: warm start from the train split against cold")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _range(m: tuple[float | None, float | None, float | None, int], fmt: str, total: int) -> str:
    median, lo, hi, n = m
    if n == 0:
        return "not reached"
    core = "not reached" if median is None else format(median, fmt)
    missed = f", {total - n} of {total} not reached" if n < total else ""
    return f"{core} [{format(lo, fmt)}, {format(hi, fmt)}{missed}]"


def _ratio(ratio: dict[str, Any]) -> str:
    """The warm/cold ratio's median (n/a unless most seeds have one) and each seed's (- where
    either run missed the target)."""
    median = ratio["median"][0]
    seeds = ", ".join("-" if r is None else f"{r:.2f}" for r in ratio["per_seed"])
    return f"{'n/a' if median is None else f'{median:.2f}'} (per seed: {seeds})"


def markdown(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    o = [BEGIN, "", f"## Warm against cold start on unseen domains: `bench_warmstart.py` ({meta['date']})", "",
         meta["note"], "",
         "Medians over seeds, with the seeds' [min, max] (a run that never reached the target counts as past the "
         "budget). Steps and minutes are of test-split training, evaluation excluded; zero-shot is the greedy "
         "success before any test-split step. Load: median of the 1-minute load average during the runs.", "",
         "| family | target (test split) | start | seeds | zero-shot success | steps to target | minutes to target "
         "| success at the end (steps) | warm/cold steps | load |", "|---|---|---|---|---|---|---|---|---|---|"]
    for family, fam in summary.items():
        goal = fam["target"]
        for kind in ("warm", "cold"):
            k = fam[kind]
            n = len(k["seeds"])
            ratio = _ratio(fam["ratio"]) if kind == "warm" else ""
            o.append(f"| {family} | {goal['success']:.1%} ({goal['rule']}) | {kind} | {n} "
                     f"| {_range(k['zero_shot'], '.1%', n)} | {_range(k['steps'], ',.0f', n)} "
                     f"| {_range(k['minutes'], '.1f', n)} | {_range(k['final'], '.1%', n)} ({k['budget']:,}) "
                     f"| {ratio} | {k['load']:.1f} |")
    o += ["", "Targets: " + "; ".join(
        f"{f}: heuristic {fam['target']['heuristic']['success']:.1%} "
        f"[{fam['target']['heuristic']['success_ci'][0]:.1%}, {fam['target']['heuristic']['success_ci'][1]:.1%}]"
        + (f", expert {fam['target']['expert']['success']:.1%}" if "expert" in fam["target"] else "")
        + f" on {fam['target']['heuristic']['episodes']} test seeds" for f, fam in summary.items()) + ".",
          f"Learning curves: `{meta['records']}/<family>.png`; one JSON per run in `{meta['records']}/<family>/`.",
          "", END]
    return "\n".join(o)


def _shown(path: Path) -> str:
    """`path` as RESULTS.md names it: relative to this folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(HERE))
    except ValueError:
        return str(path)


def write_results(block: str, path: Path) -> None:
    write_section(block, path, BEGIN, END)


# ---------------------------------------------------------------------------- main
def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--families", default="dialog,tooluse,crosstask", help="comma-separated families")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated training seeds")
    p.add_argument("--source-steps", type=int, default=150_000, help="train-split steps of the source run")
    p.add_argument("--steps", type=int, default=150_000, help="test-split steps of each warm and cold run")
    p.add_argument("--eval-every", type=int, default=4096, help="steps between evaluations (a multiple of 256)")
    p.add_argument("--eval-episodes", type=int, default=100, help="fixed test-split seeds per evaluation")
    p.add_argument("--eval-seed", type=int, default=5_000_000, help="first evaluation seed")
    p.add_argument("--expert-share", type=float, default=0.5,
                   help="the target where the heuristic has a test-domain strategy: this share of the expert's success")
    p.add_argument("--records", default=str(HERE / "results" / "warmstart"), help="one JSON per run (resumable)")
    p.add_argument("--out", default="runs/warmstart", help="the runs' folders and checkpoints")
    p.add_argument("--note", default="", help="what was run and at what budget, for RESULTS.md")
    p.add_argument("--results", default=str(HERE / "RESULTS.md"), help="the Markdown file ('' for none)")
    p.add_argument("--summary-only", action="store_true", help="run nothing; summarise the records there are")
    p.add_argument("--progress", action="store_true", help="print PPO's progress lines")
    a = p.parse_args()
    if a.eval_every % BATCH:
        p.error(f"--eval-every must be a multiple of {BATCH} (one update's steps)")
    families = [f for f in a.families.split(",") if f]
    if any(f not in FAMILIES for f in families):
        p.error(f"--families: expected some of {', '.join(FAMILIES)}")
    seeds = [int(s) for s in a.seeds.split(",") if s]
    records = Path(a.records)
    if not a.summary_only:
        import torch

        torch.set_num_threads(1)
        for family in families:
            folder = records / family
            _same_settings(folder, a)
            goal = _record(folder / "target.json", lambda: target(family, a))
            print(f"{family}: target {goal['success']:.1%} ({goal['rule']}) on the test split", flush=True)
            for seed in seeds:
                src = _record(folder / f"source-s{seed}.json", lambda: source(family, seed, a))
                for kind in ("warm", "cold"):
                    run = _record(folder / f"{kind}-s{seed}.json",
                                  lambda: test_run(family, seed, kind, goal["success"], src if kind == "warm" else None, a))
                    print(f"  seed {seed} {kind}: zero-shot {run['zero_shot']:.1%}, target at "
                          f"{run['steps_to_target']} steps, final {run['final']:.1%} ({run['steps']} steps, "
                          f"load {run['load']['median']:.1f})", flush=True)
    summary = summarise(records, [f for f in FAMILIES if (records / f).is_dir()])
    for family, fam in summary.items():
        plot(family, fam, records / f"{family}.png")
    meta = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "cpus": os.cpu_count(),
            "note": a.note or "(no note given)", "records": _shown(records)}
    block = markdown(summary, meta)
    (records / "summary.json").write_text(json.dumps({"meta": meta, "families": summary}, indent=2, default=str))
    if a.results:
        write_results(block, Path(a.results))
    print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
