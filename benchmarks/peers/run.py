#!/usr/bin/env python
"""Environment cost of AgentRL: real episodes, memory, harness, imports, and the best case beside
a Gymnasium floor, TextArena and GEM, in one run; writes ``benchmarks/RESULTS.md``.

    make perf                                   # venv benchmarks/peers/.venv, then this script
    make perf PERF_ARGS="--quick --skip server,ppo --out /tmp/perf-quick.md"
    benchmarks/peers/.venv/bin/python benchmarks/peers/run.py [options]

In order (each part is a module of `benchmarks/perf/`; ``--skip`` names parts):

1. ``time`` (`perf.steps`): the best case, one repeated call per unit, beside the peers.
2. ``real`` (`perf.episodes`, `perf.real_episodes`): whole episodes played by each agent per id,
   noise preset, difficulty and split, recorded, then replayed in fresh envs with every reset and
   step timed, interleaved with the floor; every replay checked equal to its play. The hard tier's
   reset and step medians beside the easy tier's (`perf.tiers`) come from the same calls.
   ``transcripts`` (`perf.transcripts`): the kept playtests, a language model's own turns, replayed
   and timed, each message read first for the first time, then again memoised.
3. ``memory`` (`perf.memory`): bytes per live env on real episode prefixes, and made-and-reset.
4. ``imports`` (`perf.imports`): ``import agentgym`` time.
5. ``harness`` (`perf.harness`): `run_jobs` against the bare loop, on the replayed real episodes
   and with the heuristic live.
6. ``profiles`` (`perf.real_profiles`, `perf.profiles`): py-spy on the real episodes (their own
   file, ``<out>-profiles.md``), on the best case's misses and on the harness.
7. ``server``, ``ppo`` (`perf.remeasure`): those issues' figures from their own scripts.

Targets with pass/MISS head the results; ``benchmarks/peers/ANALYSIS.md`` is appended.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the perf package, envbench

from perf import (  # noqa: E402
    episodes,
    harness,
    imports,
    memory,
    profiles,
    real_episodes,
    real_profiles,
    remeasure,
    render,
    steps,
    targets,
    transcripts,
)
from perf.config import PerfConfig, names, parse_args  # noqa: E402
from perf.machine import loadavg, machine, versions  # noqa: E402


def log(*a: Any) -> None:
    print(*a, file=sys.stderr, flush=True)


def settings(cfg: PerfConfig) -> str:
    """The run's counts, in one line of the results."""
    return (f"real episodes: {cfg.episodes} per cell (id x noise {cfg.noises} x difficulty {cfg.difficulties} x "
            f"split {cfg.splits} x agent {cfg.agents}), {cfg.episode_block} per cell per round; best case: "
            f"{cfg.rounds} rounds x ({cfg.block} steps | {cfg.reset_block} resets) per unit; memory {cfg.mem_n} envs "
            f"(traced: {min(cfg.mem_n, cfg.mem_traced_n)}), real prefixes {cfg.mem_prefix:.0%}; {cfg.import_runs} "
            f"import runs; harness {cfg.harness_rounds} rounds x {cfg.harness_episodes} episodes"
            + ("; --quick" if cfg.quick else ""))


def recordings_for(cfg: PerfConfig, ids: list[str], path: Path) -> episodes.Recordings:
    """The recorded episodes of every cell: from `path` when it holds exactly these cells, else played."""
    cells = episodes.cells(ids, names(cfg.noises), names(cfg.difficulties), names(cfg.splits), names(cfg.agents))
    if path.exists():
        rec = episodes.Recordings.load(path)
        if sorted(rec.cells) != sorted(cells) or any(len(r) != cfg.episodes for r in rec.cells.values()):
            raise SystemExit(f"{path} holds other cells or episode counts than this run's: remove it or drop "
                             "--recordings")
        log(f"[play] {len(cells)} cells' episodes read from {path}")
        return rec
    log(f"[play] {len(cells)} cells x {cfg.episodes} episodes")
    rec = episodes.play(cells, cfg.episodes, log)
    rec.save(path)
    return rec


