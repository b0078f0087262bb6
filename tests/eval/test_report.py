"""Reports: every metric with its CI and n, n/a apart from 0, and plots readable at many bars."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from agentgym.eval.metrics import HEADLINE, summarise
from agentgym.eval.report import PLOTTED, TABLES, _plot_metrics, summary_table, write_report
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("report")
    jobs = [EpisodeJob(env, seed=s, noise=noise) for env in ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0")
            for noise in (None, "tool_failure=0.3") for s in range(4)]
    out = []
    for agent in ("heuristic", "agentgym.agents.trivial:ConstantAgent"):
        folder = root / agent.replace(":", "_")
        run_jobs(jobs, AgentSpec(agent), folder / "records.jsonl", workers=1, progress=False)
        out.append(folder)
    return out


def test_the_report_shows_every_metric_with_ci_and_n(runs: list[Path], tmp_path: Path) -> None:
    frame = write_report(runs, tmp_path, show=False)
    md = (tmp_path / "report.md").read_text("utf-8")
    labels = [label for _, cols in TABLES for _, label, _ in cols]
    assert all(label in md for label in labels)
    assert {key for _, cols in TABLES for key, _, _ in cols} | {"tool_precision", "tool_f1"} == {k for k, _, _ in HEADLINE}
    assert "n=" in md and "n/a" in md  # the idle agent commits nothing: n/a, never 100%
    idle = frame[frame["agent"] == "constant"]
    assert idle["goal_consistency"].isna().all() and (idle["goal_consistency_n"] == 0).all()
    csv = pd.read_csv(tmp_path / "report.csv")
    assert {f"{k}_n" for k, _, _ in HEADLINE} <= set(csv.columns)
    assert (tmp_path / "metrics.png").exists()


def test_cells_tell_n_a_from_zero() -> None:
    frame = pd.DataFrame([{"agent": "a", "env": "e", "noise": "none", "n": 3,
                           **{f"{k}{s}": v for k, _, _ in HEADLINE
                              for s, v in (("", math.nan), ("_lo", math.nan), ("_hi", math.nan), ("_n", 0))}}])
    frame.loc[0, ["recovery_share", "recovery_share_lo", "recovery_share_hi", "recovery_share_n"]] = [0.0, 0.0, 0.0, 4]
    frame.loc[0, "recovery_median_n"] = 4
    row = summary_table(frame).iloc[0]
    assert row["goal consistency"] == "n/a" and row["faults recovered"] == "0.0% [0.0%, 0.0%] n=4"
    assert row["median turns"] == "n/a (n=4)"


def test_48_bars_per_panel_stay_readable(tmp_path: Path) -> None:
    # A robustness-sized run: 16 noise settings x 3 agents on each of 3 envs.
    rows = []
    for env in ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"):
        for agent in ("random", "heuristic", "oracle"):
            for i in range(16):
                row = {"agent": agent, "env": env, "noise": "none" if i == 0 else f"typos=0.{i:02d}", "n": 100}
                for key, _ in PLOTTED:
                    row.update({key: 0.5, f"{key}_lo": 0.4, f"{key}_hi": 0.6, f"{key}_n": 100})
                rows.append(row)
    _plot_metrics(pd.DataFrame(rows), tmp_path / "metrics.png")
    from PIL import Image

    width, height = Image.open(tmp_path / "metrics.png").size
    assert width <= 2000  # one env per row of panels, full width (8,888 px wide before)
    assert height > width  # a row of panels per metric and env


def test_summarise_feeds_the_table(runs: list[Path]) -> None:
    from agentgym.eval.report import load_records

    frame = summarise(load_records(runs), group_by=("agent", "env", "noise"))
    table = summary_table(frame)
    assert len(table) == len(frame) and "episodes" in table.columns
