"""Metrics: pure functions of episode records (never of live env objects).

Every function here takes the records of a run (`agentgym.eval.records`) and returns plain
dicts, so the leaderboard can recompute a submission's numbers from its replayed records.
Each aggregate comes with a percentile-bootstrap confidence interval over EPISODES (over TASKS
for pass^k), as ``{"value": float | None, "ci": [lo, hi] | [None, None], "n": int}`` where
``n`` counts what ``value`` is taken over (episodes, calls, faults or tasks). docs/METRICS.md
states each definition with its formula, its unit and an example episode, and holds the
sensitivity matrix of the shipped defect agents (`agentgym validate-metrics`).

The definitions, in short:

- completion: success rate and mean score.
- tool accuracy: validity (calls that parse and fit a tool's schema, over every attempt);
  correctness (of the calls that decide something, the share whose arguments are right: they
  contradict nothing the user stated, no tool refused them, and a call of a plan tool fits a step
  of the plan; a value a tool returned corrupted is what the agent was told); efficiency (valid
  calls that advance the gold plan: they succeed, match a step of the plan, or of a plan a goal
  shift replaced, and repeat no call that already succeeded, but for the one check of a read
  the briefs ask for before a write); recall (gold steps done). Any other re-read is neither
  incorrect nor free: it decides nothing new, and it is not efficient.
- recovery: each fault is tied to what it hits (``hits`` in the noise log). A tool failure is
  recovered when a later successful call completes the step it hit; a corrupted result when
  the step consuming the corrupted value is later completed with the true value and the
  corrupted value never reaches a successful call or the final state; an ambiguity when the
  blurred detail is known before the first commitment and the first commitment after it honours
  it (a detail never used recovers nothing); a goal shift at the first successful write that
  carries the new value and contradicts nothing (a cancel alone is not one). Times are
  Kaplan-Meier statistics over every recoverable fault, unrecovered ones censored at the
  episode's end, in agent turns and in simulated milliseconds.
- goal consistency: per episode, the share of commitments (write calls that went through or that
  break a stated constraint, proposals, the final state) that satisfy every constraint stated so
  far; the mean over episodes that committed. A write that did not go through and breaks nothing
  committed to nothing and is left out.

Doing nothing and acting at random land where they belong: 0, or n/a where the behaviour a metric
names never happened (no call: no validity; nothing committed: no consistency); the defect suite
holds both to it (`agentgym.testing.defects`, the do-nothing and random rows).

Conventions (the choices a reader would otherwise have to guess):

- An episode whose ``agent_error`` is set is a failure: success False, score 0. Whatever it did
  before the error (its calls, its faults) still counts in the other metrics.
- Rates over calls or faults are pooled ("micro") ratios: the sum of numerators over the sum of
  denominators, and the bootstrap resamples episodes and recomputes the pooled ratio. A rate
  with an empty denominator (no tool calls, no faults, no commitments) is None, never 0 or 1,
  and such an episode adds nothing to the pool.
- Injected faults are the environment's, never the agent's: a call with ``injected: True`` is
  left out of validity and efficiency, and a retry after one is legitimate.

Where the parts live: `agentgym.eval.judging` reads and judges one record (`judge_episode`, with
the verdicts of `agentgym.eval.verdicts`) and a run (`judge_run`: each record once, a
`JudgedRun`), `agentgym.eval.headline` pools the judgements into the headline aggregates
(`METRICS`, one row per metric) and paired differences, `agentgym.eval.bootstrap` draws the
resamples, and `agentgym.eval.summary` makes the pandas table. This module holds the per-metric
functions and exports every public name of those.

Every function here takes records or a `JudgedRun`: given records, it judges them; given a
`JudgedRun`, it judges nothing again, so a report that shows several metrics of one run judges
each record once (`judge_run`) and every metric is a view of that judging.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from agentgym.core.gold import call_matches
from agentgym.eval.bootstrap import (
    NO_INTERVAL,
    Resamples,
    aggregate,
    bootstrap_ci,
    interval,
    km_point,
    km_stats,
    ratio_stat,
)
from agentgym.eval.headline import (
    HEADLINE,
    METRICS,
    Aggregate,
    Measure,
    Pool,
    aggregate_measures,
    compare,
    fault_width,
    headline,
    headline_measures,
    judged_in_order,
    records_by_key,
    records_of,
    select_aggregates,
)
from agentgym.eval.judging import (
    FAULT_KINDS,
    LEFT_OUT,
    EpisodeRecord,
    JudgedEpisode,
    JudgedRun,
    ToolCounts,
    judge_episode,
    judge_run,
    succeeded,
)
from agentgym.eval.summary import summarise
from agentgym.eval.verdicts import CallVerdict, CommitmentVerdict, EpisodeVerdict, FaultVerdict

__all__ = [
    "completion",
    "tool_accuracy",
    "recovery",
    "goal_consistency",
    "headline",
    "compare",
    "pass_hat_k",
    "pass_at_k",
    "reliability",
    "efficiency",
    "bootstrap_ci",
    "paired_comparison",
    "summarise",
    "call_matches",
    "FAULT_KINDS",
    "HEADLINE",
    "METRICS",
    "judge_episode",
    "judge_run",
    "JudgedRun",
    "ToolCounts",
    "EpisodeVerdict",
    "CallVerdict",
    "FaultVerdict",
    "CommitmentVerdict",
]


# ============================================================================ completion
def completion(
    records: Sequence[EpisodeRecord] | JudgedRun, *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Success rate and mean score (partial credit) over episodes.

    Args:
        records: episode records, or a `JudgedRun`.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"success_rate": agg, "mean_score": agg, "episodes": n}``; an ``agent_error``
        episode counts as a failure with score 0.
    """
    eps = judge_run(records).episodes
    aggs = select_aggregates(eps, ("success", "score"), n_boot, seed, alpha)
    return {"success_rate": aggs["success"], "mean_score": aggs["score"], "episodes": len(eps)}


