#!/usr/bin/env python
"""Real episodes, small and quick: record them once, then cProfile or time their replay.

    python benchmarks/real_steps.py record FILE [--episodes 10]
    python benchmarks/real_steps.py profile FILE [--kind message] [--top 30]
    python benchmarks/real_steps.py time FILE
    python benchmarks/real_steps.py replay FILE [--resets-only]

`record` plays every cell (each AgentRL id, noise off and medium, difficulty easy, medium and
hard, the train split, agents heuristic, expert and lm-mix) on seeds 0..N-1 with `perf.episodes`
and saves the recordings. `profile` replays them (one env per cell, its first episode untimed)
under cProfile, the profiler on only around the steps of `--kind` (message, tool, error, all, or
reset), and prints the top functions. `time` replays them and prints one JSON line per id and
noise preset: step and reset medians and p90 in microseconds and over the floor's median step
measured in the same process (`perf.floor`), so two checkouts can be compared round by round
(run it with each checkout's ``PYTHONPATH`` in turn). `replay` replays them untimed (or only their
resets, the steps' episodes unplayed), for an instruction counter around the whole process: the
count with steps less the count with resets only, over the steps, is the steps' share. Every
replay of steps is checked against its play.

These are a development instrument for the users' and the engine's cuts; `make perf`
(`benchmarks/peers/run.py`) is the full measurement.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf import floor  # noqa: E402
from perf.episodes import Cell, Digest, Recordings, cells, make_env, play, step_kind  # noqa: E402

AGENTS = ("heuristic", "expert", "lm-mix")
NOISES = ("off", "medium")
DIFFICULTIES = ("easy", "medium", "hard")
#: Each cell's first episode warms up (lazy imports, per-domain tables); the others are measured
#: once each, as a worker meets them (a reading memoised in one episode is met in a later one).
WARM, TIMED = slice(0, 1), slice(1, None)
#: A replayed call (a reset or a step), run by a hook that may time or profile it.
Call = Callable[[], Any]


def record(path: Path, episodes: int) -> None:
    """Play every cell on seeds 0..episodes-1 and save the recordings to `path`."""
    from perf.subjects import agentrl_ids

    rec = play(cells(agentrl_ids(), NOISES, DIFFICULTIES, ["train"], AGENTS), episodes, print)
    rec.save(path)
    print(f"{sum(len(r) for r in rec.cells.values())} episodes in {rec.play_s:.0f} s -> {path}")


def _replay(envs: dict[Cell, Any], recs: Recordings, on_step: Callable[[Cell, str, Call], Any],
            on_reset: Callable[[Cell, Call], Any], part: slice) -> None:
    """Replay `part` of each cell's recordings; `on_step(cell, kind, call)` and `on_reset(cell, call)`
    run each call."""
    for cell, episodes in recs.cells.items():
        env = envs[cell]
        for rec in episodes[part]:
            obs, _ = on_reset(cell, lambda: env.reset(seed=rec.seed))
            digest = Digest(obs)
            for action, kind in zip(rec.actions, rec.kinds):
                obs, reward, term, trunc, info = on_step(cell, kind, lambda: env.step(action))
                digest.step(obs, reward, term, trunc)
                if step_kind(info) != kind:
                    raise AssertionError(f"{cell.label} seed {rec.seed}: step kind differs from the play")
            if digest.hexdigest() != rec.digest:
                raise AssertionError(f"{cell.label} seed {rec.seed}: the replay differs from the play")


def _plain(*args: Any) -> Any:
    return args[-1]()


def profile(path: Path, kind: str, top: int, sort: str) -> None:
    """cProfile the replayed calls of `kind` and print the `top` functions."""
    recs = Recordings.load(path)
    envs = {cell: make_env(cell) for cell in recs.cells}
    _replay(envs, recs, _plain, _plain, WARM)
    prof = cProfile.Profile()

    def profiled(call: Call) -> Any:
        prof.enable()
        try:
            return call()
        finally:
            prof.disable()

    def on_step(cell: Cell, k: str, call: Call) -> Any:
        return profiled(call) if kind in (k, "all") else call()

    def on_reset(cell: Cell, call: Call) -> Any:
        return profiled(call) if kind == "reset" else call()

    _replay(envs, recs, on_step, on_reset, TIMED)
    pstats.Stats(prof).strip_dirs().sort_stats(sort).print_stats(top)


def _q(xs: list[int], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] / 1000


def time_replay(path: Path) -> None:
    """Time every replayed step and reset; print medians, p90 and floor ratios per id and noise
    preset (``part: all``), and of each kind of step alone (``part: message``, ``tool`` or
    ``error``, resets aside) and of the hard tier's message steps (``part: hard message``)."""
    recs = Recordings.load(path)
    envs = {cell: make_env(cell) for cell in recs.cells}
    _replay(envs, recs, _plain, _plain, WARM)
    floor_block = floor.step_block()
    steps: dict[tuple[str, str, str], list[int]] = {}
    resets: dict[tuple[str, str, str], list[int]] = {}
    floor_steps: list[int] = []
    ns = time.perf_counter_ns

    def on_step(cell: Cell, k: str, call: Call) -> Any:
        t0 = ns()
        out = call()
        t = ns() - t0
        steps.setdefault((cell.env_id, cell.noise, "all"), []).append(t)
        steps.setdefault((cell.env_id, cell.noise, k), []).append(t)
        if k == "message":
            if cell.difficulty == "hard":
                steps.setdefault((cell.env_id, cell.noise, "hard message"), []).append(t)
        return out

    def on_reset(cell: Cell, call: Call) -> Any:
        t0 = ns()
        out = call()
        resets.setdefault((cell.env_id, cell.noise, "all"), []).append(ns() - t0)
        return out

    for cell, episodes in recs.cells.items():  # the floor between cells: noise falls on both
        floor_steps += floor_block(200)
        _replay(envs, Recordings({cell: episodes}), on_step, on_reset, TIMED)
    f = statistics.median(floor_steps) / 1000
    for key in sorted(steps):
        s = steps[key]
        row = {"id": key[0], "noise": key[1], "part": key[2], "floor_us": round(f, 3), "steps": len(s),
               "step_med": round(_q(s, 0.5), 2), "step_p90": round(_q(s, 0.9), 2),
               "step_x": round(_q(s, 0.5) / f, 1), "p90_x": round(_q(s, 0.9) / f, 1)}
        if key in resets:
            r = resets[key]
            row.update(reset_med=round(_q(r, 0.5), 1), reset_x=round(_q(r, 0.5) / f, 1))
        print(json.dumps(row))


