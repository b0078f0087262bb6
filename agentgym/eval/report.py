"""Reports from run folders: tables with confidence intervals, and plots.

`write_report` reads the records of one or more runs (a run folder holds ``records.jsonl``),
computes the four metrics per agent, env and noise setting with bootstrap 95% CIs, prints the
table, and writes ``report.csv`` (every number), ``report.md`` (the readable table, pass^k and
efficiency) and PNG plots: the metrics per agent, and success against the noise rate per kind.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from agentgym.eval import metrics
from agentgym.eval.records import read_records

__all__ = ["load_records", "summary_line", "summary_table", "write_report"]

#: The headline columns: (summary column, label). Each has _lo and _hi in `metrics.summarise`.
HEADLINE = (
    ("success", "success"),
    ("score", "score"),
    ("tool_f1", "tool F1"),
    ("recovery_share", "recovered"),
    ("recovery_median", "recovery turns"),
    ("goal_consistency", "goal consistency"),
)
_RATE_SPEC = re.compile(r"^([a-z_]+)=([0-9.]+)$")


def load_records(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """The records of run folders (``DIR/records.jsonl``) or records files, in order."""
    out: list[dict[str, Any]] = []
    for p in map(Path, paths):
        f = p / "records.jsonl" if p.is_dir() else p
        if not f.exists():
            raise ValueError(f"no records at {f}")
        out.extend(read_records(f))
    return out


def summary_line(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Success and score with 95% CIs, for a one-line summary."""
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


def _cell(value: float, lo: float, hi: float, pct: bool) -> str:
    if _missing(value):
        return "-"
    if pct:
        return f"{value:.1%} [{lo:.1%}, {hi:.1%}]"
    return f"{value:.2f} [{lo:.2f}, {hi:.2f}]"


def summary_table(frame: Any) -> Any:
    """The readable table: one formatted 'value [lo, hi]' cell per headline metric."""
    import pandas as pd

    rows = []
    for _, r in frame.iterrows():
        row = {k: r[k] for k in ("agent", "env", "noise") if k in frame.columns}
        row["n"] = int(r["n"])
        for col, label in HEADLINE:
            row[label] = _cell(r[col], r[f"{col}_lo"], r[f"{col}_hi"], pct=col != "recovery_median")
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
        return "-"
    return f"{x:.1%}" if pct else f"{x:.2f}"


