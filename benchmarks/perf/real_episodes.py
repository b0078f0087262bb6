"""Real episodes, replayed and timed: every reset and every step, the first ones included.

Each cell's recorded episodes (`perf.episodes`) are replayed in a fresh env of the cell made in
this process, one env per cell reused across its episodes as a harness's worker reuses its env.
Each ``reset`` and each ``step`` is timed alone with ``perf_counter_ns``; the agent's time is not
in it (its actions were recorded before). Every replayed episode is checked against its play:
the digest of what the env returned, the kind of each step, and the end at the last action;
a difference raises `ReplayMismatch`, and nothing is reported.

Cells run round robin, one block of episodes each per round (the starting cell rotates), with the
floor's steps and resets in every round, so machine noise falls on all alike; one untimed
warm-up episode per cell first (lazy imports, per-domain tables). Garbage collection stays on,
as in a run, and its pauses fall on the calls they interrupt (p99 shows them); what this process
holds besides one episode (the recordings, every cell's env) is frozen out of the collector first
(`gc.freeze`), so a full collection scans about what it would in a worker holding one env.
"""

from __future__ import annotations

import gc
import math
import time
from collections import defaultdict
from typing import Any, Callable

from perf import floor, targets, tiers
from perf.episodes import Cell, Digest, Recording, Recordings, make_env, step_kind
from perf.tables import fmt_us, md_table, quantiles_us, ratio, verdict

#: Step-index buckets of the step-by-position table (1-based index in the episode).
INDEX_BUCKETS = ((1, 1), (2, 2), (3, 3), (4, 5), (6, 10), (11, 20), (21, 10**9))


class ReplayMismatch(AssertionError):
    """A replayed episode differs from its play: the instrument would time another episode."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} (recorded with other env code? play the episodes again: remove the "
                         "--recordings file)")


class CellReplay:
    """One cell's env and its recorded episodes, replayed in order, every call timed."""

    def __init__(self, cell: Cell, recs: list[Recording]) -> None:
        self.cell, self.recs, self.next = cell, recs, 0
        self.env = make_env(cell)
        self.resets: list[int] = []
        self.steps: list[tuple[int, str, int]] = []  # (1-based index, kind, ns)

    def replay(self, rec: Recording, timed: bool = True) -> None:
        """Replay one episode; its calls' times are kept when `timed`.

        Raises:
            ReplayMismatch: the episode differs from its play.
        """
        ns, reset, step = time.perf_counter_ns, self.env.reset, self.env.step
        t0 = ns()
        obs, _info = reset(seed=rec.seed)
        t1 = ns()
        digest, times = Digest(obs), []
        last = len(rec.actions) - 1
        for i, action in enumerate(rec.actions):
            t2 = ns()
            obs, reward, terminated, truncated, info = step(action)
            t3 = ns()
            times.append((i + 1, rec.kinds[i], t3 - t2))
            digest.step(obs, reward, terminated, truncated)
            kind, ended = step_kind(info), bool(terminated or truncated)
            if kind != rec.kinds[i] or ended != (i == last):
                raise ReplayMismatch(f"{self.cell.label} seed {rec.seed}: step {i + 1} was a {rec.kinds[i]} "
                                     f"{'ending' if i == last else 'not ending'} the episode when played, now a "
                                     f"{kind} {'ending' if ended else 'not ending'} it")
        if digest.hexdigest() != rec.digest:
            raise ReplayMismatch(f"{self.cell.label} seed {rec.seed}: the replay's observations differ from the play's")
        if timed:
            self.resets.append(t1 - t0)
            self.steps += times

    def block(self, n: int) -> None:
        """Replay the next `n` episodes (fewer at the end)."""
        for rec in self.recs[self.next:self.next + n]:
            self.replay(rec)
        self.next += n


def run(recordings: Recordings, episode_block: int, block: int, reset_block: int, first_steps: int,
        log: Callable[..., None]) -> dict[str, Any]:
    """Replay every cell's episodes interleaved with the floor; the summary tables' rows."""
    replays = [CellReplay(c, recs) for c, recs in recordings.cells.items() if recs]
    floor_step, floor_reset = floor.step_block(), floor.reset_block()
    fl: dict[str, list[int]] = {"step": [], "reset": []}
    units: list[Callable[[], Any]] = [lambda: fl["step"].extend(floor_step(block)),
                                      lambda: fl["reset"].extend(floor_reset(reset_block))]
    units += [lambda r=r: r.block(episode_block) for r in replays]
    for r in replays:
        r.replay(r.recs[0], timed=False)
    floor_step(block)
    floor_reset(reset_block)
    gc.collect()
    gc.freeze()
    rounds = max(math.ceil(len(r.recs) / episode_block) for r in replays)
    log(f"[real] {len(replays)} cells, {sum(len(r.recs) for r in replays)} episodes, {rounds} rounds")
    for k in range(rounds):
        t0 = time.perf_counter()
        j = k % len(units)
        for unit in units[j:] + units[:j]:
            unit()
        log(f"[real] round {k + 1}/{rounds} {time.perf_counter() - t0:.1f} s")
    gc.unfreeze()
    return summarize(replays, {op: quantiles_us(v) for op, v in fl.items()}, first_steps, recordings.play_s)


