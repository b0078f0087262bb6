"""The headline metrics of a run, each with its bootstrap CI from one set of resamples
(`headline`), and the paired difference of two runs (`compare`). The per-metric functions of
`agentgym.eval.metrics` take their aggregates from here.

`METRICS` is the one table of the headline metrics: each row names a metric and says how its
statistic is read off the per-episode values of a judged run (`Pool`, made once per set of
episodes). A new headline metric is one row here; the summary table, `agentgym report`'s CSV,
`agentgym compare` and the leaderboard's cells follow it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

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
from agentgym.eval.judging import FAULT_KINDS, EpisodeRecord, JudgedEpisode, JudgedRun, ToolCounts, judge_run

__all__ = ["HEADLINE", "METRICS", "REPORT_TABLES", "TOOL_RATES", "Aggregate", "HeadlineMetric", "Measure", "Pool", "aggregate_measures",
           "compare", "fault_arrays", "fault_width", "headline", "headline_measures", "judged_in_order", "records_by_key",
           "records_of", "select_aggregates"]

Aggregate = dict[str, Any]


@dataclass(frozen=True)
class Measure:
    """One headline statistic of a set of episodes: its resampled function and its ``n``."""

    stat: Stat
    n: int


def _nan_stat(w: np.ndarray) -> np.ndarray:
    return np.full(w.shape[0], np.nan)


def fault_arrays(eps: Sequence[JudgedEpisode]) -> dict[str, np.ndarray]:
    """Every counted fault of `eps` as parallel arrays: its episode's index (``unit``), its
    ``turns`` and ``ms`` to recovery or censoring, whether it was ``recovered``, and its ``kind``."""
    faults = [(i, f) for i, e in enumerate(eps) for f in e.faults]
    return {
        "unit": np.array([i for i, _ in faults], dtype=np.int64),
        "turns": np.array([f.turns for _, f in faults], dtype=np.float64),
        "ms": np.array([f.ms for _, f in faults], dtype=np.float64),
        "recovered": np.array([f.recovered for _, f in faults], dtype=bool),
        "kind": np.array([f.kind for _, f in faults], dtype=object),
    }


class Pool:
    """The per-episode values of a set of judged episodes that the headline statistics read.

    Made once per set: every metric reads the same arrays, so a vector two statistics share is
    one column of the bootstrap's product (`agentgym.eval.bootstrap.Resamples.evaluate`).

    Attributes:
        episodes: the judged episodes. n: how many.
        success, score: per episode.
        tools: per `ToolCounts` field, its count per episode.
        faults: `fault_arrays` of the episodes. per_episode, recovered: faults and recovered
            faults per episode.
        tau, tau_ms: the restricted mean's horizon: the largest turn and time budget.
        km: the Kaplan-Meier (median, restricted mean) of the turns to recover; km_ms the same
            in simulated ms, None when no time was charged (no latency noise).
        committed: 1 for an episode with a commitment, else 0. consistent_share: its share of
            consistent commitments (0 without any).
    """

    def __init__(self, eps: Sequence[JudgedEpisode]) -> None:
        self.episodes = eps
        n = self.n = len(eps)
        t = np.array([e.tools for e in eps], dtype=np.float64).reshape(n, len(ToolCounts._fields))
        self.tools: dict[str, np.ndarray] = {name: np.ascontiguousarray(column)
                                             for name, column in zip(ToolCounts._fields, t.T)}
        self.success = np.array([e.success for e in eps], dtype=np.float64)
        self.score = np.array([e.score for e in eps], dtype=np.float64)
        fa = self.faults = fault_arrays(eps)
        self.per_episode = np.bincount(fa["unit"], minlength=n).astype(np.float64)
        self.recovered = np.bincount(fa["unit"][fa["recovered"]], minlength=n).astype(np.float64)
        self.tau = float(max((e.max_turns for e in eps), default=1))
        self.tau_ms = float(max((e.time_budget_ms for e in eps), default=1.0))
        self.km = km_stats(fa["turns"], fa["recovered"], fa["unit"], self.tau)
        self.km_ms = km_stats(fa["ms"], fa["recovered"], fa["unit"], self.tau_ms) if any(e.timed for e in eps) else None
        self.committed = np.array([e.committed > 0 for e in eps], dtype=np.float64)
        self.consistent_share = np.array([e.consistent / e.committed if e.committed else 0.0 for e in eps],
                                         dtype=np.float64)

    @property
    def n_faults(self) -> int:
        return len(self.faults["unit"])

    def rate(self, numerator: str, denominator: str) -> Measure:
        """The pooled ratio of two `ToolCounts` fields, over the calls its denominator counts."""
        den = self.tools[denominator]
        return Measure(ratio_stat(self.tools[numerator], den), int(den.sum()))

    def recovery_ms(self, which: int) -> Measure:
        """The Kaplan-Meier median (0) or restricted mean (1) in simulated ms: no value without time."""
        if self.km_ms is None:  # no simulated time was charged: milliseconds mean nothing here
            return Measure(_nan_stat, 0)
        return Measure(self.km_ms[which], self.n_faults)


@dataclass(frozen=True)
class HeadlineMetric:
    """One headline metric.

    Attributes:
        key: its key in every summary (``tool_correctness``).
        what: what it is, in words.
        unit: what its value is a share or a number of.
        measure: its statistic and ``n`` over a set of judged episodes.
        table: the table of ``report.md`` that shows it (`REPORT_TABLES`); None: the CSV only.
        label: its column there.
        percent: shown as a percentage there.
    """

    key: str
    what: str
    unit: str
    measure: Callable[[Pool], Measure]
    table: str | None = None
    label: str = ""
    percent: bool = False


#: The tool-call rates: headline key -> (numerator, denominator), fields of `ToolCounts`.
TOOL_RATES: dict[str, tuple[str, str]] = {
    "validity": ("valid", "attempts"),
    "tool_correctness": ("right", "judged"),
    "tool_efficiency": ("useful", "spent"),
    "tool_recall": ("done", "gold"),
    "tool_precision": ("precise", "scored"),
}


def _tool_rate(key: str) -> Callable[[Pool], Measure]:
    numerator, denominator = TOOL_RATES[key]
    return lambda p: p.rate(numerator, denominator)


def _f1(p: Pool) -> Measure:
    t = p.tools
    return Measure(f1_stat(t["precise"], t["scored"], t["done"], t["gold"]), int(t["gold"].sum()))


_COMPLETION, _RECOVERY = "Completion and tool calls", "Recovery and goal consistency"

#: The headline metrics, in report order (docs/METRICS.md defines each).
METRICS: tuple[HeadlineMetric, ...] = (
    HeadlineMetric("success", "success rate", "share of episodes", lambda p: Measure(mean_stat(p.success), p.n),
                   _COMPLETION, "success", True),
    HeadlineMetric("score", "mean score", "score in [0, 1]", lambda p: Measure(mean_stat(p.score), p.n),
                   _COMPLETION, "score"),
    HeadlineMetric("validity", "tool-call validity", "share of call attempts", _tool_rate("validity"),
                   _COMPLETION, "validity", True),
    HeadlineMetric("tool_correctness", "tool-call correctness", "share of valid calls", _tool_rate("tool_correctness"),
                   _COMPLETION, "correctness", True),
    HeadlineMetric("tool_efficiency", "tool-call efficiency", "share of valid calls", _tool_rate("tool_efficiency"),
                   _COMPLETION, "efficiency", True),
    HeadlineMetric("tool_recall", "gold steps done", "share of gold steps", _tool_rate("tool_recall"),
                   _COMPLETION, "gold steps done", True),
    HeadlineMetric("tool_precision", "tool precision (legacy)", "share of valid calls", _tool_rate("tool_precision")),
    HeadlineMetric("tool_f1", "tool F1 (legacy)", "harmonic mean", _f1),
    HeadlineMetric("recovery_share", "faults recovered", "share of recoverable faults",
                   lambda p: Measure(ratio_stat(p.recovered, p.per_episode), p.n_faults),
                   _RECOVERY, "faults recovered", True),
    HeadlineMetric("recovery_median", "median recovery time (Kaplan-Meier)", "agent turns",
                   lambda p: Measure(p.km[0], p.n_faults), _RECOVERY, "median turns"),
    HeadlineMetric("recovery_rmst", "restricted mean recovery time", "agent turns",
                   lambda p: Measure(p.km[1], p.n_faults), _RECOVERY, "mean turns (RMST)"),
    HeadlineMetric("recovery_median_ms", "median recovery time (Kaplan-Meier)", "simulated ms",
                   lambda p: p.recovery_ms(0), _RECOVERY, "median ms"),
    HeadlineMetric("recovery_rmst_ms", "restricted mean recovery time", "simulated ms", lambda p: p.recovery_ms(1),
                   _RECOVERY, "mean ms (RMST)"),
    HeadlineMetric("goal_consistency", "goal consistency", "mean share of commitments",
                   lambda p: Measure(ratio_stat(p.consistent_share * p.committed, p.committed),
                                     int(p.committed.sum())), _RECOVERY, "goal consistency", True),
)
#: The headline aggregates of `headline`, in report order: (key, what it is, unit).
HEADLINE: tuple[tuple[str, str, str], ...] = tuple((m.key, m.what, m.unit) for m in METRICS)
#: The tables of ``report.md``, each (title, [(summary column, label, shown as a percentage)]):
#: the headline metrics that name a table, in `METRICS` order.
REPORT_TABLES: tuple[tuple[str, tuple[tuple[str, str, bool], ...]], ...] = tuple(
    (title, tuple((m.key, m.label, m.percent) for m in METRICS if m.table == title))
    for title in dict.fromkeys(m.table for m in METRICS if m.table is not None))


def headline_measures(eps: Sequence[JudgedEpisode] | Pool, *, by_kind: bool = False) -> dict[str, Measure]:
    """Every headline statistic of `eps` (the keys of `HEADLINE`; with `by_kind`, also each fault
    kind's ``recovery_share:<kind>``, ``recovery_median:<kind>`` and ``recovery_rmst:<kind>``)."""
    p = eps if isinstance(eps, Pool) else Pool(eps)
    out = {m.key: m.measure(p) for m in METRICS}
    if by_kind:
        fa, n = p.faults, p.n
        for kind in FAULT_KINDS:
            sel = fa["kind"] == kind
            k_ep = np.bincount(fa["unit"][sel], minlength=n).astype(np.float64)
            k_rec = np.bincount(fa["unit"][sel & fa["recovered"]], minlength=n).astype(np.float64)
            k_median, k_rmst = km_stats(fa["turns"][sel], fa["recovered"][sel], fa["unit"][sel], p.tau)
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


def headline(records: Sequence[EpisodeRecord] | JudgedRun, *, by_kind: bool = False, n_boot: int = 2000, seed: int = 0,
             alpha: float = 0.05, judged: Sequence[JudgedEpisode] | None = None) -> dict[str, Any]:
    """Every headline metric of a run, each with its bootstrap CI, from one set of resamples.

    Args:
        records: episode records, or a `JudgedRun` (judged once, for several summaries).
        by_kind: also each fault kind's ``recovery_share:<kind>``, ``recovery_median:<kind>`` and
            ``recovery_rmst:<kind>``.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.
        judged: `judge_records(records)`, when the caller has it already (the same as passing
            the `JudgedRun`).

    Returns:
        ``{key: agg}`` for every key of `HEADLINE` (and the per-kind ones), plus ``episodes``,
        ``faults``, ``recovered``, ``censored`` and ``committed`` (episodes with a commitment).
    """
    eps = judge_run(records).episodes if judged is None else judged
    pool = Pool(eps)
    out: dict[str, Any] = aggregate_measures(headline_measures(pool, by_kind=by_kind), len(eps), fault_width(eps),
                                             n_boot, seed, alpha)
    recovered = pool.faults["recovered"]
    out.update(episodes=len(eps), faults=pool.n_faults, recovered=int(recovered.sum()),
               censored=int((~recovered).sum()), committed=int(pool.committed.sum()))
    return out


def fault_width(eps: Sequence[JudgedEpisode]) -> int:
    """The faults of `eps` (the widest per-unit expansion a statistic makes: `Resamples`' width)."""
    return sum(len(e.faults) for e in eps)


def records_of(records: Sequence[EpisodeRecord] | JudgedRun) -> Sequence[EpisodeRecord]:
    """The records themselves, whether given as they are or judged."""
    return records.records if isinstance(records, JudgedRun) else records


def judged_in_order(records: Sequence[EpisodeRecord] | JudgedRun, keys: Sequence[str]) -> tuple[JudgedEpisode, ...]:
    """The judged episodes of `records` with the given `keys`, in that order (each key once in
    `records`: `records_by_key` checks it); records are judged here, a `JudgedRun` is not again."""
    if isinstance(records, JudgedRun):
        at = {rec["key"]: i for i, rec in enumerate(records.records)}
        return records.select(at[k] for k in keys).episodes
    by_key = {rec["key"]: rec for rec in records}
    return judge_run([by_key[k] for k in keys]).episodes


def compare(records_a: Sequence[EpisodeRecord] | JudgedRun, records_b: Sequence[EpisodeRecord] | JudgedRun, *,
            by_kind: bool = False, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05) -> dict[str, Any]:
    """Every headline metric of run A minus run B on the same episodes, with a paired bootstrap CI.

    Episodes are aligned by record ``key`` and resampled in pairs, so what the two runs share
    (the tasks, the noise seeds) cancels. A difference is significant at level `alpha` when its
    interval excludes 0.

    Args:
        records_a: the records of run A (or their `JudgedRun`).
        records_b: the records of run B (the same keys).
        by_kind: also the per-fault-kind recovery metrics.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"a": {key: agg}, "b": {key: agg}, "diff": {key: agg}, "n": episodes}``; a
        difference has no value where either run's metric has none.

    Raises:
        ValueError: a run holds a key twice, or the runs' keys differ.
    """
    a, b = records_by_key(records_of(records_a), "A"), records_by_key(records_of(records_b), "B")
    if set(a) != set(b):
        missing = sorted(set(a) ^ set(b))
        raise ValueError(f"the runs cover different episodes (e.g. {missing[0]!r}); compare needs the same keys")
    keys = sorted(a)
    eps_a, eps_b = judged_in_order(records_a, keys), judged_in_order(records_b, keys)
    ma, mb = headline_measures(eps_a, by_kind=by_kind), headline_measures(eps_b, by_kind=by_kind)
    width = max(fault_width(eps_a), fault_width(eps_b))
    diff = {name: Measure(minus(ma[name].stat, mb[name].stat), min(ma[name].n, mb[name].n)) for name in ma}
    return {"a": aggregate_measures(ma, len(keys), width, n_boot, seed, alpha),
            "b": aggregate_measures(mb, len(keys), width, n_boot, seed, alpha),
            "diff": aggregate_measures(diff, len(keys), width, n_boot, seed, alpha), "n": len(keys)}


def select_aggregates(eps: Sequence[JudgedEpisode] | Pool, names: Sequence[str], n_boot: int, seed: int,
                      alpha: float) -> dict[str, Aggregate]:
    """The aggregates of the headline metrics `names` only, from one set of resamples."""
    pool = eps if isinstance(eps, Pool) else Pool(eps)
    measures = headline_measures(pool)
    return aggregate_measures({k: measures[k] for k in names}, pool.n, fault_width(pool.episodes), n_boot, seed,
                              alpha)


def records_by_key(records: Sequence[EpisodeRecord], label: str) -> dict[str, EpisodeRecord]:
    """`records` by their ``key``.

    Raises:
        ValueError: a key appears twice (`label` names the run in the message).
    """
    out: dict[str, EpisodeRecord] = {}
    for rec in records:
        key = rec["key"]
        if key in out:
            raise ValueError(f"run {label} holds episode {key!r} twice")
        out[key] = rec
    return out