def measure(cfg: PerfConfig, work: Path) -> dict[str, Any]:
    """Run every part not skipped; the figures, as `render.document` reads them."""
    from perf.subjects import agentrl_ids, memory_factories

    skip = cfg.skipped()
    ids = agentrl_ids() if cfg.ids == "all" else names(cfg.ids)
    pairs = [(i, n) for i in ids for n in names(cfg.noises)]
    t_start = time.perf_counter()
    data: dict[str, Any] = {"meta": {
        "when": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
        "load_start": loadavg(), "versions": versions(), "settings": settings(cfg), "agents": cfg.agents,
        "harness_rounds": cfg.harness_rounds}}
    if "time" not in skip:
        data["time"] = steps.run(cfg.rounds, cfg.block, cfg.reset_block, ids, log)
    rec_path = cfg.recordings or work / "recordings.json"
    if {"real", "memory", "harness", "profiles"} - skip:
        recordings = recordings_for(cfg, ids, rec_path)
        if "real" not in skip:
            data["real"] = real_episodes.run(recordings, cfg.episode_block, cfg.block, cfg.reset_block,
                                             cfg.first_steps, log)
        del recordings
    if "transcripts" not in skip:
        data["transcripts"] = transcripts.run(cfg.block, log)
    if "memory" not in skip:
        data["memory_real"] = memory.run_real(rec_path, pairs, cfg.mem_n, cfg.mem_traced_n, cfg.mem_prefix, log)
        data["memory"] = memory.run(list(memory_factories()), cfg.mem_n, cfg.mem_traced_n, log)
    if "imports" not in skip:
        data["imports"] = imports.run(cfg.import_runs, log)
    if "harness" not in skip:
        data["harness_real"] = harness.run_replayed(rec_path, pairs, cfg.harness_rounds, cfg.harness_episodes, log)
        hids = ids if cfg.harness_ids == "all" else names(cfg.harness_ids)
        data["harness"] = harness.run(hids, cfg.harness_rounds, cfg.harness_episodes, log)
    if "profiles" not in skip:
        data["real_profiles"] = real_profiles.run(rec_path, pairs, cfg.profile_seconds, cfg.profile_rate, log)
        worst = max(data.get("harness") or [], key=lambda h: h["cpu_overhead"], default=None)
        harness_id = worst["label"] if worst and worst["cpu_overhead"] > targets.HARNESS_TARGET else None
        data["profiles"] = profiles.run((data.get("time") or {}).get("rows", []), cfg.profile_seconds,
                                        cfg.profile_rate, harness_id, log)
    if not {"server", "ppo"} <= skip:
        data["remeasured"] = remeasure.run(cfg, skip, log)
    data["meta"]["load_end"] = loadavg()
    data["meta"]["wall_s"] = time.perf_counter() - t_start
    return data


def main(argv: list[str] | None = None) -> int:
    cfg = parse_args(argv, __doc__)
    cfg.skipped()  # an unknown part fails before anything runs
    baseline = steps.load_baseline(cfg.baseline)
    if cfg.from_json:
        data = json.loads(cfg.from_json.read_text("utf-8"))
    else:
        with tempfile.TemporaryDirectory(prefix="agentgym-perf-") as work:
            data = measure(cfg, Path(work))
        if cfg.json:
            cfg.json.write_text(json.dumps(data, indent=1, default=str), "utf-8")
    if cfg.save_baseline and data.get("time"):
        source = f"the best-case table of `make perf` of {data['meta']['when']} ({data['meta']['versions']['agentgym git']})"
        cfg.save_baseline.write_text(json.dumps(steps.baseline_of(data["time"], source), indent=1), "utf-8")
        log(f"wrote {cfg.save_baseline}")
    if data.get("real_profiles"):
        path = render.profiles_path(cfg.out)
        path.write_text(real_profiles.document(data["real_profiles"], data["meta"]["when"]), "utf-8")
        log(f"wrote {path}")
    cfg.out.write_text(render.document(data, cfg.out, baseline), "utf-8")
    log(f"wrote {cfg.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
