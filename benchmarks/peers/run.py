#!/usr/bin/env python
"""Environment-only cost of AgentRL beside a Gymnasium floor, TextArena and GEM, in one run.

    make perf                                   # venv benchmarks/peers/.venv, then this script
    benchmarks/peers/.venv/bin/python benchmarks/peers/run.py [--quick] [--out PATH]

Measures, and writes to ``benchmarks/RESULTS.md`` (medians, min-max, ratios to the floor and to
each peer, targets with pass/MISS, the versions used):

1. Step and reset time, interleaved: every unit of `subjects.py` (the floor's and the peers'
   step and reset; per AgentRL id, with and without ``noise="medium"``: message step, tool step,
   reset) runs one short block per round, round robin (the starting unit rotates each round),
   for ``--rounds`` rounds, after one untimed warm-up round. Each call is timed alone with
   ``perf_counter_ns`` (resets and action choice between steps untimed). Per unit: the median of
   each block; the figure is the median of the block medians, min-max is their range. Machine
   noise falls on every subject alike.
2. Memory per live env: in a fresh process per subject, ``--mem-n`` (1,000) envs made and reset
   (each with its task world) and kept live; RSS delta (``/proc/self/statm``) and, in a second
   process, ``tracemalloc``'s traced delta, divided by the count. A warm-up env made first keeps
   module-level caches out of the figure.
3. ``import agentgym`` time: fresh interpreters, interleaved with ``gymnasium`` and the peers,
   ``--import-runs`` (10) each; the median, and whether ``torch`` got imported.
4. Harness overhead: the bare loop (`agentgym.eval.episode.run_episode`) against the harness
   (`agentgym.eval.runner.run_jobs`, ``workers=1``, records written) on the same seeds with the
   heuristic agent, as ``benchmarks/test_harness_overhead.py`` does, in a fresh process per id;
   rounds alternate the two.
5. Profiles: py-spy samples of the worst miss of each operation (reset, message step, tool step;
   with and without noise) and of the harness against the bare loop, ``python -X importtime`` of
   ``import agentgym`` and tracemalloc's allocation sites for the largest env; top entries go in
   the results.
6. Env server and PPO, re-measured: the figures of those issues, from their own scripts
   (`benchmarks/server/bench_server.py`, `benchmarks/ppo/bench_dialog.py` ``time`` and
   ``throughput``, `benchmarks/ppo/bench_cartpole_sb3.py`) run one after another with the agentgym
   dev venv (``--project-python``; this venv has neither torch nor fastapi), their JSON outputs kept
   in a temporary folder (the committed `benchmarks/server/RESULTS.md` and `benchmarks/ppo/results/`
   stay as they are): a table of figure, value, target, pass/MISS and when it was measured. With the
   scripts' defaults this part alone takes about 20 minutes on two idle cores (the server benchmark
   about 12); skip it with ``--skip server,ppo``.

``benchmarks/peers/ANALYSIS.md`` (written by hand after reading a run's profiles) is appended.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import gc
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

DEFAULT_OUT = ROOT / "benchmarks" / "RESULTS.md"
ANALYSIS = HERE / "ANALYSIS.md"

#: Targets.
STEP_TARGET_US = {"off": 10.0, "medium": 15.0}
RESET_TARGET_US = 200.0
MEM_TARGET_KB = 30.0
IMPORT_TARGET_S = 0.3
HARNESS_TARGET = 0.20

PEERS = ("textarena", "gem")
PEER_NAMES = {"floor": "Gymnasium floor", "textarena": "TextArena", "gem": "GEM"}


def log(*a: Any) -> None:
    print(*a, file=sys.stderr, flush=True)


def fmt_us(x: float) -> str:
    return f"{x:,.2f}" if x < 10 else f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


def ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "-"
    return f"{a / b:,.1f}x" if a / b >= 10 else f"{a / b:.2f}x"


def noise_name(noise: str | None) -> str:
    return noise or "off"


def step_target(op: str, noise: str | None) -> float:
    return RESET_TARGET_US if op == "reset" else STEP_TARGET_US[noise_name(noise)]


def verdict(value: float, target: float, unit: str, fmt: Any = None) -> str:
    fmt = fmt or (lambda v: f"{v:.3g}")
    if value <= target:
        return "pass"
    return f"**MISS** by {fmt(value - target)} {unit} ({value / target:.1f}x the target)"


# ============================================================================= 1. interleaved timing
def run_interleaved(rounds: int, block: int, reset_block: int, ids: list[str] | None) -> tuple[list[dict], float]:
    from subjects import build_units

    log("[time] building units ...")
    units = build_units(ids)
    samples: dict[int, list[list[int]]] = {i: [] for i in range(len(units))}
    n_of = [reset_block if u.op == "reset" else block for u in units]
    log(f"[time] {len(units)} units, 1 warm-up + {rounds} rounds, blocks of {block} steps / {reset_block} resets")
    order = list(range(len(units)))
    for r in range(-1, rounds):
        t0 = time.perf_counter()
        k = r % len(order) if r >= 0 else 0
        for i in order[k:] + order[:k]:
            out = units[i].block(n_of[i])
            if r >= 0:
                samples[i].append(out)
        log(f"[time] round {r + 1}/{rounds} {'(warm-up) ' if r < 0 else ''}{time.perf_counter() - t0:.1f} s")
    timer = timer_overhead_ns()
    rows = []
    for i, u in enumerate(units):
        meds = [statistics.median(b) / 1e3 for b in samples[i]]
        pooled = sorted(x for b in samples[i] for x in b)
        rows.append({
            "subject": u.subject, "kind": u.kind, "noise": noise_name(u.noise), "op": u.op, "what": u.what,
            "median_us": statistics.median(meds), "min_us": min(meds), "max_us": max(meds),
            "p90_us": pooled[int(0.9 * (len(pooled) - 1))] / 1e3, "calls": len(pooled),
            "stats": u.stats,
        })
    return rows, timer


def timer_overhead_ns() -> float:
    """The timer's own cost inside a sample (two back-to-back ``perf_counter_ns`` reads)."""
    ns = time.perf_counter_ns
    out = []
    for _ in range(20000):
        t0 = ns()
        out.append(ns() - t0)
    return statistics.median(out)


