"""Running a suite for one agent into a run folder (records.jsonl + run.json)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from agentgym.bench.suites import Suite, get_suite
from agentgym.eval.jobs import AgentSpec
from agentgym.eval.runner import RunSummary, run_jobs

__all__ = ["run_suite", "RECORDS", "RUN_META"]

RECORDS = "records.jsonl"
RUN_META = "run.json"


def run_suite(suite: str | Suite, agent: AgentSpec, out_dir: str | Path, **run_options: Any) -> RunSummary:
    """Play every episode of `suite` with `agent` into `out_dir`, resuming what is there.

    Raises:
        ValueError: `out_dir` holds a run of another suite or agent (never mixed).
    """
    s = get_suite(suite) if isinstance(suite, str) else suite
    out = Path(out_dir)
    meta = {"suite": s.id, "agent": agent.name, "agent_kwargs": dict(agent.kwargs), "episodes": len(s)}
    meta_path = out / RUN_META
    if meta_path.exists():
        old = json.loads(meta_path.read_text("utf-8"))
        if (old.get("suite"), old.get("agent"), old.get("agent_kwargs")) != (s.id, agent.name, dict(agent.kwargs)):
            raise ValueError(f"{out} holds a run of {old.get('agent')} on {old.get('suite')}; "
                             "use another --out to run a different suite or agent")
        return run_jobs(s.jobs(), agent, out / RECORDS, **run_options)
    created = [d for d in (out, *out.parents) if not d.exists()]
    out.mkdir(parents=True, exist_ok=True)
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", "utf-8")
    try:
        return run_jobs(s.jobs(), agent, out / RECORDS, **run_options)
    except BaseException:
        # A run that ends before its first record (an agent that cannot be built, a server that
        # is not there, Ctrl-C) leaves no run folder behind: only what this call created goes.
        if not (out / RECORDS).exists():
            meta_path.unlink(missing_ok=True)
            for folder in created:  # deepest first; a folder something else wrote into stays
                with contextlib.suppress(OSError):
                    folder.rmdir()
        raise
