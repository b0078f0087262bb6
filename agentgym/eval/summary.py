"""The summary table of a run: one row per group (env, noise, agent ...) with every headline
metric, its CI and its n, as a pandas DataFrame (`agentgym report` prints and plots it)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable, Sequence

from agentgym.eval.headline import HEADLINE, headline, records_of
from agentgym.eval.judging import EpisodeRecord, JudgedEpisode, JudgedRun, judge_run

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SUMMARY_METRICS", "summarise"]


_GROUP_FIELDS: dict[str, Callable[[EpisodeRecord], Any]] = {
    "env": lambda r: (r.get("env") or {}).get("id"),
    "noise": lambda r: (r.get("env") or {}).get("noise") or "none",
    "agent": lambda r: (r.get("agent") or {}).get("name"),
    "suite": lambda r: r.get("suite"),
    "family": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("family"),
    "domain": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("domain"),
    "difficulty": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("difficulty"),
    "split": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("split"),
}

#: The summary's metric columns: the keys of `HEADLINE`.
SUMMARY_METRICS = tuple(key for key, _, _ in HEADLINE)


def summarise(
    records: Sequence[EpisodeRecord] | JudgedRun,
    group_by: Sequence[str] = ("env", "noise"),
    *,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    on_group: Callable[[int], None] | None = None,
    judged: Sequence[JudgedEpisode] | None = None,
) -> "pd.DataFrame":
    """One row per group with every headline metric, its bootstrap CI and its n.

    Args:
        records: episode records, or a `JudgedRun` (each group is then a view of it, judged
            no more).
        group_by: fields among ``env``, ``noise`` (``"none"`` when unset), ``agent``,
            ``suite``, ``family``, ``domain``, ``difficulty`` and ``split``.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.
        on_group: called with each group's number of records once its row is done (progress).
        judged: `judge_records(records)`, in the same order, when the caller has it already
            (the same as passing the `JudgedRun`).

    Returns:
        A DataFrame sorted by the group columns, with ``n`` (episodes) and, for each key of
        `HEADLINE`, the value with ``_lo``, ``_hi`` and ``_n`` (what the value is taken over:
        0 where there is nothing to measure, the value then NaN); plus ``recovery_faults``,
        ``recovery_censored`` and ``committed``. A value that is undefined although there is
        something to measure (a Kaplan-Meier median when fewer than half the faults recover)
        is NaN with a non-zero ``_n``.
    """
    import pandas as pd

    unknown = [g for g in group_by if g not in _GROUP_FIELDS]
    if unknown:
        raise ValueError(f"unknown group_by fields {unknown}; known: {sorted(_GROUP_FIELDS)}")
    run = judge_run(records) if judged is None else JudgedRun(tuple(records_of(records)), tuple(judged))
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, rec in enumerate(run.records):
        groups[tuple(_GROUP_FIELDS[g](rec) for g in group_by)].append(i)
    rows = []
    for key, members in groups.items():
        group = run.select(members)
        row: dict[str, Any] = dict(zip(group_by, key))
        row["n"] = len(group)
        aggs = headline(group, n_boot=n_boot, seed=seed, alpha=alpha)
        for col in SUMMARY_METRICS:
            agg = aggs[col]
            row[col] = _nan(agg["value"])
            row[f"{col}_lo"], row[f"{col}_hi"] = _nan(agg["ci"][0]), _nan(agg["ci"][1])
            row[f"{col}_n"] = agg["n"]
        row["recovery_faults"] = aggs["faults"]
        row["recovery_censored"] = aggs["censored"]
        row["committed"] = aggs["committed"]
        rows.append(row)
        if on_group is not None:
            on_group(len(group))
    columns = [*group_by, "n"]
    for col in SUMMARY_METRICS:
        columns += [col, f"{col}_lo", f"{col}_hi", f"{col}_n"]
    frame = pd.DataFrame(rows, columns=[*columns, "recovery_faults", "recovery_censored", "committed"])
    if rows:
        frame = frame.sort_values(list(group_by), key=lambda s: s.astype(str), kind="stable").reset_index(drop=True)
    return frame


def _nan(x: float | None) -> float:
    return math.nan if x is None else float(x)
