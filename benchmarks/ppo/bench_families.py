"""The thin PPO on every family: time to the heuristic's success, transfer, calibration, actors.

One command measures all of issue 20's figures and writes them to ``results/families.json`` and
to the marked section of ``RESULTS.md``:

1. Per family (Dialog-v0, ToolUse-v0, CrossTask-v0; every difficulty, no noise): the heuristic's
   greedy success on fixed train-split seeds is the target; PPO (hash policy, calibration on)
   trains on the train split for up to ``--minutes`` (CrossTask together with the dialog and
   tool-use families its sessions are made of) and is evaluated on the first of those seeds
   every ``--eval-every`` updates; the training time (evaluation excluded) at which it first
   reaches the target is the time to the heuristic's success.
2. Transfer: the final policy and the heuristic on the test split (unseen domains), same seeds.
3. Calibration: the final policy with calibration on and off on the same episodes (train and
   test split): policy violations and all harm per 1,000 steps, and success, with paired
   bootstrap 95% CIs over episodes.
4. Throughput: steps per second of training with 0, 1 and 2 asynchronous actors.

The load average is sampled every 10 s and reported beside every timed figure: the machine may
be shared, and wall-clock figures stretch with its load.

    .venv/bin/python benchmarks/ppo/bench_families.py                 # the full run (about an hour)
    .venv/bin/python benchmarks/ppo/bench_families.py --quick         # minutes, for a smoke check
    .venv/bin/python benchmarks/ppo/bench_families.py --families tooluse --skip throughput
    .venv/bin/python benchmarks/ppo/bench_families.py --families crosstask --seed 2 --json s2.json --results ''
    .venv/bin/python benchmarks/ppo/bench_families.py --merge s1.json s2.json s3.json   # one table, a row per run

Runs measured apart (other seeds, actors, mixes) are merged with ``--merge``: each keeps its own
row, and settings that ran on several seeds get a row of their own with the median over seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
FAMILIES = {"dialog": "AgentRL/Dialog-v0", "tooluse": "AgentRL/ToolUse-v0", "crosstask": "AgentRL/CrossTask-v0"}
#: What each family's run trains on: a cross-task session is made of dialog and tool-use
#: sub-tasks, so its policy trains on those families too (advantages normalised per family).
#: ``--alone`` trains every family on itself only; ``--mix`` names another mix (without
#: Dialog-v0, three seeds with one actor gave 34.0%, 15.5% and 14.5%, against 20.5% with it:
#: no gain beyond the spread of seeds, RESULTS.md).
MIX = {"crosstask": ("dialog", "tooluse", "crosstask")}
BEGIN, END = "<!-- bench_families: begin -->", "<!-- bench_families: end -->"


# ---------------------------------------------------------------------------- measuring aids
class LoadSampler:
    """The 1-minute load average, sampled every `every` seconds in a background thread."""

    def __init__(self, every: float = 10.0) -> None:
        self.samples: list[float] = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join(timeout=1)
        self.samples.append(os.getloadavg()[0])
        return {"min": min(self.samples), "median": float(np.median(self.samples)), "max": max(self.samples)}


def bootstrap(values: Sequence[float], n: int = 2000, seed: int = 0) -> list[float]:
    """The 95% percentile bootstrap interval of a mean."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return [float("nan"), float("nan")]
    idx = np.random.default_rng(seed).integers(0, len(v), size=(n, len(v)))
    means = v[idx].mean(axis=1)
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def per_1000(episodes: Sequence[dict[str, Any]], key: str) -> float:
    steps = sum(e["length"] for e in episodes)
    return 1000 * sum(e[key] for e in episodes) / steps if steps else float("nan")