def _extras(records: Sequence[dict[str, Any]]) -> list[str]:
    """pass^k and efficiency per agent and env, as Markdown lines."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["agent"]["name"], r["env"]["id"]), []).append(r)
    lines = ["| agent | env | pass^1 | pass^2 | turns / success | tool calls / success | policy violations |",
             "|---|---|---|---|---|---|---|"]
    for (agent, env_id), recs in sorted(groups.items()):
        eff = metrics.efficiency(recs)
        p1, p2 = metrics.pass_hat_k(recs, 1), metrics.pass_hat_k(recs, 2)
        lines.append(f"| {agent} | {env_id} | {_fmt(p1, True)} | {_fmt(p2, True)} | {_fmt(eff['turns_per_success'])} "
                     f"| {_fmt(eff['tool_calls_per_success'])} | {_fmt(eff['policy_violations'])} |")
    return lines


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    return plt


def _plot_metrics(frame: Any, path: Path) -> None:
    import numpy as np

    plt = _pyplot()
    panels = [("success", "success"), ("tool_f1", "tool F1"), ("recovery_share", "recovered share"),
              ("goal_consistency", "goal consistency")]
    frame = frame.copy()
    frame["setting"] = frame["env"].str.replace("AgentRL/", "", regex=False) + "\n" + frame["noise"].astype(str)
    settings = list(dict.fromkeys(frame["setting"]))
    agents = list(dict.fromkeys(frame["agent"]))
    fig, axes = plt.subplots(2, 2, figsize=(max(8, 1.6 * len(settings) + 4), 7), sharex=True)
    width = 0.8 / max(1, len(agents))
    x = np.arange(len(settings))
    for ax, (col, title) in zip(axes.flat, panels):
        for i, agent in enumerate(agents):
            sub = frame[frame["agent"] == agent].set_index("setting").reindex(settings)
            val = sub[col].to_numpy(dtype=float)
            lo, hi = sub[f"{col}_lo"].to_numpy(dtype=float), sub[f"{col}_hi"].to_numpy(dtype=float)
            err = np.nan_to_num(np.vstack([val - lo, hi - val]))
            ax.bar(x + (i - (len(agents) - 1) / 2) * width, np.nan_to_num(val), width, yerr=err, capsize=2,
                   label=agent)
        ax.set_title(title)
        ax.set_ylim(0, 1.05)
        ax.set_xticks(x, settings, fontsize=7)
        if frame[col].isna().all():
            ax.text(0.5, 0.5, "not applicable\n(no injected faults)" if col.startswith("recovery") else "n/a",
                    ha="center", va="center", transform=ax.transAxes, color="gray")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("agentgym: metrics per agent, with 95% bootstrap CIs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_robustness(frame: Any, path: Path) -> bool:
    rows = []
    for _, r in frame.iterrows():
        m = _RATE_SPEC.match(str(r["noise"]))
        if m:
            rows.append((m.group(1), float(m.group(2)), r))
    if not rows:
        return False
    plt = _pyplot()
    base = {(r["agent"], r["env"]): r for _, r in frame.iterrows() if str(r["noise"]) == "none"}
    kinds = sorted({k for k, _, _ in rows})
    envs = sorted({r["env"] for _, _, r in rows})
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 4), squeeze=False, sharey=True)
    for ax, env_id in zip(axes[0], envs):
        for agent in sorted({r["agent"] for _, _, r in rows}):
            for kind in kinds:
                pts = sorted((rate, r["success"], r["success_lo"], r["success_hi"]) for k, rate, r in rows
                             if k == kind and r["env"] == env_id and r["agent"] == agent)
                b = base.get((agent, env_id))
                if b is not None and pts:
                    pts = [(0.0, b["success"], b["success_lo"], b["success_hi"])] + pts
                if pts:
                    xs, ys, lo, hi = zip(*pts)
                    ax.plot(xs, ys, marker="o", label=f"{agent}: {kind}")
                    ax.fill_between(xs, lo, hi, alpha=0.12)
        ax.set_title(env_id.replace("AgentRL/", ""))
        ax.set_xlabel("noise rate")
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel("success")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("success against noise rate, per kind (95% CIs)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(runs: Sequence[str | Path], out: str | Path, *, show: bool = True) -> Any:
    """Write the report of `runs` into folder `out` and return the summary DataFrame."""
    records = load_records(runs)
    if not records:
        raise ValueError("the runs hold no records yet")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = metrics.summarise(records, group_by=("agent", "env", "noise"))
    frame.to_csv(out_dir / "report.csv", index=False)
    table = summary_table(frame)
    errors = sum(r.get("agent_error") is not None for r in records)
    md = ["# agentgym report", "",
          f"{len(records)} episodes from {len(runs)} run(s); {errors} agent errors. Cells: value [95% bootstrap CI].",
          "", _markdown(table), "", "## pass^k and efficiency", "", *_extras(records), ""]
    _plot_metrics(frame, out_dir / "metrics.png")
    plots = ["metrics.png"]
    if _plot_robustness(frame, out_dir / "robustness.png"):
        plots.append("robustness.png")
    md += [f"![{p}]({p})" for p in plots]
    (out_dir / "report.md").write_text("\n".join(md) + "\n", "utf-8")
    if show:
        import pandas as pd

        with pd.option_context("display.max_rows", 500, "display.max_columns", 20, "display.width", 200):
            print(table.to_string(index=False))
        print(f"\nreport: {out_dir / 'report.md'} (with report.csv, {', '.join(plots)})")
    return frame
