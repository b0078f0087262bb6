"""The env server's and PPO's figures, re-measured by their own scripts with the dev venv.

`benchmarks/server/bench_server.py`, `benchmarks/ppo/bench_dialog.py` (``time`` and ``throughput``)
and `benchmarks/ppo/bench_cartpole_sb3.py` run one after another with the agentgym dev venv's
Python (``--project-python``; the perf venv has neither torch nor fastapi), their JSON outputs kept
in a temporary folder (the committed `benchmarks/server/RESULTS.md` and `benchmarks/ppo/results/`
stay as they are). With the scripts' defaults this part alone takes about 20 minutes on two idle
cores (the server benchmark about 12); ``--skip server,ppo`` leaves it out.
"""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from perf.config import ROOT, PerfConfig
from perf.machine import loadavg
from perf.tables import md_table, verdict

# ============================================================================= 6. env server and PPO, re-measured
#: What the sub-benchmarks import from the project venv (`make dev-venv` installs it all).
PROJECT_IMPORTS = "agentgym, torch, fastapi, uvicorn, websockets"
#: The PPO issue's targets: Dialog-v0 easy to 80% greedy success within 10 minutes of training on
#: 2 cores; throughput: faster than stable-baselines3, and actors faster than the synchronous loop.
PPO_TIME_TARGET_S = 600.0
PPO_SPEED_TARGET = 1.0


def remeasure_jobs(work: Path, skip: set[str], quick: bool, openenv_python: Path,
                   sb3_python: Path) -> list[dict[str, Any]]:
    """The sub-benchmarks to run: script and settings (the scripts' defaults, or short runs for
    ``--quick``), every output of theirs in `work` (so that no run overwrites the committed results),
    and why one cannot run (a missing optional venv)."""

    def job(name: str, script: str, settings: list[str], io: list[str], missing: str | None = None) -> dict[str, Any]:
        return {"name": name, "script": script, "settings": settings, "argv": [script, *settings, *io],
                "json": work / f"{name}.json", "missing": missing}

    jobs = []
    if "server" not in skip:
        jobs.append(job("server", "benchmarks/server/bench_server.py",
                        ["--rounds", "1", "--steps", "300", "--seconds", "2"] if quick else [],
                        ["--openenv-python", str(openenv_python), "--results", str(work / "server.md"),
                         "--json", str(work / "server.json")]))
    if "ppo" not in skip:
        runs = ["--out", str(work / "runs")]
        jobs.append(job("dialog_time", "benchmarks/ppo/bench_dialog.py",
                        ["time", *(["--seeds", "1", "--max-seconds", "60"] if quick else [])],
                        [*runs, "--json", str(work / "dialog_time.json")]))
        jobs.append(job("dialog_throughput", "benchmarks/ppo/bench_dialog.py",
                        ["throughput", *(["--rounds", "1", "--steps", "1024"] if quick else [])],
                        [*runs, "--json", str(work / "dialog_throughput.json")]))
        jobs.append(job("cartpole_sb3", "benchmarks/ppo/bench_cartpole_sb3.py",
                        ["--rounds", "1", "--steps", "2048"] if quick else [],
                        ["--sb3-python", str(sb3_python), "--out", str(work / "cartpole_sb3.json")],
                        None if sb3_python.exists() else
                        f"{sb3_python} does not exist (create it: python3 -m venv /tmp/sb3-venv && "
                        "/tmp/sb3-venv/bin/pip install -r benchmarks/ppo/requirements.txt)"))
    return jobs


def project_python_problem(python: Path) -> str | None:
    """Why `python` cannot run the sub-benchmarks, or None."""
    if not python.exists():
        return f"`{python}` does not exist (create the agentgym dev venv: `make dev-venv`)"
    probe = subprocess.run([str(python), "-c", f"import {PROJECT_IMPORTS}"], capture_output=True, text=True, cwd=ROOT)
    if probe.returncode:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return f"`{python}` cannot import {PROJECT_IMPORTS} ({last}; install the dev extras: `make dev-venv`)"
    return None


