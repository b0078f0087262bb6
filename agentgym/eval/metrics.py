"""Metrics: pure functions of episode records (never of live env objects).

Every function here takes the records of a run (`agentgym.eval.records`) and returns plain
dicts, so the leaderboard can recompute a submission's numbers from its replayed records.
Each aggregate comes with a percentile-bootstrap confidence interval over EPISODES (over TASKS
for pass^k), as ``{"value": float | None, "ci": [lo, hi] | [None, None], "n": int}`` where
``n`` counts what ``value`` averages over (episodes, calls, faults or tasks).

Conventions (the choices a reader would otherwise have to guess):

- An episode whose ``agent_error`` is set is a failure: success False, score 0. Whatever it did
  before the error (its calls, its faults) still counts in the other metrics.
- Rates over calls or faults are pooled ("micro") ratios: the sum of numerators over the sum of
  denominators, and the bootstrap resamples episodes and recomputes the pooled ratio. A rate
  with an empty denominator (no tool calls, no faults) is None, never 0 or 1, and such an
  episode adds nothing to the pool.
- Quantiles of turn counts use the inverted-CDF definition (the smallest observed value whose
  cumulative share reaches q: the median of 1, 2 is 1), so they are always whole turns and the
  bootstrap and the point estimate agree.
- Injected faults are the environment's, never the agent's: a call with ``injected: True`` is
  left out of validity and precision, and a retry after one is legitimate.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "completion",
    "tool_accuracy",
    "recovery",
    "goal_consistency",
    "pass_hat_k",
    "pass_at_k",
    "reliability",
    "efficiency",
    "bootstrap_ci",
    "paired_comparison",
    "summarise",
    "call_matches",
]

Record = Mapping[str, Any]
Aggregate = dict[str, Any]
#: Noise kinds that are faults the agent has to recover from (the others only add friction).
FAULT_KINDS = ("tool_failure", "corruption", "ambiguity", "goal_shift")
_QUANTILE_EPS = 1e-9
# Bound the bootstrap's working arrays to about this many cells per block.
_BLOCK_CELLS = 2_000_000


# ============================================================================ the bootstrap
def _resample_blocks(n: int, n_boot: int, seed: int) -> Iterable[np.ndarray]:
    """Yield index blocks of shape (b, n), together n_boot resamples of range(n) with replacement."""
    rng = np.random.Generator(np.random.PCG64(seed))
    rows = max(1, _BLOCK_CELLS // max(n, 1))
    done = 0
    while done < n_boot:
        b = min(rows, n_boot - done)
        yield rng.integers(0, n, size=(b, n))
        done += b


def _counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each unit appears in each resample: (b, n) from (b, n) indices."""
    b = idx.shape[0]
    flat = (idx + (np.arange(b) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def _boot_weighted(n: int, stat: Callable[[np.ndarray], np.ndarray], n_boot: int, seed: int) -> np.ndarray:
    """The statistic over n_boot resamples, each given as a (b, n) matrix of unit counts."""
    if n == 0:
        return np.full(n_boot, np.nan)
    return np.concatenate([stat(_counts(idx, n)) for idx in _resample_blocks(n, n_boot, seed)])


def _interval(stats: np.ndarray, alpha: float) -> tuple[float, float]:
    finite = stats[np.isfinite(stats)]
    if finite.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.percentile(finite, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lo), float(hi))


def _ratio_stat(num: np.ndarray, den: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    def stat(w: np.ndarray) -> np.ndarray:
        d = w @ den
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0, (w @ num) / np.where(d > 0, d, 1.0), np.nan)
    return stat


def bootstrap_ci(
    values_or_records: Any,
    statistic: str | Callable[[Any], Any] = "mean",
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a statistic, resampling units (episodes, tasks).

    Args:
        values_or_records: either per-unit values (1-D array-like; 2-D with columns
            ``numerator, denominator`` for ``"ratio"``), or a sequence of records.
        statistic: for values, ``"mean"``, ``"ratio"`` (sum of numerators over sum of
            denominators) or a vectorised callable that maps resampled values of shape
            ``(b, n, ...)`` to ``(b,)``; for records, a callable ``list[record] -> float``,
            called once per resample (slow: for ad hoc statistics only).
        n_boot: number of resamples.
        seed: seed of the ``numpy.random.Generator(PCG64(seed))`` that draws them.
        alpha: the interval covers ``1 - alpha``.

    Returns:
        ``(lo, hi)``; ``(nan, nan)`` when there are no units or the statistic is undefined in
        every resample. Resamples where it is undefined (NaN) are left out.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    data = values_or_records
    if isinstance(data, Sequence) and data and isinstance(data[0], Mapping):
        if not callable(statistic):
            raise ValueError("a statistic over records must be a callable list[record] -> float")
        recs = list(data)
        stats = [float(statistic([recs[i] for i in row]))
                 for idx in _resample_blocks(len(recs), n_boot, seed) for row in idx]
        return _interval(np.asarray(stats, dtype=np.float64), alpha)
    arr = np.asarray(data, dtype=np.float64)
    n = arr.shape[0] if arr.ndim else 0
    if n == 0:
        return (math.nan, math.nan)
    if statistic == "mean":
        if arr.ndim != 1:
            raise ValueError(f"'mean' wants 1-D values, got shape {arr.shape}")
        stats = _boot_weighted(n, lambda w: (w @ arr) / n, n_boot, seed)
    elif statistic == "ratio":
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"'ratio' wants (n, 2) values (numerator, denominator), got shape {arr.shape}")
        stats = _boot_weighted(n, _ratio_stat(arr[:, 0], arr[:, 1]), n_boot, seed)
    elif callable(statistic):
        stats = np.concatenate([np.asarray(statistic(arr[idx]), dtype=np.float64).reshape(-1)
                                for idx in _resample_blocks(n, n_boot, seed)])
    else:
        raise ValueError(f"statistic must be 'mean', 'ratio' or a callable, got {statistic!r}")
    return _interval(stats, alpha)


def _agg(value: float | None, ci: tuple[float, float], n: int) -> Aggregate:
    def clean(x: float | None) -> float | None:
        return None if x is None or not math.isfinite(x) else float(x)
    v = clean(value)
    return {"value": v, "ci": [clean(ci[0]), clean(ci[1])] if v is not None else [None, None], "n": int(n)}


def _mean_agg(values: np.ndarray, n_boot: int, seed: int, alpha: float) -> Aggregate:
    n = len(values)
    if n == 0:
        return _agg(None, (math.nan, math.nan), 0)
    return _agg(float(values.mean()), bootstrap_ci(values, "mean", n_boot, seed, alpha), n)


def _ratio_agg(num: np.ndarray, den: np.ndarray, n_boot: int, seed: int, alpha: float) -> Aggregate:
    total = float(den.sum())
    if total <= 0:
        return _agg(None, (math.nan, math.nan), 0)
    stats = _boot_weighted(len(num), _ratio_stat(num, den), n_boot, seed)
    return _agg(float(num.sum()) / total, _interval(stats, alpha), int(round(total)))


# ============================================================================ reading records
@dataclass
class _Episode:
    """What the metrics need of one record, read once, with the fallbacks applied."""

    success: bool
    score: float
    turns: int
    calls: list[dict[str, Any]]
    turn_errors: int
    noise: list[dict[str, Any]]
    constraints: list[dict[str, Any]]
    gold_calls: list[dict[str, Any]] | None
    #: Calls of a plan the user abandoned (a goal shift): right when made, so never imprecise.
    superseded_calls: list[dict[str, Any]]
    tokens: int | None
    policy_violations: int | None


def _episode(rec: Record) -> _Episode:
    m = rec.get("metrics") or {}
    steps = rec.get("steps") or []
    failed = rec.get("agent_error") is not None
    calls = m["calls"] if "calls" in m else [c for s in steps for c in s.get("calls", ())]
    # Step errors hold the agent's call errors and its turn-level errors (a parse error):
    # what the calls do not explain is a turn-level error, an invalid action of its own.
    call_errors = sum(1 for c in calls if c.get("error") is not None and not c.get("injected"))
    if "errors" in m:
        total_errors = sum(m["errors"].values())
    else:
        total_errors = sum(len(s.get("errors", ())) for s in steps)
    # Noise logged at reset (step 0: ambiguity) is only in the episode's log, not in any step.
    noise = m["noise"] if "noise" in m else [e for s in steps for e in s.get("noise", ())]
    gold = m.get("gold")
    gold_calls = gold.get("calls") if isinstance(gold, Mapping) else None
    superseded = gold.get("superseded_calls") if isinstance(gold, Mapping) else None
    usage = rec.get("usage")
    tokens = None
    if usage:
        tokens = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
    details = m.get("score_details")
    violations = None
    if isinstance(m.get("policy_violations"), list):  # counted by the env (POLICY_VIOLATION calls)
        violations = len(m["policy_violations"])
    elif isinstance(details, Mapping) and "policy_violations" in details:
        violations = len(details["policy_violations"] or ())
    return _Episode(
        success=False if failed else bool(m.get("success", False)),
        score=0.0 if failed else float(m.get("score", 0.0)),
        turns=int(m["turns"]) if "turns" in m else len(steps),
        calls=list(calls),
        turn_errors=max(0, total_errors - call_errors),
        noise=list(noise),
        constraints=list(m.get("constraints") or ()),
        gold_calls=list(gold_calls) if gold_calls is not None else None,
        superseded_calls=list(superseded or ()),
        tokens=tokens,
        policy_violations=violations,
    )


def _episodes(records: Iterable[Record]) -> list[_Episode]:
    return [_episode(r) for r in records]


# ============================================================================ completion
def completion(
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Success rate and mean score (partial credit) over episodes.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"success_rate": agg, "mean_score": agg, "episodes": n}``; an ``agent_error``
        episode counts as a failure with score 0.
    """
    eps = _episodes(records)
    success = np.array([e.success for e in eps], dtype=np.float64)
    score = np.array([e.score for e in eps], dtype=np.float64)
    return {"success_rate": _mean_agg(success, n_boot, seed, alpha),
            "mean_score": _mean_agg(score, n_boot, seed, alpha),
            "episodes": len(eps)}


# ============================================================================ tool accuracy
def _same(a: Any, b: Any) -> bool:
    # JSON equality, except that a boolean is never equal to a number.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def call_matches(name: str, arguments: Mapping[str, Any] | None, gold_call: Mapping[str, Any]) -> bool:
    """Whether a call matches a gold call.

    Args:
        name: the called tool.
        arguments: the call's arguments.
        gold_call: ``{"name", "arguments": {key: value or {"any_of": [values]}}}``.

    Returns:
        True when the names agree and every gold argument is present and equal (or one of its
        ``any_of``); arguments the gold does not specify are allowed.
    """
    if name != gold_call.get("name") or arguments is None:
        return False
    for key, want in (gold_call.get("arguments") or {}).items():
        if key not in arguments:
            return False
        got = arguments[key]
        if isinstance(want, Mapping) and set(want) == {"any_of"}:
            if not any(_same(got, w) for w in want["any_of"]):
                return False
        elif not _same(got, want):
            return False
    return True


def _tool_counts(e: _Episode) -> tuple[int, int, int, int, int, int]:
    """(valid, actions, precise, valid_scored, gold_hit, gold_total) of one episode."""
    agent_calls = [c for c in e.calls if not c.get("injected")]
    valid = sum(1 for c in agent_calls if c.get("valid"))
    actions = len(agent_calls) + e.turn_errors
    if e.gold_calls is None:
        return valid, actions, 0, 0, 0, 0
    gold = e.gold_calls
    satisfied = [False] * len(gold)
    precise = scored = 0
    for c in e.calls:
        if not c.get("valid"):
            continue
        ok = c.get("error") is None
        hits = [] if c.get("distractor") else [i for i, g in enumerate(gold)
                                               if call_matches(c.get("name", ""), c.get("arguments"), g)]
        open_hits = [i for i in hits if not satisfied[i]]
        if not c.get("injected"):
            scored += 1
            # A call for a gold call not yet done is precise (a first try, or a retry after a
            # failure); one more call for an already done gold call is a redundant duplicate.
            # Calls of a plan the user later abandoned (goal shift) were right when made.
            precise += bool(open_hits) or (not c.get("distractor") and any(
                call_matches(c.get("name", ""), c.get("arguments"), g) for g in e.superseded_calls))
        if ok and open_hits:
            satisfied[open_hits[0]] = True
    return valid, actions, precise, scored, sum(satisfied), len(gold)


def tool_accuracy(
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Validity, precision, recall and F1 of the agent's tool calls against the gold calls.

    - validity: valid calls over agent actions that tried to call (every non-injected call,
      plus every turn-level error such as PARSE_ERROR, each an invalid action).
    - precision: valid non-injected calls that match a gold call not yet done (a first try, or
      a retry after a failed attempt, injected or not) over valid non-injected calls;
      distractor calls are valid but never match; a further call for a gold call already done
      successfully is a duplicate and does not count.
    - recall: gold calls done by at least one successful valid call over gold calls.
    - F1: the harmonic mean of the pooled precision and recall (in each resample too).

    Episodes without gold calls (no ``metrics.gold``) count for validity only. A rate with no
    calls to judge is None.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"validity", "precision", "recall", "f1": agg, "calls": n, "episodes": n}``; for
        F1, ``n`` is the number of gold calls.
    """
    eps = _episodes(records)
    c = np.array([_tool_counts(e) for e in eps], dtype=np.float64).reshape(-1, 6)
    valid, actions, precise, scored, hit, gold = c.T
    p_stat, r_stat = _ratio_stat(precise, scored), _ratio_stat(hit, gold)

    def f1_stat(w: np.ndarray) -> np.ndarray:
        p, r = p_stat(w), r_stat(w)
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)
        return np.where(np.isnan(p) | np.isnan(r), np.nan, f1)

    p = precise.sum() / scored.sum() if scored.sum() else math.nan
    r = hit.sum() / gold.sum() if gold.sum() else math.nan
    f1 = (2 * p * r / (p + r) if p + r > 0 else 0.0) if math.isfinite(p) and math.isfinite(r) else math.nan
    f1_ci = _interval(_boot_weighted(len(eps), f1_stat, n_boot, seed), alpha)
    return {
        "validity": _ratio_agg(valid, actions, n_boot, seed, alpha),
        "precision": _ratio_agg(precise, scored, n_boot, seed, alpha),
        "recall": _ratio_agg(hit, gold, n_boot, seed, alpha),
        "f1": _agg(f1, f1_ci, int(gold.sum())),
        "calls": sum(len(e.calls) for e in eps),
        "episodes": len(eps),
    }


