"""Reports from run folders: tables with confidence intervals, and plots.

`write_report` reads the records of one or more runs (a run folder holds ``records.jsonl``),
judges each record once (`agentgym.eval.judging.judge_run`), computes from that one judging every
headline metric (`agentgym.eval.metrics.HEADLINE`) per agent, env and noise
setting with bootstrap 95% CIs and their n, prints the table, and writes ``report.csv`` (every
number), ``report.md`` (the readable tables, pass^k and efficiency) and PNG plots: the metrics per
agent with one panel per env (`metrics.png`), and success against the noise rate per kind
(`robustness.png`). A metric with nothing to measure is n/a, never 0: an empty bar is marked so.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from agentgym.eval import metrics
from agentgym.eval.csv_cells import write_csv
from agentgym.eval.headline import REPORT_TABLES
from agentgym.eval.judging import JudgedRun, judge_run
from agentgym.eval.progress import Progress
from agentgym.eval.records import read_records

__all__ = ["load_records", "summary_line", "summary_table", "write_report", "metrics_figure", "robustness_figure",
           "TABLES", "PLOTTED"]

#: The report's tables, each (title, [(summary column, label, shown as a percentage)]): those the
#: headline metrics name (`agentgym.eval.headline.METRICS`).
TABLES = REPORT_TABLES
#: The metrics of `metrics.png`, one row of panels each: (summary column, y-axis label).
PLOTTED: tuple[tuple[str, str], ...] = (
    ("success", "success rate"),
    ("tool_correctness", "tool-call correctness"),
    ("tool_efficiency", "tool-call efficiency"),
    ("recovery_share", "faults recovered"),
    ("goal_consistency", "goal consistency"),
)
_RATE_SPEC = re.compile(r"^([a-z_]+)=([0-9.]+)$")
#: Settings per env up to which the envs sit side by side in `metrics.png` (else one per row).
_SIDE_BY_SIDE = 8


def load_records(paths: Iterable[str | Path], *, progress: bool = False) -> list[dict[str, Any]]:
    """The records of run folders (``DIR/records.jsonl``) or records files, in order.

    Raises:
        ValueError: a path holds no records file, or a line of one is not a record.
    """
    files = []
    for p in map(Path, paths):
        f = p / "records.jsonl" if p.is_dir() else p
        if not f.exists():
            raise ValueError(f"no records at {f}")
        files.append(f)
    out: list[dict[str, Any]] = []
    total = sum(_count_lines(f) for f in files) if progress else 0
    with Progress(total, desc="report: reading records", unit="record", enabled=progress) as bar:
        for f in files:
            for rec in read_records(f):
                out.append(rec)
                bar.update()
    return out


def _count_lines(path: Path) -> int:
    """Lines in a file, read in 1 MiB chunks (a progress total: far cheaper than parsing them)."""
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


def summary_line(records: Sequence[dict[str, Any]] | JudgedRun) -> dict[str, Any]:
    """Success and score with 95% CIs, for a one-line summary (of records, or of a `JudgedRun`)."""
    comp = metrics.completion(records)
    return {
        "n": comp["episodes"],
        "success": comp["success_rate"]["value"] or 0.0,
        "success_ci": comp["success_rate"]["ci"],
        "score": comp["mean_score"]["value"] or 0.0,
        "score_ci": comp["mean_score"]["ci"],
    }


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _cell(value: float, lo: float, hi: float, n: Any, pct: bool) -> str:
    """'value [lo, hi] n=N'; 'n/a' when there was nothing to measure, 'n/a (n=N)' when there was
    but the value is undefined (a median of faults that were mostly never recovered)."""
    count = 0 if _missing(n) else int(n)
    if _missing(value):
        return f"n/a (n={count})" if count else "n/a"

    def f(x: float) -> str:
        if _missing(x):
            return "?"
        return f"{x:.1%}" if pct else f"{x:.3g}"
    return f"{f(value)} [{f(lo)}, {f(hi)}] n={count}"


def summary_table(frame: Any, columns: Sequence[tuple[str, str, bool]] | None = None) -> Any:
    """The readable table: one 'value [lo, hi] n=N' cell per metric (default: every table's)."""
    import pandas as pd

    cols = list(columns) if columns is not None else [c for _, cs in TABLES for c in cs]
    rows = []
    for _, r in frame.iterrows():
        row = {k: r[k] for k in ("agent", "env", "noise") if k in frame.columns}
        row["episodes"] = int(r["n"])
        for col, label, pct in cols:
            row[label] = _cell(r[col], r[f"{col}_lo"], r[f"{col}_hi"], r[f"{col}_n"], pct)
        rows.append(row)
    return pd.DataFrame(rows)


def _markdown(table: Any) -> str:
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines)


