"""Memory per live env, each subject in a fresh process of its own.

Two measurements, each as RSS (``/proc/self/statm``, the target's figure) and, in a second
process, tracemalloc's traced bytes (Python and NumPy allocations, with where they were made):

- *made and reset* (the best case, beside the floor and the peers): `n` envs made and reset,
  each holding its task world, kept live;
- *real episode prefix* (the target's): `n` envs of one id and noise preset, each made with a
  recorded episode's difficulty and split, reset to its seed and stepped through the first part
  of its recorded actions (`prefix` of them, at least one), kept live, so each holds what a live
  env in a run holds: a world the agent has read and written, a conversation, call records.

Module-level caches and lazy imports are not per env, so warm-up envs come first, kept live (a
dropped env's freed memory would be reused by the counted ones and hide them from RSS): three for
the made-and-reset envs; for the real prefixes, one per counted env, playing the same prefix, so
that every cache a message or a domain fills is full before the count starts (what the caches and
imports hold is reported apart: the warm-up's bytes less the counted envs').
"""

from __future__ import annotations

import gc
import math
import os
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

from perf import child, targets
from perf.tables import md_table, ratio, verdict

WARM = 3


def _short_path(filename: str) -> str:
    i = filename.rfind("/agentgym/")
    return filename[i + 1:] if i >= 0 else Path(filename).name


def measure(make: Callable[[int], Any], n: int, mode: str, warm_all: bool = False) -> dict[str, Any]:
    """Bytes per env of `n` live envs from ``make(i)``, by `mode` (``rss`` or ``tracemalloc``),
    after `WARM` warm-up envs, or (`warm_all`) after a first ``make(i)`` of each i; all kept live."""
    page = os.sysconf("SC_PAGE_SIZE")

    def rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * page

    start = rss()
    warm = [make(i) for i in range(n)] if warm_all else [make(n + i) for i in range(WARM)]
    gc.collect()
    if mode == "tracemalloc":
        tracemalloc.start(1)
    base_rss, base_tm = rss(), tracemalloc.get_traced_memory()[0] if mode == "tracemalloc" else 0
    live = [make(i) for i in range(n)]
    gc.collect()
    out: dict[str, Any] = {"n": len(live), "mode": mode, "warm": len(warm)}
    if mode == "rss":
        out["bytes_per_env"] = (rss() - base_rss) / n
        out["shared_bytes"] = base_rss - start - len(warm) * out["bytes_per_env"]
        return out
    out["bytes_per_env"] = (tracemalloc.get_traced_memory()[0] - base_tm) / n
    snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    out["top"] = [{"where": f"{_short_path(s.traceback[0].filename)}:{s.traceback[0].lineno}",
                   "kb_per_env": s.size / n / 1024, "count_per_env": s.count / n}
                  for s in snap.statistics("lineno")[:12]]
    out["by_file"] = [{"where": _short_path(s.traceback[0].filename), "kb_per_env": s.size / n / 1024}
                      for s in snap.statistics("filename")[:10]]
    return out


def child_made_and_reset(label: str, n: int, mode: str) -> dict[str, Any]:
    """(In a fresh process.) `n` made-and-reset envs of a `perf.subjects.memory_factories` label."""
    from perf.subjects import memory_factories

    return {"label": label, **measure(memory_factories()[label], n, mode)}


def child_real(recordings: str, env_id: str, noise: str, n: int, mode: str, prefix: float) -> dict[str, Any]:
    """(In a fresh process.) `n` envs of `env_id` and `noise`, each stepped through a recorded
    episode's first `prefix` share of actions (episodes taken in turn, every cell alike)."""
    from perf.episodes import Recordings, make_env

    episodes = Recordings.load(Path(recordings)).of(env_id, noise)
    steps: list[int] = []

    def make(i: int) -> Any:
        cell, rec = episodes[i % len(episodes)]
        env = make_env(cell)
        env.reset(seed=rec.seed)
        k = min(len(rec.actions) - 1, max(1, math.ceil(prefix * len(rec.actions))))
        for action in rec.actions[:k]:
            if any(env.step(action)[2:4]):
                raise RuntimeError(f"{cell.label} seed {rec.seed}: the episode ended before its recorded end "
                                   "(recorded with other env code? remove the --recordings file)")
        steps.append(k)
        return env

    out = measure(make, n, mode, warm_all=True)
    counted = steps[n:]
    return {"label": f"{env_id} noise={noise}", **out, "steps_per_env": sum(counted) / len(counted)}


def run(labels: list[str], n: int, traced_n: int, log: Callable[..., None]) -> list[dict[str, Any]]:
    """The made-and-reset measurement of every label, RSS then tracemalloc."""
    rows = []
    for label in labels:
        row: dict[str, Any] = {"label": label}
        for mode, count in (("rss", n), ("tracemalloc", min(n, traced_n))):
            t0 = time.perf_counter()
            row[mode] = child.call("perf.memory:child_made_and_reset", label=label, n=count, mode=mode)
            log(f"[memory] {label} {mode}: {row[mode]['bytes_per_env'] / 1024:.1f} KB/env "
                f"({time.perf_counter() - t0:.1f} s)")
        rows.append(row)
    return rows