# ============================================================================ tool accuracy
def tool_accuracy(
    records: Sequence[EpisodeRecord] | JudgedRun, *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Validity, correctness, efficiency and recall of the agent's tool calls.

    - validity: valid calls over the agent's call attempts (every non-injected call, plus every
      turn-level error such as PARSE_ERROR, each an invalid action).
    - correctness: of the valid calls that decide something (injected failures included: their
      arguments were the agent's, judged at the retry when one was sent again; a repeat of a
      call that already succeeded decides nothing and is left out), the share with right
      arguments. A call is wrong when it contradicts a constraint the user had stated
      (``contradicts``), when a tool refused it for the agent's own reasons (an error that is not
      injected: a policy violation, an unknown id, a full slot) or when it writes with a tool of the gold plan but fits none of its steps (wrong data),
      except where it carries a value a tool returned corrupted: the agent was told it. A right
      call that no plan needs (a padding read, a decoy, a read of a record the plan does not
      need, even with a plan tool) is left out: it is efficiency's business, so padding cannot
      raise correctness.
    - efficiency: valid non-injected calls that advance the work over valid non-injected calls
      (a call passing on a value a tool returned corrupted left out, as correctness leaves it):
      a call that succeeded on a real tool (not a decoy), matches a step of the gold plan or of
      a plan a goal shift replaced, and repeats no call that already succeeded (same tool, equal
      arguments: a duplicate), but for one check of each plan read, in a later turn and before a
      later write (the briefs ask to check again a value a write rests on), and one more read per
      corrupted result of it. So any other re-read is correct but not free. A read the gold lists
      as ``useful_calls``, the first read after a write an injected fault stopped, and a plan's
      write made again after other writes count as the plan's do (docs/METRICS.md).
    - recall: gold steps completed by a successful call over gold steps.
    - precision and F1 (legacy): valid non-injected calls matching a gold step not yet done (or
      of a replaced plan), and the harmonic mean of that precision and recall.

    Episodes without a gold plan (no ``metrics.gold``) count for validity and correctness only.
    The per-episode counts are the episode's `ToolCounts`.

    Args:
        records: episode records, or a `JudgedRun`.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"validity", "correctness", "efficiency", "recall", "precision", "f1": agg, "calls": n,
        "episodes": n}``; for F1, ``n`` is the number of gold steps.
    """
    eps = judge_run(records).episodes
    aggs = select_aggregates(eps, ("validity", "tool_correctness", "tool_efficiency", "tool_recall", "tool_precision",
                         "tool_f1"), n_boot, seed, alpha)
    return {"validity": aggs["validity"], "correctness": aggs["tool_correctness"],
            "efficiency": aggs["tool_efficiency"], "recall": aggs["tool_recall"],
            "precision": aggs["tool_precision"], "f1": aggs["tool_f1"],
            "calls": sum(len(e.calls) for e in eps), "episodes": len(eps)}


# ============================================================================ recovery
def recovery(
    records: Sequence[EpisodeRecord] | JudgedRun, *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """How often and how fast the agent recovers from the faults injected into its episodes.

    Faults are the noise events of kinds ``tool_failure``, ``corruption``, ``ambiguity`` and
    ``goal_shift`` tied to what they hit (``hits``). Left out, and counted: events marked
    ``recoverable: False`` (``unrecoverable``), events that hit nothing (``unaffected``: a
    failure of a call the plan does not need, a corrupted value nothing uses), and failures of a
    step a later goal shift replaced (``superseded``). A fault at step t is recovered:

    - tool_failure of gold step g: at the first later successful call that completes g
      (equivalent arguments: it matches the step; a retry, or another call the step allows);
    - corruption hitting gold step g: when a later successful call completes g carrying the
      true value, and the corrupted value never reaches a successful later call nor the final
      state; at the turn of the first clean successful re-read of the corrupted call before that
      (a re-read in the same turn counts: zero turns), else at the completing call's turn;
    - ambiguity on constraint c: at the turn c first appears in the ``constraints`` timeline,
      provided no commitment (a valid write call, a proposal) came before it or in that turn, and
      the first commitment after it (a write that went through, a proposal) does not break c:
      a detail that is never used recovers nothing;
    - goal_shift: at the first successful valid write call after the shift that contradicts
      nothing stated and acts on the new goal: it carries the new value (``detail.to``) or is a
      step of the new gold plan (a cancel does neither: alone, it is not a recovery), and it calls
      a tool of the plan the shift replaced (another sub-task's write in a session is not one).

    An unrecovered fault is censored at the episode's end (``turns - t`` turns), so it never
    shortens the times: the median and restricted mean are Kaplan-Meier statistics over all
    recoverable faults, the restricted mean up to the largest turn budget of the episodes (in
    ms: the largest time budget). Decoy calls never recover anything.

    Args:
        records: episode records, or a `JudgedRun`.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``share`` (recovered over faults), ``median`` and ``p90`` (Kaplan-Meier quantiles of
        turns to recover), ``rmst`` (restricted mean, turns), ``median_ms`` and ``rmst_ms`` (the
        same in simulated milliseconds; None without latency noise), each an aggregate with a CI
        over episodes (``n``: faults); ``km_median`` (the median's value); the counts
        ``faults``, ``recovered``, ``censored``, ``unrecoverable``, ``unaffected`` and
        ``superseded``; and ``by_kind``, the counts, share and median per fault kind.
    """
    eps = judge_run(records).episodes
    pool = Pool(eps)
    measures = headline_measures(pool)
    fa, tau = pool.faults, pool.tau
    p90, _ = km_stats(fa["turns"], fa["recovered"], fa["unit"], tau, q=0.9)
    measures["p90"] = Measure(p90, measures["recovery_median"].n)
    names = ("recovery_share", "recovery_median", "p90", "recovery_rmst", "recovery_median_ms", "recovery_rmst_ms")
    aggs = aggregate_measures({k: measures[k] for k in names}, len(eps), fault_width(eps), n_boot, seed, alpha)
    done = fa["recovered"]
    out: dict[str, Any] = {"share": aggs["recovery_share"], "median": aggs["recovery_median"], "p90": aggs["p90"],
                           "rmst": aggs["recovery_rmst"], "median_ms": aggs["recovery_median_ms"],
                           "rmst_ms": aggs["recovery_rmst_ms"], "km_median": aggs["recovery_median"]["value"]}
    out.update(faults=len(done), recovered=int(done.sum()), censored=int((~done).sum()),
               **{why: sum(w == why for e in eps for _, w in e.left_out) for why in LEFT_OUT})
    by_kind: dict[str, dict[str, Any]] = {}
    for kind in FAULT_KINDS:
        sel = fa["kind"] == kind
        if sel.any():
            median, _ = km_point(fa["turns"][sel], done[sel], tau)
            by_kind[kind] = {"faults": int(sel.sum()), "recovered": int((sel & done).sum()),
                             "share": float((sel & done).sum() / sel.sum()),
                             "median": median if math.isfinite(median) else None}
    out["by_kind"] = by_kind
    out["episodes"] = len(eps)
    return out


# ============================================================================ goal consistency
def goal_consistency(
    records: Sequence[EpisodeRecord] | JudgedRun, *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Per episode, the share of commitments that satisfy every constraint stated so far; the
    mean over the episodes that made at least one.

    Commitments: every valid write call on a real tool that went through, or that breaks a stated
    constraint whether or not it went through (``contradicts`` empty: it breaks no stated
    constraint; the arguments were the agent's choice even where a fault stopped the call), every
    proposal and the final state the env judged (``metrics.commitments``: a proposal against the
    constraints stated before it, the final state against all stated by the end, so a constraint
    that changed and was not acted upon counts against it). Reads commit nothing; so does a write
    that did not go through (refused, or stopped by an injected fault) and breaks nothing: it
    committed to nothing, and counting it consistent would reward writes that miss the world.

    Args:
        records: episode records, or a `JudgedRun`.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"goal_consistency": agg, "episodes": n, "committed": n}``; ``n`` of the aggregate is
        the number of episodes with a commitment, and its value None when there are none (an
        episode that commits nothing has no consistency to measure, never 100%).
    """
    eps = judge_run(records).episodes
    aggs = select_aggregates(eps, ("goal_consistency",), n_boot, seed, alpha)
    return {"goal_consistency": aggs["goal_consistency"], "episodes": len(eps),
            "committed": sum(e.committed > 0 for e in eps)}


def _mean_agg(values: np.ndarray, n_boot: int, seed: int, alpha: float) -> Aggregate:
    n = len(values)
    if n == 0:
        return aggregate(None, NO_INTERVAL, 0)
    return aggregate(float(values.mean()), bootstrap_ci(values, "mean", n_boot, seed, alpha), n)



# ============================================================================ pass^k
def _task_key(rec: EpisodeRecord) -> tuple[Any, ...]:
    env = rec.get("env") or {}
    return (env.get("id"), env.get("noise") or None, rec.get("seed"))


def _task_tallies(records: Sequence[EpisodeRecord] | JudgedRun) -> list[tuple[int, int]]:
    """(trials, successes) per task; a task is env id + noise + seed (trials re-draw the noise)."""
    if isinstance(records, JudgedRun):
        pairs: Iterable[tuple[EpisodeRecord, bool]] = (
            (r, e.success) for r, e in zip(records.records, records.episodes))
    else:  # success alone: no call nor fault needs judging
        pairs = ((r, succeeded(r)) for r in records)
    tally: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0])
    for rec, success in pairs:
        t = tally[_task_key(rec)]
        t[0] += 1
        t[1] += int(success)
    return [(n, c) for n, c in tally.values()]


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")


