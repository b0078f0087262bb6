"""Language-model transcripts: the kept playtests' own turns, replayed and timed.

`benchmarks/playtests/` keeps every episode a language-model assistant played through
``agentgym play``: how each env was made (``episodes.json``) and the model's turns (``turns/``).
Here they are replayed in a fresh interpreter with every reset and step timed alone
(``perf_counter_ns``), blocks of the floor's steps between episodes. A model's messages are long
(a plan, a table, a question with its reasons) and each is new to the process, where the agents
of `perf.real_episodes` repeat a few phrasings whose readings the users memoise (per text). So
two passes over the same turns: the *first* meets every message for the first time, as a served
model's messages are; the *memoised* pass replays them with the readings of the first kept, to
show how much of the first pass is reading.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from perf import child, floor, targets
from perf.config import BENCHMARKS
from perf.episodes import step_kind
from perf.tables import fmt_us, md_table, quantiles_us, ratio, verdict

PLAYTESTS = BENCHMARKS / "playtests"
PASSES = ("first", "memoised")
#: Floor steps timed between two blocks of episodes, and episodes per block.
FLOOR_EVERY = 25


def child_transcripts(playtests: str, block: int, limit: int | None = None) -> dict[str, Any]:
    """(In a fresh process.) Replay every kept episode (the first `limit`) twice, every call
    timed; the quantiles."""
    import sys

    import gymnasium as gym

    import agentgym  # noqa: F401  (registers the ids)

    sys.path.insert(0, playtests)
    from replay import REPORT, env_kwargs, kept_actions  # benchmarks/playtests/replay.py

    episodes = json.loads((Path(playtests) / "episodes.json").read_text("utf-8"))[:limit]
    envs: dict[tuple[str, str], Any] = {}
    env_of: list[Any] = []  # per episode, the env of its id and options (one per kind, reused)
    for ep in episodes:
        key = (ep["env"], json.dumps(env_kwargs(ep), sort_keys=True))
        if key not in envs:
            envs[key] = gym.make(ep["env"], **env_kwargs(ep))
            envs[key].reset(seed=0)
            envs[key].step("Hello!")  # lazy imports and per-domain tables, before any timed call
        env_of.append(envs[key])
    floor_step = floor.step_block()
    floor_step(block)
    ns = time.perf_counter_ns
    steps: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    resets: dict[tuple[str, str], list[int]] = defaultdict(list)
    chars: dict[str, list[int]] = defaultdict(list)
    fl: list[int] = []
    gc.collect()
    gc.freeze()
    for pass_ in PASSES:
        for k, ep in enumerate(episodes):
            if k % FLOOR_EVERY == 0:
                fl += floor_step(block)
            env, env_id = env_of[k], ep["env"]
            t0 = ns()
            env.reset(seed=ep["seed"])
            resets[(env_id, pass_)].append(ns() - t0)
            for action in kept_actions(env, ep):
                t0 = ns()
                *_, terminated, truncated, info = env.step(action)
                t1 = ns()
                kind = step_kind(info)
                steps[(env_id, pass_, kind)].append(t1 - t0)
                steps[(env_id, pass_, "every")].append(t1 - t0)
                if pass_ == "first" and kind == "message" and action is not REPORT:
                    chars[env_id].append(len(action) if isinstance(action, str) else len(json.dumps(action)))
                if terminated or truncated:
                    break
    gc.unfreeze()
    return {
        "episodes": len(episodes),
        "floor": quantiles_us(fl),
        "steps": [{"env_id": k[0], "pass": k[1], "kind": k[2], "step": quantiles_us(v)} for k, v in sorted(steps.items())],
        "resets": [{"env_id": k[0], "pass": k[1], "reset": quantiles_us(v)} for k, v in sorted(resets.items())],
        "message_chars": {k: statistics.median(v) for k, v in chars.items()},
    }


def run(block: int, log: Callable[..., None]) -> dict[str, Any]:
    """The kept playtests' turns replayed in a fresh interpreter."""
    t0 = time.perf_counter()
    out = child.call("perf.transcripts:child_transcripts", playtests=str(PLAYTESTS), block=block)
    log(f"[transcripts] {out['episodes']} kept episodes, two passes ({time.perf_counter() - t0:.0f} s)")
    return out


# ------------------------------------------------------------------------------ results
def _rows(result: dict[str, Any], pass_: str, kind: str) -> list[dict[str, Any]]:
    return [r for r in result["steps"] if r["pass"] == pass_ and r["kind"] == kind]


def target_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The median step of the first pass, every id, against the real episodes' target."""
    fs, limit = result["floor"]["median"], targets.REAL_STEP_MEDIAN_X
    rows = _rows(result, "first", "every")
    worst = max(rows, key=lambda r: r["step"]["median"])
    best = min(rows, key=lambda r: r["step"]["median"])
    ok = sum(r["step"]["median"] / fs <= limit for r in rows)
    return [targets.row(
        f"Language-model transcripts (the kept playtests, each message read for the first time): median step "
        f"<= {limit:g}x the floor's median step, every id",
        f"worst {ratio(worst['step']['median'], fs)} ({fmt_us(worst['step']['median'])} us, {worst['env_id']}), "
        f"best {ratio(best['step']['median'], fs)} ({best['env_id']}); {ok}/{len(rows)} within",
        verdict(worst["step"]["median"] / fs, limit, "x", lambda v: f"{v:,.0f}"))]


def section(result: dict[str, Any]) -> list[str]:
    """The transcripts' table: per id, step kind and pass."""
    fs = result["floor"]["median"]
    o = ["## Language-model transcripts: the kept playtests replayed", "",
         f"The {result['episodes']:,} episodes a language-model assistant played through `agentgym play` "
         "(`benchmarks/playtests/`: every id, difficulty, split and noise preset it was played on), replayed from "
         "their kept turns in a fresh interpreter with every reset and step timed alone, floor steps between "
         "blocks of episodes (`perf/transcripts.py`). A model's messages are long and each is new to the process; "
         "the real episodes above repeat a few phrasings, whose readings the users memoise. *first*: each message "
         "read for the first time (what a served model's turns cost); *memoised*: the same turns again, every "
         f"reading kept from the first pass. Floor step median {fmt_us(fs)} us.", ""]
    table = []
    for r in result["steps"]:
        if r["kind"] == "error":
            continue
        q = r["step"]
        table.append({"id": r["env_id"], "step": r["kind"], "pass": r["pass"], "steps": f"{q['n']:,}",
                      "median us": fmt_us(q["median"]), "p90 us": fmt_us(q["p90"]), "p99 us": fmt_us(q["p99"]),
                      "x floor": ratio(q["median"], fs), "p90 x floor": ratio(q["p90"], fs),
                      "message chars (median)": (f"{result['message_chars'].get(r['env_id'], 0):,.0f}"
                                                 if r["kind"] == "message" else "-")})
    order = {"every": 0, "message": 1, "tool": 2}
    table.sort(key=lambda t: (t["id"], order.get(t["step"], 3), PASSES.index(t["pass"])))
    o += md_table(table) + [""]
    resets = [{"id": r["env_id"], "pass": r["pass"], "resets": f"{r['reset']['n']:,}",
               "median us": fmt_us(r["reset"]["median"]), "p90 us": fmt_us(r["reset"]["p90"]),
               "x floor step": ratio(r["reset"]["median"], fs)} for r in result["resets"] if r["pass"] == "first"]
    return o + ["Resets of the same episodes (first pass):", ""] + md_table(resets) + [""]