def paired(on: Sequence[dict[str, Any]], off: Sequence[dict[str, Any]], n: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Calibration on against off over the same episodes: per-1,000-step rates of violations
    and harm and the success rates, each with a paired bootstrap 95% CI (episodes resampled
    together), and the CI of the reduction in violations."""
    assert [(e["env"], e["seed"]) for e in on] == [(e["env"], e["seed"]) for e in off]
    rng = np.random.default_rng(seed)
    m = len(on)
    arrays = {side: {k: np.array([e[k] for e in eps], dtype=float) for k in ("violations", "harm", "length", "success")}
              for side, eps in (("on", on), ("off", off))}
    draws: dict[str, list[float]] = {}
    for _ in range(n):
        idx = rng.integers(0, m, size=m)
        for side in ("on", "off"):
            a = arrays[side]
            steps = a["length"][idx].sum()
            for k in ("violations", "harm"):
                draws.setdefault(f"{side}_{k}", []).append(1000 * a[k][idx].sum() / steps)
            draws.setdefault(f"{side}_success", []).append(a["success"][idx].mean())
        v_on, v_off = draws["on_violations"][-1], draws["off_violations"][-1]
        draws.setdefault("cut", []).append(1 - v_on / v_off if v_off > 0 else float("nan"))
        draws.setdefault("success_diff", []).append(draws["on_success"][-1] - draws["off_success"][-1])

    def ci(key: str) -> list[float]:
        v = np.asarray(draws[key], dtype=float)
        v = v[np.isfinite(v)]
        return [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] if len(v) else [float("nan")] * 2

    out: dict[str, Any] = {"episodes": m}
    for side, eps in (("on", on), ("off", off)):
        out[side] = {"violations_per_1000": per_1000(eps, "violations"), "harm_per_1000": per_1000(eps, "harm"),
                     "success": float(np.mean([e["success"] for e in eps])), "steps": sum(e["length"] for e in eps),
                     "violations_ci": ci(f"{side}_violations"), "harm_ci": ci(f"{side}_harm"),
                     "success_ci": ci(f"{side}_success")}
    off_v = out["off"]["violations_per_1000"]
    out["violation_cut"] = 1 - out["on"]["violations_per_1000"] / off_v if off_v > 0 else None
    out["violation_cut_ci"] = ci("cut")
    out["success_diff"] = out["on"]["success"] - out["off"]["success"]
    out["success_diff_ci"] = ci("success_diff")
    return out


# ---------------------------------------------------------------------------- the heuristic
def heuristic(env_id: str, split: str, seeds: Sequence[int]) -> dict[str, Any]:
    """The heuristic agent's episodes on fixed seeds: success, steps, violations."""
    import gymnasium as gym

    import agentgym  # noqa: F401
    from agentgym.agents.heuristic import HeuristicAgent
    from agentgym.baselines.calibration import step_harm

    env = gym.make(env_id, split=split)
    agent = HeuristicAgent()
    episodes = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info)
        done, length, violations, harm = False, 0, 0, 0
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            h = step_harm(info)
            violations, harm, length = violations + h.violations, harm + int(h.harmful), length + 1
            done = terminated or truncated
        episodes.append({"env": env_id, "seed": seed, "success": bool(info["episode_summary"]["success"]), "length": length,
                         "violations": violations, "harm": harm})
    env.close()
    successes = [float(e["success"]) for e in episodes]
    return {"success": float(np.mean(successes)), "success_ci": bootstrap(successes), "episodes": len(episodes),
            "violations_per_1000": per_1000(episodes, "violations"), "harm_per_1000": per_1000(episodes, "harm")}


