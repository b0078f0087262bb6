"""The evaluation runner: play an agent over a list of episode jobs and write one record each.

`run_jobs` is what ``agentgym eval`` and ``agentgym bench`` call: it skips the jobs whose record
is already in the output file (resume), hands the others to a backend (`agentgym.eval.backends`:
``process``, the default, a local process pool, or in this process with ``workers=1``;
``async``, bounded asyncio concurrency for agents that wait on I/O; ``ray``) and appends each
record as its episode finishes.

Resume: records already in the output file are matched by episode key and not run again; a torn
last line is cut and its episode re-run. Agent faults never abort a run: an agent that raises,
hangs past the per-episode timeout, or returns something other than a string (or an OpenAI
assistant-message dict) is recorded as an agent error for that episode.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from agentgym.eval import backends
from agentgym.eval.deadline import AgentTimeout
from agentgym.eval.episode import play_job
from agentgym.eval.jobs import AgentSpec, EpisodeJob
from agentgym.eval.records import RecordWriter, check_records_file, read_records

# EpisodeJob, AgentSpec, play_job and AgentTimeout live in jobs, episode and deadline; they stay
# importable from here, where the runner's users have always found them.
__all__ = ["EpisodeJob", "AgentSpec", "run_jobs", "play_job", "AgentTimeout", "RunSummary"]


@dataclass
class RunSummary:
    """What a run did: episodes run now, skipped (already recorded), and agent errors."""

    path: Path
    ran: int = 0
    skipped: int = 0
    agent_errors: int = 0
    successes: int = 0
    wall_s: float = 0.0
    keys: list[str] = field(default_factory=list)


def _pending(jobs: Iterable[EpisodeJob], out: Path) -> tuple[list[EpisodeJob], int]:
    done = {r["key"] for r in read_records(out)}
    todo, seen = [], set()
    for j in jobs:
        if j.key in done or j.key in seen:
            continue
        seen.add(j.key)
        todo.append(j)
    return todo, len(done)


def run_jobs(
    jobs: Iterable[EpisodeJob],
    agent: AgentSpec,
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    backend: str = "process",
    timeout_s: float | None = 300.0,
    concurrency: int = 8,
    ray_address: str | None = None,
    progress: bool = True,
    chunk: int = 8,
    remote: str | None = None,
) -> RunSummary:
    """Play every job not yet in `out` and append its record there.

    Args:
        jobs: the episodes to play (duplicates by key are played once).
        agent: how to build the agent.
        out: the records file (JSONL); an existing one is resumed.
        workers: processes for the ``process`` backend (default: the number of cores).
        backend: ``process``, ``async`` or ``ray``.
        timeout_s: per-episode wall-clock limit for the agent (None: no limit).
        concurrency: concurrent episodes for the ``async`` backend.
        ray_address: the Ray cluster to join (None: start a local one).
        progress: show a progress bar on stderr.
        chunk: episodes per task sent to a worker (amortises inter-process overhead).
        remote: an env server's URL (``agentgym serve``): step the envs there, not in process.

    Returns:
        A `RunSummary`.
    """
    from agentgym.eval.progress import Progress

    out_path = Path(out)
    check_records_file(out_path)  # before anything is read through a link or from another kind of file
    todo, already = _pending(jobs, out_path)
    summary = RunSummary(path=out_path, skipped=already)
    t0 = time.perf_counter()
    workers = workers or os.cpu_count() or 1
    with RecordWriter(out_path) as writer, Progress(total=len(todo), desc=f"{agent.name}", enabled=progress) as bar:

        def accept(records: list[dict[str, Any]]) -> None:
            for rec in records:
                writer.write(rec)
                summary.ran += 1
                summary.keys.append(rec["key"])
                summary.agent_errors += rec["agent_error"] is not None
                summary.successes += bool(rec["metrics"].get("success", False))
                bar.update(1, success=summary.successes / summary.ran)

        if backend == "process":
            backends.play_in_processes(todo, agent, timeout_s, accept, workers=workers, chunk=chunk, remote=remote)
        elif backend == "async":
            backends.play_concurrently(todo, agent, timeout_s, accept, concurrency=concurrency, remote=remote)
        elif backend == "ray":
            backends.play_on_ray(todo, agent, timeout_s, accept, address=ray_address, chunk=chunk, remote=remote)
        else:
            raise ValueError(f"unknown backend {backend!r}; use process, async or ray")
    summary.wall_s = time.perf_counter() - t0
    return summary