# ============================================================================ recovery
@dataclass(frozen=True)
class _Fault:
    episode: int
    kind: str
    step: int
    time: int
    recovered: bool


def _recoverable(event: Mapping[str, Any]) -> bool:
    detail = event.get("detail")
    if event.get("recoverable") is False:
        return False
    return not (isinstance(detail, Mapping) and detail.get("recoverable") is False)


def _recovery_turn(e: _Episode, event: Mapping[str, Any]) -> int | None:
    """The turn of the first recovering action after a fault, or None."""
    kind, t, target = event["kind"], int(event.get("step", 0)), event.get("target")
    if kind == "ambiguity":
        for point in e.constraints:
            if point.get("turn", 0) >= t and target in point.get("known", ()):
                return int(point["turn"])
        return None
    for c in e.calls:
        if c.get("turn", 0) <= t or c.get("distractor"):
            continue
        ok = c.get("valid") and c.get("error") is None
        if kind == "tool_failure" and ok and c.get("name") == target:
            return int(c["turn"])
        if kind == "corruption" and c.get("name") == target:
            return int(c["turn"])  # any later call of the tool: re-checking is the recovery
        if kind == "goal_shift" and ok and c.get("kind") == "write" and not c.get("contradicts"):
            return int(c["turn"])
    return None