def summarize(replays: list[CellReplay], floor_q: dict[str, dict[str, float]], first_steps: int,
              play_s: float) -> dict[str, Any]:
    """Quantiles per cell, per id and noise, per step kind and position, per step index, per agent."""
    pooled: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: {"step": [], "reset": []})
    kinds: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
    index: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    messages: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    cells = []
    for r in replays:
        c = r.cell
        key = (c.env_id, c.noise)
        pooled[key]["reset"] += r.resets
        pooled[key]["step"] += [t for _i, _k, t in r.steps]
        for i, kind, t in r.steps:
            kinds[(*key, kind, "first" if i <= first_steps else "later")].append(t)
            bucket = next(b for b, (lo, hi) in enumerate(INDEX_BUCKETS) if lo <= i <= hi)
            index[(*key, bucket)].append(t)
            if kind == "message":
                messages[(*key, c.agent)].append(t)
        cells.append({"env_id": c.env_id, "noise": c.noise, "difficulty": c.difficulty, "split": c.split,
                      "agent": c.agent, "episodes": len(r.resets), "step": quantiles_us(t for _i, _k, t in r.steps),
                      "reset": quantiles_us(r.resets)})
    return {
        "floor": floor_q, "first_steps": first_steps, "play_s": play_s,
        "episodes": sum(len(r.resets) for r in replays),
        "cells": cells,
        "pooled": [{"env_id": k[0], "noise": k[1], "step": quantiles_us(v["step"]), "reset": quantiles_us(v["reset"]),
                    "worst_cell_step": max((c for c in cells if (c["env_id"], c["noise"]) == k),
                                           key=lambda c: c["step"]["median"])}
                   for k, v in sorted(pooled.items())],
        "kinds": [{"env_id": k[0], "noise": k[1], "kind": k[2], "position": k[3], "step": quantiles_us(v)}
                  for k, v in sorted(kinds.items())],
        "index": [{"env_id": k[0], "noise": k[1], "bucket": k[2], "step": quantiles_us(v)}
                  for k, v in sorted(index.items())],
        "messages": [{"env_id": k[0], "noise": k[1], "agent": k[2], "step": quantiles_us(v)}
                     for k, v in sorted(messages.items())],
        "tiers": tiers.pooled((r.cell.env_id, r.cell.noise, r.cell.difficulty, r.resets,
                               [t for _i, _k, t in r.steps]) for r in replays),
    }


# ------------------------------------------------------------------------------ results
def _x(value: float, floor_step: float) -> float:
    return value / floor_step


def target_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The real episodes' lines of the targets table (every id, noise off and ``medium``)."""
    fs = result["floor"]["step"]["median"]
    out = []
    for what, op, stat, limit in (("median step", "step", "median", targets.REAL_STEP_MEDIAN_X),
                                  ("p90 step", "step", "p90", targets.REAL_STEP_P90_X),
                                  ("median reset", "reset", "median", targets.REAL_RESET_MEDIAN_X)):
        rows = result["pooled"]
        worst = max(rows, key=lambda r: r[op][stat])
        best = min(rows, key=lambda r: r[op][stat])
        ok = sum(_x(r[op][stat], fs) <= limit for r in rows)
        out.append(targets.row(
            f"Real episodes: {what} <= {limit:g}x the floor's median step, every id, noise off and `medium`",
            f"worst {ratio(worst[op][stat], fs)} ({fmt_us(worst[op][stat])} us, {worst['env_id']} "
            f"noise={worst['noise']}), best {ratio(best[op][stat], fs)} ({best['env_id']} noise={best['noise']}); "
            f"{ok}/{len(rows)} within", verdict(_x(worst[op][stat], fs), limit, "x", lambda v: f"{v:,.0f}")))
    return out + tiers.target_rows(result.get("tiers"))


def _q_cols(q: dict[str, float], fs: float, prefix: str = "") -> dict[str, str]:
    return {f"{prefix}median us": fmt_us(q["median"]), f"{prefix}p90 us": fmt_us(q["p90"]),
            f"{prefix}p99 us": fmt_us(q["p99"]), f"{prefix}x floor": ratio(q["median"], fs),
            f"{prefix}p90 x floor": ratio(q["p90"], fs)}


