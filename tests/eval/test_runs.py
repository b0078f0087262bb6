"""Tests for agentgym.eval.runs: what opening a run gives, and one clear line for each bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from played import played, write_run

from agentgym.eval.records import SCHEMA_VERSION
from agentgym.eval.runs import RunError, open_run, records_path, run_name


def test_a_run_folder_and_a_records_file_open_alike(tmp_path: Path) -> None:
    records = played("AgentRL/Dialog-v0", 2)
    folder = write_run(tmp_path / "heuristic", records)
    run = open_run(folder)
    assert run.name == "heuristic" and run.path == folder / "records.jsonl" and not run.torn_tail
    assert [r["key"] for r in run.records] == [r["key"] for r in records]
    other = tmp_path / "mine.jsonl"
    other.write_bytes(run.path.read_bytes())
    assert open_run(other).name == "mine" and open_run(other).records == run.records
    assert run_name(Path("records.jsonl")) == "records"


def test_missing_paths_and_folders_that_are_no_run_say_so_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"^no run at .*nowhere: give a run folder") as missing:
        open_run(tmp_path / "nowhere")
    with pytest.raises(RunError, match="is not a run folder: it holds no records.jsonl") as empty:
        records_path(tmp_path)
    for exc in (missing, empty):
        assert "\n" not in str(exc.value) and isinstance(exc.value, ValueError)


def test_a_schema_1_file_is_refused_with_the_metrics_message(tmp_path: Path) -> None:
    f = tmp_path / "old.jsonl"
    f.write_text(json.dumps({"schema_version": 1, "key": "x"}) + "\n")
    with pytest.raises(ValueError) as exc:
        open_run(f)
    message = str(exc.value)
    assert message.startswith(f"{f}:1: a schema-1 record (written by an older agentgym)")
    assert f"schema {SCHEMA_VERSION}" in message and "re-run the episodes" in message and "\n" not in message


def test_a_torn_last_line_is_left_out_and_reported(tmp_path: Path) -> None:
    folder = write_run(tmp_path / "run", played("AgentRL/Dialog-v0", 2))
    f = folder / "records.jsonl"
    whole = f.read_bytes()
    f.write_bytes(whole + whole.splitlines(keepends=True)[0][:100])  # a third record cut mid-write
    run = open_run(folder)
    assert run.torn_tail and len(run.records) == 2
    f.write_bytes(b"")
    assert open_run(folder).records == [] and not open_run(folder).torn_tail


def test_a_malformed_line_before_the_last_names_its_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text("{not json\n" + json.dumps({"schema_version": SCHEMA_VERSION}) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not a valid record line"):
        open_run(f)
