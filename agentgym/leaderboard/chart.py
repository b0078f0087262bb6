"""Success against noise: per-setting success from an entry's stored cells, laid out as a chart.

An entry's summary keeps one row per env and noise setting (``cells``,
`agentgym.leaderboard.scoring`). `noise_success` pools an entry's rows over its envs into one
point per setting: the success rate of every episode played with that setting, and a 95%
percentile-bootstrap interval over those episodes (the metrics' bootstrap, seeded like the
board's; a setting played in one env alone keeps that cell's own interval).

`layout` places the points: when every setting but ``none`` is one ``kind=level`` (a
robustness suite), each kind gets a panel whose x axis is the level, with the run without noise
at 0; any other settings (presets) share one panel, in the suite's order. A line per series,
a whisker per interval, a gap where a series has no point. The result is geometry (numbers) and
labels only; the template draws it as inline SVG and escapes every label, and the legend sits
below the plot, so it covers no data.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from agentgym.eval.metrics import bootstrap_ci
from agentgym.leaderboard.scoring import BOOT_SEED, N_BOOT_CELLS

__all__ = ["Point", "Series", "Dot", "Trace", "Panel", "Chart", "noise_success", "layout", "MAX_SERIES", "COLOURS"]

#: Lines one chart draws at most (one colour each); the rest are named as left out.
MAX_SERIES = 10
#: A colour per line, in order (colour-blind-aware "tab10").
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
_LEVEL = re.compile(r"^([a-z_]+)=(\d+(?:\.\d+)?)$")
_UNITS = {"distractors": "decoys", "latency": "mean ms"}

# Geometry, in CSS pixels.
_TOP, _PLOT_H, _BOTTOM = 26.0, 200.0, 44.0
_Y_LABEL_W, _TICKS_W, _GAP = 18.0, 40.0, 18.0
_LEVEL_W, _BAND_W, _MIN_W, _MAX_W = 190.0, 160.0, 320.0, 960.0
_PAD = 14.0


@dataclass(frozen=True)
class Point:
    """Success at one noise setting."""

    value: float
    lo: float | None
    hi: float | None
    #: Episodes.
    n: int


@dataclass(frozen=True)
class Series:
    """One line: a label and its points by noise setting."""

    label: str
    points: Mapping[str, Point]


@dataclass(frozen=True)
class Dot:
    """A point as drawn: its centre, its whisker and its tooltip."""

    x: float
    y: float
    #: The whisker as SVG path data (the interval with a cap at each end), or None.
    whisker: str | None
    title: str


@dataclass(frozen=True)
class Trace:
    """A series in one panel: its colour, dash pattern, line segments (SVG polyline points) and dots."""

    colour: str
    dash: str
    paths: tuple[str, ...]
    dots: tuple[Dot, ...]


@dataclass(frozen=True)
class Panel:
    """One plot: where it starts (x of its axis), its width and middle, title, x axis label and ticks."""

    left: float
    width: float
    centre: float
    title: str
    x_label: str
    ticks: tuple[tuple[float, str], ...]
    traces: tuple[Trace, ...]


@dataclass(frozen=True)
class Chart:
    """The whole figure: size, the shared y axis, panels and legend (label, colour, dash)."""

    width: float
    height: float
    top: float
    #: The y of the x axis, and of the middle of the plot (where the y label sits).
    bottom: float
    middle: float
    y_label: str
    y_ticks: tuple[tuple[float, str], ...]
    panels: tuple[Panel, ...]
    legend: tuple[tuple[str, str, str], ...]
    #: Series not drawn (past MAX_SERIES).
    omitted: int


def noise_success(cells: Sequence[Mapping[str, Any]] | None, env: str | None = None) -> dict[str, Point]:
    """An entry's success per noise setting, pooled over its envs (or of one env).

    Args:
        cells: the summary's ``cells`` (rows with ``env``, ``noise``, ``n``, ``success``,
            ``success_lo``, ``success_hi``); None or empty gives no points.
        env: only this env's rows.
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in cells or ():
        if env is not None and row.get("env") != env:
            continue
        if isinstance(row.get("success"), (int, float)) and isinstance(row.get("n"), int) and row["n"] > 0:
            groups.setdefault(str(row.get("noise")), []).append(row)
    points = {}
    for setting, rows in groups.items():
        if len(rows) == 1:
            r = rows[0]
            points[setting] = Point(float(r["success"]), r.get("success_lo"), r.get("success_hi"), int(r["n"]))
            continue
        n = sum(int(r["n"]) for r in rows)
        # Success is a share of episodes: each row's rate times its n is its count of successes.
        k = sum(round(float(r["success"]) * int(r["n"])) for r in rows)
        lo, hi = _pooled_interval(k, n)
        points[setting] = Point(k / n, lo, hi, n)
    return points