def _pass_values(tallies: Iterable[tuple[int, int]], k: int, hat: bool) -> np.ndarray:
    out = []
    for n, c in tallies:
        if n < k:
            continue
        if hat:
            out.append(math.comb(c, k) / math.comb(n, k))
        else:
            out.append(1.0 - math.comb(n - c, k) / math.comb(n, k))
    return np.asarray(out, dtype=np.float64)


def pass_hat_k(records: Sequence[EpisodeRecord] | JudgedRun, k: int) -> float:
    """tau-bench's pass^k: the chance that k trials of a task all succeed, averaged over tasks.

    For a task with n trials and c successes, pass^k = C(c, k) / C(n, k), the unbiased
    estimate from n >= k trials; tasks with fewer than k trials are left out. A task is an
    env id, a noise setting and a seed; pass the records of one agent.

    Args:
        records: episode records, or a `JudgedRun`.
        k: the number of trials that must all succeed.

    Returns:
        The mean over tasks, or NaN when no task has k trials.
    """
    _check_k(k)
    v = _pass_values(_task_tallies(records), k, hat=True)
    return float(v.mean()) if v.size else math.nan


def pass_at_k(records: Sequence[EpisodeRecord] | JudgedRun, k: int) -> float:
    """pass@k: the chance that at least one of k trials succeeds, 1 - C(n-c, k) / C(n, k).

    Args:
        records: episode records, or a `JudgedRun`.
        k: the number of trials.

    Returns:
        The mean over tasks with at least k trials, or NaN when there are none.
    """
    _check_k(k)
    v = _pass_values(_task_tallies(records), k, hat=False)
    return float(v.mean()) if v.size else math.nan