# ---------------------------------------------------------------------------- PPO
def ppo_family(family: str, a: argparse.Namespace, out: Path) -> dict[str, Any]:
    import torch

    from agentgym.baselines.ppo import Args, evaluate, load_checkpoint, train

    torch.set_num_threads(1)
    env_id = FAMILIES[family]
    seeds = range(a.eval_seed, a.eval_seed + a.eval_episodes)
    splits = ("train",) if "test" in a.skip else ("train", "test")
    target = heuristic(env_id, "train", seeds)
    test_heuristic = heuristic(env_id, "test", seeds) if "test" in splits else None
    print(f"{family}: heuristic {target['success']:.1%} on train"
          + (f", {test_heuristic['success']:.1%} on test" if test_heuristic else ""), flush=True)
    mix = (family,) if a.alone else a.mix.get(family) or MIX.get(family, (family,))
    load = LoadSampler()
    result = train(Args(env=tuple(FAMILIES[f] for f in mix), target_env=env_id, seed=a.seed, actors=a.actors,
                        mix=a.slot_mix, adv_norm=a.adv_norm, subtask_rewards=a.subtask_rewards, max_seconds=60 * a.minutes, eval_every=a.eval_every, eval_episodes=a.train_eval_episodes,
                        eval_seed=a.eval_seed, target_success=target["success"], calibration="on", out=str(out),
                        demos=a.demos, demo_episodes=a.demo_episodes, demo_epochs=a.demo_epochs, demo_coef=a.demo_coef,
                        demo_decay=a.demo_decay,
                        run_name=family, tensorboard=False, plot=True, progress=a.progress,
                        **settings(a.set or [])))
    train_load = load.stop()
    policy, _ = load_checkpoint(result.checkpoint)
    eval_args = Args(env=(env_id,), eval_episodes=a.eval_episodes, eval_seed=a.eval_seed, progress=False)
    runs = {(split, cal): evaluate(policy, eval_args, split=split, calibration=cal)
            for split in splits for cal in ("on", "off")}
    curve = [{"step": step, "train_s": round(t, 1), "success": ev["by_env"][env_id]["success"],
              "violations_per_1000": ev["by_env"][env_id]["violations_per_1000"]} for step, t, ev in result.evals]
    ppo_test = runs.get(("test", "on"))
    return {
        "env": env_id, "trained_on": [FAMILIES[f] for f in mix], "heuristic_train": target,
        "heuristic_test": test_heuristic,
        "time_to_heuristic_s": result.time_to_target, "train_s": result.train_s, "steps": result.global_step,
        "sps": result.sps, "actors": a.actors, "load": train_load, "curve": curve,
        "ppo_train": {"success": runs[("train", "on")]["success"],
                      "success_ci": bootstrap([float(e["success"]) for e in runs[("train", "on")]["per_episode"]])},
        "ppo_test": ppo_test and {"success": ppo_test["success"],
                                  "success_ci": bootstrap([float(e["success"]) for e in ppo_test["per_episode"]])},
        "calibration": {split: paired(runs[(split, "on")]["per_episode"], runs[(split, "off")]["per_episode"])
                        for split in splits},
        "run_dir": str(result.run_dir), "demos": result.demos,
    }


def throughput(a: argparse.Namespace, out: Path) -> dict[str, Any]:
    import torch

    from agentgym.baselines.ppo import Args, train

    torch.set_num_threads(1)
    rows: dict[str, Any] = {}
    for family in a.throughput_families:
        for actors in (0, 1, 2):
            load = LoadSampler(every=5.0)
            result = train(Args(env=(FAMILIES[family],), seed=1, actors=actors, total_timesteps=a.throughput_steps,
                                eval_episodes=0, out=str(out), run_name=f"sps-{family}-{actors}", tensorboard=False,
                                plot=False, progress=False))
            rows[f"{family}/{actors}"] = {"family": family, "actors": actors, "sps": result.sps,
                                          "steps": result.global_step, "startup_s": result.startup_s,
                                          "load": load.stop()}
            print(f"throughput {family}, {actors} actors: {result.sps:.0f} steps/s", flush=True)
    return rows


# ---------------------------------------------------------------------------- report
def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def _ci(ci: Sequence[float], pct: bool = True) -> str:
    return f"[{ci[0]:.1%}, {ci[1]:.1%}]" if pct else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _rate(r: dict[str, Any] | None) -> str:
    """A success with its interval; ``-`` for a split not evaluated (``--skip test``)."""
    return "-" if r is None else f"{_pct(r['success'])} {_ci(r['success_ci'])}"


