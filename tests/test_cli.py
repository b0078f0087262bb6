"""`agentgym.cli`: ``key=value`` options read their values as strict JSON; where eval and report write."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentgym.cli import _parse_kv


@pytest.mark.parametrize(
    ("pair", "value"),
    [("n=3", 3), ("t=0.7", 0.7), ("stop=[\"a\", \"b\"]", ["a", "b"]), ("on=true", True), ("x=null", None),
     ("model=Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B"), ("s=\"quoted\"", "quoted"), ("empty=", "")],
)
def test_values_are_json_when_they_can_be(pair: str, value: object) -> None:
    assert _parse_kv([pair], "--agent-arg") == {pair.partition("=")[0]: value}


@pytest.mark.parametrize(
    "raw",
    ["NaN", "Infinity", "-Infinity", "1e999", "[" * 100_000, "9" * 5000, "1" + "0" * 400, '{"a": 1, "a": 2}'],
    ids=["NaN", "inf", "-inf", "1e999", "100k deep", "5000 digits", "past a double", "duplicate key"],
)
def test_values_that_are_not_strict_json_stay_text_and_never_crash(raw: str) -> None:
    assert _parse_kv([f"k={raw}"], "--agent-arg") == {"k": raw}


def test_a_pair_without_a_key_is_an_error_that_does_not_echo_a_huge_argument() -> None:
    with pytest.raises(ValueError, match="must look like key=value") as info:
        _parse_kv(["x" * 2**20], "--agent-arg")
    assert len(str(info.value)) < 200


# ---------------------------------------------------------------- eval's default records folder
def test_eval_keeps_runs_of_other_settings_apart() -> None:
    from agentgym.cli import eval_out_path
    from agentgym.eval.runner import AgentSpec

    heuristic = AgentSpec("heuristic")
    base = eval_out_path("AgentRL/Dialog-v0", heuristic, None, {})
    assert base.as_posix() == "runs/eval/AgentRL_Dialog-v0-heuristic-noise_none/records.jsonl"
    others = [
        eval_out_path("AgentRL/Dialog-v0", heuristic, "medium", {}),
        eval_out_path("AgentRL/Dialog-v0", heuristic, "tool_failure=0.2,ambiguity=0.5", {}),
        eval_out_path("AgentRL/Dialog-v0", heuristic, "tool_failure=0.3,ambiguity=0.5", {}),
        eval_out_path("AgentRL/Dialog-v0", heuristic, None, {"difficulty": "easy"}),
        eval_out_path("AgentRL/Dialog-v0", heuristic, None, {"split": "test"}),
        eval_out_path("AgentRL/Dialog-v0", heuristic, None, {"domain": "cafes"}),
        eval_out_path("AgentRL/Dialog-v0", AgentSpec("oracle"), None, {}),
        eval_out_path("AgentRL/Dialog-v0", AgentSpec("heuristic", (("retries", 0),)), None, {}),
        eval_out_path("AgentRL/Dialog-v0", AgentSpec("heuristic", (("retries", 1),)), None, {}),
        eval_out_path("AgentRL/ToolUse-v0", heuristic, None, {}),
        eval_out_path("AgentRL/Dialog-v0", AgentSpec("my_pkg.agents:Mine"), None, {}),
        eval_out_path("AgentRL/Dialog-v0", heuristic, "tool_failure=0.1," + "typos=0.1," * 300 + "corruption=0.1", {}),
        eval_out_path("AgentRL/Dialog-v0", heuristic, "tool_failure=0.1," + "typos=0.1," * 300 + "corruption=0.2", {}),
    ]
    assert len({base, *others}) == len(others) + 1
    for path in others:
        assert len(path.parent.name) <= 200 and "/" not in path.parent.name and ":" not in path.parent.name


def test_report_writes_beside_what_it_reads() -> None:
    from agentgym.cli import report_out_path

    assert report_out_path([Path("runs/eval/x.jsonl")]) == Path("runs/eval/x-report")
    assert report_out_path([Path("runs/eval/run/records.jsonl")]) == Path("runs/eval/run/report")
    assert report_out_path([Path("a"), Path("b")]) == Path("runs/report")


def test_a_second_eval_with_other_noise_starts_its_own_run(tmp_path: Path) -> None:
    def agentgym_eval(*extra: str) -> str:
        done = subprocess.run([sys.executable, "-m", "agentgym.cli", "eval", "AgentRL/Dialog-v0", "--episodes", "2",
                               "--workers", "1", *extra], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "2 run now, 0 already in" in agentgym_eval()
    assert "2 run now, 0 already in" in agentgym_eval("--noise", "medium")  # not resumed from the first
    assert "0 run now, 2 already in" in agentgym_eval("--noise", "medium")  # the same settings resume
    folders = sorted(p.name for p in (tmp_path / "runs" / "eval").iterdir())
    assert folders == ["AgentRL_Dialog-v0-heuristic-noise_medium", "AgentRL_Dialog-v0-heuristic-noise_none"]
    for folder in folders:
        lines = (tmp_path / "runs" / "eval" / folder / "records.jsonl").read_text().splitlines()
        assert len(lines) == 2