def _faults(eps: Sequence[_Episode]) -> tuple[list[_Fault], int]:
    faults: list[_Fault] = []
    skipped = 0
    for i, e in enumerate(eps):
        for ev in e.noise:
            if ev.get("kind") not in FAULT_KINDS:
                continue
            if not _recoverable(ev):
                skipped += 1
                continue
            t = int(ev.get("step", 0))
            turn = _recovery_turn(e, ev)
            if turn is None:
                faults.append(_Fault(i, ev["kind"], t, max(0, e.turns - t), False))
            else:
                faults.append(_Fault(i, ev["kind"], t, turn - t, True))
    return faults, skipped


def _weighted_quantile_stat(times: np.ndarray, episode: np.ndarray,
                            q: float) -> Callable[[np.ndarray], np.ndarray]:
    """Inverted-CDF quantile of `times`, each weighted by its episode's count in the resample."""
    order = np.argsort(times, kind="stable")
    ts, ep = times[order], episode[order]

    def stat(w: np.ndarray) -> np.ndarray:
        cw = np.cumsum(w[:, ep], axis=1)
        total = cw[:, -1]
        pos = (cw >= q * total[:, None] - _QUANTILE_EPS).argmax(axis=1)
        return np.where(total > 0, ts[pos], np.nan)
    return stat