def find(rows: list[dict], subject: str, op: str, noise: str = "off") -> dict | None:
    for r in rows:
        if r["subject"] == subject and r["op"] == op and r["noise"] == noise:
            return r
    return None


def base_op(op: str) -> str:
    return "reset" if op == "reset" else "step"


# ============================================================================= 2. memory
def child_memory(label: str, n: int, mode: str) -> dict[str, Any]:
    """(In a fresh process.) `n` live made-and-reset envs of `label`: bytes per env."""
    import tracemalloc

    from subjects import memory_factories

    make = memory_factories()[label]
    page = os.sysconf("SC_PAGE_SIZE")

    def rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * page

    warm = [make(10_000 + i) for i in range(3)]  # module caches, lazy imports, first-use tables
    gc.collect()
    if mode == "tracemalloc":
        tracemalloc.start(1)
    base_rss = rss()
    base_tm = tracemalloc.get_traced_memory()[0] if mode == "tracemalloc" else 0
    live = [make(i) for i in range(n)]
    gc.collect()
    out: dict[str, Any] = {"label": label, "n": len(live), "mode": mode, "warm": len(warm)}
    if mode == "tracemalloc":
        out["bytes_per_env"] = (tracemalloc.get_traced_memory()[0] - base_tm) / n
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        out["top"] = [{"where": _short_path(s.traceback[0].filename) + f":{s.traceback[0].lineno}",
                       "kb_per_env": s.size / n / 1024, "count_per_env": s.count / n}
                      for s in snap.statistics("lineno")[:12]]
        out["by_file"] = [{"where": _short_path(s.traceback[0].filename), "kb_per_env": s.size / n / 1024}
                          for s in snap.statistics("filename")[:10]]
    else:
        out["bytes_per_env"] = (rss() - base_rss) / n
    return out


def run_memory(n: int, traced_n: int, labels: list[str] | None) -> list[dict[str, Any]]:
    from subjects import memory_factories

    labels = labels or list(memory_factories())
    rows = []
    for label in labels:
        row: dict[str, Any] = {"label": label}
        for mode in ("rss", "tracemalloc"):
            t0 = time.perf_counter()
            count = n if mode == "rss" else min(n, traced_n)
            res = _child(["--child-memory", label, "--mem-n", str(count), "--mem-mode", mode])
            row[mode] = res
            log(f"[memory] {label} {mode}: {res['bytes_per_env'] / 1024:.1f} KB/env ({time.perf_counter() - t0:.1f} s)")
        rows.append(row)
    return rows


