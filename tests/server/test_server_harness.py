"""The harness steps envs on a server (`--remote URL`) with the same episodes as in process."""

from __future__ import annotations

from pathlib import Path

from server_support import running

from agentgym.eval.records import read_records
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs


def _episodes(path: Path) -> dict[str, tuple]:
    return {r["key"]: (r["actions"], r["steps"], r["metrics"], r["trajectory_sha256"]) for r in read_records(path)}


def test_remote_runs_equal_in_process_runs(tmp_path: Path) -> None:
    jobs = [EpisodeJob(env_id, seed=s, noise=noise) for env_id in ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0")
            for s in range(4) for noise in (None, "medium")]
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    run_jobs(jobs, AgentSpec("heuristic"), local, workers=1, progress=False)
    with running() as server:
        run_jobs(jobs, AgentSpec("heuristic"), remote, workers=1, progress=False, remote=server.url)
    assert _episodes(local) == _episodes(remote)
    assert len(_episodes(remote)) == len(jobs)