def reliability(records: Sequence[EpisodeRecord] | JudgedRun, ks: Sequence[int] = (1, 2, 4, 8), *, n_boot: int = 2000,
                seed: int = 0, alpha: float = 0.05) -> dict[str, Any]:
    """pass^k and pass@k for several k, each with a bootstrap CI over TASKS.

    Args:
        records: episode records, or a `JudgedRun`.
        ks: the values of k.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"pass^k": agg, "pass@k": agg, ...}`` for each k, ``n`` being the tasks with at
        least k trials (value None when there are none), and ``"tasks"``.
    """
    tallies = _task_tallies(records)
    out: dict[str, Any] = {}
    for k in ks:
        _check_k(k)
        out[f"pass^{k}"] = _mean_agg(_pass_values(tallies, k, True), n_boot, seed, alpha)
        out[f"pass@{k}"] = _mean_agg(_pass_values(tallies, k, False), n_boot, seed, alpha)
    out["tasks"] = len(tallies)
    return out


# ============================================================================ efficiency
def efficiency(
    records: Sequence[EpisodeRecord] | JudgedRun, *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Cost per success: turns, tool calls and tokens spent over all episodes per success.

    Costs are summed over every episode, failures included (what a success costs), then
    divided by the number of successes; None with no successes. Tokens (prompt plus
    completion) use only the episodes whose record has ``usage``. Policy violations are the
    lengths of ``metrics.score_details.policy_violations``, per episode that reports them.

    Args:
        records: episode records, or a `JudgedRun`.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``turns_per_success``, ``tool_calls_per_success``, ``tokens_per_success`` and
        ``policy_violations`` (mean per reporting episode) as aggregates (``n``: successes, or
        reporting episodes), plus ``successes``, ``episodes`` and ``policy_violations_total``.
    """
    eps = judge_run(records).episodes
    success = np.array([e.success for e in eps], dtype=np.float64)
    turns = np.array([e.turns for e in eps], dtype=np.float64)
    calls = np.array([len(e.calls) for e in eps], dtype=np.float64)
    priced = [i for i, e in enumerate(eps) if e.tokens is not None]
    tokens = np.array([eps[i].tokens for i in priced], dtype=np.float64)
    viol = np.array([e.policy_violations for e in eps if e.policy_violations is not None], dtype=np.float64)

    def per_success(cost: np.ndarray, succ: np.ndarray) -> Aggregate:
        if succ.sum() == 0:
            return aggregate(None, NO_INTERVAL, 0)
        stats = Resamples(len(cost), n_boot, seed).evaluate({"r": ratio_stat(cost, succ)})["r"]
        return aggregate(float(cost.sum() / succ.sum()), interval(stats, alpha), int(succ.sum()))

    return {
        "turns_per_success": per_success(turns, success),
        "tool_calls_per_success": per_success(calls, success),
        "tokens_per_success": per_success(tokens, success[priced]) if priced else aggregate(None, NO_INTERVAL, 0),
        "policy_violations": _mean_agg(viol, n_boot, seed, alpha),
        "policy_violations_total": int(viol.sum()),
        "successes": int(success.sum()),
        "episodes": len(eps),
    }


# ============================================================================ paired comparison
_PAIRED_METRICS: dict[str, Callable[[JudgedEpisode], float]] = {
    "success": lambda e: float(e.success),
    "score": lambda e: e.score,
    "turns": lambda e: float(e.turns),
    "tool_calls": lambda e: float(len(e.calls)),
}


def paired_comparison(
    records_a: Sequence[EpisodeRecord] | JudgedRun,
    records_b: Sequence[EpisodeRecord] | JudgedRun,
    metric: str | Callable[[EpisodeRecord], float] = "success",
    *,
    intersect: bool = False,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Run A minus run B on the same episodes, with a paired bootstrap CI.

    Episodes are aligned by record ``key`` (env, noise, seed, trial), and the bootstrap
    resamples the aligned pairs, so the shared variance of a task's difficulty cancels.

    Args:
        records_a: the records of run A (or their `JudgedRun`).
        records_b: the records of run B (or theirs).
        metric: ``"success"``, ``"score"``, ``"turns"``, ``"tool_calls"``, or a callable
            ``record -> float``.
        intersect: when the runs cover different episodes, compare on the keys both hold
            (and set ``partial``) instead of raising.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"metric", "a", "b", "diff": agg, "n", "partial", "only_in_a", "only_in_b"}``, ``a``
        and ``b`` being each run's mean on the compared episodes.

    Raises:
        ValueError: a run holds a key twice, or (without ``intersect``) the runs' keys differ;
            the message names the missing keys.
    """
    if not callable(metric) and metric not in _PAIRED_METRICS:
        raise ValueError(f"metric must be one of {sorted(_PAIRED_METRICS)} or a callable, got {metric!r}")
    a, b = records_by_key(records_of(records_a), "A"), records_by_key(records_of(records_b), "B")
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    if (only_a or only_b) and not intersect:
        def show(keys: list[str]) -> str:
            return ", ".join(keys[:5]) + (f" (+{len(keys) - 5} more)" if len(keys) > 5 else "")
        parts = [f"missing from run B: {show(only_a)}" if only_a else "",
                 f"missing from run A: {show(only_b)}" if only_b else ""]
        raise ValueError("the runs cover different episodes; " + "; ".join(p for p in parts if p)
                         + " (pass intersect=True to compare on the shared ones)")
    keys = sorted(set(a) & set(b))
    if callable(metric):
        name = getattr(metric, "__name__", "custom")
        va = np.array([metric(a[k]) for k in keys], dtype=np.float64)
        vb = np.array([metric(b[k]) for k in keys], dtype=np.float64)
    else:
        name, fn = metric, _PAIRED_METRICS[metric]
        va = np.array([fn(e) for e in judged_in_order(records_a, keys)], dtype=np.float64)
        vb = np.array([fn(e) for e in judged_in_order(records_b, keys)], dtype=np.float64)
    return {
        "metric": name,
        "a": float(va.mean()) if keys else None,
        "b": float(vb.mean()) if keys else None,
        "diff": _mean_agg(va - vb, n_boot, seed, alpha),
        "n": len(keys),
        "partial": bool(only_a or only_b),
        "only_in_a": len(only_a),
        "only_in_b": len(only_b),
    }
