"""The harness's overhead over the bare loop, in a fresh process per id (and noise preset).

Both loops play the same episodes with the same agent: the bare loop is
`agentgym.eval.episode.run_episode` on `gym.make` envs; the harness is
`agentgym.eval.runner.run_jobs` with one worker (step summaries, one flushed JSON record per
episode appended to a file). Rounds alternate the two (which goes first alternates too), each
after a ``gc.collect()``; the overhead is the median of the rounds' ratios, on CPU time (the
target's: other jobs on a shared machine move it less than the wall clock) and on wall time.

- *replayed real episodes* (the target's): the recorded episodes of every agent, difficulty and
  split of one id and noise preset, played by `perf.replay_agent.ReplayAgent`, whose own cost is
  nil, so the overhead is over the env's work alone;
- *heuristic, live* (as before): the heuristic agent playing seeds 0..N-1 with no options, its own
  time inside both loops.
"""

from __future__ import annotations

import gc
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from perf import child, targets
from perf.tables import md_table, verdict

Loop = Callable[[], "int | None"]


def _alternate(bare: Loop, harness: Loop, rounds: int) -> dict[str, Any]:
    """Run both loops `rounds` times after a warm-up round; the bare loop returns the steps it played."""
    out: dict[str, Any] = {"bare": [], "harness": [], "steps": 0}
    for r in range(-1, rounds):  # round -1: warm-up (caches, lazy imports, provenance's git call)
        pair = [("bare", bare), ("harness", harness)]
        for name, fn in pair if r % 2 == 0 else pair[::-1]:
            gc.collect()  # each loop starts from the same heap, so neither pays the other's garbage
            t0, c0 = time.perf_counter(), time.process_time()
            steps = fn()
            got = (time.perf_counter() - t0, time.process_time() - c0)
            if r >= 0:
                out[name].append(got)
            if steps is not None:
                out["steps"] = steps
    return out