def markdown(res: dict[str, Any]) -> str:
    o = [BEGIN, "", f"## Every family: `bench_families.py` ({res['date']}, {res['cpus']} CPUs, torch "
                    f"{res['torch']}, one thread per process)", "",
         f"Evaluation: greedy, {res['eval_episodes']} fixed seeds per split (from {res['eval_seed']}), every "
         f"difficulty, no noise. Training: hash policy, calibration on, up to {res['minutes']:g} min per family "
         f"(evaluation excluded). Load: the 1-minute load average sampled every 10 s during training "
         f"(min / median / max); at 2 the two cores were ours.", ""]
    fams = res.get("families", {})
    if fams:
        o += ["### Time to the heuristic's success (train split) and transfer (test split: unseen domains)", "",
              "| family | heuristic, train | PPO time to it | PPO at the end, train | heuristic, test | PPO, test "
              "| test gap | steps, steps/s | load |", "|---|---|---|---|---|---|---|---|---|"]
        for fam, r in fams.items():
            t = r["time_to_heuristic_s"]
            tests = r["ppo_test"] and r["heuristic_test"]
            gap = f"{r['ppo_test']['success'] - r['heuristic_test']['success']:+.1%}" if tests else "-"
            if len(r.get("trained_on", ())) > 1:
                fam = f"{fam} (trained with {', '.join(e.split('/')[-1].removesuffix('-v0') for e in r['trained_on'])})"
            o.append(f"| {fam} | {_pct(r['heuristic_train']['success'])} {_ci(r['heuristic_train']['success_ci'])} "
                     f"| {'not reached' if t is None else f'{t:.0f} s'} (in {r['train_s']:.0f} s) "
                     f"| {_pct(r['ppo_train']['success'])} {_ci(r['ppo_train']['success_ci'])} "
                     f"| {_rate(r['heuristic_test'])} | {_rate(r['ppo_test'])} | {gap} "
                     f"| {r['steps']:,}, {r['sps']:.0f} | {r['load']['min']:.1f} / {r['load']['median']:.1f} / "
                     f"{r['load']['max']:.1f} |")
        o += _over_seeds(fams)
        o += ["", "### Calibration: the same policy and episodes, calibration on and off", "",
              "| family | split | violations/1000 steps, on | off | cut [CI] | all harm/1000, on | off "
              "| success on | off | difference [CI] |", "|---|---|---|---|---|---|---|---|---|---|"]
        for fam, r in fams.items():
            for split, c in r["calibration"].items():
                cut = "n/a (none off)" if c["violation_cut"] is None else \
                    f"{c['violation_cut']:.0%} {_ci(c['violation_cut_ci'])}"
                o.append(f"| {fam} | {split} | {c['on']['violations_per_1000']:.1f} {_ci(c['on']['violations_ci'], False)} "
                         f"| {c['off']['violations_per_1000']:.1f} {_ci(c['off']['violations_ci'], False)} | {cut} "
                         f"| {c['on']['harm_per_1000']:.1f} | {c['off']['harm_per_1000']:.1f} "
                         f"| {_pct(c['on']['success'])} | {_pct(c['off']['success'])} "
                         f"| {c['success_diff']:+.1%} {_ci(c['success_diff_ci'])} |")
        o += ["", "Learning curves (with the evaluation before training) and harm per update: "
                  "`results/families/<family>/learning_curve.png`."]
    sps = res.get("throughput", {})
    if sps:
        o += ["", "### Steps per second of training with asynchronous actors", "",
              "| family | sync (`--actors 0`) | `--actors 1` | `--actors 2` | load (median) |", "|---|---|---|---|---|"]
        for fam in dict.fromkeys(r["family"] for r in sps.values()):
            row = [sps[f"{fam}/{k}"] for k in (0, 1, 2)]
            base = row[0]["sps"]
            o.append(f"| {fam} | {base:.0f} | {row[1]['sps']:.0f} (x{row[1]['sps'] / base:.2f}) "
                     f"| {row[2]['sps']:.0f} (x{row[2]['sps'] / base:.2f}) "
                     f"| {np.median([r['load']['median'] for r in row]):.1f} |")
    o += ["", END]
    return "\n".join(o)


def _over_seeds(fams: dict[str, Any]) -> list[str]:
    """Runs that differ only in their seed, summarised: the median of their train success (each
    seed's beside it) and how many reached the heuristic's success within the budget; [] when
    no setting ran on more than one seed."""
    settings: dict[str, list[dict[str, Any]]] = {}
    for key, r in fams.items():
        setting = re.sub(r", `--seed \d+`", "", key)
        settings.setdefault(setting, []).append({**r, "seed": int(m.group(1)) if (m := re.search(r"`--seed (\d+)`", key))
                                                 else 1})
    rows = {k: sorted(v, key=lambda r: r["seed"]) for k, v in settings.items() if len(v) > 1}
    if not rows:
        return []
    o = ["", "### Over seeds: runs that differ only in their training seed", "",
         "| setting | seeds | heuristic, train | PPO at the end, train: median (per seed) | reached the heuristic "
         "| time to it (per seed) | load (median) |", "|---|---|---|---|---|---|---|"]
    for setting, runs in rows.items():
        ends = [r["ppo_train"]["success"] for r in runs]
        times = ["-" if r["time_to_heuristic_s"] is None else f"{r['time_to_heuristic_s']:.0f} s" for r in runs]
        reached = sum(r["time_to_heuristic_s"] is not None for r in runs)
        o.append(f"| {setting} | {', '.join(str(r['seed']) for r in runs)} "
                 f"| {_pct(runs[0]['heuristic_train']['success'])} | {_pct(float(np.median(ends)))} "
                 f"({', '.join(_pct(e) for e in ends)}) | {reached} of {len(runs)} | {', '.join(times)} "
                 f"| {np.median([r['load']['median'] for r in runs]):.1f} |")
    return o