def run(cfg: PerfConfig, skip: set[str], log: Callable[..., None]) -> dict[str, Any]:
    """Run each sub-benchmark with the project's Python, one after another; keep its JSON, or why not."""
    python = cfg.project_python.absolute()  # not resolve(): a venv's python is a symlink
    problem = project_python_problem(python)
    if problem:
        log(f"[remeasure] skipped: {problem}")
        return {"skipped": problem}
    out: dict[str, Any] = {"python": str(python), "jobs": []}
    with tempfile.TemporaryDirectory(prefix="agentgym-remeasure-") as work:
        for job in remeasure_jobs(Path(work), skip, cfg.quick, cfg.openenv_python, cfg.sb3_python):
            rec = {k: job[k] for k in ("name", "script", "settings")}
            out["jobs"].append(rec)
            if job["missing"]:
                rec["problem"] = f"not run: {job['missing']}"
                log(f"[remeasure] {job['name']} {rec['problem']}")
                continue
            log(f"[remeasure] {job['name']}: {' '.join(job['argv'])}")
            rec["load_start"], t0 = loadavg(), time.perf_counter()
            proc = subprocess.run([str(python), *job["argv"]], capture_output=True, text=True, cwd=ROOT)
            rec["wall_s"], rec["load_end"] = time.perf_counter() - t0, loadavg()
            rec["when"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            if proc.returncode or not job["json"].exists():
                tail = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
                rec["problem"] = f"failed (exit {proc.returncode}): {tail}"
                log(f"[remeasure] {job['name']} {rec['problem']}\n{proc.stderr[-3000:]}")
                continue
            rec["result"] = json.loads(job["json"].read_text("utf-8"))
            log(f"[remeasure] {job['name']}: done in {rec['wall_s']:.0f} s")
    return out


def _median_of(n: int, what: str) -> str:
    return f"median of {n} {what}{'s' if n != 1 else ''}"


def _at_least(value: float, target: float) -> str:
    return "pass" if value >= target else f"**MISS** by {target - value:.2f}x ({value / target:.2f} of the target)"


def server_rows(res: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    rt_target, ratio_target = res["target_round_trip_us"], res["target_ratio"]
    rounds, clients = _median_of(res["settings"]["rounds"], "round"), res["settings"]["clients"]
    rows = []
    for t in res["targets"]:
        mode = f"env calls `{t['mode']}`"
        rows.append((f"Server: one-client WebSocket step round trip, echo env, {mode} ({rounds})",
                     f"{t['round_trip_us']:.0f} us ({t['round_trip_client']})", f"<= {rt_target:g} us",
                     verdict(t["round_trip_us"], rt_target, "us", lambda v: f"{v:.0f}")))
        figure = f"Server: {clients} clients' steps/s over OpenEnv's, WebSocket, echo env, {mode} ({rounds})"
        if t["ratio"] is None:
            rows.append((figure, f"OpenEnv not measured: {res['openenv_error']}", f">= {ratio_target:g}x", "-"))
        else:
            rows.append((figure, f"{t['ratio']:.2f}x ({t['steps_per_s']:,.0f} against {t['openenv_steps_per_s']:,.0f}"
                         f" steps/s; OpenEnv's server: {t['cpu_ratio']:.2f}x our CPU per step)",
                         f">= {ratio_target:g}x", _at_least(t["ratio"], ratio_target)))
    return rows


def dialog_time_rows(res: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    runs = res["runs"]

    def seed_time(r: dict[str, Any]) -> str:
        if r["time_to_80_s"] is None:
            return f"not reached ({r['final_success']:.0%} after {r['train_s']:.0f} s)"
        return f"{r['time_to_80_s']:.0f} s"

    per_seed = ", ".join(f"seed {r['seed']}: {seed_time(r)}" for r in runs)
    figure = (f"PPO: training time until 80% greedy success, Dialog-v0 easy, {res['cpus']} CPUs "
              f"({_median_of(len(runs), 'seed')})")
    median = res["median_time_to_80_s"]
    target = f"< {PPO_TIME_TARGET_S / 60:g} min"
    if median is None:
        return [(figure, per_seed, target, "**MISS**: not reached by every seed")]
    return [(figure, f"{median:.0f} s ({per_seed})", target,
             verdict(median, PPO_TIME_TARGET_S, "s", lambda v: f"{v:.0f}"))]


def dialog_throughput_rows(res: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    sps = res["median_sps"]
    best = max(res["speedup_1"], res["speedup_2"])
    return [(f"PPO: steps/s with asynchronous actors over the synchronous loop, Dialog-v0 easy, {res['cpus']} CPUs "
             f"({_median_of(len(res['runs']['0']), 'round')})",
             f"1 actor {res['speedup_1']:.2f}x, 2 actors {res['speedup_2']:.2f}x (steps/s: sync {sps['0']:,.0f}, "
             f"1 actor {sps['1']:,.0f}, 2 actors {sps['2']:,.0f})", f"> {PPO_SPEED_TARGET:g}x (the better of the two)",
             "pass" if best > PPO_SPEED_TARGET else _at_least(best, PPO_SPEED_TARGET))]


def cartpole_rows(res: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    sps = res["median_sps"]
    sb3 = res["runs"]["sb3"][0]["impl"]
    return [(f"PPO: CartPole-v1 training steps/s over {sb3}'s, same hyperparameters "
             f"({_median_of(res['rounds'], 'round')})",
             f"{res['ratio']:.2f}x ({sps['ours']:,.0f} against {sps['sb3']:,.0f} steps/s)",
             f"> {PPO_SPEED_TARGET:g}x", "pass" if res["ratio"] > PPO_SPEED_TARGET else
             _at_least(res["ratio"], PPO_SPEED_TARGET))]


#: Each job's table rows from its JSON, and what they stand for when the job did not run.
JOB_ROWS = {"server": (server_rows, "Server: one-client round trip and 8 clients against OpenEnv"),
            "dialog_time": (dialog_time_rows, "PPO: training time until 80% success, Dialog-v0 easy"),
            "dialog_throughput": (dialog_throughput_rows, "PPO: actors' speed-up, Dialog-v0 easy"),
            "cartpole_sb3": (cartpole_rows, "PPO: CartPole-v1 steps/s against stable-baselines3")}


def section(rem: dict[str, Any]) -> list[str]:
    """The table of the re-measured figures, and how each script ran."""
    o = ["## Env server and PPO, re-measured", ""]
    if "skipped" in rem:
        return o + [f"Skipped: {rem['skipped']}.", ""]
    o += ["The figures of the env-server and thin-PPO issues, re-measured in this run by their own scripts, one "
          f"after another, with `{rem['python']}` (their outputs go to a temporary folder: the full tables of the "
          "scripts' own last runs, `benchmarks/server/RESULTS.md` and `benchmarks/ppo/RESULTS.md`, stay as they "
          "are). Wall-clock figures, on a machine other jobs may share: see the load averages below.", ""]
    table = []
    for job in rem["jobs"]:
        to_rows, what = JOB_ROWS[job["name"]]
        if "problem" in job:
            table.append({"figure": what, "value": job["problem"], "target": "-", "result": "not measured",
                          "measured": job.get("when", "-")})
            continue
        for figure, value, target, result in to_rows(job["result"]):
            table.append({"figure": figure, "value": value, "target": target, "result": result,
                          "measured": job["when"]})
    o += md_table(table)
    o += ["", "Runs:", ""]
    for job in rem["jobs"]:
        cmd = " ".join([job["script"], *job["settings"]])
        ran = (f"{job['wall_s']:.0f} s, load average {job['load_start']} at the start, {job['load_end']} at the end"
               if "wall_s" in job else "not run")
        o.append(f"- `{cmd}`: {ran}.")
    return o + [""]

