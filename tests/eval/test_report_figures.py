"""The report's figures, read from the figure objects (not pixels): a label on every y axis, a
legend that overlaps no panel, n/a drawn apart from 0, and text large enough to read."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agentgym.eval.report import MIN_FONT, PLOTTED, metrics_figure, robustness_figure, write_report

AGENTS = ("heuristic", "random")
ENVS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0")
SETTINGS = ("none", "tool_failure=0.1", "tool_failure=0.3", "typos=0.2")


def _frame() -> pd.DataFrame:
    """Every agent, env and setting; random scores 0 on success, and recovery is n/a without noise."""
    rows = []
    for env in ENVS:
        for agent in AGENTS:
            for noise in SETTINGS:
                row: dict[str, Any] = {"agent": agent, "env": env, "noise": noise, "n": 50}
                for key, _ in PLOTTED:
                    value = 0.0 if (agent == "random" and key == "success") else 0.6
                    if key == "recovery_share" and noise == "none":
                        value = math.nan
                    n = 0 if math.isnan(value) else 50
                    row.update({key: value, f"{key}_lo": value - 0.1 if n else math.nan,
                                f"{key}_hi": min(1.0, value + 0.1) if n else math.nan, f"{key}_n": n})
                rows.append(row)
    return pd.DataFrame(rows)


def _drawn(fig: Any) -> Any:
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _texts(ax: Any, text: str) -> list[Any]:
    return [t for t in ax.texts if t.get_text() == text]


@pytest.fixture(scope="module")
def metrics_fig() -> Any:
    import matplotlib.pyplot as plt

    fig = metrics_figure(_frame())
    yield fig
    plt.close(fig)


def test_every_metrics_panel_has_a_y_label_and_a_title(metrics_fig: Any) -> None:
    labels = {label for _, label in PLOTTED}
    for ax in metrics_fig.axes:
        assert ax.get_ylabel() in labels and ax.get_title()
    assert {ax.get_ylabel() for ax in metrics_fig.axes} == labels


def test_the_legend_names_each_agent_once_and_overlaps_no_panel(metrics_fig: Any) -> None:
    renderer = _drawn(metrics_fig)
    assert all(ax.get_legend() is None for ax in metrics_fig.axes)  # no legend inside a panel
    (legend,) = metrics_fig.legends
    assert [t.get_text() for t in legend.get_texts()] == list(AGENTS)
    box = legend.get_window_extent(renderer)
    for ax in metrics_fig.axes:
        assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_title()


def test_n_a_is_marked_apart_from_zero_inside_the_panel(metrics_fig: Any) -> None:
    by_label = {}
    for ax in metrics_fig.axes:
        by_label.setdefault(ax.get_ylabel(), []).append(ax)
    for ax in by_label["faults recovered"]:
        # Without noise nothing is recovered or not: an n/a mark per agent, inside the axis.
        marks = _texts(ax, "n/a")
        assert len(marks) == len(AGENTS)
        low, high = ax.get_xlim()
        assert all(low < t.get_position()[0] < high for t in marks)
        assert sum(p.get_gid() == "n/a" for p in ax.patches) == len(AGENTS)
        assert not _texts(ax, "0")
    for ax in by_label["success rate"]:
        # random's measured 0 in every setting: marked 0, never n/a.
        assert len(_texts(ax, "0")) == len(SETTINGS) and not _texts(ax, "n/a")
        assert ax.get_ylim()[0] < 0  # a line at 0 shows above the axis


def test_text_is_readable_and_the_figure_fits_a_screen_width(metrics_fig: Any) -> None:
    width, _ = metrics_fig.get_size_inches()
    assert width <= 18
    for ax in metrics_fig.axes:
        for t in [*ax.texts, ax.title, ax.yaxis.label, *ax.get_xticklabels(), *ax.get_yticklabels()]:
            assert t.get_fontsize() >= MIN_FONT, t.get_text()


def test_the_robustness_figure_labels_each_row_and_keeps_its_legend_apart() -> None:
    import matplotlib.pyplot as plt

    fig = robustness_figure(_frame())
    try:
        renderer = _drawn(fig)
        grid = fig.axes
        kinds = 2  # tool_failure, typos
        assert len(grid) == len(ENVS) * kinds
        for row in range(len(ENVS)):
            assert "success rate" in grid[row * kinds].get_ylabel()
        assert all(ax.get_xlabel() == "rate" for ax in grid[-kinds:])
        assert all(ax.get_ylim()[0] < 0 for ax in grid)  # random's line at 0 shows
        (legend,) = fig.legends
        box = legend.get_window_extent(renderer)
        assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in grid)
    finally:
        plt.close(fig)


def test_no_noise_levels_no_robustness_figure() -> None:
    frame = _frame()
    assert robustness_figure(frame[frame["noise"] == "none"]) is None


def test_the_report_shows_the_progress_of_each_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym.eval import progress
    from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

    run_jobs([EpisodeJob("AgentRL/Dialog-v0", seed=s) for s in range(3)], AgentSpec("heuristic"),
             tmp_path / "records.jsonl", workers=1, progress=False)
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)  # a line per update: the stages show at once
    write_report([tmp_path], tmp_path / "report", show=False, progress=True)
    err = capsys.readouterr().err
    for stage in ("report: reading records", "report: metrics with bootstrap CIs", "report: pass^k and efficiency",
                  "report: plots"):
        assert f"{stage}: " in err and "done in" in err, stage