def merge(paths: Sequence[str]) -> dict[str, Any]:
    """The figures of several runs (their JSON files, each of one invocation) as one: families
    and throughput side by side, each run under its own key (a later file's key wins)."""
    runs = [json.loads(Path(p).read_text()) for p in paths]
    if not runs:
        raise SystemExit("--merge needs at least one JSON file")
    first = runs[0]
    if any((r["eval_episodes"], r["eval_seed"]) != (first["eval_episodes"], first["eval_seed"]) for r in runs):
        raise SystemExit("--merge: the runs were evaluated on different seeds (--eval-episodes, --eval-seed)")
    out = {**first, "date": f"{min(r['date'] for r in runs)} to {max(r['date'] for r in runs)}",
           "minutes": max(r["minutes"] for r in runs), "families": {}, "throughput": {}}
    for r in runs:
        out["families"].update(r.get("families", {}))
        out["throughput"].update(r.get("throughput", {}))
    return out


def write_section(block: str, path: Path, begin: str = BEGIN, end: str = END) -> None:
    """Put `block` (which starts with `begin` and ends with `end`) in place of the section those
    markers hold in `path`, or after its text when there is none yet."""
    text = path.read_text() if path.exists() else ""
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def write_results(res: dict[str, Any], path: Path) -> None:
    write_section(markdown(res), path)


def _key(family: str, a: argparse.Namespace) -> str:
    """A run's name in the figures: its family and the options it ran with away from the defaults,
    so runs measured apart (with actors, another seed or mix) sit side by side once merged."""
    parts = [family] + [f"`--actors {a.actors}`"] * bool(a.actors) + [f"`--seed {a.seed}`"] * (a.seed != 1)
    if family in a.mix:
        parts.append(f"`--mix {family}={'+'.join(a.mix[family])}`")
    if a.slot_mix != "fixed":
        parts.append(f"`--slot-mix {a.slot_mix}`")
    if a.adv_norm != "family":
        parts.append(f"`--adv-norm {a.adv_norm}`")
    if a.demos:
        parts.append(f"`--demos {a.demos}`")
    parts += [f"`--set {pair}`" for pair in a.set or []]
    return ", ".join(parts)


def settings(pairs: Sequence[str]) -> dict[str, Any]:
    """``--set NAME=VALUE`` pairs as PPO Args fields, each value parsed as the field's default is typed."""
    from agentgym.baselines.ppo import Args

    out: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        field = name.replace("-", "_")
        default = getattr(Args(), field)  # AttributeError names an unknown field
        out[field] = type(default)(value) if default is not None else value
    return out


