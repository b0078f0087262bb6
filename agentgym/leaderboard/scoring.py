"""The numbers of a leaderboard entry, computed by `agentgym.eval.metrics` from replayed records.

One summary per submission: the suite's primary score with its bootstrap 95% CI, the four
headline metrics (completion; tool accuracy as validity, correctness, efficiency and recall;
recovery as the share recovered and Kaplan-Meier times; goal consistency), pass^k over the
suite's trials, and the same per env and noise cell. Each aggregate is the metrics module's
``{"value", "ci": [lo, hi], "n"}``. The bootstrap is seeded, so a summary is a pure function of
the records: the same submission always shows the same numbers.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from agentgym.bench.suites import Suite
from agentgym.eval import metrics
from agentgym.eval.judging import judge_records
from agentgym.leaderboard.submission import CLAIMABLE, Rejected

__all__ = ["summarise_submission", "check_claims", "claims_from", "primary_aggregate", "HEADLINE", "N_BOOT",
           "BOOT_SEED"]

N_BOOT = 2000
#: Per env and noise cell (shown on an entry's page, never ranked on): fewer resamples suffice.
N_BOOT_CELLS = 500
BOOT_SEED = 0
#: Summary keys shown on the board, in column order.
HEADLINE = ("success", "score", "tool_correctness", "tool_efficiency", "recovery_share", "recovery_median",
            "goal_consistency")
#: Claimed numbers must equal the recomputed ones to this absolute tolerance (float summation order).
CLAIM_TOLERANCE = 1e-9


#: Headline aggregates of `agentgym.eval.metrics.headline` -> their key in a summary.
_SUMMARY_KEYS = (
    ("success", "success"), ("score", "score"), ("validity", "tool_validity"),
    ("tool_correctness", "tool_correctness"), ("tool_efficiency", "tool_efficiency"), ("tool_recall", "tool_recall"),
    ("tool_f1", "tool_f1"), ("recovery_share", "recovery_share"), ("recovery_median", "recovery_median"),
    ("recovery_rmst", "recovery_rmst"), ("recovery_median_ms", "recovery_median_ms"),
    ("goal_consistency", "goal_consistency"),
)


def summarise_submission(records: Sequence[Mapping[str, Any]], suite: Suite) -> dict[str, Any]:
    """The entry's numbers from its (replayed) records.

    Returns:
        ``{"episodes", "primary", "success", "score", "tool_validity", "tool_correctness",
        "tool_efficiency", "tool_recall", "tool_f1", "recovery_share", "recovery_median" (the
        Kaplan-Meier median, turns), "recovery_rmst", "recovery_median_ms", "recovery_faults",
        "recovery_censored", "goal_consistency", "committed", "pass_hat_k" (an aggregate with
        ``k``, or None for single-trial suites), "cells"}``.
    """
    judged = judge_records(records)  # once, for the headline and every cell
    aggs = metrics.headline(records, n_boot=N_BOOT, seed=BOOT_SEED, judged=judged)
    summary: dict[str, Any] = {"episodes": len(records), "primary": suite.primary}
    summary.update((key, aggs[name]) for name, key in _SUMMARY_KEYS)
    summary.update(recovery_faults=aggs["faults"], recovery_censored=aggs["censored"], committed=aggs["committed"],
                   pass_hat_k=None)
    if suite.trials > 1:
        k = suite.trials
        summary["pass_hat_k"] = {**metrics.reliability(records, ks=(k,), n_boot=N_BOOT, seed=BOOT_SEED)[f"pass^{k}"],
                                 "k": k}
    cells = metrics.summarise(records, group_by=("env", "noise"), n_boot=N_BOOT_CELLS, seed=BOOT_SEED, judged=judged)
    summary["cells"] = [{k: _plain(v) for k, v in row.items()} for row in cells.to_dict(orient="records")]
    if not isinstance(summary.get(suite.primary), dict):
        raise ValueError(f"suite {suite.id} ranks by {suite.primary!r}, which is not a summary aggregate")
    return summary


def _plain(v: Any) -> Any:
    # pandas hands back numpy scalars and NaN; the summary is stored as JSON.
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def primary_aggregate(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The aggregate the board ranks by (the suite's ``primary``)."""
    return summary[summary["primary"]]


def check_claims(claimed: Mapping[str, float | None], summary: Mapping[str, Any]) -> None:
    """Refuse claimed numbers that are not the recomputed ones (never a mere warning).

    Raises:
        Rejected: naming the first claim that differs.
    """
    for name in CLAIMABLE:
        if name not in claimed:
            continue
        agg = summary.get(name)
        actual = agg.get("value") if isinstance(agg, Mapping) else None
        want = claimed[name]
        same = (want is None and actual is None) or (
            want is not None and actual is not None and abs(float(want) - float(actual)) <= CLAIM_TOLERANCE)
        if not same:
            raise Rejected("claim_mismatch", f"the manifest claims {name} = {want!r}; the replayed episodes give "
                           f"{actual!r}", field=f"claimed.{name}")


def claims_from(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """What `agentgym submit` claims: the summary's point values of `CLAIMABLE`."""
    out: dict[str, float | None] = {}
    for name in CLAIMABLE:
        agg = summary.get(name)
        if isinstance(agg, Mapping):
            out[name] = agg.get("value")
    return out