@functools.lru_cache(maxsize=4096)
def _pooled_interval(successes: int, n: int) -> tuple[float | None, float | None]:
    # Episodes are resampled alone (as the board's own intervals are): the interval of a share is
    # a function of its two counts, so it is computed once per pair.
    values = np.zeros(n)
    values[:successes] = 1.0
    lo, hi = bootstrap_ci(values, "mean", n_boot=N_BOOT_CELLS, seed=BOOT_SEED)
    return (None if math.isnan(lo) else float(lo)), (None if math.isnan(hi) else float(hi))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _groups(settings: Sequence[str]) -> list[tuple[str, str, list[tuple[str, float | None]]]]:
    """(title, x label, [(setting, level or None)]) per panel."""
    levelled = {s: _LEVEL.match(s) for s in settings if s != "none"}
    if not levelled or not all(levelled.values()):
        return [("", "noise setting", [(s, None) for s in settings])]
    panels = []
    for kind in dict.fromkeys(m.group(1) for m in levelled.values() if m):
        points = sorted((float(m.group(2)), s) for s, m in levelled.items() if m and m.group(1) == kind)
        if "none" in settings:
            points.insert(0, (0.0, "none"))
        name = kind.replace("_", " ")
        label = f"{name} {_UNITS.get(kind, 'rate')}" + (" (0: no noise)" if "none" in settings else "")
        panels.append((name, label, [(s, level) for level, s in points]))
    return panels


def _positions(group: list[tuple[str, float | None]]) -> tuple[float, dict[str, float], float]:
    """The plot width, each setting's x, and the spacing of neighbouring series at one setting."""
    if group[0][1] is None:
        # A band fits its tick label (11 px text is about 6.5 px a character).
        band_w = max(_BAND_W, 6.5 * max(len(s) for s, _ in group) + 12)
        width = min(_MAX_W, max(_MIN_W, band_w * len(group)))
        band = width / len(group)
        return width, {s: (i + 0.5) * band for i, (s, _) in enumerate(group)}, band
    top = max(level or 0.0 for _, level in group) or 1.0
    span = _LEVEL_W - 2 * _PAD
    xs = {s: _PAD + (level or 0.0) / top * span for s, level in group}
    ordered = sorted(xs.values())
    closest = min((b - a for a, b in zip(ordered, ordered[1:])), default=span)
    return _LEVEL_W, xs, closest


def _y(value: float) -> float:
    return round(_TOP + (1.0 - min(1.0, max(0.0, value))) * _PLOT_H, 1)


def _trace(series: Series, index: int, count: int, group: list[tuple[str, float | None]], xs: Mapping[str, float],
           spacing: float, left: float) -> Trace:
    # Series at one setting sit side by side, so that their whiskers do not hide each other.
    step = min(5.0, 0.6 * spacing / max(1, count))
    shift = (index - (count - 1) / 2) * step
    paths: list[list[str]] = [[]]
    dots = []
    for setting, _ in group:
        p = series.points.get(setting)
        if p is None:
            if paths[-1]:
                paths.append([])
            continue
        x, y = round(left + xs[setting] + shift, 1), _y(p.value)
        paths[-1].append(f"{x},{y}")
        ci = "" if p.lo is None or p.hi is None else f" [{100 * p.lo:.1f}, {100 * p.hi:.1f}]"
        whisker = None
        if p.lo is not None and p.hi is not None:
            lo, hi, cap = _y(p.lo), _y(p.hi), round(x - 3, 1)
            whisker = f"M{x},{lo}V{hi}M{cap},{lo}h6M{cap},{hi}h6"
        dots.append(Dot(x, y, whisker, f"{series.label}, {setting}: {_pct(p.value)}{ci}, n={p.n}"))
    dash = ("", "6 3", "2 2")[(index // len(COLOURS)) % 3]
    return Trace(COLOURS[index % len(COLOURS)], dash, tuple(" ".join(p) for p in paths if p), tuple(dots))


def layout(settings: Sequence[str], series: Sequence[Series], *, y_label: str = "success rate") -> Chart | None:
    """The chart of `series` over noise `settings`, or None when no series has a point.

    Args:
        settings: the noise settings in the suite's order; settings the series hold beyond
            these are added after them.
        series: the lines, in legend order; past `MAX_SERIES` they are counted, not drawn.
        y_label: the y axis label.
    """
    shown = list(series[:MAX_SERIES])
    extra = sorted({s for ser in shown for s in ser.points} - set(settings), key=lambda s: (s != "none", s))
    wanted = [s for s in (*settings, *extra) if any(s in ser.points for ser in shown)]
    if not wanted:
        return None
    panels = []
    left = _Y_LABEL_W + _TICKS_W
    for title, x_label, group in _groups(wanted):
        width, xs, spacing = _positions(group)
        traces = tuple(_trace(ser, i, len(shown), group, xs, spacing, left) for i, ser in enumerate(shown))
        ticks = tuple((round(left + xs[s], 1), s if level is None else f"{level:g}") for s, level in group)
        panels.append(Panel(left, width, round(left + width / 2, 1), title, x_label, ticks, traces))
        left += width + _GAP + _TICKS_W
    y_ticks = tuple((_y(v), f"{100 * v:.0f}%") for v in (0.0, 0.25, 0.5, 0.75, 1.0))
    return Chart(width=round(left - _TICKS_W, 1), height=_TOP + _PLOT_H + _BOTTOM, top=_TOP, bottom=_TOP + _PLOT_H,
                 middle=_TOP + _PLOT_H / 2,
                 y_label=y_label, y_ticks=y_ticks, panels=tuple(panels),
                 legend=tuple((ser.label, t.colour, t.dash) for ser, t in zip(shown, panels[0].traces)),
                 omitted=max(0, len(series) - MAX_SERIES))