def _child(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True,
                          cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ============================================================================= 3. import time
IMPORT_CODE = """
import sys, time, json
t0, c0 = time.perf_counter(), time.process_time()
import {mod}
dt, dc = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({{"s": dt, "cpu_s": dc, "torch": "torch" in sys.modules, "modules": len(sys.modules)}}))
"""

IMPORTS = ("agentgym", "gymnasium", "numpy", "textarena", "gem")


def run_imports(runs: int) -> dict[str, Any]:
    res: dict[str, list[dict]] = {k: [] for k in IMPORTS}
    for r in range(runs + 1):  # the first pass warms the OS file cache: dropped
        for mod in IMPORTS:
            proc = subprocess.run([sys.executable, "-c", IMPORT_CODE.format(mod=mod)], capture_output=True,
                                  text=True, cwd=ROOT)
            if proc.returncode != 0:
                raise RuntimeError(f"import {mod} failed: {proc.stderr[-2000:]}")
            if r:
                res[mod].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out: dict[str, Any] = {}
    for name, rs in res.items():
        ts = [x["s"] for x in rs]
        out[name] = {"median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts),
                     "cpu_median_s": statistics.median(x["cpu_s"] for x in rs),
                     "torch": any(x["torch"] for x in rs), "modules": rs[-1]["modules"], "runs": len(ts)}
        log(f"[import] {name}: {out[name]['median_s']:.3f} s (CPU {out[name]['cpu_median_s']:.3f} s), "
            f"torch={out[name]['torch']}")
    out["_importtime"] = importtime_profile()
    return out


def _importtime(mod: str) -> list[dict[str, Any]]:
    """``python -X importtime -c 'import mod'``, the middle of three runs by total self time."""
    runs = []
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {mod}"], capture_output=True,
                              text=True, cwd=ROOT)
        entries = []
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            _, rest = line.split(":", 1)
            self_us, cum_us, name = rest.split("|", 2)
            entries.append({"name": name.strip(), "self": int(self_us), "cum": int(cum_us),
                            "depth": (len(name.rstrip()) - len(name.strip()) - 1) // 2})
        runs.append(entries)
    return sorted(runs, key=lambda e: sum(x["self"] for x in e))[1]


def importtime_profile() -> dict[str, Any]:
    """Where ``import agentgym``'s time goes: by top-level package, and what it adds to gymnasium's."""
    entries = _importtime("agentgym")
    gym_names = {e["name"] for e in _importtime("gymnasium")}
    total = sum(e["self"] for e in entries)
    by_top: dict[str, int] = {}
    for e in entries:
        top = e["name"].split(".")[0]
        by_top[top] = by_top.get(top, 0) + e["self"]
    extra = [e for e in entries if e["name"] not in gym_names]
    return {
        "total_us": total,
        "by_top_package": sorted(by_top.items(), key=lambda kv: -kv[1])[:12],
        "beyond_gymnasium_us": sum(e["self"] for e in extra),
        "beyond_gymnasium": sorted(((e["name"], e["self"]) for e in extra), key=lambda kv: -kv[1])[:10],
        "gymnasium_us": sum(e["self"] for e in entries if e["name"] in gym_names),
    }


# ============================================================================= 4. harness overhead
def child_harness(env_id: str, rounds: int, episodes: int) -> dict[str, Any]:
    """(In a fresh process.) Alternating rounds of the bare loop and the harness on `env_id`."""
    import gymnasium as gym

    import agentgym  # noqa: F401
    from agentgym.eval.episode import run_episode
    from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

    seeds = range(episodes)
    env, agent = gym.make(env_id), AgentSpec("heuristic").build()
    tmp = tempfile.mkdtemp(prefix="agentgym-peers-")
    steps = 0

    def bare() -> tuple[float, float]:
        nonlocal steps
        t0, c0 = time.perf_counter(), time.process_time()
        n = 0
        for s in seeds:
            n += len(run_episode(env, agent, s).actions)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        steps = n
        return dt, dc

    def harness() -> tuple[float, float]:
        path = os.path.join(tmp, "records.jsonl")
        t0, c0 = time.perf_counter(), time.process_time()
        summary = run_jobs([EpisodeJob(env_id, seed=s) for s in seeds], AgentSpec("heuristic"), path,
                           workers=1, progress=False)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        assert summary.ran == len(seeds) and summary.agent_errors == 0, summary
        os.unlink(path)
        return dt, dc

    out: dict[str, Any] = {"bare": [], "harness": []}
    for r in range(-1, rounds):  # round -1: warm-up (caches, provenance's git call)
        pair = [("bare", bare), ("harness", harness)]
        for name, fn in (pair if r % 2 == 0 else pair[::-1]):
            gc.collect()  # each run starts from the same heap, so neither pays the other's garbage
            got = fn()
            if r >= 0:
                out[name].append(got)
    shutil.rmtree(tmp, ignore_errors=True)
    out["steps"] = steps
    return out


def run_harness(ids: list[str], rounds: int, episodes: int) -> list[dict[str, Any]]:
    out = []
    for env_id in ids:
        t0 = time.perf_counter()
        res = _child(["--child-harness", env_id, "--harness-rounds", str(rounds),
                      "--harness-episodes", str(episodes)])
        b = [x[0] for x in res["bare"]]
        h = [x[0] for x in res["harness"]]
        bc = [x[1] for x in res["bare"]]
        hc = [x[1] for x in res["harness"]]
        mb, mh = statistics.median(b), statistics.median(h)
        paired = [hh / bb - 1 for bb, hh in zip(b, h)]
        paired_cpu = [hh / bb - 1 for bb, hh in zip(bc, hc)]
        n = res["steps"]
        out.append({"id": env_id, "episodes": episodes, "steps": n, "bare_s": mb, "harness_s": mh,
                    "bare_range": (min(b), max(b)), "harness_range": (min(h), max(h)),
                    "overhead": statistics.median(paired), "paired_range": (min(paired), max(paired)),
                    "median_ratio": mh / mb - 1, "cpu_overhead": statistics.median(paired_cpu),
                    "per_step_us": (mh - mb) / n * 1e6, "per_episode_us": (mh - mb) / episodes * 1e6})
        log(f"[harness] {env_id}: bare {mb:.3f} s, harness {mh:.3f} s, overhead {out[-1]['overhead']:+.1%} "
            f"(CPU {out[-1]['cpu_overhead']:+.1%}) ({time.perf_counter() - t0:.0f} s)")
    return out


# ============================================================================= 5. profiles
PY_SPY = Path(sys.executable).parent / "py-spy"


def _timed_op(fn: Any, *args: Any) -> Any:
    """The frame every profiled call runs under: samples outside it (setup, resets) are dropped."""
    return fn(*args)


def child_profile(target: str, seconds: float) -> dict[str, Any]:
    """(Under py-spy.) Run `target` ("ID|noise|op" or "harness|ID") for about `seconds` of timed work."""
    from subjects import MESSAGE, N_SEEDS, STEPS_PER_EPISODE, choose_tool_action, make_agentrl

    parts = target.split("|")
    if parts[0] == "harness":
        import gymnasium as gym

        from agentgym.eval.episode import run_episode
        from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

        env_id = parts[1]
        env, agent = gym.make(env_id), AgentSpec("heuristic").build()
        tmp = tempfile.mkdtemp(prefix="agentgym-peers-")

        def _bare_loop() -> None:
            for s in range(200):
                run_episode(env, agent, s)

        def _run_jobs() -> None:
            path = os.path.join(tmp, "r.jsonl")
            run_jobs([EpisodeJob(env_id, seed=s) for s in range(200)], AgentSpec("heuristic"), path, workers=1,
                     progress=False)
            os.unlink(path)

        def _harness_loop() -> None:
            _run_jobs()

        _run_jobs()  # warm-up (provenance's git call, caches): not under _harness_loop, so not counted
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            _bare_loop()
            _harness_loop()
        shutil.rmtree(tmp, ignore_errors=True)
        return {}
    env_id, noise, op = parts[0], (None if parts[1] == "off" else parts[1]), parts[2]
    env = make_agentrl(env_id, noise)
    seeds = itertools.cycle(range(N_SEEDS))
    for seed in range(N_SEEDS):  # warm-up, not under _timed_op: lazy imports, per-domain tables
        obs, info = env.reset(seed=seed)
        if op != "reset":
            env.step(choose_tool_action(env, obs, info)[0] if op == "step:tool" else MESSAGE)
    done, left, action, timed, calls = True, 0, MESSAGE, 0.0, 0
    while timed < seconds:
        if op == "reset":
            seed = next(seeds)
            t0 = time.perf_counter()
            _timed_op(functools.partial(env.reset, seed=seed))
            timed += time.perf_counter() - t0
            calls += 1
            continue
        if done or left <= 0:
            obs, info = env.reset(seed=next(seeds))
            left, done = min(STEPS_PER_EPISODE, int(info.get("max_turns", 9)) - 1), False
            if op == "step:tool":
                action, _how = choose_tool_action(env, obs, info)
        t0 = time.perf_counter()
        out = _timed_op(env.step, action)
        timed += time.perf_counter() - t0
        calls += 1
        left -= 1
        done = bool(out[2] or out[3])
    return {"calls": calls, "timed_s": timed}


def _short_path(filename: str) -> str:
    for marker in ("agentgym/", "gymnasium/", "textarena/", "gem/"):
        i = filename.rfind("/" + marker)
        if i >= 0:
            return filename[i + 1:]
    if filename.startswith("<"):
        return filename
    parts = Path(filename).parts
    return "/".join(parts[-2:]) if len(parts) >= 2 and parts[-2] in ("json", "re", "encodings", "collections") \
        else parts[-1] if parts else filename


def _frame(text: str) -> tuple[str, str, str]:
    """A py-spy raw frame ``func (file:line)`` -> (func, short file, line)."""
    func, _, loc = text.rpartition(" (")
    file, _, line = loc.rstrip(")").rpartition(":")
    return func, _short_path(file), line


def _read_raw(path: Path) -> list[tuple[list[tuple[str, str, str]], int]]:
    stacks = []
    for line in path.read_text("utf-8", "replace").splitlines():
        body, _, count = line.rpartition(" ")
        if body and count.isdigit():
            stacks.append(([_frame(f) for f in body.split(";")], int(count)))
    return stacks


def _spy(args: list[str], rate: int) -> list[tuple[list[tuple[str, str, str]], int]]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "raw.txt"
        cmd = [str(PY_SPY), "record", "--rate", str(rate), "--format", "raw", "--full-filenames", "--output",
               str(out), "--", sys.executable, str(Path(__file__).resolve()), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"py-spy {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-3000:]}")
        return _read_raw(out)


Stacks = list[tuple[list[tuple[str, str, str]], int]]


def _attribute(stacks: Stacks, top: int = 12) -> dict[str, Any]:
    """Self time by module and by function (the innermost Python frame: C code counts in the
    Python line that called it), and each function's inclusive time."""
    total = sum(c for _st, c in stacks) or 1
    by_mod: dict[str, int] = {}
    self_fn: dict[str, int] = {}
    self_line: dict[str, int] = {}
    incl: dict[str, int] = {}
    for st, c in stacks:
        if not st:
            continue
        func, file, line = st[-1]
        by_mod[file] = by_mod.get(file, 0) + c
        key = f"{file} {func}"
        self_fn[key] = self_fn.get(key, 0) + c
        self_line[f"{file}:{line} {func}"] = self_line.get(f"{file}:{line} {func}", 0) + c
        for k in {f"{f} {fn}" for fn, f, _l in st}:
            incl[k] = incl.get(k, 0) + c
    return {
        "samples": total,
        "by_module": [(m, n / total) for m, n in sorted(by_mod.items(), key=lambda kv: -kv[1])[:10]],
        "functions": [{"func": k, "self": n / total, "incl": incl[k] / total}
                      for k, n in sorted(self_fn.items(), key=lambda kv: -kv[1])[:top]],
        "inclusive": [(k, n / total) for k, n in sorted(incl.items(), key=lambda kv: -kv[1])[:top + 4]],
        "lines": [(k, n / total) for k, n in sorted(self_line.items(), key=lambda kv: -kv[1])[:8]],
    }


def profile_env_op(env_id: str, noise: str, op: str, seconds: float, rate: int) -> dict[str, Any]:
    stacks = _spy(["--child-profile", f"{env_id}|{noise}|{op}", "--profile-seconds", str(seconds)], rate)
    inside: Stacks = []
    for st, c in stacks:
        names = [fn for fn, _f, _l in st]
        if "_timed_op" in names:
            inside.append((st[names.index("_timed_op") + 1:], c))  # the operation's own frames
    return _attribute(inside)


def profile_harness(env_id: str, seconds: float, rate: int) -> dict[str, Any]:
    stacks = _spy(["--child-profile", f"harness|{env_id}", "--profile-seconds", str(seconds)], rate)
    loops: dict[str, Any] = {}
    for loop in ("_bare_loop", "_harness_loop"):
        parts = {"env": 0, "agent": 0, "loop and harness": 0}
        own: Stacks = []
        for st, c in stacks:
            funcs = [fn for fn, _f, _l in st]
            if not any(fn.endswith(loop) for fn in funcs):
                continue
            if any(fn.startswith("OrderEnforcing.") for fn in funcs):
                parts["env"] += c
            elif any(f.startswith("agentgym/agents/") for _fn, f, _l in st):
                parts["agent"] += c
            else:
                parts["loop and harness"] += c
                own.append((st, c))
        loops[loop] = {"parts": parts, "own": _attribute(own, top=10)}
    return loops


def run_profiles(rows: list[dict], seconds: float, rate: int, harness_id: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"env": [], "rate": rate, "seconds": seconds}
    if not PY_SPY.exists():
        log(f"[profile] {PY_SPY} not found (pip install py-spy): profiles skipped")
        out["missing"] = True
        return out
    for op in ("reset", "step:message", "step:tool"):
        for noise in ("off", "medium"):
            cands = [r for r in rows if r["kind"] == "agentrl" and r["op"] == op and r["noise"] == noise]
            if not cands:
                continue
            worst = max(cands, key=lambda r: r["median_us"])
            if worst["median_us"] <= step_target(op, None if noise == "off" else noise):
                continue
            log(f"[profile] {worst['subject']} noise={noise} {op}, {seconds:g} s of calls")
            res = profile_env_op(worst["subject"], noise, op, seconds, rate)
            res.update({"subject": worst["subject"], "noise": noise, "op": op, "median_us": worst["median_us"]})
            out["env"].append(res)
    if harness_id:
        log(f"[profile] harness against the bare loop on {harness_id}")
        out["harness"] = profile_harness(harness_id, 2 * seconds, rate)
        out["harness"]["id"] = harness_id
    return out


# ============================================================================= 6. env server and PPO, re-measured
DEFAULT_PROJECT_PYTHON = ROOT / ".venv" / "bin" / "python"
DEFAULT_OPENENV_PYTHON = Path("/tmp/openenv-venv/bin/python")
DEFAULT_SB3_PYTHON = Path("/tmp/sb3-venv/bin/python")
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


def run_remeasured(args: argparse.Namespace, skip: set[str]) -> dict[str, Any]:
    """Run each sub-benchmark with the project's Python, one after another; keep its JSON, or why not."""
    python = args.project_python.absolute()  # not resolve(): a venv's python is a symlink
    problem = project_python_problem(python)
    if problem:
        log(f"[remeasure] skipped: {problem}")
        return {"skipped": problem}
    out: dict[str, Any] = {"python": str(python), "jobs": []}
    with tempfile.TemporaryDirectory(prefix="agentgym-remeasure-") as work:
        for job in remeasure_jobs(Path(work), skip, args.quick, args.openenv_python, args.sb3_python):
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


def render_remeasured(rem: dict[str, Any]) -> list[str]:
    o = ["## Env server and PPO, re-measured", ""]
    if "skipped" in rem:
        return o + [f"Skipped: {rem['skipped']}.", ""]
    o += ["The figures of the env-server and thin-PPO issues, re-measured in this run by their own scripts, one "
          f"after another, with `{rem['python']}` (their outputs go to a temporary folder: the full tables of the "
          "scripts' own last runs, `benchmarks/server/RESULTS.md` and `benchmarks/ppo/RESULTS.md`, stay as they "
          "are). Wall-clock figures, on a machine other jobs may share: see the load averages below.", "",
          "| figure | value | target | result | measured |", "|---|---|---|---|---|"]
    for job in rem["jobs"]:
        to_rows, what = JOB_ROWS[job["name"]]
        if "problem" in job:
            o.append(f"| {what} | {job['problem']} | - | not measured | {job.get('when', '-')} |")
            continue
        for figure, value, target, result in to_rows(job["result"]):
            o.append(f"| {figure} | {value} | {target} | {result} | {job['when']} |")
    o += ["", "Runs:", ""]
    for job in rem["jobs"]:
        cmd = " ".join([job["script"], *job["settings"]])
        ran = (f"{job['wall_s']:.0f} s, load average {job['load_start']} at the start, {job['load_end']} at the end"
               if "wall_s" in job else "not run")
        o.append(f"- `{cmd}`: {ran}.")
    return o + [""]


# ============================================================================= report
def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("agentrl-gym", "gymnasium", "numpy", "textarena", "gem-llm", "reasoning-gym", "pandas", "py-spy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
        out["agentgym git"] = commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        out["agentgym git"] = "unknown"
    return out


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, {platform.machine()}"


def loadavg() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def render(data: dict[str, Any]) -> str:
    o: list[str] = []
    meta = data["meta"]
    rows = data.get("time", [])
    o += ["# Environment-only cost: AgentRL beside a Gymnasium floor, TextArena and GEM", "",
          f"Generated by `benchmarks/peers/run.py` (`make perf`) on {meta['when']} in {meta['wall_s']:.0f} s; "
          "regenerate rather than edit (the analysis at the end is `benchmarks/peers/ANALYSIS.md`).", "",
          f"Machine: {meta['machine']}; load average {meta['load_start']} at the start, {meta['load_end']} at the end"
          " (other jobs may share the machine: the interleaving spreads their noise over every subject alike,"
          " so ratios are steadier than absolute figures).", "",
          "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".", "",
          f"Settings: {meta['settings']}.", ""]

    # ---------------------------------------------------------------- summary
    o += ["## Targets", "", "| target | figure | result |", "|---|---|---|"]
    for line in summary_lines(data):
        o.append(line)
    o.append("")

    # ---------------------------------------------------------------- timing table
    if rows:
        fl = {op: find(rows, "floor", op) for op in ("step", "reset")}
        peers = {p: {op: find(rows, p, op) for op in ("step", "reset")} for p in PEERS}
        o += ["## Step and reset time (interleaved, one process)", "",
              f"One warm-up round, then {meta['rounds']} rounds; each round runs one block of every unit "
              f"({meta['block']} steps or {meta['reset_block']} resets; the starting unit rotates). Each call is "
              f"timed alone with `perf_counter_ns` (the timer's own {data['timer_ns']:.0f} ns is in every "
              "figure alike); resets between steps are untimed and no timed step ends an episode (noise aside). "
              "*median* is the median of the block medians, *min-max* their range, *p90* over all calls; "
              "ops/s = 1 / median. Ratios: this median over the floor's, TextArena's and GEM's median of the "
              "same operation (step or reset).", "",
              "| subject | noise | operation | median us | min-max us | p90 us | ops/s | x floor "
              "| x TextArena | x GEM | target | result |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in rows:
            b = base_op(r["op"])
            name = PEER_NAMES.get(r["subject"], r["subject"])
            tgt = res = "-"
            if r["kind"] == "agentrl":
                t = step_target(r["op"], None if r["noise"] == "off" else r["noise"])
                tgt = f"<= {t:g} us"
                res = verdict(r["median_us"], t, "us", fmt_us)
            o.append(f"| {name} | {r['noise']} | {r['op']} | {fmt_us(r['median_us'])} | "
                     f"{fmt_us(r['min_us'])}-{fmt_us(r['max_us'])} | {fmt_us(r['p90_us'])} | "
                     f"{1e6 / r['median_us']:,.0f} | "
                     f"{ratio(r['median_us'], fl[b]['median_us']) if fl[b] and r['subject'] != 'floor' else '-'} | "
                     f"{ratio(r['median_us'], peers['textarena'][b]['median_us']) if peers['textarena'][b] and r['subject'] != 'textarena' else '-'} | "
                     f"{ratio(r['median_us'], peers['gem'][b]['median_us']) if peers['gem'][b] and r['subject'] != 'gem' else '-'} | "
                     f"{tgt} | {res} |")
        o += ["", "What each timed call is:", ""]
        seen = set()
        for r in rows:
            key = (r["subject"] if r["kind"] != "agentrl" else "AgentRL/*", r["op"])
            if key in seen:
                continue
            seen.add(key)
            o.append(f"- {PEER_NAMES.get(key[0], key[0])} {r['op']}: `{r['what']}`")
        for r in rows:
            if r["op"] == "step:tool":
                c = r["stats"]["counts"]
                o.append(f"- {r['subject']} noise={r['noise']} tool steps: {c['steps']} steps over {c['episodes']} "
                         f"episodes, {c['valid']}/{c['calls']} calls valid, {c['injected']} with an injected fault, "
                         f"{c['ended']} steps ended an episode; calls used: "
                         + "; ".join(f"{k} x{v}" for k, v in sorted(r['stats']['chosen'].items(), key=lambda kv: -kv[1])[:3]))
            elif r["op"] == "step:message" and r["stats"]["counts"]["ended"]:
                c = r["stats"]["counts"]
                o.append(f"- {r['subject']} noise={r['noise']} message steps: {c['ended']} of {c['steps']} ended an "
                         "episode (noise: simulated-time budget)")
        o.append("")

    # ---------------------------------------------------------------- memory
    mem = data.get("memory")
    if mem:
        by = {m["label"]: m for m in mem}
        n, traced_n = mem[0]["rss"]["n"], mem[0]["tracemalloc"]["n"]

        def kb(label: str, mode: str) -> float | None:
            m = by.get(label)
            return m[mode]["bytes_per_env"] / 1024 if m else None

        o += ["## Memory per live env", "",
              f"{n:,} envs made and reset (each holding its task world) and kept live in one fresh process per "
              "subject, after 3 warm-up envs (module-level caches and lazy imports are not per-env). *RSS* is the "
              "resident-set delta (`/proc/self/statm`) over the count; *traced* is `tracemalloc`'s delta in a "
              f"second process with {traced_n:,} envs (Python and NumPy allocations; tracing is slow). The target "
              "applies to RSS. Floor: the minimal env's two `gymnasium.spaces.Text(64)` spaces are most of it.", "",
              "| subject | noise | RSS KB/env | traced KB/env | x floor | x TextArena | x GEM | target | result |",
              "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for m in mem:
            label = m["label"]
            subject, _, noise = label.partition(" noise=")
            rss, tm = kb(label, "rss"), kb(label, "tracemalloc")
            is_ag = subject.startswith("AgentRL/")
            o.append(f"| {PEER_NAMES.get(subject, subject)} | {noise or '-'} | {rss:,.1f} | {tm:,.1f} | "
                     f"{ratio(rss, kb('floor', 'rss')) if subject != 'floor' else '-'} | "
                     f"{ratio(rss, kb('textarena', 'rss')) if subject != 'textarena' else '-'} | "
                     f"{ratio(rss, kb('gem', 'rss')) if subject != 'gem' else '-'} | "
                     f"{f'<= {MEM_TARGET_KB:g} KB' if is_ag else '-'} | "
                     f"{verdict(rss, MEM_TARGET_KB, 'KB', lambda v: f'{v:,.1f}') if is_ag else '-'} |")
        o.append("")

    # ---------------------------------------------------------------- import
    imp = data.get("imports")
    if imp:
        o += ["## Import time", "",
              f"`python -c 'import X'` in fresh interpreters, {imp['agentgym']['runs']} runs each, interleaved "
              "(one untimed pass first for the OS file cache); the time of the import statement alone, wall clock "
              "(the target) and the process's CPU time (every thread's: NumPy starts its BLAS threads while it "
              "imports, so CPU time can exceed wall-clock time).", "",
              "| import | median s | min-max s | CPU s | modules loaded | torch imported | target | result |",
              "|---|---:|---:|---:|---:|---|---:|---|"]
        for name in IMPORTS:
            r = imp[name]
            is_ag = name == "agentgym"
            res = "-"
            if is_ag:
                res = verdict(r["median_s"], IMPORT_TARGET_S, "s", lambda v: f"{v:.3f}")
                res += "; torch not imported" if not r["torch"] else "; **torch imported**"
            o.append(f"| `import {name}` | {r['median_s']:.3f} | {r['min_s']:.3f}-{r['max_s']:.3f} | "
                     f"{r['cpu_median_s']:.3f} | {r['modules']} | {'yes' if r['torch'] else 'no'} | "
                     f"{f'<= {IMPORT_TARGET_S:g} s' if is_ag else '-'} | {res} |")
        it = imp.get("_importtime")
        if it:
            o += ["", f"`python -X importtime -c 'import agentgym'` (the middle of 3 runs; `-X importtime` itself "
                  f"slows imports): {it['total_us'] / 1e3:.0f} ms of self time, of which "
                  f"{it['gymnasium_us'] / 1e3:.0f} ms in modules `import gymnasium` loads as well and "
                  f"{it['beyond_gymnasium_us'] / 1e3:.1f} ms in the rest: " +
                  ", ".join(f"`{n}` {us / 1e3:.1f} ms" for n, us in it["beyond_gymnasium"][:8]) + ".", "",
                  "| package (self time summed) | ms | share |", "|---|---:|---:|"]
            for name, us in it["by_top_package"][:10]:
                o.append(f"| {name} | {us / 1e3:.1f} | {us / it['total_us']:.0%} |")
        o.append("")

    # ---------------------------------------------------------------- harness
    har = data.get("harness")
    if har:
        o += ["## Harness overhead", "",
              f"The heuristic agent on the same {har[0]['episodes']} seeds, in a fresh process per id: the bare loop "
              "(`run_episode` on one `gym.make` env) against `run_jobs(..., workers=1)` (one env per process slot, "
              "step summaries, one JSON record per episode appended to a file). Rounds alternate the two "
              f"({meta['harness_rounds']} rounds after a warm-up; which goes first alternates too; a `gc.collect()` "
              "before each run). *Wall*: the median of the rounds' harness/bare wall-clock ratios, minus 1; *CPU*: "
              "the same on the process's CPU time, which is what the target is judged on here: each run lasts about "
              "a second, so on a shared machine other jobs' preemption lands on one run or the other and swings the "
              "wall-clock ratio by tens of points, while CPU time counts only this process's work. *Medians*: "
              "median harness time over median bare time, minus 1 (wall); *cost per step*: the difference of the "
              "wall-clock medians over the steps played.", "",
              "| id | steps | bare s (min-max) | harness s (min-max) | wall (min to max) | CPU | medians "
              "| cost per step | target | result |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for h in har:
            o.append(f"| {h['id']} | {h['steps']:,} | {h['bare_s']:.3f} ({h['bare_range'][0]:.3f}-"
                     f"{h['bare_range'][1]:.3f}) | {h['harness_s']:.3f} ({h['harness_range'][0]:.3f}-"
                     f"{h['harness_range'][1]:.3f}) | {h['overhead']:+.1%} ({h['paired_range'][0]:+.1%} to "
                     f"{h['paired_range'][1]:+.1%}) | {h['cpu_overhead']:+.1%} | {h['median_ratio']:+.1%} | "
                     f"{h['per_step_us']:.1f} us | <= {HARNESS_TARGET:.0%} | "
                     f"{verdict(h['cpu_overhead'] * 100, HARNESS_TARGET * 100, 'points', lambda v: f'{v:.1f}')} |")
        o.append("")

    # ---------------------------------------------------------------- env server and PPO
    if data.get("remeasured"):
        o += render_remeasured(data["remeasured"])

    # ---------------------------------------------------------------- profiles
    prof = data.get("profiles")
    if prof and prof.get("missing"):
        o += ["## Profiles of the misses", "", "Skipped: `py-spy` is not installed in this environment.", ""]
    elif prof and (prof.get("env") or prof.get("harness")):
        o += ["## Profiles of the misses", "",
              f"Sampled with `py-spy` ({prof['rate']} samples/s, {prof['seconds']:g} s of calls each, in a fresh "
              "process): the worst id of each missed operation. Only samples inside the operation count (the "
              "untimed resets between steps are left out). A sampler does not slow the code it watches, unlike "
              "cProfile, which inflates code made of many small calls. *By module*: share of the samples whose "
              "innermost Python frame is in that file (time in C, e.g. `json` or `re`, counts in the Python line "
              "that called it); *self*: the same per function; *incl*: samples with the function anywhere on the "
              "stack.", ""]
        for p in prof.get("env", []):
            o += [f"### {p['subject']} noise={p['noise']} {p['op']} (median {fmt_us(p['median_us'])} us; "
                  f"{p['samples']:,} samples)", ""]
            o += ["By module: " + ", ".join(f"`{m}` {s:.0%}" for m, s in p["by_module"][:8]) + ".", ""]
            o += ["| function | self | incl |", "|---|---:|---:|"]
            for f in p["functions"]:
                o.append(f"| `{f['func']}` | {f['self']:.1%} | {f['incl']:.1%} |")
            o += ["", "Hottest lines: " + ", ".join(f"`{k}` {v:.0%}" for k, v in p["lines"][:6]) + ".", ""]
        h = prof.get("harness")
        if h:
            o += [f"### Harness against the bare loop, {h['id']}", "",
                  "Samples of each loop split by where they fall: inside the env (`env.reset`/`env.step`), "
                  "inside the agent, or in neither (the loop itself and, for the harness, its bookkeeping: step "
                  "summaries, records, the deadline, the info view):", "",
                  "| loop | samples (x bare) | env | agent | loop and harness |", "|---|---:|---:|---:|---:|"]
            base = sum(h["_bare_loop"]["parts"].values()) or 1
            for loop, name in (("_bare_loop", "bare `run_episode`"), ("_harness_loop", "`run_jobs`")):
                parts = h[loop]["parts"]
                tot = sum(parts.values()) or 1
                o.append(f"| {name} | {tot:,} ({tot / base:.2f}x) | {parts['env'] / tot:.0%} | {parts['agent'] / tot:.0%} | "
                         f"{parts['loop and harness'] / tot:.0%} |")
            own = h["_harness_loop"]["own"]
            o += ["", "Where the harness's own samples go (share of them; *incl*: with the function anywhere on "
                  "the stack):", "", "| function | self | incl |", "|---|---:|---:|"]
            for f in own["functions"]:
                o.append(f"| `{f['func']}` | {f['self']:.1%} | {f['incl']:.1%} |")
            o.append("")
    if mem:
        ag = [m for m in mem if m["label"].startswith("AgentRL/") and m["tracemalloc"].get("by_file")]
        misses = [m for m in ag if m["rss"]["bytes_per_env"] / 1024 > MEM_TARGET_KB]
        if misses:
            o += ["### Memory: where each env's bytes are allocated", "",
                  "tracemalloc's traced bytes per env by the file that allocated them (first frame), for each id "
                  "over the target:", ""]
            for m in misses:
                tm = m["tracemalloc"]
                o.append(f"- {m['label']} ({tm['bytes_per_env'] / 1024:.1f} KB traced): " +
                         ", ".join(f"`{x['where']}` {x['kb_per_env']:.1f}" for x in tm["by_file"][:7]) + ".")
            worst = max(misses, key=lambda m: m["rss"]["bytes_per_env"])
            tm = worst["tracemalloc"]
            o += ["", f"Allocation sites of {worst['label']}:", "",
                  "| allocated at | KB/env | blocks/env |", "|---|---:|---:|"]
            for x in tm["top"][:10]:
                o.append(f"| `{x['where']}` | {x['kb_per_env']:.2f} | {x['count_per_env']:.1f} |")
            o.append("")
    if ANALYSIS.exists():
        o += [ANALYSIS.read_text("utf-8").rstrip(), ""]
    return "\n".join(o)


def summary_lines(data: dict[str, Any]) -> list[str]:
    out = []
    rows = data.get("time", [])
    ag = [r for r in rows if r["kind"] == "agentrl"]
    for noise, label in (("off", "Median step <= 10 us, every id, no noise"),
                         ("medium", "Median step <= 15 us, every id, `medium` noise")):
        sel = [r for r in ag if r["op"] != "reset" and r["noise"] == noise]
        if sel:
            t = STEP_TARGET_US[noise]
            worst = max(sel, key=lambda r: r["median_us"])
            best = min(sel, key=lambda r: r["median_us"])
            ok = sum(r["median_us"] <= t for r in sel)
            out.append(f"| {label} | worst {fmt_us(worst['median_us'])} us ({worst['subject']} {worst['op']}), best "
                       f"{fmt_us(best['median_us'])} us ({best['subject']} {best['op']}); {ok}/{len(sel)} within | "
                       f"{verdict(worst['median_us'], t, 'us', fmt_us)} |")
    sel = [r for r in ag if r["op"] == "reset"]
    if sel:
        worst = max(sel, key=lambda r: r["median_us"])
        best = min(sel, key=lambda r: r["median_us"])
        ok = sum(r["median_us"] <= RESET_TARGET_US for r in sel)
        out.append(f"| Median reset <= 200 us | worst {fmt_us(worst['median_us'])} us ({worst['subject']} "
                   f"noise={worst['noise']}), best {fmt_us(best['median_us'])} us ({best['subject']} "
                   f"noise={best['noise']}); {ok}/{len(sel)} within | "
                   f"{verdict(worst['median_us'], RESET_TARGET_US, 'us', fmt_us)} |")
    mem = [m for m in data.get("memory") or [] if m["label"].startswith("AgentRL/")]
    if mem:
        worst = max(mem, key=lambda m: m["rss"]["bytes_per_env"])
        best = min(mem, key=lambda m: m["rss"]["bytes_per_env"])
        w, b = worst["rss"]["bytes_per_env"] / 1024, best["rss"]["bytes_per_env"] / 1024
        ok = sum(m["rss"]["bytes_per_env"] / 1024 <= MEM_TARGET_KB for m in mem)
        out.append(f"| Memory <= 30 KB per live env with its task world | worst {w:,.1f} KB ({worst['label']}), best "
                   f"{b:,.1f} KB ({best['label']}); {ok}/{len(mem)} within | "
                   f"{verdict(w, MEM_TARGET_KB, 'KB', lambda v: f'{v:,.1f}')} |")
    imp = data.get("imports")
    if imp:
        r = imp["agentgym"]
        res = verdict(r["median_s"], IMPORT_TARGET_S, "s", lambda v: f"{v:.3f}")
        res += "; torch not imported" if not r["torch"] else "; **torch imported**"
        out.append(f"| `import agentgym` <= 0.3 s, without torch | {r['median_s']:.3f} s wall, {r['cpu_median_s']:.3f} s "
                   f"CPU (`import gymnasium` alone: {imp['gymnasium']['median_s']:.3f} s wall, "
                   f"{imp['gymnasium']['cpu_median_s']:.3f} s CPU) | {res} |")
    har = data.get("harness")
    if har:
        worst = max(har, key=lambda h: h["cpu_overhead"])
        ok = sum(h["cpu_overhead"] <= HARNESS_TARGET for h in har)
        out.append("| Harness overhead <= 20% over the bare loop (CPU time; wall clock beside it) | " +
                   ", ".join(f"{h['id']} {h['cpu_overhead']:+.1%} (wall {h['overhead']:+.1%})" for h in har) +
                   f"; {ok}/{len(har)} within | "
                   f"{verdict(worst['cpu_overhead'] * 100, HARNESS_TARGET * 100, 'points', lambda v: f'{v:.1f}')} |")
    return out


# ============================================================================= main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown file to write (default: %(default)s)")
    ap.add_argument("--json", type=Path, default=None, help="also dump the raw figures here")
    ap.add_argument("--from-json", type=Path, default=None, help="do not measure: render a saved --json dump")
    ap.add_argument("--quick", action="store_true", help="small counts, for a smoke run (figures are rough)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--block", type=int, default=200, help="timed steps per unit per round")
    ap.add_argument("--reset-block", type=int, default=25, help="timed resets per unit per round")
    ap.add_argument("--mem-n", type=int, default=1000)
    ap.add_argument("--mem-traced-n", type=int, default=100,
                    help="envs per tracemalloc process (tracing is slow; bytes per env is an average)")
    ap.add_argument("--import-runs", type=int, default=10)
    ap.add_argument("--harness-rounds", type=int, default=7)
    ap.add_argument("--harness-episodes", type=int, default=200)
    ap.add_argument("--harness-ids", default="all", help="comma-separated ids, or 'all' (default)")
    ap.add_argument("--profile-seconds", type=float, default=3.0,
                    help="seconds of profiled calls per miss (the harness profile: twice that)")
    ap.add_argument("--profile-rate", type=int, default=1000, help="py-spy samples per second")
    ap.add_argument("--skip", default="",
                    help="comma-separated parts to skip: time,memory,imports,harness,profiles,server,ppo")
    ap.add_argument("--project-python", type=Path, default=DEFAULT_PROJECT_PYTHON,
                    help="the agentgym dev venv's Python, for the server and PPO benchmarks (default: %(default)s)")
    ap.add_argument("--openenv-python", type=Path, default=DEFAULT_OPENENV_PYTHON,
                    help="a Python with openenv-core, for the server benchmark's OpenEnv side (default: %(default)s)")
    ap.add_argument("--sb3-python", type=Path, default=DEFAULT_SB3_PYTHON,
                    help="a Python with stable-baselines3, for the CartPole comparison (default: %(default)s)")
    # child modes
    ap.add_argument("--child-memory", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-harness", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-profile", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--mem-mode", default="rss", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child_memory:
        print(json.dumps(child_memory(args.child_memory, args.mem_n, args.mem_mode)))
        return 0
    if args.child_profile:
        print(json.dumps(child_profile(args.child_profile, args.profile_seconds)))
        return 0
    if args.child_harness:
        print(json.dumps(child_harness(args.child_harness, args.harness_rounds, args.harness_episodes)))
        return 0
    if args.from_json:
        data = json.loads(args.from_json.read_text("utf-8"))
        args.out.write_text(render(data), "utf-8")
        log(f"wrote {args.out}")
        return 0
    if args.quick:
        args.rounds, args.block, args.reset_block = 3, 50, 5
        args.mem_n, args.mem_traced_n, args.import_runs, args.harness_rounds, args.harness_episodes = 100, 50, 2, 1, 20
        args.profile_seconds = 0.5
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}

    from subjects import agentrl_ids

    ids = agentrl_ids()
    t_start = time.perf_counter()
    data: dict[str, Any] = {"meta": {
        "when": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(), "load_start": loadavg(), "versions": versions(),
        "rounds": args.rounds, "block": args.block, "reset_block": args.reset_block,
        "harness_rounds": args.harness_rounds,
        "settings": (f"{args.rounds} rounds x ({args.block} steps | {args.reset_block} resets) per unit; memory "
                     f"{args.mem_n} envs (traced: {min(args.mem_n, args.mem_traced_n)}); {args.import_runs} import runs; harness {args.harness_rounds} rounds x "
                     f"{args.harness_episodes} episodes" + ("; --quick" if args.quick else "")),
    }}
    if "time" not in skip:
        data["time"], data["timer_ns"] = run_interleaved(args.rounds, args.block, args.reset_block, ids)
    if "memory" not in skip:
        data["memory"] = run_memory(args.mem_n, args.mem_traced_n, None)
    if "imports" not in skip:
        data["imports"] = run_imports(args.import_runs)
    if "harness" not in skip:
        hids = ids if args.harness_ids == "all" else [i.strip() for i in args.harness_ids.split(",")]
        data["harness"] = run_harness(hids, args.harness_rounds, args.harness_episodes)
    if "profiles" not in skip:
        harness_id = None
        if data.get("harness"):
            worst = max(data["harness"], key=lambda h: h["cpu_overhead"])
            harness_id = worst["id"] if worst["cpu_overhead"] > HARNESS_TARGET else None
        data["profiles"] = run_profiles(data.get("time", []), args.profile_seconds, args.profile_rate, harness_id)
    if not {"server", "ppo"} <= skip:
        data["remeasured"] = run_remeasured(args, skip)
    data["meta"]["load_end"] = loadavg()
    data["meta"]["wall_s"] = time.perf_counter() - t_start
    if args.json:
        args.json.write_text(json.dumps(data, indent=1, default=str), "utf-8")
    text = render(data)
    args.out.write_text(text, "utf-8")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