def child_live(env_id: str, rounds: int, episodes: int) -> dict[str, Any]:
    """(In a fresh process.) The heuristic, live, on seeds 0..episodes-1 of `env_id`."""
    import gymnasium as gym

    import agentgym  # noqa: F401
    from agentgym.eval.episode import run_episode
    from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

    env, agent = gym.make(env_id), AgentSpec("heuristic").build()
    tmp = Path(tempfile.mkdtemp(prefix="agentgym-perf-"))

    def bare() -> int:
        return sum(len(run_episode(env, agent, s).actions) for s in range(episodes))

    def harness() -> None:
        summary = run_jobs([EpisodeJob(env_id, seed=s) for s in range(episodes)], AgentSpec("heuristic"),
                           tmp / "records.jsonl", workers=1, progress=False)
        assert summary.ran == episodes and summary.agent_errors == 0, summary
        (tmp / "records.jsonl").unlink()
        return None

    try:
        return _alternate(bare, harness, rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def child_replayed(recordings: str, env_id: str, noise: str, rounds: int, episodes: int) -> dict[str, Any]:
    """(In a fresh process.) The first `episodes` recorded episodes of `env_id` and `noise` (every
    cell's in turn), replayed by both loops, one `run_jobs` per agent (a run's keys must differ)."""
    import gymnasium as gym

    import agentgym  # noqa: F401
    from agentgym.eval.episode import run_episode
    from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs
    from perf.episodes import Recordings
    from perf.replay_agent import ReplayAgent, episode_key

    chosen = Recordings.load(Path(recordings)).of(env_id, noise)[:episodes]
    tmp = Path(tempfile.mkdtemp(prefix="agentgym-perf-"))
    by_agent: dict[str, list] = {}
    for cell, rec in chosen:
        by_agent.setdefault(cell.agent, []).append((cell, rec))
    plays = []
    for agent, eps in by_agent.items():
        path = tmp / f"{agent.replace(':', '_')}.json"
        path.write_text(json.dumps({episode_key(c.difficulty, c.split, r.seed): r.actions for c, r in eps}), "utf-8")
        jobs = [EpisodeJob(env_id, seed=r.seed, noise=None if noise == "off" else noise,
                           kwargs=(("difficulty", c.difficulty), ("split", c.split))) for c, r in eps]
        plays.append((eps, jobs, AgentSpec("perf.replay_agent:ReplayAgent", (("path", str(path)),)),
                      ReplayAgent(str(path))))
    envs = {(c.difficulty, c.split): gym.make(env_id, **c.make_kwargs()) for c, _r in chosen}

    def bare() -> int:
        steps = 0
        for eps, _jobs, _spec, agent in plays:
            for cell, rec in eps:
                n = len(run_episode(envs[(cell.difficulty, cell.split)], agent, rec.seed).actions)
                assert n == len(rec.actions), (cell, rec.seed, n)
                steps += n
        return steps

    def harness() -> None:
        for eps, jobs, spec, _agent in plays:
            summary = run_jobs(jobs, spec, tmp / "records.jsonl", workers=1, progress=False)
            if summary.ran != len(eps) or summary.agent_errors:
                raise RuntimeError(f"{env_id} noise={noise}: {summary.ran} of {len(eps)} episodes ran, "
                                   f"{summary.agent_errors} with an agent error: {_first_error(tmp / 'records.jsonl')}")
            (tmp / "records.jsonl").unlink()
        return None

    try:
        out = _alternate(bare, harness, rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out["episodes"] = len(chosen)
    return out


def _first_error(records: Path) -> str:
    """The first agent error in a records file, as ``key: Type: message`` (an episode that outlives
    its recording: the envs changed since it was recorded)."""
    for line in records.read_text("utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("agent_error"):
            return f"{rec['key']}: {rec['agent_error']['type']}: {rec['agent_error']['message']}"
    return "none recorded"


def _summary(label: str, res: dict[str, Any], episodes: int) -> dict[str, Any]:
    b, h = [x[0] for x in res["bare"]], [x[0] for x in res["harness"]]
    bc, hc = [x[1] for x in res["bare"]], [x[1] for x in res["harness"]]
    mb, mh = statistics.median(b), statistics.median(h)
    paired = [hh / bb - 1 for bb, hh in zip(b, h)]
    return {"label": label, "episodes": episodes, "steps": res["steps"], "bare_s": mb, "harness_s": mh,
            "bare_range": (min(b), max(b)), "harness_range": (min(h), max(h)),
            "overhead": statistics.median(paired), "paired_range": (min(paired), max(paired)),
            "median_ratio": mh / mb - 1, "cpu_overhead": statistics.median(hh / bb - 1 for bb, hh in zip(bc, hc)),
            "per_step_us": (mh - mb) / res["steps"] * 1e6}


def run(ids: list[str], rounds: int, episodes: int, log: Callable[..., None]) -> list[dict[str, Any]]:
    """The live heuristic's overhead per id."""
    out = []
    for env_id in ids:
        t0 = time.perf_counter()
        res = child.call("perf.harness:child_live", env_id=env_id, rounds=rounds, episodes=episodes)
        out.append(_summary(env_id, res, episodes))
        log(f"[harness] {env_id} live heuristic: CPU {out[-1]['cpu_overhead']:+.1%}, wall {out[-1]['overhead']:+.1%} "
            f"({time.perf_counter() - t0:.0f} s)")
    return out


def run_replayed(recordings: Path, pairs: list[tuple[str, str]], rounds: int, episodes: int,
                 log: Callable[..., None]) -> list[dict[str, Any]]:
    """The overhead on replayed real episodes per (id, noise)."""
    out = []
    for env_id, noise in pairs:
        t0 = time.perf_counter()
        res = child.call("perf.harness:child_replayed", recordings=str(recordings), env_id=env_id, noise=noise,
                         rounds=rounds, episodes=episodes)
        out.append(_summary(f"{env_id} noise={noise}", res, res["episodes"]))
        log(f"[harness] {env_id} noise={noise} replayed: CPU {out[-1]['cpu_overhead']:+.1%}, wall "
            f"{out[-1]['overhead']:+.1%} ({time.perf_counter() - t0:.0f} s)")
    return out


# ------------------------------------------------------------------------------ results
def _verdict(h: dict[str, Any]) -> str:
    return verdict(h["cpu_overhead"] * 100, targets.HARNESS_TARGET * 100, "points", lambda v: f"{v:.1f}")


def target_rows(replayed: list[dict[str, Any]] | None, live: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The harness lines of the targets table: replayed real episodes (the target), live heuristic."""
    out = []
    for rows, what in ((replayed, "replayed real episodes"), (live, "heuristic live, as before")):
        if rows:
            worst = max(rows, key=lambda h: h["cpu_overhead"])
            ok = sum(h["cpu_overhead"] <= targets.HARNESS_TARGET for h in rows)
            out.append(targets.row(
                f"Harness overhead <= {targets.HARNESS_TARGET:.0%} CPU over the bare loop, {what}",
                ", ".join(f"{h['label']} {h['cpu_overhead']:+.1%} (wall {h['overhead']:+.1%})" for h in rows)
                + f"; {ok}/{len(rows)} within", _verdict(worst)))
    return out


def _table(rows: list[dict[str, Any]]) -> list[str]:
    return md_table([{
        "subject": h["label"], "episodes": f"{h['episodes']:,}", "steps": f"{h['steps']:,}",
        "bare s (min-max)": f"{h['bare_s']:.3f} ({h['bare_range'][0]:.3f}-{h['bare_range'][1]:.3f})",
        "harness s (min-max)": f"{h['harness_s']:.3f} ({h['harness_range'][0]:.3f}-{h['harness_range'][1]:.3f})",
        "wall (min to max)": f"{h['overhead']:+.1%} ({h['paired_range'][0]:+.1%} to {h['paired_range'][1]:+.1%})",
        "CPU": f"{h['cpu_overhead']:+.1%}", "medians": f"{h['median_ratio']:+.1%}",
        "cost per step": f"{h['per_step_us']:.1f} us", "target": f"<= {targets.HARNESS_TARGET:.0%}",
        "result": _verdict(h)} for h in rows])


def section(replayed: list[dict[str, Any]] | None, live: list[dict[str, Any]] | None, rounds: int) -> list[str]:
    """The harness tables."""
    o = ["## Harness overhead", "",
         "The bare loop (`run_episode` on `gym.make` envs) against `run_jobs(..., workers=1)` (step summaries, one "
         f"JSON record per episode appended to a file) on the same episodes, in a fresh process each; {rounds} rounds "
         "after a warm-up, alternating which goes first, a `gc.collect()` before each loop. *CPU* (the target's): the "
         "median of the rounds' harness/bare CPU-time ratios, minus 1 (each loop lasts about a second, so on a shared "
         "machine other jobs' preemption swings the wall-clock ratio by tens of points, while CPU time counts only "
         "this process's work); *wall*: the same on wall-clock time; *medians*: median harness time over median "
         "bare time, minus 1; *cost per step*: the difference of the wall-clock medians over the steps played.", ""]
    if replayed:
        o += ["**Replayed real episodes** (the target's figure): each id and noise preset's recorded episodes, every "
              "agent, difficulty and split in turn, replayed by an agent that returns the recorded actions "
              "(`perf/replay_agent.py`), so the bare loop is nearly all env: the overhead is over the env's work.", ""]
        o += _table(replayed) + [""]
    if live:
        o += ["**Heuristic, live** (as measured before): the heuristic agent on seeds 0..N-1, its own time inside "
              "both loops.", ""]
        o += _table(live) + [""]
    return o

