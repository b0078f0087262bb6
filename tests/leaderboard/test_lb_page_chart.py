"""Success against noise: pooled per-setting success, the chart's layout and its place on the board."""

from __future__ import annotations

import dataclasses
from typing import Any

import lb_page_support as P
import lb_support as S
import numpy as np
import pytest

from agentgym.bench.suites import SUITES
from agentgym.eval.metrics import bootstrap_ci
from agentgym.leaderboard.board import build_board
from agentgym.leaderboard.chart import COLOURS, MAX_SERIES, Point, Series, layout, noise_success
from agentgym.leaderboard.page import render_html
from agentgym.leaderboard.scoring import BOOT_SEED, N_BOOT_CELLS
from agentgym.leaderboard.store import Entry

ROBUSTNESS = SUITES["robustness-v0"]


def _cell(env: str, noise: str, k: int, n: int) -> dict[str, Any]:
    return {"env": env, "noise": noise, "n": n, "success": k / n, "success_lo": max(0.0, k / n - .1),
            "success_hi": min(1.0, k / n + .1), "success_n": n}


def _entry(i: int, cells: list[dict[str, Any]], suite: str = "robustness-v0", **fields: Any) -> Entry:
    agg = {"value": .5, "ci": [.4, .6], "n": 10}
    summary = {"episodes": 10, "primary": "success", "success": {**agg, "value": .5 - i / 100}, "score": agg,
               "cells": cells}
    return Entry(id=i, created_at="2026-01-01T00:00:00+00:00", agent=f"agent-{i}", model=f"model-{i}", revision="r1",
                 organisation="org", description="", suite=suite, package_version="0.1.0",
                 records_sha256=f"{i:064x}", config_hash="c" * 64, agent_config={}, reference=False, episodes=10,
                 summary=summary, verify_s=0.1, **fields)


# ============================================================================ the numbers
def test_success_is_pooled_over_envs_with_a_bootstrap_interval_of_the_pooled_episodes() -> None:
    cells = [_cell("A", "none", 30, 40), _cell("B", "none", 10, 40), _cell("A", "medium", 5, 40)]
    points = noise_success(cells)
    pooled = points["none"]
    assert pooled.value == pytest.approx(40 / 80) and pooled.n == 80
    lo, hi = bootstrap_ci(np.array([1.0] * 40 + [0.0] * 40), "mean", n_boot=N_BOOT_CELLS, seed=BOOT_SEED)
    assert (pooled.lo, pooled.hi) == (pytest.approx(lo), pytest.approx(hi)) and lo < .5 < hi
    # One env alone keeps its cell's own interval (the one computed from its records).
    assert points["medium"] == Point(5 / 40, cells[2]["success_lo"], cells[2]["success_hi"], 40)
    assert noise_success(cells, env="B") == {"none": Point(.25, .15, .35, 40)}
    assert noise_success(None) == {} and noise_success([{"env": "A", "noise": "none", "n": 0, "success": None}]) == {}


def test_pooled_success_equals_the_rate_over_the_records() -> None:
    recs = S.records("heuristic")
    cells = [r for r in _summary_cells(recs)]
    for setting, point in noise_success(cells).items():
        mine = [r for r in recs if (r["env"].get("noise") or "none") == setting]
        assert point.n == len(mine)
        assert point.value == pytest.approx(sum(bool(r["metrics"]["success"]) for r in mine) / len(mine))


