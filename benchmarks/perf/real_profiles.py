"""Where real episodes spend their time: py-spy on the replayed episodes of each id and noise preset.

A fresh process replays the recorded episodes of one id and noise preset (every agent, difficulty
and split, in turn, as often as `seconds` of replayed calls take) under py-spy; each reset and
each step runs under a marker frame of its kind (`_timed_reset`, `_timed_message`, `_timed_tool`,
`_timed_error`), so the samples split by what the call was. The tables go to a file of their own
(linked from the results); the results keep the split by area.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from perf import spy
from perf.profiles import function_table
from perf.tables import md_table

#: Phases of a profile: a marker's name -> what the results call it.
PHASES = {"_timed_reset": "reset", "_timed_message": "message step", "_timed_tool": "tool step",
          "_timed_error": "error step"}


def _timed_reset(env: Any, seed: int) -> Any:
    return env.reset(seed=seed)


def _timed_message(env: Any, action: Any) -> Any:
    return env.step(action)


def _timed_tool(env: Any, action: Any) -> Any:
    return env.step(action)


def _timed_error(env: Any, action: Any) -> Any:
    return env.step(action)


_STEP_MARKERS = {"message": _timed_message, "tool": _timed_tool, "error": _timed_error}


def child(recordings: str, env_id: str, noise: str, seconds: float) -> dict[str, Any]:
    """(Under py-spy.) Replay `env_id`'s episodes with `noise` for about `seconds` of calls."""
    from perf.episodes import Recordings, make_env

    episodes = Recordings.load(Path(recordings)).of(env_id, noise)
    envs = {cell: make_env(cell) for cell, _r in episodes}
    for cell, rec in episodes[:len(envs) * 2]:  # warm-up, outside any marker
        envs[cell].reset(seed=rec.seed)
        for action in rec.actions:
            envs[cell].step(action)
    timed, calls, played = 0.0, 0, 0
    while timed < seconds:
        cell, rec = episodes[played % len(episodes)]
        env = envs[cell]
        t0 = time.perf_counter()
        _timed_reset(env, rec.seed)
        for action, kind in zip(rec.actions, rec.kinds):
            _STEP_MARKERS[kind](env, action)
        timed += time.perf_counter() - t0
        calls += 1 + len(rec.actions)
        played += 1
    return {"calls": calls, "episodes": played, "timed_s": timed}


def run(recordings: Path, pairs: list[tuple[str, str]], seconds: float, rate: int,
        log: Callable[..., None]) -> dict[str, Any]:
    """A profile per (id, noise): each phase's attribution, and all steps together."""
    out: dict[str, Any] = {"rate": rate, "seconds": seconds, "profiles": []}
    if not spy.available():
        log(f"[profile] {spy.PY_SPY} not found (pip install py-spy): real-episode profiles skipped")
        out["missing"] = True
        return out
    for env_id, noise in pairs:
        log(f"[profile] real episodes of {env_id} noise={noise}, {seconds:g} s of calls")
        stacks = spy.record("perf.real_profiles:child", rate, recordings=str(recordings), env_id=env_id, noise=noise,
                            seconds=seconds)
        phases = {name: spy.attribute(spy.inside(stacks, marker)) for marker, name in PHASES.items()}
        steps = [s for marker in PHASES if marker != "_timed_reset" for s in spy.inside(stacks, marker)]
        phases["every step"] = spy.attribute(steps)
        out["profiles"].append({"env_id": env_id, "noise": noise,
                                "phases": {k: v for k, v in phases.items() if v["samples"]}})
    return out


def _area_rows(prof: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    for p in prof["profiles"]:
        for phase, a in p["phases"].items():
            row = {"id": p["env_id"], "noise": p["noise"], "phase": phase, "samples": f"{a['samples']:,}"}
            shares = dict(a["areas"])
            row.update({area: f"{shares.get(area, 0):.0%}" for area, *_ in spy.AREAS})
            row["other"] = f"{shares.get('other', 0):.0%}"
            rows.append(row)
    return rows


def _legend() -> str:
    return ("Areas (`AREAS` in `benchmarks/perf/spy.py` lists their files and functions): "
            + "; ".join(f"*{name}*: {what}" for name, what, *_ in spy.AREAS)
            + ". *set-up* and *scoring* claim a sample when any frame of its stack is theirs, the others by its "
              "innermost frame that is theirs (time in C, such as `json` or `re`, counts in the Python that called "
              "it); *other*: none of them.")


def summary(prof: dict[str, Any], link: str) -> list[str]:
    """The results' part: the split by area, and the link to the full tables."""
    if prof.get("missing"):
        return ["### Where real episodes spend their time", "", "Skipped: `py-spy` is not installed here.", ""]
    return ["### Where real episodes spend their time", "",
            f"py-spy samples of the replayed episodes ({prof['rate']} samples/s, {prof['seconds']:g} s of calls per "
            "id and noise preset, each in a fresh process), split by call and by area. " + _legend()
            + f" Functions, modules and lines: [{link}]({link}).", "", *md_table(_area_rows(prof)), ""]


def document(prof: dict[str, Any], when: str) -> str:
    """The profiles file: per id and noise preset and per phase, areas, modules, functions and lines."""
    o = ["# Where real episodes spend their time (py-spy)", "",
         f"Generated by `benchmarks/peers/run.py` (`make perf`) on {when}, beside the results it is linked from; "
         "regenerate rather than edit. The recorded episodes of each id and noise preset (every agent, difficulty "
         f"and split) replayed in a fresh process for {prof.get('seconds', 0):g} s of calls under py-spy "
         f"({prof.get('rate', 0)} samples/s); each call runs under a marker of its kind, so samples split into "
         "resets, message steps, tool steps and rejected actions (*error step*). *By module*: share of the samples "
         "whose innermost Python frame is in that file (time in C counts in the Python line that called it); "
         "*self*: the same per function; *incl*: samples with the function anywhere on the stack.", ""]
    if prof.get("missing"):
        return "\n".join(o + ["Skipped: `py-spy` is not installed here.", ""])
    o += ["## By area", "", _legend(), "", *md_table(_area_rows(prof)), ""]
    for p in prof["profiles"]:
        o += [f"## {p['env_id']} noise={p['noise']}", ""]
        for phase, a in p["phases"].items():
            o += [f"### {phase} ({a['samples']:,} samples)", "",
                  "By module: " + ", ".join(f"`{m}` {s:.0%}" for m, s in a["by_module"][:8]) + ".", ""]
            o += function_table(a["functions"])
            o += ["", "Hottest lines: " + ", ".join(f"`{k}` {v:.0%}" for k, v in a["lines"][:6]) + ".", ""]
    return "\n".join(o)