def run_real(recordings: Path, pairs: list[tuple[str, str]], n: int, traced_n: int, prefix: float,
             log: Callable[..., None]) -> list[dict[str, Any]]:
    """The real-prefix measurement of every (id, noise), RSS then tracemalloc."""
    rows = []
    for env_id, noise in pairs:
        row: dict[str, Any] = {"label": f"{env_id} noise={noise}", "prefix": prefix}
        for mode, count in (("rss", n), ("tracemalloc", min(n, traced_n))):
            t0 = time.perf_counter()
            row[mode] = child.call("perf.memory:child_real", recordings=str(recordings), env_id=env_id, noise=noise,
                                   n=count, mode=mode, prefix=prefix)
            log(f"[memory] {row['label']} real prefix {mode}: {row[mode]['bytes_per_env'] / 1024:.1f} KB/env "
                f"({time.perf_counter() - t0:.1f} s)")
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------ results
def _kb(row: dict[str, Any], mode: str = "rss") -> float:
    return row[mode]["bytes_per_env"] / 1024


def target_rows(real: list[dict[str, Any]] | None, made: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The memory lines of the targets table: real prefixes (the target), made-and-reset (best case)."""
    out = []
    for rows, what in ((real, "real episode prefix"), (made, "made and reset, best case")):
        rows = [r for r in rows or [] if r["label"].startswith("AgentRL/")]
        if not rows:
            continue
        worst, best = max(rows, key=_kb), min(rows, key=_kb)
        ok = sum(_kb(r) <= targets.MEM_TARGET_KB for r in rows)
        out.append(targets.row(
            f"Memory <= {targets.MEM_TARGET_KB:g} KB RSS per live env, {what}",
            f"worst {_kb(worst):,.1f} KB ({worst['label']}), best {_kb(best):,.1f} KB ({best['label']}); "
            f"{ok}/{len(rows)} within", verdict(_kb(worst), targets.MEM_TARGET_KB, "KB", lambda v: f"{v:,.1f}")))
    return out


def section(real: list[dict[str, Any]] | None, made: list[dict[str, Any]] | None) -> list[str]:
    """The memory tables, and where the bytes of the envs over the target are allocated."""
    o = ["## Memory per live env", ""]
    if real:
        r0 = real[0]
        o += [f"**Real episode prefixes** (the target's figure): {r0['rss']['n']:,} envs per id and noise preset in a "
              "fresh process, each made with a recorded episode's difficulty and split, reset to its seed and "
              f"stepped through the first {r0['prefix']:.0%} of its recorded actions (at least one, never the "
              "last), kept live; episodes of every agent, difficulty and split in turn. First the same prefixes "
              "are played once in as many envs, kept live and not counted, so module-level caches (per domain, per "
              "message read) are full before the count: *caches KB* is what the caches and lazy imports hold, shared "
              "by every env (the warm-up's bytes less its envs' own). "
              "*RSS*: the resident-set delta over the count; *traced*: tracemalloc's, in a second process with "
              f"{r0['tracemalloc']['n']:,} envs.", ""]
        o += md_table([{"subject": r["label"], "steps per env": f"{r['rss']['steps_per_env']:.1f}",
                        "caches KB": f"{r['rss']['shared_bytes'] / 1024:,.0f}",
                        "RSS KB/env": f"{_kb(r):,.1f}", "traced KB/env": f"{_kb(r, 'tracemalloc'):,.1f}",
                        "target": f"<= {targets.MEM_TARGET_KB:g} KB",
                        "result": verdict(_kb(r), targets.MEM_TARGET_KB, "KB", lambda v: f"{v:,.1f}")}
                       for r in real])
        o.append("")
    if made:
        by = {m["label"]: m for m in made}
        n, traced_n = made[0]["rss"]["n"], made[0]["tracemalloc"]["n"]
        o += [f"**Made and reset** (best case: no step played): {n:,} envs made and reset (each holding its task "
              "world) and kept live in one fresh process per subject; traced in a second process with "
              f"{traced_n:,}. Floor: the minimal env's two `gymnasium.spaces.Text(64)` spaces are most of it.", ""]
        table = []
        for m in made:
            subject, _, noise = m["label"].partition(" noise=")
            is_ag = subject.startswith("AgentRL/")
            row = {"subject": {"floor": "Gymnasium floor", "textarena": "TextArena", "gem": "GEM"}.get(subject, subject),
                   "noise": noise or "-", "RSS KB/env": f"{_kb(m):,.1f}",
                   "traced KB/env": f"{_kb(m, 'tracemalloc'):,.1f}"}
            for peer, name in (("floor", "x floor"), ("textarena", "x TextArena"), ("gem", "x GEM")):
                row[name] = ratio(_kb(m), _kb(by[peer])) if peer in by and subject != peer else "-"
            row["target"] = f"<= {targets.MEM_TARGET_KB:g} KB" if is_ag else "-"
            row["result"] = verdict(_kb(m), targets.MEM_TARGET_KB, "KB", lambda v: f"{v:,.1f}") if is_ag else "-"
            table.append(row)
        o += md_table(table) + [""]
    misses = [r for r in (real or made or []) if r["label"].startswith("AgentRL/") and _kb(r) > targets.MEM_TARGET_KB]
    if misses:
        o += ["### Where the bytes of each env over the target are allocated", "",
              "tracemalloc's traced KB per env by the file that allocated them (first frame)"
              + (" on real episode prefixes" if real else "") + ":", ""]
        for m in misses:
            tm = m["tracemalloc"]
            o.append(f"- {m['label']} ({_kb(m, 'tracemalloc'):.1f} KB traced): "
                     + ", ".join(f"`{x['where']}` {x['kb_per_env']:.1f}" for x in tm["by_file"][:7]) + ".")
        worst = max(misses, key=_kb)
        o += ["", f"Allocation sites of {worst['label']}:", ""]
        o += md_table([{"allocated at": f"`{x['where']}`", "KB/env": f"{x['kb_per_env']:.2f}",
                        "blocks/env": f"{x['count_per_env']:.1f}"} for x in worst["tracemalloc"]["top"][:10]])
        o.append("")
    return o