def replay(path: Path, resets_only: bool) -> None:
    """Replay the recordings untimed after the warm-up (only their resets with `resets_only`)."""
    recs = Recordings.load(path)
    envs = {cell: make_env(cell) for cell in recs.cells}
    _replay(envs, recs, _plain, _plain, WARM)
    if not resets_only:
        _replay(envs, recs, _plain, _plain, TIMED)
    else:
        for cell, episodes in recs.cells.items():
            for rec in episodes[TIMED]:
                envs[cell].reset(seed=rec.seed)
    timed = [rec for episodes in recs.cells.values() for rec in episodes[TIMED]]
    print(f"{sum(len(rec.actions) for rec in timed)} steps, {len(timed)} resets")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("record", "profile", "time", "replay"))
    ap.add_argument("file", type=Path)
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--kind", default="message", choices=("message", "tool", "error", "all", "reset"))
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--sort", default="tottime")
    ap.add_argument("--resets-only", action="store_true")
    a = ap.parse_args()
    if a.what == "record":
        record(a.file, a.episodes)
    elif a.what == "profile":
        profile(a.file, a.kind, a.top, a.sort)
    elif a.what == "replay":
        replay(a.file, a.resets_only)
    else:
        time_replay(a.file)


if __name__ == "__main__":
    main()