def _summary_cells(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from agentgym.leaderboard.scoring import summarise_submission

    return summarise_submission(recs, S.SUITE)["cells"]


# ============================================================================ the layout
def test_levels_of_a_robustness_suite_get_a_panel_per_kind_with_no_noise_at_zero() -> None:
    points = {s: Point(.5, .4, .6, 100) for s in ROBUSTNESS.noise}
    chart = layout(ROBUSTNESS.noise, [Series("one", points)])
    assert chart is not None
    assert [p.title for p in chart.panels] == ["tool failure", "corruption", "ambiguity", "goal shift", "typos"]
    for panel in chart.panels:
        assert [label for _, label in panel.ticks] == ["0", "0.1", "0.3", "0.5"]
        xs = [x for x, _ in panel.ticks]
        assert xs == sorted(xs) and (xs[2] - xs[1]) == pytest.approx(2 * (xs[1] - xs[0]), abs=0.2)  # x is the level
        assert "(0: no noise)" in panel.x_label and len(panel.traces[0].dots) == 4
    lefts = [p.left for p in chart.panels]
    assert all(b >= a + p.width for a, b, p in zip(lefts, lefts[1:], chart.panels))  # panels never overlap
    assert chart.width <= 1300  # fits the page at 1,400 px


def test_presets_share_one_panel_in_the_suite_order() -> None:
    settings = ("none", "light", "medium", "heavy")
    chart = layout(settings, [Series("a", {"none": Point(.9, .8, 1.0, 10), "heavy": Point(.1, 0.0, .2, 10)})])
    assert chart is not None and len(chart.panels) == 1
    (panel,) = chart.panels
    assert [label for _, label in panel.ticks] == ["none", "heavy"]  # settings nobody played are left out
    assert panel.x_label == "noise setting"
    trace = panel.traces[0]
    ys = [d.y for d in trace.dots]
    assert ys[0] < ys[1]  # 90% sits above 10%
    assert chart.top <= min(ys) and max(ys) <= chart.bottom
    assert trace.dots[0].whisker is not None and "V" in trace.dots[0].whisker


def test_a_missing_point_is_a_gap_and_series_past_the_cap_are_counted() -> None:
    settings = ("none", "light", "medium")
    gap = Series("gap", {"none": Point(.5, None, None, 4), "medium": Point(.25, None, None, 4)})
    full = Series("full", {s: Point(.5, .4, .6, 4) for s in settings})
    chart = layout(settings, [gap, full])
    assert chart is not None
    trace = chart.panels[0].traces[0]
    assert len(trace.paths) == 2 and len(trace.dots) == 2 and all(d.whisker is None for d in trace.dots)
    assert len(chart.panels[0].traces[1].paths) == 1
    many = [Series(f"s{i}", {"none": Point(i / 20, None, None, 1)}) for i in range(MAX_SERIES + 3)]
    chart = layout(settings, many)
    assert chart is not None and chart.omitted == 3 and len(chart.legend) == MAX_SERIES
    assert [c for _, c, _ in chart.legend] == list(COLOURS[:MAX_SERIES])
    assert layout(settings, []) is None and layout(settings, [Series("empty", {})]) is None


# ============================================================================ on the board
def test_each_suite_section_ends_with_its_chart_one_line_per_entry() -> None:
    cells = [_cell("AgentRL/Dialog-v0", s, 5, 10) for s in ROBUSTNESS.noise]
    entries = [_entry(1, cells), _entry(2, cells[:8]), _entry(3, [], suite="robustness-v0")]
    page = render_html(build_board(entries))
    m = P.assert_inert(page)
    tags = [t for t, _ in m.tags]
    assert tags.count("figure") == 1 and tags.count("polyline") >= 2 * 5 - 1
    legend_items = page.split('<ul class="series">')[1].split("</ul>")[0].count("<li>")
    assert legend_items == 2  # the entry without cells has no line
    assert "tool failure rate (0: no noise)" in page and "success rate" in page


def test_chart_labels_are_escaped() -> None:
    cells = [_cell("AgentRL/Dialog-v0", s, 5, 10) for s in ("none", "medium")]
    entries = [dataclasses.replace(_entry(i, cells, suite=S.SUITE.id), agent=p) for i, p in enumerate(S.PAYLOADS, 1)]
    page = render_html(build_board(entries, S.REGISTRY))
    P.assert_inert(page)
    assert "<title><script" not in page and "&lt;script&gt;" in page
