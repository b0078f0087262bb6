"""Profiles of the best case's misses and of the harness against the bare loop (py-spy).

For each operation (reset, message step, tool step) with and without noise whose worst id misses
its best-case target, that id's operation runs for a few seconds under py-spy in a process of its
own; only samples inside the operation count. The harness profile splits each loop's samples into
env, agent and the loop itself.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import tempfile
import time
from typing import Any, Callable

from perf import spy
from perf.steps import target_us
from perf.tables import fmt_us, md_table


def _timed_op(fn: Callable[..., Any], *args: Any) -> Any:
    """The frame every profiled call runs under: samples outside it (set-up, resets) are dropped."""
    return fn(*args)


def child_unit(env_id: str, noise: str, op: str, seconds: float) -> dict[str, Any]:
    """(Under py-spy.) `op` of `env_id` with `noise` for about `seconds` of timed calls, as the best case plays it."""
    from envbench import MESSAGE, N_SEEDS, STEPS_PER_EPISODE, choose_tool_action

    from perf.subjects import make_agentrl

    env = make_agentrl(env_id, None if noise == "off" else noise)
    seeds = itertools.cycle(range(N_SEEDS))
    for seed in range(N_SEEDS):  # warm-up, not under _timed_op: lazy imports, per-domain tables
        obs, info = env.reset(seed=seed)
        if op != "reset":
            env.step(choose_tool_action(env, obs, info)[0] if op == "step:tool" else MESSAGE)
    done, left, action, timed, calls = True, 0, MESSAGE, 0.0, 0
    while timed < seconds:
        if op == "reset":
            t0 = time.perf_counter()
            _timed_op(functools.partial(env.reset, seed=next(seeds)))
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


def child_harness(env_id: str, seconds: float) -> dict[str, Any]:
    """(Under py-spy.) The bare loop and the harness in turn, 200 heuristic episodes each, for `seconds`."""
    import gymnasium as gym

    from agentgym.eval.episode import run_episode
    from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

    env, agent = gym.make(env_id), AgentSpec("heuristic").build()
    tmp = tempfile.mkdtemp(prefix="agentgym-perf-")

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


def profile_harness(env_id: str, seconds: float, rate: int) -> dict[str, Any]:
    """Each loop's samples split into env, agent and the loop itself, and the harness's own functions."""
    stacks = spy.record("perf.profiles:child_harness", rate, env_id=env_id, seconds=seconds)
    loops: dict[str, Any] = {}
    for loop in ("_bare_loop", "_harness_loop"):
        parts = {"env": 0, "agent": 0, "loop and harness": 0}
        own: spy.Stacks = []
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
        loops[loop] = {"parts": parts, "own": spy.attribute(own, top=10)}
    return loops


def run(rows: list[dict[str, Any]], seconds: float, rate: int, harness_id: str | None,
        log: Callable[..., None]) -> dict[str, Any]:
    """Profile the worst id of each missed best-case operation, and the harness on `harness_id`."""
    out: dict[str, Any] = {"env": [], "rate": rate, "seconds": seconds}
    if not spy.available():
        log(f"[profile] {spy.PY_SPY} not found (pip install py-spy): profiles skipped")
        out["missing"] = True
        return out
    for op in ("reset", "step:message", "step:tool"):
        for noise in ("off", "medium"):
            cands = [r for r in rows if r["kind"] == "agentrl" and r["op"] == op and r["noise"] == noise]
            if not cands:
                continue
            worst = max(cands, key=lambda r: r["median_us"])
            if worst["median_us"] <= target_us(op, noise):
                continue
            log(f"[profile] best case {worst['subject']} noise={noise} {op}, {seconds:g} s of calls")
            stacks = spy.record("perf.profiles:child_unit", rate, env_id=worst["subject"], noise=noise, op=op,
                                seconds=seconds)
            res = spy.attribute(spy.inside(stacks, "_timed_op"))
            res.update({"subject": worst["subject"], "noise": noise, "op": op, "median_us": worst["median_us"]})
            out["env"].append(res)
    if harness_id:
        log(f"[profile] harness against the bare loop on {harness_id}")
        out["harness"] = {"id": harness_id, **profile_harness(harness_id, 2 * seconds, rate)}
    return out


def function_table(functions: list[dict[str, Any]]) -> list[str]:
    """A table of functions' self and inclusive shares."""
    return md_table([{"function": f"`{f['func']}`", "self": f"{f['self']:.1%}", "incl": f"{f['incl']:.1%}"}
                     for f in functions])


def section(prof: dict[str, Any]) -> list[str]:
    """The best case's miss profiles and the harness profile."""
    if prof.get("missing"):
        return ["## Profiles of the best case's misses", "", "Skipped: `py-spy` is not installed here.", ""]
    if not (prof.get("env") or prof.get("harness")):
        return []
    o = ["## Profiles of the best case's misses", "",
         f"Sampled with `py-spy` ({prof['rate']} samples/s, {prof['seconds']:g} s of calls each, in a fresh process): "
         "the worst id of each missed best-case operation. Only samples inside the operation count. *By module*: "
         "share of the samples whose innermost Python frame is in that file (time in C, e.g. `json` or `re`, counts "
         "in the Python line that called it); *self*: the same per function; *incl*: samples with the function "
         "anywhere on the stack. Real episodes' profiles: the file linked above.", ""]
    for p in prof.get("env", []):
        o += [f"### {p['subject']} noise={p['noise']} {p['op']} (median {fmt_us(p['median_us'])} us; "
              f"{p['samples']:,} samples)", "",
              "By module: " + ", ".join(f"`{m}` {s:.0%}" for m, s in p["by_module"][:8]) + ".", ""]
        o += function_table(p["functions"])
        o += ["", "Hottest lines: " + ", ".join(f"`{k}` {v:.0%}" for k, v in p["lines"][:6]) + ".", ""]
    h = prof.get("harness")
    if h:
        o += [f"### Harness against the bare loop, {h['id']} (heuristic, live)", "",
              "Samples of each loop split by where they fall: inside the env (`env.reset`/`env.step`), inside the "
              "agent, or in neither (the loop itself and, for the harness, its bookkeeping: step summaries, records, "
              "the deadline, the info view):", ""]
        base = sum(h["_bare_loop"]["parts"].values()) or 1
        table = []
        for loop, name in (("_bare_loop", "bare `run_episode`"), ("_harness_loop", "`run_jobs`")):
            parts = h[loop]["parts"]
            tot = sum(parts.values()) or 1
            table.append({"loop": name, "samples (x bare)": f"{tot:,} ({tot / base:.2f}x)",
                          "env": f"{parts['env'] / tot:.0%}", "agent": f"{parts['agent'] / tot:.0%}",
                          "loop and harness": f"{parts['loop and harness'] / tot:.0%}"})
        o += md_table(table)
        o += ["", "Where the harness's own samples go (share of them; *incl*: with the function anywhere on the "
              "stack):", ""]
        o += function_table(h["_harness_loop"]["own"]["functions"]) + [""]
    return o