def _fmt(x: Any, pct: bool = False) -> str:
    if isinstance(x, dict):
        x = x.get("value")
    if _missing(x):
        return "n/a"
    return f"{x:.1%}" if pct else f"{x:.2f}"


def _extras(run: JudgedRun, progress: bool = False) -> list[str]:
    """pass^k and efficiency per agent and env, as Markdown lines."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(run.records):
        groups.setdefault((r["agent"]["name"], r["env"]["id"]), []).append(i)
    lines = ["| agent | env | pass^1 | pass^2 | turns / success | tool calls / success | policy violations |",
             "|---|---|---|---|---|---|---|"]
    with Progress(len(run), desc="report: pass^k and efficiency", unit="record", enabled=progress) as bar:
        for (agent, env_id), members in sorted(groups.items()):
            recs = run.select(members)
            eff = metrics.efficiency(recs)
            p1, p2 = metrics.pass_hat_k(recs, 1), metrics.pass_hat_k(recs, 2)
            lines.append(f"| {agent} | {env_id} | {_fmt(p1, True)} | {_fmt(p2, True)} "
                         f"| {_fmt(eff['turns_per_success'])} | {_fmt(eff['tool_calls_per_success'])} "
                         f"| {_fmt(eff['policy_violations'])} |")
            bar.update(len(recs))
    return lines


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    return plt


#: The smallest font in a figure (points): at the figures' 110 dpi, still readable unzoomed.
MIN_FONT = 6.5
#: Below 0 on the y axis, so a value of exactly 0 (a line, a bar's top edge) shows above the axis.
_Y_FLOOR = -0.04
_NA_FILL = "#f0f0f0"


def _mark_na(ax: Any, x: float, width: float) -> None:
    """Nothing to measure: a pale hatched column the height of the panel with "n/a" in it, so it
    can never be read as a bar of height 0."""
    ax.bar([x], [1.05 - _Y_FLOOR], width, bottom=_Y_FLOOR, color=_NA_FILL, hatch="///", edgecolor="#c8c8c8",
           linewidth=0, zorder=0, gid="n/a")
    ax.text(x, 0.5, "n/a", ha="center", va="center", rotation=90, fontsize=MIN_FONT + 0.5, color="dimgray")


def _mark_zero(ax: Any, x: float, width: float, colour: str) -> None:
    """A measured 0: a line at 0 in the agent's colour and a "0" above it (a bar of height 0 is
    invisible)."""
    ax.hlines(0.0, x - width / 2, x + width / 2, colors=colour, linewidth=2.5, zorder=3)
    ax.text(x, 0.02, "0", ha="center", va="bottom", fontsize=MIN_FONT, color=colour)


def metrics_figure(frame: Any) -> Any:
    """The metrics of `PLOTTED` per agent, env and noise setting, as a matplotlib figure.

    One row of panels per metric and one panel per env (or, with more than `_SIDE_BY_SIDE`
    settings, a full-width row per metric and env). In a panel, a group of bars per noise
    setting, one bar per agent with its 95% CI and its n above it; nothing to measure is a
    hatched "n/a" column and a measured 0 a line at 0 marked "0", so the two never look alike.
    The legend and the title sit above every panel, covering no data.
    """
    import numpy as np

    plt = _pyplot()
    frame = frame.copy()
    frame["env_short"] = frame["env"].astype(str).str.replace("AgentRL/", "", regex=False)
    envs = list(dict.fromkeys(frame["env_short"]))
    agents = list(dict.fromkeys(frame["agent"].astype(str)))
    # Per env its noise settings, without noise first.
    settings = {env: sorted(dict.fromkeys(frame.loc[frame["env_short"] == env, "noise"].astype(str)),
                            key=lambda s: s != "none") for env in envs}
    widest = max(len(s) for s in settings.values())
    # Few settings: the envs side by side, a row per metric. Many (a robustness suite): a row per
    # metric and env, full width, so a panel of 48 bars stays readable.
    if widest <= _SIDE_BY_SIDE:
        grid = [[(col, label, env) for env in envs] for col, label in PLOTTED]
    else:
        grid = [[(col, label, env)] for col, label in PLOTTED for env in envs]
    n_rows, n_cols = len(grid), len(grid[0])
    bars = widest * len(agents)
    width = max(8.0, min(18.0, (4.0 + 0.3 * bars) * n_cols))
    height = 2.6 * n_rows + 0.8
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width, height), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    step = 0.8 / max(1, len(agents))
    for row, cells in enumerate(grid):
        for c_i, (col, label, env) in enumerate(cells):
            ax = axes[row][c_i]
            names = settings[env]
            x = np.arange(len(names))
            for i, agent in enumerate(agents):
                colour = colours[i % len(colours)]
                sub = frame[(frame["env_short"] == env) & (frame["agent"].astype(str) == agent)]
                sub = sub.set_index(sub["noise"].astype(str)).reindex(names)
                val = sub[col].to_numpy(dtype=float)
                lo, hi = sub[f"{col}_lo"].to_numpy(dtype=float), sub[f"{col}_hi"].to_numpy(dtype=float)
                n = sub[f"{col}_n"].to_numpy(dtype=float)
                pos = x + (i - (len(agents) - 1) / 2) * step
                shown = ~np.isnan(val)
                err = np.vstack([np.where(shown, val - lo, 0), np.where(shown, hi - val, 0)])
                ax.bar(pos[shown], val[shown], step * 0.9, yerr=np.nan_to_num(err[:, shown]), capsize=2,
                       color=colour, label=agent if row == 0 and c_i == 0 else None)
                for p, v, k in zip(pos, val, n):
                    if np.isnan(v):
                        _mark_na(ax, p, step * 0.9)
                        continue
                    if v == 0:
                        _mark_zero(ax, p, step * 0.9, colour)
                    if not np.isnan(k):
                        ax.text(p, 1.08, f"n={int(k)}", ha="center", va="bottom", rotation=90, fontsize=MIN_FONT,
                                color="dimgray", clip_on=False)
            # Every setting keeps its place, drawn or n/a: the axis never shrinks to the bars drawn.
            ax.set_xlim(-0.5, len(names) - 0.5)
            ax.set_ylim(_Y_FLOOR, 1.05)
            ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
            ax.set_ylabel(label, fontsize=8)
            ax.set_title(env, fontsize=9, pad=26)
            ax.set_xticks(x, names, fontsize=7, rotation=30 if len(names) > 4 else 0,
                          ha="right" if len(names) > 4 else "center")
            ax.tick_params(axis="y", labelsize=7)
            if row == n_rows - 1:
                ax.set_xlabel("noise setting", fontsize=8)
    # The title, then the legend, above every panel: a legend never covers a bar.
    fig.suptitle("agentgym: metrics per agent with 95% bootstrap CIs (n above each bar; "
                 "n/a: nothing to measure; 0: measured zero)", fontsize=10, y=1 - 0.12 / height, va="top")
    fig.legend(loc="upper center", ncol=max(1, len(agents)), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.38 / height))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.75 / height))
    return fig


def robustness_figure(frame: Any) -> Any:
    """Success against the noise level as a matplotlib figure, or None when `frame` has no
    ``kind=rate`` settings: one panel per env (row) and noise kind (column), a line per agent
    (one colour each throughout) with its 95% CI band; level 0 is the run without noise. The
    y axis starts just below 0 so a line at 0 shows above the axis."""
    rows = []
    for _, r in frame.iterrows():
        m = _RATE_SPEC.match(str(r["noise"]))
        if m:
            rows.append((m.group(1), float(m.group(2)), r))
    if not rows:
        return None
    plt = _pyplot()
    base = {(r["agent"], r["env"]): r for _, r in frame.iterrows() if str(r["noise"]) == "none"}
    kinds = sorted({k for k, _, _ in rows})
    envs = sorted({r["env"] for _, _, r in rows})
    agents = sorted({str(r["agent"]) for _, _, r in rows})
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    height = 2.4 * len(envs) + 1
    fig, axes = plt.subplots(len(envs), len(kinds), figsize=(2.8 * len(kinds) + 1, height),
                             squeeze=False, sharey=True)
    for e_i, env_id in enumerate(envs):
        for k_i, kind in enumerate(kinds):
            ax = axes[e_i][k_i]
            for a_i, agent in enumerate(agents):
                pts = sorted((level, r["success"], r["success_lo"], r["success_hi"]) for k, level, r in rows
                             if k == kind and r["env"] == env_id and str(r["agent"]) == agent)
                b = base.get((agent, env_id))
                if b is not None and pts:
                    pts = [(0.0, b["success"], b["success_lo"], b["success_hi"])] + pts
                if pts:
                    xs, ys, lo, hi = zip(*pts)
                    colour = colours[a_i % len(colours)]
                    ax.plot(xs, ys, marker="o", markersize=3, color=colour, label=agent if e_i == k_i == 0 else None)
                    ax.fill_between(xs, lo, hi, alpha=0.12, color=colour)
            ax.set_ylim(_Y_FLOOR, 1.05)
            ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
            ax.tick_params(labelsize=7)
            if e_i == 0:
                ax.set_title(kind, fontsize=9)
            if e_i == len(envs) - 1:
                ax.set_xlabel("decoys" if kind == "distractors" else "mean ms" if kind == "latency" else "rate",
                              fontsize=8)
            if k_i == 0:
                ax.set_ylabel(f"{env_id.replace('AgentRL/', '')}\nsuccess rate", fontsize=8)
    fig.suptitle("success against noise level, per kind (95% CIs; 0: no noise)", fontsize=10, y=1 - 0.1 / height,
                 va="top")
    fig.legend(loc="upper center", ncol=max(1, len(agents)), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.35 / height))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.7 / height))
    return fig


def _save(fig: Any, path: Path) -> None:
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)


def _plot_metrics(frame: Any, path: Path) -> None:
    """Write `metrics_figure` to `path`."""
    _save(metrics_figure(frame), path)


def _plot_robustness(frame: Any, path: Path) -> bool:
    """Write `robustness_figure` to `path`; False (nothing written) without noise levels."""
    fig = robustness_figure(frame)
    if fig is None:
        return False
    _save(fig, path)
    return True


def write_report(runs: Sequence[str | Path], out: str | Path, *, show: bool = True,
                 progress: bool | None = None) -> Any:
    """Write the report of `runs` into folder `out` and return the summary DataFrame.

    Args:
        runs: run folders (each holds ``records.jsonl``) or records files.
        out: the report's folder (created).
        show: print the tables and where the report is.
        progress: show the progress of each stage on stderr (default: as `show`).
    """
    progress = show if progress is None else progress
    records = load_records(runs, progress=progress)
    if not records:
        raise ValueError(f"no records in {', '.join(map(str, runs))} (empty, or only a torn last line)")
    out_dir = Path(out)
    # Judged once: every table, pass^k and efficiency below is a view of this one judging.
    with Progress(len(records), desc="report: judging episodes", unit="record", enabled=progress) as bar:
        run = judge_run(records, on_record=bar.update)
    with Progress(len(records), desc="report: metrics with bootstrap CIs", unit="record", enabled=progress) as bar:
        frame = metrics.summarise(run, group_by=("agent", "env", "noise"), on_group=bar.update)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(frame, out_dir / "report.csv")
    errors = sum(r.get("agent_error") is not None for r in records)
    md = ["# agentgym report", "",
          f"{len(records)} episodes from {len(runs)} run(s); {errors} agent errors. Cells: value [95% bootstrap CI] "
          "n=what the value is taken over (episodes, calls, faults, committing episodes); n/a: nothing to measure "
          "(with an n: too few recoveries for a median). docs/METRICS.md defines each metric.", ""]
    for title, columns in TABLES:
        md += [f"## {title}", "", _markdown(summary_table(frame, columns)), ""]
    md += ["## pass^k and efficiency", "", *_extras(run, progress), ""]
    plots = ["metrics.png"]
    with Progress(2, desc="report: plots", unit="plot", enabled=progress) as bar:
        _plot_metrics(frame, out_dir / "metrics.png")
        bar.update()
        if _plot_robustness(frame, out_dir / "robustness.png"):
            plots.append("robustness.png")
        bar.update()
    md += [f"![{p}]({p})" for p in plots]
    (out_dir / "report.md").write_text("\n".join(md) + "\n", "utf-8")
    if show:
        import pandas as pd

        with pd.option_context("display.max_rows", 500, "display.max_columns", 30, "display.width", 250):
            for title, columns in TABLES:
                print(f"{title}:")
                print(summary_table(frame, columns).to_string(index=False))
                print()
        print(f"report: {out_dir / 'report.md'} (with report.csv, {', '.join(plots)})")
    return frame
