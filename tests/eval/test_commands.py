"""`agentgym export` and `agentgym view` from the command line: files where they are said to go, and
one line without a traceback for each bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from played import played, write_run

from agentgym.cli import main
from agentgym.eval.export import EPISODE_COLUMNS


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "heuristic", played("AgentRL/Dialog-v0", 3))


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err.strip()


def test_export_writes_each_format_where_it_says(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(run), "--to", "csv"]) == 0
    assert capsys.readouterr().out.strip() == f"wrote 3 episodes to {run / 'episodes.csv'}"
    assert main(["export", str(run / "records.jsonl"), "--to", "csv"]) == 0  # the file of a run folder: the same
    assert capsys.readouterr().out.strip() == f"wrote 3 episodes to {run / 'episodes.csv'}"
    assert list(pd.read_csv(run / "episodes.csv").columns) == [c.name for c in EPISODE_COLUMNS]
    pytest.importorskip("pyarrow")
    assert main(["export", str(run)]) == 0 and len(pd.read_parquet(run / "episodes.parquet")) == 3
    assert main(["export", str(run), "--to", "datasets", "--messages"]) == 0
    out = capsys.readouterr().out
    assert f"to {run / 'dataset'}/" in out and "episodes (3 rows)" in out
    steps = pd.read_parquet(run / "dataset" / "steps.parquet")
    assert steps["messages"].notna().all() and json.loads(steps["messages"].iloc[0])[0]["role"] in ("user", "tool")
    other = write_run(tmp_path / "other", played("AgentRL/ToolUse-v0", 2))
    both = tmp_path / "both.parquet"
    assert main(["export", str(run), str(other), "--out", str(both)]) == 0
    assert sorted(pd.read_parquet(both)["run"].unique()) == ["heuristic", "other"]


def test_export_refuses_what_it_cannot_do_in_one_line(run: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(run), str(run)]) == 2
    assert _error_line(capsys) == "agentgym: error: exporting several runs needs --out"
    assert main(["export", str(run), "--messages"]) == 2
    assert "needs --to datasets" in _error_line(capsys)
    assert main(["export", str(tmp_path / "gone")]) == 2
    assert _error_line(capsys).startswith(f"agentgym: error: no run at {tmp_path / 'gone'}")
    assert main(["export", str(run), "--to", "csv", "--out", str(tmp_path)]) == 2  # a folder where a file goes
    assert _error_line(capsys).startswith(f"agentgym: error: cannot write {tmp_path}")


def test_view_lists_and_shows_episodes(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{run}: 3 episodes") and "\x1b[" not in out  # captured output is no terminal
    assert main(["view", str(run), "--episode", "1"]) == 0
    out = capsys.readouterr().out
    key = played("AgentRL/Dialog-v0", 3)[1]["key"]
    assert out.splitlines()[0] == key and "-- turn 1 " in out and "user: " in out
    assert main(["view", str(run), "--episode", key, "--no-replay", "--json"]) == 0
    events = json.loads(capsys.readouterr().out)
    assert events[-1]["kind"] == "end" and not any(e["kind"] == "tool_result" for e in events)
    assert main(["view", str(run), "--json"]) == 0
    assert [r["key"] for r in json.loads(capsys.readouterr().out)] == [r["key"] for r in played("AgentRL/Dialog-v0", 3)]


def test_bad_runs_and_keys_are_one_line_each(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path / "missing")]) == 2
    assert _error_line(capsys).startswith("agentgym: error: no run at ")
    assert main(["view", str(run), "--episode", "nope"]) == 2
    assert _error_line(capsys) == (f"agentgym: error: no episode 'nope' in {run} (3 episodes; "
                                   f"`agentgym view {run}` lists them)")
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"schema_version": 1}) + "\n")
    assert main(["export", str(old)]) == 2
    assert "a schema-1 record (written by an older agentgym)" in _error_line(capsys)


def test_a_torn_last_line_is_a_warning_and_the_rest_is_read(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = run / "records.jsonl"
    f.write_bytes(f.read_bytes() + b'{"schema_version":2,"key":"half')
    assert main(["export", str(run), "--to", "csv"]) == 0
    captured = capsys.readouterr()
    assert "wrote 3 episodes" in captured.out
    assert captured.err.count("\n") == 1 and "the last line is torn (a run killed mid-write)" in captured.err


def test_the_command_itself_prints_no_traceback_and_survives_a_closed_pipe(run: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    bad = subprocess.run([sys.executable, "-m", "agentgym.cli", "view", str(run / "nope")], capture_output=True,
                         text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1
    # A reader that is gone before the view is written (`| head -1` that has its line): it ends quietly.
    viewer = subprocess.Popen([sys.executable, "-m", "agentgym.cli", "view", str(run), "--episode", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert viewer.stdout is not None
    viewer.stdout.close()
    _, err = viewer.communicate(timeout=120)
    assert viewer.returncode == 0 and b"Traceback" not in err
