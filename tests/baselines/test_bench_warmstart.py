"""`benchmarks/ppo/bench_warmstart.py`'s bookkeeping, on made-up records (no training): runs are
resumable, misses count as past the budget, and the warm/cold ratio pairs runs by seed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ppo_scripts import ppo_benchmark


@pytest.fixture(scope="module")
def bench() -> Iterator[Any]:
    yield from ppo_benchmark("bench_warmstart")


def test_a_recorded_run_is_not_run_again(bench: Any, tmp_path: Path) -> None:
    calls = []
    make = lambda: calls.append(1) or {"x": len(calls)}  # noqa: E731
    assert bench._record(tmp_path / "a" / "r.json", make) == {"x": 1}
    assert bench._record(tmp_path / "a" / "r.json", make) == {"x": 1} and len(calls) == 1


def test_medians_count_a_miss_as_past_the_budget(bench: Any) -> None:
    assert bench._median([3.0, 1.0, 2.0]) == (2.0, 1.0, 3.0, 3)
    assert bench._median([1.0, None, 5.0]) == (5.0, 1.0, 5.0, 2)  # the miss sorts last
    assert bench._median([1.0, None, None]) == (None, 1.0, 1.0, 1)
    assert bench._median([None, None]) == (None, None, None, 0)


def _run(kind: str, seed: int, steps: int | None, zero: float) -> dict[str, Any]:
    curve = [{"step": 0, "train_s": 0.0, "success": zero}, {"step": 2048, "train_s": 9.0, "success": 0.9}]
    return {"family": "dialog", "seed": seed, "kind": kind, "target": 0.8, "curve": curve, "zero_shot": zero,
            "final": 0.9, "steps_to_target": steps, "seconds_to_target": None if steps is None else steps / 200,
            "steps": 4096, "load": {"median": 1.0}}


def test_summary_pairs_warm_and_cold_by_seed_and_writes_its_section(bench: Any, tmp_path: Path) -> None:
    folder = tmp_path / "dialog"
    folder.mkdir()
    heuristic = {"success": 0.8, "success_ci": [0.7, 0.9], "episodes": 50}
    (folder / "target.json").write_text(json.dumps({"heuristic": heuristic, "success": 0.8, "rule": "heuristic"}))
    runs = [_run("warm", 1, 0, 0.85), _run("warm", 2, 1024, 0.5), _run("warm", 3, None, 0.4),
            _run("cold", 1, 2048, 0.0), _run("cold", 2, 4096, 0.0), _run("cold", 3, 2048, 0.0)]
    for r in runs:
        (folder / f"{r['kind']}-s{r['seed']}.json").write_text(json.dumps(r))
    summary = bench.summarise(tmp_path, ["dialog", "tooluse"])
    assert list(summary) == ["dialog"]
    fam = summary["dialog"]
    assert fam["warm"]["steps"] == (1024, 0, 1024, 2) and fam["cold"]["steps"] == (2048, 2048, 4096, 3)
    assert fam["ratio"]["per_seed"] == [0.0, 0.25, None]  # seed 1 zero-shot; seed 3's warm run missed
    assert fam["ratio"]["median"] == (0.25, 0.0, 0.25, 2)
    assert fam["warm"]["zero_shot"][0] == 0.5
    results = tmp_path / "RESULTS.md"
    results.write_text("# Figures\n\nkept\n")
    block = bench.markdown(summary, {"date": "2026-12-02", "note": "a test", "records": "results/x"})
    bench.write_results(block, results)
    bench.write_results(block, results)
    text = results.read_text()
    assert text.count(bench.BEGIN) == 1 and text.startswith("# Figures\n\nkept\n")
    assert "| dialog | 80.0% (heuristic) | warm | 3 | 50.0% [40.0%, 85.0%] | 1,024 [0, 1,024, 1 of 3 not reached]" in text
    bench.plot("dialog", fam, tmp_path / "dialog.png")
    assert (tmp_path / "dialog.png").stat().st_size > 1000


def test_records_made_with_other_settings_are_not_mixed_in(bench: Any, tmp_path: Path) -> None:
    import argparse

    options = {"source_steps": 8192, "steps": 8192, "eval_every": 2048, "eval_episodes": 30, "eval_seed": 5_000_000,
               "expert_share": 0.5}
    bench._same_settings(tmp_path, argparse.Namespace(**options))
    bench._same_settings(tmp_path, argparse.Namespace(**options))  # the same: resumes
    with pytest.raises(SystemExit, match=r"--steps 8192 \(now 4096\)"):
        bench._same_settings(tmp_path, argparse.Namespace(**{**options, "steps": 4096}))