def section(result: dict[str, Any], agents: list[str]) -> list[str]:
    """The real-episode tables: per id and noise (the targets'), by step kind and position, by
    step index, message steps by agent, and per cell."""
    fs, fr = result["floor"]["step"]["median"], result["floor"]["reset"]["median"]
    n_first = result["first_steps"]
    o = ["## Real episodes: every reset and step as agents play them", "",
         f"Episodes played by {', '.join(f'`{a}`' for a in agents)} (`lm-mix`: the heuristic's tool calls, its "
         "messages phrased from the check-users corpus: `benchmarks/perf/lm_mix.py`), recorded, then replayed in "
         "fresh envs with every `reset` and every `step` timed alone (`perf_counter_ns`), the first steps after a "
         "reset included; the agents' own time is not in any figure (playing took "
         f"{result['play_s']:.0f} s). All {result['episodes']:,} replayed episodes were checked equal to their play "
         "(a digest of every observation, reward and end flag; each step's kind; the end at the last action). "
         "Cells (id x noise x difficulty x split x agent) ran round robin with the floor's steps and resets in "
         f"every round. The floor (`perf/floor.py`, a minimal `gymnasium.Env` through `gym.make`): step median "
         f"{fmt_us(fs)} us (p90 {fmt_us(result['floor']['step']['p90'])}), reset median {fmt_us(fr)} us. "
         "*x floor*: a figure over the floor's **median step** (the targets' unit, resets included); p90 and p99 "
         "over every call.", "",
         "### Per id and noise (every agent, difficulty and split pooled)", ""]
    table = []
    for r in result["pooled"]:
        s, z, w = r["step"], r["reset"], r["worst_cell_step"]
        table.append({
            "id": r["env_id"], "noise": r["noise"], "steps": f"{s['n']:,}", **_q_cols(s, fs, "step "),
            "resets": f"{z['n']:,}", "reset median us": fmt_us(z["median"]), "reset p90 us": fmt_us(z["p90"]),
            "reset p99 us": fmt_us(z["p99"]), "reset x floor": ratio(z["median"], fs),
            "reset x floor reset": ratio(z["median"], fr),
            "worst cell (step median)": f"{w['difficulty']} {w['split']} {w['agent']}: {fmt_us(w['step']['median'])} us",
            "median step": verdict(_x(s["median"], fs), targets.REAL_STEP_MEDIAN_X, "x", lambda v: f"{v:,.0f}"),
            "p90 step": verdict(_x(s["p90"], fs), targets.REAL_STEP_P90_X, "x", lambda v: f"{v:,.0f}"),
            "median reset": verdict(_x(z["median"], fs), targets.REAL_RESET_MEDIAN_X, "x", lambda v: f"{v:,.0f}"),
        })
    o += md_table(table)
    o += ["", f"Targets: median step <= {targets.REAL_STEP_MEDIAN_X:g}x, p90 step <= {targets.REAL_STEP_P90_X:g}x, "
          f"median reset <= {targets.REAL_RESET_MEDIAN_X:g}x the floor's median step.", ""]
    o += tiers.section(result.get("tiers"))
    o += [f"### By step kind and position (first: steps 1-{n_first} after a reset)", "",
          "*message*: a message to the user; *tool*: an action with tool calls; *error*: an action the env "
          "rejected before any call (malformed, or over a cap).", ""]
    o += md_table([{"id": r["env_id"], "noise": r["noise"], "kind": r["kind"], "position": r["position"],
                    "steps": f"{r['step']['n']:,}", **_q_cols(r["step"], fs)} for r in result["kinds"]])
    o += ["", "### Median step by its index in the episode (us)", ""]
    by_id: dict[tuple[str, str], dict[str, str]] = {}
    for r in result["index"]:
        lo, hi = INDEX_BUCKETS[r["bucket"]]
        name = str(lo) if lo == hi else f"{lo}+" if hi >= 10**9 else f"{lo}-{hi}"
        by_id.setdefault((r["env_id"], r["noise"]), {"id": r["env_id"], "noise": r["noise"]})[name] = \
            fmt_us(r["step"]["median"])
    o += md_table(list(by_id.values()))
    o += ["", "### Message steps by agent (how the phrasing moves a message's cost)", ""]
    o += md_table([{"id": r["env_id"], "noise": r["noise"], "agent": r["agent"], "messages": f"{r['step']['n']:,}",
                    **_q_cols(r["step"], fs)} for r in result["messages"]])
    o += ["", "### Per cell", ""]
    o += md_table([{"id": c["env_id"], "noise": c["noise"], "difficulty": c["difficulty"], "split": c["split"],
                    "agent": c["agent"], "episodes": c["episodes"], "steps": f"{c['step']['n']:,}",
                    "step median us": fmt_us(c["step"]["median"]), "step p90 us": fmt_us(c["step"]["p90"]),
                    "step p99 us": fmt_us(c["step"]["p99"]), "step x floor": ratio(c["step"]["median"], fs),
                    "reset median us": fmt_us(c["reset"]["median"]), "reset p99 us": fmt_us(c["reset"]["p99"]),
                    "reset x floor": ratio(c["reset"]["median"], fs)} for c in result["cells"]])
    return o + [""]
