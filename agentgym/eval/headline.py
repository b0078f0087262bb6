"""The headline metrics of a run, each with its bootstrap CI from one set of resamples
(`headline`), and the paired difference of two runs (`compare`). The per-metric functions of
`agentgym.eval.metrics` take their aggregates from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from agentgym.eval.bootstrap import (
    NO_INTERVAL,
    Resamples,
    Stat,
    aggregate,
    f1_stat,
    interval,
    km_stats,
    mean_stat,
    minus,
    ratio_stat,
)
from agentgym.eval.judging import FAULT_KINDS, JudgedEpisode, Record, judge_records

__all__ = ["HEADLINE", "Aggregate", "Measure", "aggregate_measures", "compare", "fault_arrays", "fault_width",
           "headline", "headline_measures", "records_by_key", "select_aggregates"]

Aggregate = dict[str, Any]
#: The headline aggregates of `headline`, in report order: (key, what it is, unit).
HEADLINE: tuple[tuple[str, str, str], ...] = (
    ("success", "success rate", "share of episodes"),
    ("score", "mean score", "score in [0, 1]"),
    ("validity", "tool-call validity", "share of call attempts"),
    ("tool_correctness", "tool-call correctness", "share of valid calls"),
    ("tool_efficiency", "tool-call efficiency", "share of valid calls"),
    ("tool_recall", "gold steps done", "share of gold steps"),
    ("tool_precision", "tool precision (legacy)", "share of valid calls"),
    ("tool_f1", "tool F1 (legacy)", "harmonic mean"),
    ("recovery_share", "faults recovered", "share of recoverable faults"),
    ("recovery_median", "median recovery time (Kaplan-Meier)", "agent turns"),
    ("recovery_rmst", "restricted mean recovery time", "agent turns"),
    ("recovery_median_ms", "median recovery time (Kaplan-Meier)", "simulated ms"),
    ("recovery_rmst_ms", "restricted mean recovery time", "simulated ms"),
    ("goal_consistency", "goal consistency", "mean share of commitments"),
)


@dataclass(frozen=True)
class Measure:
    """One headline statistic of a set of episodes: its resampled function and its ``n``."""

    stat: Stat
    n: int


def _nan_stat(w: np.ndarray) -> np.ndarray:
    return np.full(w.shape[0], np.nan)


def fault_arrays(eps: Sequence[JudgedEpisode]) -> dict[str, np.ndarray]:
    faults = [(i, f) for i, e in enumerate(eps) for f in e.faults]
    return {
        "unit": np.array([i for i, _ in faults], dtype=np.int64),
        "turns": np.array([f.turns for _, f in faults], dtype=np.float64),
        "ms": np.array([f.ms for _, f in faults], dtype=np.float64),
        "recovered": np.array([f.recovered for _, f in faults], dtype=bool),
        "kind": np.array([f.kind for _, f in faults], dtype=object),
    }


def headline_measures(eps: Sequence[JudgedEpisode], *, by_kind: bool = False) -> dict[str, Measure]:
    """Every headline statistic of `eps` (the keys of `HEADLINE`; with `by_kind`, also each fault
    kind's ``recovery_share:<kind>``, ``recovery_median:<kind>`` and ``recovery_rmst:<kind>``)."""
    n = len(eps)
    t = np.array([e.tools for e in eps], dtype=np.float64).reshape(n, 10)
    valid, actions, correct, judged, useful, spent, precise, scored, done, gold = (np.ascontiguousarray(c) for c in t.T)
    p_stat, r_stat = ratio_stat(precise, scored), ratio_stat(done, gold)
    f1 = f1_stat(precise, scored, done, gold)

    fa = fault_arrays(eps)
    n_faults = len(fa["unit"])
    per_ep = np.bincount(fa["unit"], minlength=n).astype(np.float64)
    rec_ep = np.bincount(fa["unit"][fa["recovered"]], minlength=n).astype(np.float64)
    tau = float(max((e.max_turns for e in eps), default=1))
    tau_ms = float(max((e.time_budget_ms for e in eps), default=1.0))
    median, rmst = km_stats(fa["turns"], fa["recovered"], fa["unit"], tau)
    if any(e.timed for e in eps):
        median_ms, rmst_ms = km_stats(fa["ms"], fa["recovered"], fa["unit"], tau_ms)
    else:  # no simulated time was charged (no latency noise): milliseconds mean nothing here
        median_ms = rmst_ms = _nan_stat
    has = np.array([e.committed > 0 for e in eps], dtype=np.float64)
    share = np.array([e.consistent / e.committed if e.committed else 0.0 for e in eps], dtype=np.float64)
    out = {
        "success": Measure(mean_stat(np.array([e.success for e in eps], dtype=np.float64)), n),
        "score": Measure(mean_stat(np.array([e.score for e in eps], dtype=np.float64)), n),
        "validity": Measure(ratio_stat(valid, actions), int(actions.sum())),
        "tool_correctness": Measure(ratio_stat(correct, judged), int(judged.sum())),
        "tool_efficiency": Measure(ratio_stat(useful, spent), int(spent.sum())),
        "tool_recall": Measure(r_stat, int(gold.sum())),
        "tool_precision": Measure(p_stat, int(scored.sum())),
        "tool_f1": Measure(f1, int(gold.sum())),
        "recovery_share": Measure(ratio_stat(rec_ep, per_ep), n_faults),
        "recovery_median": Measure(median, n_faults),
        "recovery_rmst": Measure(rmst, n_faults),
        "recovery_median_ms": Measure(median_ms, n_faults if median_ms is not _nan_stat else 0),
        "recovery_rmst_ms": Measure(rmst_ms, n_faults if rmst_ms is not _nan_stat else 0),
        "goal_consistency": Measure(ratio_stat(share * has, has), int(has.sum())),
    }
    if by_kind:
        for kind in FAULT_KINDS:
            sel = fa["kind"] == kind
            k_ep = np.bincount(fa["unit"][sel], minlength=n).astype(np.float64)
            k_rec = np.bincount(fa["unit"][sel & fa["recovered"]], minlength=n).astype(np.float64)
            k_median, k_rmst = km_stats(fa["turns"][sel], fa["recovered"][sel], fa["unit"][sel], tau)
            out[f"recovery_share:{kind}"] = Measure(ratio_stat(k_rec, k_ep), int(sel.sum()))
            out[f"recovery_median:{kind}"] = Measure(k_median, int(sel.sum()))
            out[f"recovery_rmst:{kind}"] = Measure(k_rmst, int(sel.sum()))
    return out


def _point(stat: Stat, n: int) -> float:
    return float(stat(np.ones((1, n)))[0]) if n else math.nan


def aggregate_measures(measures: Mapping[str, Measure], n_units: int, width: int, n_boot: int, seed: int,
                alpha: float) -> dict[str, Aggregate]:
    """The aggregate of each measure, all from the same resamples of the units."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    boot = Resamples(n_units, n_boot, seed, width).evaluate({k: m.stat for k, m in measures.items()})
    out: dict[str, Aggregate] = {}
    for name, m in measures.items():
        value = _point(m.stat, n_units) if m.n else math.nan
        out[name] = aggregate(value, interval(boot[name], alpha) if m.n else NO_INTERVAL, m.n)
    return out


def headline(records: Sequence[Record], *, by_kind: bool = False, n_boot: int = 2000, seed: int = 0,
             alpha: float = 0.05, judged: Sequence[JudgedEpisode] | None = None) -> dict[str, Any]:
    """Every headline metric of a run, each with its bootstrap CI, from one set of resamples.

    Args:
        records: episode records.
        by_kind: also each fault kind's ``recovery_share:<kind>``, ``recovery_median:<kind>`` and
            ``recovery_rmst:<kind>``.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.
        judged: `judge_records(records)`, when the caller has it already (one judging serves
            several summaries of the same records).

    Returns:
        ``{key: agg}`` for every key of `HEADLINE` (and the per-kind ones), plus ``episodes``,
        ``faults``, ``recovered``, ``censored`` and ``committed`` (episodes with a commitment).
    """
    eps = judge_records(records) if judged is None else judged
    out: dict[str, Any] = aggregate_measures(headline_measures(eps, by_kind=by_kind), len(eps), fault_width(eps), n_boot, seed, alpha)
    faults = [f for e in eps for f in e.faults]
    out.update(episodes=len(eps), faults=len(faults), recovered=sum(f.recovered for f in faults),
               censored=sum(not f.recovered for f in faults), committed=sum(e.committed > 0 for e in eps))
    return out


def fault_width(eps: Sequence[JudgedEpisode]) -> int:
    return sum(len(e.faults) for e in eps)


def compare(records_a: Sequence[Record], records_b: Sequence[Record], *, by_kind: bool = False,
            n_boot: int = 2000, seed: int = 0, alpha: float = 0.05) -> dict[str, Any]:
    """Every headline metric of run A minus run B on the same episodes, with a paired bootstrap CI.

    Episodes are aligned by record ``key`` and resampled in pairs, so what the two runs share
    (the tasks, the noise seeds) cancels. A difference is significant at level `alpha` when its
    interval excludes 0.

    Args:
        records_a: the records of run A.
        records_b: the records of run B (the same keys).
        by_kind: also the per-fault-kind recovery metrics.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"a": {key: agg}, "b": {key: agg}, "diff": {key: agg}, "n": episodes}``; a
        difference has no value where either run's metric has none.

    Raises:
        ValueError: a run holds a key twice, or the runs' keys differ.
    """
    a, b = records_by_key(records_a, "A"), records_by_key(records_b, "B")
    if set(a) != set(b):
        missing = sorted(set(a) ^ set(b))
        raise ValueError(f"the runs cover different episodes (e.g. {missing[0]!r}); compare needs the same keys")
    keys = sorted(a)
    eps_a, eps_b = judge_records([a[k] for k in keys]), judge_records([b[k] for k in keys])
    ma, mb = headline_measures(eps_a, by_kind=by_kind), headline_measures(eps_b, by_kind=by_kind)
    width = max(fault_width(eps_a), fault_width(eps_b))
    diff = {name: Measure(minus(ma[name].stat, mb[name].stat), min(ma[name].n, mb[name].n)) for name in ma}
    return {"a": aggregate_measures(ma, len(keys), width, n_boot, seed, alpha),
            "b": aggregate_measures(mb, len(keys), width, n_boot, seed, alpha),
            "diff": aggregate_measures(diff, len(keys), width, n_boot, seed, alpha), "n": len(keys)}


def select_aggregates(eps: Sequence[JudgedEpisode], names: Sequence[str], n_boot: int, seed: int, alpha: float) -> dict[str, Aggregate]:
    measures = headline_measures(eps)
    return aggregate_measures({k: measures[k] for k in names}, len(eps), fault_width(eps), n_boot, seed, alpha)


def records_by_key(records: Sequence[Record], label: str) -> dict[str, Record]:
    out: dict[str, Record] = {}
    for rec in records:
        key = rec["key"]
        if key in out:
            raise ValueError(f"run {label} holds episode {key!r} twice")
        out[key] = rec
    return out