def _mix(text: str, p: argparse.ArgumentParser) -> tuple[str, tuple[str, ...]]:
    family, _, rest = text.partition("=")
    mix = tuple(f for f in rest.split("+") if f)
    if family not in FAMILIES or not mix or any(f not in FAMILIES for f in mix):
        p.error(f"--mix {text!r}: expected FAMILY=F1+F2 with families among {', '.join(FAMILIES)}")
    return family, mix


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--families", default="dialog,tooluse,crosstask", help="comma-separated families")
    p.add_argument("--minutes", type=float, default=10.0, help="training budget per family")
    p.add_argument("--eval-episodes", type=int, default=200, help="fixed seeds per split")
    p.add_argument("--eval-seed", type=int, default=5_000_000, help="first evaluation seed")
    p.add_argument("--eval-every", type=int, default=20, help="updates between evaluations in training")
    p.add_argument("--train-eval-episodes", type=int, default=100,
                   help="seeds per env id of the evaluations during training (the first of the fixed seeds)")
    p.add_argument("--seed", type=int, default=1, help="the training seed")
    p.add_argument("--alone", action="store_true", help="train every family on itself only (CrossTask too)")
    p.add_argument("--mix", action="append", default=[], metavar="FAMILY=F1+F2",
                   help="what FAMILY's run trains on, e.g. crosstask=tooluse+crosstask (repeatable)")
    p.add_argument("--slot-mix", choices=("fixed", "adaptive"), default="fixed",
                   help="how a multi-task run's env slots share its env ids (PPO's --mix)")
    p.add_argument("--adv-norm", choices=("family", "env", "task", "batch", "none"), default="family",
                   help="PPO's advantage normalisation (default: family)")
    p.add_argument("--subtask-rewards", action="store_true",
                   help="pay a cross-task session's reward as its sub-tasks end (PPO's --subtask-rewards)")
    p.add_argument("--demos", default=None, metavar="AGENT",
                   help="fit PPO's policy to this built-in agent's episodes first (PPO's --demos, e.g. expert, heuristic)")
    p.add_argument("--demo-episodes", type=int, default=1000, help="with --demos: episodes played (PPO's --demo-episodes)")
    p.add_argument("--demo-epochs", type=int, default=10, help="with --demos: passes of the fit (PPO's --demo-epochs)")
    p.add_argument("--demo-coef", type=float, default=0.0,
                   help="with --demos: weight of the demonstrations' loss during PPO, decaying (PPO's --demo-coef)")
    p.add_argument("--demo-decay", type=int, default=200, help="with --demos: updates of that decay (PPO's --demo-decay)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="another PPO setting of the training runs (an Args field), e.g. hash_dim=64")
    p.add_argument("--actors", type=int, default=0,
                   help="asynchronous actors of the training runs (0: the synchronous loop, one core; 1: the learner and "
                        "one actor, a core each)")
    p.add_argument("--throughput-steps", type=int, default=8192, help="steps per throughput run")
    p.add_argument("--throughput-families", default="dialog,tooluse", help="families of the throughput runs")
    p.add_argument("--skip", default="", help="comma-separated parts to skip: families,throughput,test (the "
                                                          "test split's evaluations)")
    p.add_argument("--quick", action="store_true", help="1 min per family, 40 seeds, 2048-step throughput runs")
    p.add_argument("--progress", action="store_true", help="print PPO's progress lines")
    p.add_argument("--out", default=None, help="run folders (default: a temporary folder)")
    p.add_argument("--json", default=str(HERE / "results" / "families.json"), help="where to write the figures")
    p.add_argument("--results", default=str(HERE / "RESULTS.md"), help="the Markdown file whose section to rewrite "
                                                                         "('' for none)")
    p.add_argument("--merge", nargs="+", metavar="JSON", help="run nothing: merge these runs' JSON files into "
                                                                 "--json and the results section")
    a = p.parse_args()
    if a.merge:
        res = merge(a.merge)
        Path(a.json).write_text(json.dumps(res, indent=2, default=str))
        if a.results:
            write_results(res, Path(a.results))
        print(markdown(res))
        return 0
    if a.quick:
        a.minutes, a.eval_episodes, a.train_eval_episodes, a.throughput_steps, a.eval_every = 1.0, 40, 20, 2048, 10
    a.throughput_families = [f for f in a.throughput_families.split(",") if f]
    a.mix = dict(_mix(m, p) for m in a.mix)
    skip = a.skip = {s for s in a.skip.split(",") if s}

    import torch

    out = Path(a.out or tempfile.mkdtemp(prefix="ppo-families-"))
    res: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
                           "torch": torch.__version__, "minutes": a.minutes, "eval_episodes": a.eval_episodes,
                           "eval_seed": a.eval_seed, "out": str(out)}
    if "families" not in skip:
        res["families"] = {_key(f, a): ppo_family(f, a, out) for f in a.families.split(",") if f}
    if "throughput" not in skip:
        res["throughput"] = throughput(a, out)
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(res, indent=2, default=str))
    if a.results:
        write_results(res, Path(a.results))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
