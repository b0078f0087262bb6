"""`benchmarks/ppo/bench_families.py`'s bookkeeping, on made-up figures (no training): runs
measured apart merge into one table, and settings run on several seeds get their median."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ppo_scripts import ppo_benchmark


@pytest.fixture(scope="module")
def bench() -> Iterator[Any]:
    yield from ppo_benchmark("bench_families")


def _family(end: float, reached_s: float | None) -> dict[str, Any]:
    calib = {"on": {"violations_per_1000": 1.0, "violations_ci": [0.5, 1.5], "harm_per_1000": 2.0, "success": end},
             "off": {"violations_per_1000": 4.0, "violations_ci": [3.0, 5.0], "harm_per_1000": 6.0, "success": end},
             "violation_cut": 0.75, "violation_cut_ci": [0.5, 0.9], "success_diff": 0.0,
             "success_diff_ci": [-0.01, 0.01]}
    return {"env": "AgentRL/CrossTask-v0", "trained_on": ["AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"],
            "heuristic_train": {"success": 0.4, "success_ci": [0.35, 0.45]},
            "heuristic_test": {"success": 0.5, "success_ci": [0.45, 0.55]}, "time_to_heuristic_s": reached_s,
            "train_s": 600.0, "steps": 1000, "sps": 300.0, "actors": 1,
            "load": {"min": 1.0, "median": 1.5, "max": 2.0}, "curve": [],
            "ppo_train": {"success": end, "success_ci": [end - 0.05, end + 0.05]},
            "ppo_test": {"success": 0.1, "success_ci": [0.05, 0.15]},
            "calibration": {"train": calib, "test": calib}}


def _run(tmp_path: Path, name: str, families: dict[str, Any], eval_seed: int = 5_000_000) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"date": f"2026-12-03 1{len(name)}:00 UTC", "cpus": 2, "torch": "x", "minutes": 10.0,
                                "eval_episodes": 200, "eval_seed": eval_seed, "families": families}))
    return str(path)


def test_runs_measured_apart_merge_and_seeds_get_their_median(bench: Any, tmp_path: Path) -> None:
    paths = [_run(tmp_path, "a", {"crosstask, `--actors 1`": _family(0.30, None)}),
             _run(tmp_path, "bb", {"crosstask, `--actors 1`, `--seed 2`": _family(0.45, 400.0)}),
             _run(tmp_path, "ccc", {"crosstask, `--actors 1`, `--seed 3`": _family(0.50, 300.0),
                                    "dialog": _family(1.0, 5.0)})]
    res = bench.merge(paths)
    assert len(res["families"]) == 4 and res["date"].startswith("2026-12-03 11:00")
    text = bench.markdown(res)
    row = next(line for line in text.splitlines() if line.startswith("| crosstask, `--actors 1` | 1, 2, 3"))
    assert "| 45.0% (30.0%, 45.0%, 50.0%) | 2 of 3 | -, 400 s, 300 s |" in row
    assert not any(line.startswith("| dialog | 1") for line in text.splitlines())  # one seed: no median row


def test_runs_on_other_evaluation_seeds_are_not_merged(bench: Any, tmp_path: Path) -> None:
    paths = [_run(tmp_path, "a", {"dialog": _family(1.0, 5.0)}),
             _run(tmp_path, "b", {"dialog, `--seed 2`": _family(1.0, 5.0)}, eval_seed=7)]
    with pytest.raises(SystemExit, match="different seeds"):
        bench.merge(paths)