def _kaplan_meier_median(times: np.ndarray, recovered: np.ndarray) -> float | None:
    """The smallest t with KM survival S(t) <= 0.5; None when survival stays above one half.

    A fault censored at t is still at risk at t (events come before censorings at a tie).
    """
    s = 1.0
    for t in np.unique(times[recovered]):
        at_risk = int((times >= t).sum())
        events = int(((times == t) & recovered).sum())
        s *= 1.0 - events / at_risk
        if s <= 0.5 + _QUANTILE_EPS:
            return float(t)
    return None


def recovery(
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Agent turns from each injected fault to the first recovering action.

    Faults are the noise events of kinds ``tool_failure``, ``corruption``, ``ambiguity`` and
    ``goal_shift``; an event whose detail says ``recoverable: False`` is left out and counted
    in ``unrecoverable``. The recovering action, for a fault at step t:

    - tool_failure on tool X: the first successful valid call of X at a later turn;
    - corruption on tool X: the first call of X at a later turn (successful or not);
    - ambiguity on constraint c: the turn at which c first appears in the ``constraints``
      timeline's ``known`` (the user stated it, having been asked);
    - goal_shift: the first successful valid ``write`` call at a later turn that contradicts
      nothing (a cancel counts: it is the first act on the new goal).

    Distractor calls never recover. A fault never recovered is censored at the episode's end,
    after ``turns - t`` turns.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``share`` (recovered faults over faults), ``median`` and ``p90`` (inverted-CDF
        quantiles of turns-to-recover of the recovered faults), each an aggregate with a CI
        over episodes; ``km_median``, the Kaplan-Meier median that also uses the censored
        faults (None when fewer than half recover, no CI); the counts ``faults``,
        ``recovered``, ``censored`` and ``unrecoverable``; and ``by_kind``, the counts and
        median per fault kind. With no faults every value is None.
    """
    eps = _episodes(records)
    faults, skipped = _faults(eps)
    n_ep = len(eps)
    times = np.array([f.time for f in faults], dtype=np.float64)
    done = np.array([f.recovered for f in faults], dtype=bool)
    epi = np.array([f.episode for f in faults], dtype=np.int64)
    rec_per_ep = np.bincount(epi[done], minlength=n_ep).astype(np.float64)
    faults_per_ep = np.bincount(epi, minlength=n_ep).astype(np.float64)
    out: dict[str, Any] = {"share": _ratio_agg(rec_per_ep, faults_per_ep, n_boot, seed, alpha)}
    for name, q in (("median", 0.5), ("p90", 0.9)):
        if done.any():
            stat = _weighted_quantile_stat(times[done], epi[done], q)
            value = float(stat(np.ones((1, n_ep)))[0])
            out[name] = _agg(value, _interval(_boot_weighted(n_ep, stat, n_boot, seed), alpha), int(done.sum()))
        else:
            out[name] = _agg(None, (math.nan, math.nan), 0)
    out["km_median"] = _kaplan_meier_median(times, done) if faults else None
    out.update(faults=len(faults), recovered=int(done.sum()), censored=int((~done).sum()), unrecoverable=skipped)
    by_kind: dict[str, dict[str, Any]] = {}
    for kind in FAULT_KINDS:
        sel = np.array([f.kind == kind for f in faults], dtype=bool)
        if sel.any():
            rt = times[sel & done]
            by_kind[kind] = {"faults": int(sel.sum()), "recovered": int(len(rt)),
                             "median": float(np.quantile(rt, 0.5, method="inverted_cdf")) if len(rt) else None}
    out["by_kind"] = by_kind
    out["episodes"] = n_ep
    return out


# ============================================================================ goal consistency
def goal_consistency(
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """The share of the agent's actions (valid tool calls) that contradict no stated constraint.

    Every valid call counts, injected failures included: the arguments were the agent's
    choice whatever the env then did with the call.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"goal_consistency": agg, "episodes": n}``; None with no valid calls.
    """
    eps = _episodes(records)
    num = np.array([sum(1 for c in e.calls if c.get("valid") and not c.get("contradicts")) for e in eps],
                   dtype=np.float64)
    den = np.array([sum(1 for c in e.calls if c.get("valid")) for e in eps], dtype=np.float64)
    return {"goal_consistency": _ratio_agg(num, den, n_boot, seed, alpha), "episodes": len(eps)}


# ============================================================================ pass^k
def _task_key(rec: Record) -> tuple[Any, ...]:
    env = rec.get("env") or {}
    return (env.get("id"), env.get("noise") or None, rec.get("seed"))


def _task_tallies(records: Iterable[Record]) -> list[tuple[int, int]]:
    """(trials, successes) per task; a task is env id + noise + seed (trials re-draw the noise)."""
    tally: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0])
    for rec in records:
        t = tally[_task_key(rec)]
        t[0] += 1
        t[1] += int(_episode(rec).success)
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


def pass_hat_k(records: Sequence[Record], k: int) -> float:
    """tau-bench's pass^k: the chance that k trials of a task all succeed, averaged over tasks.

    For a task with n trials and c successes, pass^k = C(c, k) / C(n, k), the unbiased
    estimate from n >= k trials; tasks with fewer than k trials are left out. A task is an
    env id, a noise setting and a seed; pass the records of one agent.

    Args:
        records: episode records.
        k: the number of trials that must all succeed.

    Returns:
        The mean over tasks, or NaN when no task has k trials.
    """
    _check_k(k)
    v = _pass_values(_task_tallies(records), k, hat=True)
    return float(v.mean()) if v.size else math.nan


def pass_at_k(records: Sequence[Record], k: int) -> float:
    """pass@k: the chance that at least one of k trials succeeds, 1 - C(n-c, k) / C(n, k).

    Args:
        records: episode records.
        k: the number of trials.

    Returns:
        The mean over tasks with at least k trials, or NaN when there are none.
    """
    _check_k(k)
    v = _pass_values(_task_tallies(records), k, hat=False)
    return float(v.mean()) if v.size else math.nan


def reliability(records: Sequence[Record], ks: Sequence[int] = (1, 2, 4, 8), *, n_boot: int = 2000,
                seed: int = 0, alpha: float = 0.05) -> dict[str, Any]:
    """pass^k and pass@k for several k, each with a bootstrap CI over TASKS.

    Args:
        records: episode records.
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
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Cost per success: turns, tool calls and tokens spent over all episodes per success.

    Costs are summed over every episode, failures included (what a success costs), then
    divided by the number of successes; None with no successes. Tokens (prompt plus
    completion) use only the episodes whose record has ``usage``. Policy violations are the
    lengths of ``metrics.score_details.policy_violations``, per episode that reports them.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``turns_per_success``, ``tool_calls_per_success``, ``tokens_per_success`` and
        ``policy_violations`` (mean per reporting episode) as aggregates (``n``: successes, or
        reporting episodes), plus ``successes``, ``episodes`` and ``policy_violations_total``.
    """
    eps = _episodes(records)
    success = np.array([e.success for e in eps], dtype=np.float64)
    turns = np.array([e.turns for e in eps], dtype=np.float64)
    calls = np.array([len(e.calls) for e in eps], dtype=np.float64)
    priced = [i for i, e in enumerate(eps) if e.tokens is not None]
    tokens = np.array([eps[i].tokens for i in priced], dtype=np.float64)
    viol = np.array([e.policy_violations for e in eps if e.policy_violations is not None], dtype=np.float64)

    def per_success(cost: np.ndarray, succ: np.ndarray) -> Aggregate:
        if succ.sum() == 0:
            return _agg(None, (math.nan, math.nan), 0)
        stats = _boot_weighted(len(cost), _ratio_stat(cost, succ), n_boot, seed)
        return _agg(float(cost.sum() / succ.sum()), _interval(stats, alpha), int(succ.sum()))

    return {
        "turns_per_success": per_success(turns, success),
        "tool_calls_per_success": per_success(calls, success),
        "tokens_per_success": per_success(tokens, success[priced]) if priced else _agg(None, (math.nan, math.nan), 0),
        "policy_violations": _mean_agg(viol, n_boot, seed, alpha),
        "policy_violations_total": int(viol.sum()),
        "successes": int(success.sum()),
        "episodes": len(eps),
    }


# ============================================================================ paired comparison
_PAIRED_METRICS: dict[str, Callable[[_Episode], float]] = {
    "success": lambda e: float(e.success),
    "score": lambda e: e.score,
    "turns": lambda e: float(e.turns),
    "tool_calls": lambda e: float(len(e.calls)),
}


def _by_key(records: Sequence[Record], label: str) -> dict[str, Record]:
    out: dict[str, Record] = {}
    for rec in records:
        key = rec["key"]
        if key in out:
            raise ValueError(f"run {label} holds episode {key!r} twice")
        out[key] = rec
    return out


def paired_comparison(
    records_a: Sequence[Record],
    records_b: Sequence[Record],
    metric: str | Callable[[Record], float] = "success",
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
        records_a: the records of run A.
        records_b: the records of run B.
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
    if callable(metric):
        value: Callable[[Record], float] = metric
        name = getattr(metric, "__name__", "custom")
    elif metric in _PAIRED_METRICS:
        fn = _PAIRED_METRICS[metric]
        value = lambda r: fn(_episode(r))  # noqa: E731
        name = metric
    else:
        raise ValueError(f"metric must be one of {sorted(_PAIRED_METRICS)} or a callable, got {metric!r}")
    a, b = _by_key(records_a, "A"), _by_key(records_b, "B")
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    if (only_a or only_b) and not intersect:
        def show(keys: list[str]) -> str:
            return ", ".join(keys[:5]) + (f" (+{len(keys) - 5} more)" if len(keys) > 5 else "")
        parts = [f"missing from run B: {show(only_a)}" if only_a else "",
                 f"missing from run A: {show(only_b)}" if only_b else ""]
        raise ValueError("the runs cover different episodes; " + "; ".join(p for p in parts if p)
                         + " (pass intersect=True to compare on the shared ones)")
    keys = sorted(set(a) & set(b))
    va = np.array([value(a[k]) for k in keys], dtype=np.float64)
    vb = np.array([value(b[k]) for k in keys], dtype=np.float64)
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


# ============================================================================ summary table
_GROUP_FIELDS: dict[str, Callable[[Record], Any]] = {
    "env": lambda r: (r.get("env") or {}).get("id"),
    "noise": lambda r: (r.get("env") or {}).get("noise") or "none",
    "agent": lambda r: (r.get("agent") or {}).get("name"),
    "suite": lambda r: r.get("suite"),
    "family": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("family"),
    "domain": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("domain"),
    "difficulty": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("difficulty"),
    "split": lambda r: ((r.get("metrics") or {}).get("task") or {}).get("split"),
}

_SUMMARY_METRICS = ("success", "score", "validity", "tool_precision", "tool_recall", "tool_f1",
                    "recovery_share", "recovery_median", "goal_consistency")


def summarise(
    records: Sequence[Record],
    group_by: Sequence[str] = ("env", "noise"),
    *,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> "pd.DataFrame":
    """One row per group with the four headline metrics and their bootstrap CIs.

    Args:
        records: episode records.
        group_by: fields among ``env``, ``noise`` (``"none"`` when unset), ``agent``,
            ``suite``, ``family``, ``domain``, ``difficulty`` and ``split``.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        A DataFrame sorted by the group columns, with ``n`` (episodes) and, each with ``_lo``
        and ``_hi``: ``success``, ``score``, ``validity``, ``tool_precision``,
        ``tool_recall``, ``tool_f1``, ``recovery_share``, ``recovery_median``,
        ``goal_consistency``; plus ``recovery_faults`` and ``recovery_censored``. Undefined
        values are NaN.
    """
    import pandas as pd

    unknown = [g for g in group_by if g not in _GROUP_FIELDS]
    if unknown:
        raise ValueError(f"unknown group_by fields {unknown}; known: {sorted(_GROUP_FIELDS)}")
    groups: dict[tuple[Any, ...], list[Record]] = defaultdict(list)
    for rec in records:
        groups[tuple(_GROUP_FIELDS[g](rec) for g in group_by)].append(rec)
    kw = {"n_boot": n_boot, "seed": seed, "alpha": alpha}
    rows = []
    for key, recs in groups.items():
        row: dict[str, Any] = dict(zip(group_by, key))
        row["n"] = len(recs)
        comp, tools = completion(recs, **kw), tool_accuracy(recs, **kw)
        rec, cons = recovery(recs, **kw), goal_consistency(recs, **kw)
        aggs = (comp["success_rate"], comp["mean_score"], tools["validity"], tools["precision"],
                tools["recall"], tools["f1"], rec["share"], rec["median"], cons["goal_consistency"])
        for col, agg in zip(_SUMMARY_METRICS, aggs):
            row[col] = _nan(agg["value"])
            row[f"{col}_lo"], row[f"{col}_hi"] = _nan(agg["ci"][0]), _nan(agg["ci"][1])
        row["recovery_faults"] = rec["faults"]
        row["recovery_censored"] = rec["censored"]
        rows.append(row)
    columns = [*group_by, "n"]
    for col in _SUMMARY_METRICS:
        columns += [col, f"{col}_lo", f"{col}_hi"]
    frame = pd.DataFrame(rows, columns=[*columns, "recovery_faults", "recovery_censored"])
    if rows:
        frame = frame.sort_values(list(group_by), key=lambda s: s.astype(str), kind="stable").reset_index(drop=True)
    return frame


def _nan(x: float | None) -> float:
    return math.nan if x is None else float(x)
