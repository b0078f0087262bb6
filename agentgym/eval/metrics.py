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
  shift replaced, and repeat no call that already succeeded); recall (gold steps done). A
  verification re-read is neither incorrect nor free: it decides nothing new, and it is not
  efficient.
- recovery: each fault is tied to what it hits (``hits`` in the noise log). A tool failure is
  recovered when a later successful call completes the step it hit; a corrupted result when
  the step consuming the corrupted value is later completed with the true value and the
  corrupted value never reaches a successful call or the final state; an ambiguity when the
  blurred detail is known before the first commitment; a goal shift at the first successful
  write that carries the new value and contradicts nothing (a cancel alone is not one). Times are
  Kaplan-Meier statistics over every recoverable fault, unrecovered ones censored at the
  episode's end, in agent turns and in simulated milliseconds.
- goal consistency: per episode, the share of commitments (write calls, proposals, the final
  state) that satisfy every constraint stated so far; the mean over episodes that committed.

Conventions (the choices a reader would otherwise have to guess):

- An episode whose ``agent_error`` is set is a failure: success False, score 0. Whatever it did
  before the error (its calls, its faults) still counts in the other metrics.
- Rates over calls or faults are pooled ("micro") ratios: the sum of numerators over the sum of
  denominators, and the bootstrap resamples episodes and recomputes the pooled ratio. A rate
  with an empty denominator (no tool calls, no faults, no commitments) is None, never 0 or 1,
  and such an episode adds nothing to the pool.
- Injected faults are the environment's, never the agent's: a call with ``injected: True`` is
  left out of validity and efficiency, and a retry after one is legitimate.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from agentgym.core.gold import call_matches, carries, contains_value
from agentgym.eval.bootstrap import (
    Resamples,
    Stat,
    aggregate,
    f1_stat,
    interval,
    km_point,
    km_stats,
    mean_stat,
    minus,
    ratio_stat,
)

if TYPE_CHECKING:
    import pandas as pd

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
    "judge_episode",
    "EpisodeVerdict",
    "CallVerdict",
    "FaultVerdict",
    "CommitmentVerdict",
]

Record = Mapping[str, Any]
Aggregate = dict[str, Any]
#: Noise kinds that are faults the agent has to recover from (the others only add friction).
FAULT_KINDS = ("tool_failure", "corruption", "ambiguity", "goal_shift")
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
_NO_VALUE = (math.nan, math.nan)


# ============================================================================ the bootstrap
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
        rng = np.random.Generator(np.random.PCG64(seed))
        stats = [float(statistic([recs[i] for i in rng.integers(0, len(recs), size=len(recs))]))
                 for _ in range(n_boot)]
        return interval(np.asarray(stats, dtype=np.float64), alpha)
    arr = np.asarray(data, dtype=np.float64)
    n = arr.shape[0] if arr.ndim else 0
    if n == 0:
        return _NO_VALUE
    if statistic == "mean":
        if arr.ndim != 1:
            raise ValueError(f"'mean' wants 1-D values, got shape {arr.shape}")
        stat = mean_stat(arr)
    elif statistic == "ratio":
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"'ratio' wants (n, 2) values (numerator, denominator), got shape {arr.shape}")
        stat = ratio_stat(arr[:, 0], arr[:, 1])
    elif callable(statistic):
        rng = np.random.Generator(np.random.PCG64(seed))
        stats = np.concatenate([np.asarray(statistic(arr[rng.integers(0, n, size=(min(500, n_boot - i), n))]),
                                           dtype=np.float64).reshape(-1) for i in range(0, n_boot, 500)])
        return interval(stats, alpha)
    else:
        raise ValueError(f"statistic must be 'mean', 'ratio' or a callable, got {statistic!r}")
    return interval(Resamples(n, n_boot, seed).evaluate({"s": stat})["s"], alpha)


# ============================================================================ reading records
@dataclass
class _Fault:
    """One recoverable fault of an episode and what became of it."""

    kind: str
    step: int
    #: Agent turns from the fault to its recovery, or to the episode's end (censored).
    turns: int
    #: The same in simulated milliseconds.
    ms: float
    recovered: bool
    #: The fault's index in the episode's noise log.
    event: int


@dataclass
class _Episode:
    """What the metrics need of one record, read once, with the judgements of every metric."""

    key: str | None
    success: bool
    score: float
    turns: int
    calls: list[dict[str, Any]]
    turn_errors: int
    noise: list[dict[str, Any]]
    constraints: list[dict[str, Any]]
    #: The final gold plan (None when the record has no gold), and calls of plans a goal shift
    #: replaced (right when made).
    plan: list[dict[str, Any]] | None
    superseded: list[dict[str, Any]]
    commitments: list[dict[str, Any]]
    #: Simulated ms at the end of each turn (index turn - 1), and at the end.
    elapsed: list[float]
    final_ms: float
    timed: bool
    max_turns: int
    time_budget_ms: float
    score_details: Mapping[str, Any]
    tokens: int | None
    policy_violations: int | None
    tools: tuple[int, ...] = ()
    faults: list[_Fault] = field(default_factory=list)
    #: Faults left out of recovery, as (index in the noise log, why): ``unrecoverable`` (marked
    #: so), ``unaffected`` (hitting nothing) or ``superseded`` (hitting a step a goal shift then
    #: replaced).
    left_out: list[tuple[int, str]] = field(default_factory=list)
    #: Commitments that satisfy every stated constraint, and all commitments.
    consistent: int = 0
    committed: int = 0


def _episode(rec: Record, verdicts: list["CallVerdict"] | None = None) -> _Episode:
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
    plan = gold.get("calls") if isinstance(gold, Mapping) else None
    superseded = gold.get("superseded_calls") if isinstance(gold, Mapping) else None
    turns = int(m["turns"]) if "turns" in m else len(steps)
    elapsed: list[float] = []
    last = 0.0
    for s in steps:
        last = float(s.get("elapsed_ms", last))
        elapsed.append(last)
    final_ms = float(m.get("elapsed_ms", last))
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
    e = _Episode(
        key=rec.get("key"),
        success=False if failed else bool(m.get("success", False)),
        score=0.0 if failed else float(m.get("score", 0.0)),
        turns=turns,
        calls=list(calls),
        turn_errors=max(0, total_errors - call_errors),
        noise=list(noise),
        constraints=list(m.get("constraints") or ()),
        plan=list(plan) if plan is not None else None,
        superseded=list(superseded or ()),
        commitments=list(m.get("commitments") or ()),
        elapsed=elapsed,
        final_ms=final_ms,
        timed=final_ms > 0,
        max_turns=int(m.get("max_turns") or max(turns, 1)),
        time_budget_ms=float(m.get("time_budget_ms") or max(final_ms, 1.0)),
        score_details=details if isinstance(details, Mapping) else {},
        tokens=tokens,
        policy_violations=violations,
    )
    _judge(e, verdicts)
    return e


def _episodes(records: Iterable[Record]) -> list[_Episode]:
    return [_episode(r) for r in records]


def _succeeded(rec: Record) -> bool:
    """An episode's success, as `_episode` reads it, without judging its calls and faults."""
    return rec.get("agent_error") is None and bool((rec.get("metrics") or {}).get("success", False))


# ============================================================================ the judgements
def _ok(c: Mapping[str, Any]) -> bool:
    """A call that ran and succeeded on a real tool (not a decoy)."""
    return bool(c.get("valid")) and c.get("error") is None and not c.get("distractor")


def _commits(c: Mapping[str, Any]) -> bool:
    """A call that is a commitment: a valid write on a real tool (an injected failure too)."""
    return bool(c.get("valid")) and c.get("kind") == "write" and not c.get("distractor")


class _Plan:
    """A gold plan indexed by tool name, so a call is matched only against its own tool's steps."""

    def __init__(self, steps: Sequence[Mapping[str, Any]]) -> None:
        self.steps = steps
        self.by_name: dict[str, list[int]] = defaultdict(list)
        for i, step in enumerate(steps):
            self.by_name[step.get("name", "")].append(i)

    def matches(self, c: Mapping[str, Any]) -> list[int]:
        name, args = c.get("name", ""), c.get("arguments")
        return [i for i in self.by_name.get(name, ()) if call_matches(name, args, self.steps[i])]


def _judge(e: _Episode, verdicts: list["CallVerdict"] | None = None) -> None:
    """Fill in the episode's tool counts, faults and commitments (and each call's verdict into
    `verdicts`, when given)."""
    calls = e.calls
    plan = _Plan(e.plan or [])
    old = _Plan(e.superseded)
    corrupted = _corrupted_values(e)
    e.tools = _tool_counts(e, plan, old, corrupted, verdicts)
    _recoveries(e, plan)
    writes = [c for c in calls if _commits(c)]
    judged = [not c.get("contradicts") for c in writes] + [not m.get("contradicts") for m in e.commitments]
    e.consistent, e.committed = sum(judged), len(judged)


def _call_index(e: _Episode, event: Mapping[str, Any]) -> int | None:
    """The index in the episode's calls of the call a noise event acted on."""
    turn, cid = event.get("step"), event.get("call")
    for k, c in enumerate(e.calls):
        if c.get("turn") == turn and (c.get("id") == cid if cid is not None else c.get("name") == event.get("target")):
            return k
    return None


def _corrupted_values(e: _Episode) -> list[tuple[int, Any]]:
    """(index of the corrupted call, the corrupted value) of each corruption."""
    out = []
    for ev in e.noise:
        detail = ev.get("detail")
        if ev.get("kind") == "corruption" and isinstance(detail, Mapping) and "to" in detail:
            k = _call_index(e, ev)
            if k is not None:
                out.append((k, detail["to"]))
    return out


def _tool_counts(e: _Episode, plan: _Plan, old: _Plan, corrupted: list[tuple[int, Any]],
                 verdicts: list["CallVerdict"] | None = None) -> tuple[int, ...]:
    """(valid, actions, correct, judged, useful, spent, precise, scored, done, gold) of one episode,
    and, into `verdicts` when given, what each call counted for."""
    valid = actions = correct = judged = useful = spent = precise = scored = 0
    done = [False] * len(plan.steps)
    succeeded: dict[str, list[Any]] = defaultdict(list)
    plan_tools = set(plan.by_name) | set(old.by_name)
    for k, c in enumerate(e.calls):
        injected = bool(c.get("injected"))
        if not injected:
            actions += 1
            valid += bool(c.get("valid"))
        if not c.get("valid"):
            if verdicts is not None:
                verdicts.append(CallVerdict(k, int(c.get("turn", 0)), str(c.get("name", "")), False, injected))
            continue
        name, args, error = c.get("name", ""), c.get("arguments"), c.get("error")
        decoy = bool(c.get("distractor"))
        hits = [] if decoy else plan.matches(c)
        on_plan = bool(hits) or (not decoy and bool(old.matches(c)))
        repeat = any(a == args for a in succeeded[name])
        # What a tool returned corrupted, the agent was told: passing it on is not its mistake.
        told_wrong = any(k > j and contains_value(args, bad) for j, bad in corrupted)
        refused = off_plan = is_judged = False
        wrong = False
        if not repeat:  # a repeat decides nothing new: neither right nor wrong
            refused = error is not None and not injected and not told_wrong
            wrong = bool(c.get("contradicts")) or refused
            if e.plan is None:
                is_judged = True
            else:
                # A call of a plan tool that fits none of the plan's steps has wrong arguments; a
                # right call no plan needs (a padding read) is efficiency's business, not this one's.
                off_plan = not decoy and name in plan_tools and not on_plan and not told_wrong
                wrong = wrong or off_plan
                is_judged = wrong or on_plan
            if is_judged:
                judged += 1
                correct += not wrong
        open_hits = [i for i in hits if not done[i]]
        is_useful = error is None and on_plan and not repeat
        if not injected:
            spent += 1
            scored += 1
            useful += is_useful
            # Legacy precision: a call for a gold step not yet done, or of an abandoned plan.
            precise += bool(open_hits) or bool(not decoy and old.matches(c))
        completes = None
        if _ok(c):
            succeeded[name].append(args)
            if open_hits:
                done[open_hits[0]] = True
                completes = open_hits[0]
        if verdicts is not None:
            why = tuple(f"contradicts {x}" for x in c.get("contradicts") or ()) if is_judged and wrong else ()
            if is_judged and refused:
                why += (f"refused ({error})",)
            if is_judged and off_plan:
                why += ("fits no step of the plan",)
            verdicts.append(CallVerdict(k, int(c.get("turn", 0)), name, True, injected, is_judged,
                                        (not wrong) if is_judged else None, why,
                                        None if injected else is_useful, repeat, decoy, tuple(hits), completes,
                                        told_wrong))
    if e.plan is None:
        return (valid, actions + e.turn_errors, correct, judged, useful, spent, 0, 0, 0, 0)
    return (valid, actions + e.turn_errors, correct, judged, useful, spent, precise, scored, sum(done), len(done))


def _recoverable(event: Mapping[str, Any]) -> bool:
    detail = event.get("detail")
    if event.get("recoverable") is False:
        return False
    return not (isinstance(detail, Mapping) and detail.get("recoverable") is False)


def _recoveries(e: _Episode, plan: _Plan) -> None:
    """Judge every fault of the episode: recovered at which turn, censored, or left out."""
    for index, ev in enumerate(e.noise):
        kind = ev.get("kind")
        if kind not in FAULT_KINDS:
            continue
        if not _recoverable(ev):
            e.left_out.append((index, "unrecoverable"))
            continue
        hits = ev.get("hits")
        if not isinstance(hits, Mapping):
            e.left_out.append((index, "unaffected"))
            continue
        step = int(ev.get("step", 0))
        if kind == "tool_failure":
            turn = _tool_failure_recovery(e, ev, hits, plan)
        elif kind == "corruption":
            turn = _corruption_recovery(e, ev, hits, plan)
        elif kind == "ambiguity":
            turn = _ambiguity_recovery(e, ev, hits)
        else:
            turn = _goal_shift_recovery(e, ev, plan)
        if turn == "superseded" or turn == "unaffected":
            e.left_out.append((index, turn))
            continue
        at_ms = float(ev.get("at_ms", 0.0))
        if turn is None:
            e.faults.append(_Fault(kind, step, max(0, e.turns - step), max(0.0, e.final_ms - at_ms), False, index))
        else:
            t = int(turn)
            end_ms = e.elapsed[t - 1] if 0 < t <= len(e.elapsed) else e.final_ms
            e.faults.append(_Fault(kind, step, max(0, t - step), max(0.0, end_ms - at_ms), True, index))


def _hit_step(hits: Mapping[str, Any], plan: _Plan) -> Mapping[str, Any] | None:
    i = hits.get("gold_step")
    return plan.steps[i] if isinstance(i, int) and 0 <= i < len(plan.steps) else None


def _tool_failure_recovery(e: _Episode, ev: Mapping[str, Any], hits: Mapping[str, Any],
                           plan: _Plan) -> int | str | None:
    """The turn of the first later successful call that completes the step the failure hit."""
    k = _call_index(e, ev)
    step = _hit_step(hits, plan)
    if k is None or step is None:
        return "superseded"
    failed = e.calls[k]
    if not call_matches(failed.get("name", ""), failed.get("arguments"), step):
        return "superseded"  # a goal shift replaced the step the failed call was for
    for c in e.calls[k + 1:]:
        if _ok(c) and call_matches(c.get("name", ""), c.get("arguments"), step):
            return int(c["turn"])
    return None


def _corruption_recovery(e: _Episode, ev: Mapping[str, Any], hits: Mapping[str, Any],
                         plan: _Plan) -> int | str | None:
    """The turn the agent held the true value, when it then used it and never the corrupted one.

    A value the hit step takes as one option of several (``any_of``: a gold place among others)
    hits the agent only if it later uses the true or the corrupted value; else the corruption is
    unaffected. Unrecovered when the corrupted value reaches a later successful call or the final state.
    Otherwise recovered when a later successful call completes the hit step carrying the true
    value, at the turn of the first clean successful re-read of the corrupted call before it
    (a re-read in the same turn counts: zero turns), else at the completing call's turn.
    """
    k = _call_index(e, ev)
    step = _hit_step(hits, plan)
    detail = ev.get("detail")
    if k is None or step is None or not isinstance(detail, Mapping):
        return "superseded"
    true, bad = detail.get("from"), detail.get("to")
    if not carries(step, true):
        return "superseded"  # a goal shift replaced the step that consumed the value
    later = e.calls[k + 1:]
    if not carries(step, true, options=False) and not any(
            contains_value(c.get("arguments"), true) or contains_value(c.get("arguments"), bad)
            for c in later if c.get("valid")):
        # One option of several (a gold place among others) that the agent never came to: the
        # corruption took nothing from it, so there is nothing to recover.
        return "unaffected"
    details = {key: v for key, v in e.score_details.items() if key != "met"}
    if any(_ok(c) and contains_value(c.get("arguments"), bad) for c in later) or contains_value(details, bad):
        return None
    done = next((j for j, c in enumerate(later) if _ok(c) and call_matches(c.get("name", ""), c.get("arguments"), step)
                 and contains_value(c.get("arguments"), true)), None)
    if done is None:
        return None
    source = e.calls[k]
    corrupted_calls = {(x.get("step"), x.get("call")) for x in e.noise if x.get("kind") == "corruption"}
    for c in later[:done]:
        if (_ok(c) and c.get("name") == source.get("name") and c.get("arguments") == source.get("arguments")
                and (c.get("turn"), c.get("id")) not in corrupted_calls):
            return int(c["turn"])
    return int(later[done]["turn"])


def _ambiguity_recovery(e: _Episode, ev: Mapping[str, Any], hits: Mapping[str, Any]) -> int | None:
    """The turn the blurred detail became known, if no commitment was made before it."""
    target, step = hits.get("constraint", ev.get("target")), int(ev.get("step", 0))
    known = next((int(p.get("turn", 0)) for p in e.constraints
                  if int(p.get("turn", 0)) >= step and target in p.get("known", ())), None)
    if known is None:
        return None
    commits = [int(c["turn"]) for c in e.calls if _commits(c)]
    commits += [int(m["turn"]) for m in e.commitments if m.get("kind") == "proposal"]
    if commits and min(commits) < known:
        return None  # the detail was committed on before it was obtained: a guess, not a recovery
    return known


def _goal_shift_recovery(e: _Episode, ev: Mapping[str, Any], plan: _Plan) -> int | None:
    """The turn of the first successful write after the shift that contradicts nothing stated and
    acts on the new goal: its arguments carry the new value (every one, for a value of several
    parts such as a day and a slot), or it is a step of the new gold plan. A cancel carries no
    value and is no step of the new plan: alone, it is not a recovery."""
    step = int(ev.get("step", 0))
    detail = ev.get("detail")
    new = detail.get("to") if isinstance(detail, Mapping) else None
    parts = [v for v in (new if isinstance(new, list) else [new]) if v is not None and not isinstance(v, (dict, list))]
    for c in e.calls:
        if int(c.get("turn", 0)) <= step or not _ok(c) or c.get("kind") != "write" or c.get("contradicts"):
            continue
        args = c.get("arguments")
        if (parts and all(contains_value(args, v) for v in parts)) or plan.matches(c):
            return int(c["turn"])
    return None


# ============================================================================ one episode's verdicts
#: Why a recoverable-looking fault is left out of recovery (see `recovery`).
_LEFT_OUT = ("unrecoverable", "unaffected", "superseded")


@dataclass(frozen=True)
class CallVerdict:
    """What one call of an episode counted for in tool-call accuracy.

    Attributes:
        index: the call's index in the episode's calls (``metrics.calls``).
        turn: the agent turn it was sent in.
        name: the tool it named.
        valid: it parsed, named a tool and fit its schema.
        injected: an injected fault acted on it (left out of validity and efficiency).
        judged: it counts in correctness (it decides something).
        right: for a judged call, whether it was right (None when not judged).
        wrong_because: for a wrong call, why: ``"contradicts <constraint>"``, ``"refused (<code>)"``,
            ``"fits no step of the plan"``.
        useful: it counts as useful in efficiency (None when left out: invalid or injected).
        repeat: it repeats a call that already succeeded (same tool, equal arguments).
        decoy: a distractor tool.
        steps: the gold steps (indices into ``metrics.gold.calls``) it matches.
        completes: the gold step it completed (the first matching one not yet done), or None.
        carries_corrupted: its arguments carry a value a tool returned corrupted.
    """

    index: int
    turn: int
    name: str
    valid: bool
    injected: bool
    judged: bool = False
    right: bool | None = None
    wrong_because: tuple[str, ...] = ()
    useful: bool | None = None
    repeat: bool = False
    decoy: bool = False
    steps: tuple[int, ...] = ()
    completes: int | None = None
    carries_corrupted: bool = False


@dataclass(frozen=True)
class FaultVerdict:
    """What became of one injected fault (a noise event of a kind in `FAULT_KINDS`).

    Attributes:
        index: the event's index in the episode's noise log (``metrics.noise``).
        kind: the fault kind. step: the turn it was injected at (0: at reset).
        status: ``recovered``, ``censored`` (never recovered), or why it is left out of recovery:
            ``unrecoverable``, ``unaffected`` (it hit nothing), ``superseded``.
        turn: the recovering turn (recovered faults only).
        turns: agent turns to the recovery, or to the episode's end (censored); None when left out.
        ms: the same in simulated milliseconds; None when left out or no time was charged.
    """

    index: int
    kind: str
    step: int
    status: str
    turn: int | None = None
    turns: int | None = None
    ms: float | None = None


@dataclass(frozen=True)
class CommitmentVerdict:
    """One commitment of goal consistency: a write call, a proposal or the final state.

    Attributes:
        turn: the turn it was made at (the final state: the last turn).
        kind: ``write``, ``proposal`` or ``final``.
        call: the write call's index in the episode's calls (None for the others).
        consistent: it breaks no constraint stated by then.
        contradicts: the constraints it breaks.
    """

    turn: int
    kind: str
    call: int | None
    consistent: bool
    contradicts: tuple[str, ...]


@dataclass(frozen=True)
class EpisodeVerdict:
    """Everything the metrics judged of one episode, and the per-episode inputs of each metric.

    `counts` holds the numerators and denominators the aggregates pool: ``valid`` / ``attempts``
    (validity), ``right`` / ``judged`` (correctness), ``useful`` / ``spent`` (efficiency),
    ``done`` / ``gold`` (recall; both 0 without a gold plan), ``precise`` / ``scored`` (legacy
    precision), ``consistent`` / ``committed`` (goal consistency). `call_log` and `noise_log` are
    the episode's calls and injections as the metrics read them (the indices of the verdicts);
    `elapsed_ms` is the simulated time at its end.
    """

    key: str | None
    success: bool
    score: float
    turns: int
    timed: bool
    counts: Mapping[str, int]
    calls: tuple[CallVerdict, ...]
    faults: tuple[FaultVerdict, ...]
    commitments: tuple[CommitmentVerdict, ...]
    call_log: tuple[Mapping[str, Any], ...] = ()
    noise_log: tuple[Mapping[str, Any], ...] = ()
    elapsed_ms: float = 0.0

    def rate(self, numerator: str, denominator: str) -> float | None:
        """``counts[numerator] / counts[denominator]``; None when there is nothing to measure."""
        den = self.counts[denominator]
        return self.counts[numerator] / den if den else None


_COUNT_NAMES = ("valid", "attempts", "right", "judged", "useful", "spent", "precise", "scored", "done", "gold")


def judge_episode(record: Record) -> EpisodeVerdict:
    """The metrics' verdicts on one episode: each call, each fault and each commitment.

    The same judgements the aggregates (`headline`) pool, call by call, so a report, an export
    or a viewer can show where each metric counted.

    Args:
        record: one episode record.

    Returns:
        The episode's `EpisodeVerdict`.
    """
    calls: list[CallVerdict] = []
    e = _episode(record, calls)
    faults = [FaultVerdict(f.event, f.kind, f.step, "recovered" if f.recovered else "censored",
                           f.step + f.turns if f.recovered else None, f.turns, f.ms if e.timed else None)
              for f in e.faults]
    faults += [FaultVerdict(i, str(e.noise[i].get("kind")), int(e.noise[i].get("step", 0)), why)
               for i, why in e.left_out]
    faults.sort(key=lambda f: f.index)
    commitments = [CommitmentVerdict(int(c.get("turn", 0)), "write", k, not c.get("contradicts"),
                                     tuple(c.get("contradicts") or ()))
                   for k, c in enumerate(e.calls) if _commits(c)]
    commitments += [CommitmentVerdict(int(m.get("turn", 0)), str(m.get("kind")), None, not m.get("contradicts"),
                                      tuple(m.get("contradicts") or ())) for m in e.commitments]
    commitments.sort(key=lambda c: c.turn)
    counts = dict(zip(_COUNT_NAMES, e.tools))
    counts.update(consistent=e.consistent, committed=e.committed)
    return EpisodeVerdict(e.key, e.success, e.score, e.turns, e.timed, counts, tuple(calls), tuple(faults),
                          tuple(commitments), tuple(e.calls), tuple(e.noise), e.final_ms)


# ============================================================================ statistics
@dataclass(frozen=True)
class _Measure:
    """One headline statistic of a set of episodes: its resampled function and its ``n``."""

    stat: Stat
    n: int


def _nan_stat(w: np.ndarray) -> np.ndarray:
    return np.full(w.shape[0], np.nan)


def _fault_arrays(eps: Sequence[_Episode]) -> dict[str, np.ndarray]:
    faults = [(i, f) for i, e in enumerate(eps) for f in e.faults]
    return {
        "unit": np.array([i for i, _ in faults], dtype=np.int64),
        "turns": np.array([f.turns for _, f in faults], dtype=np.float64),
        "ms": np.array([f.ms for _, f in faults], dtype=np.float64),
        "recovered": np.array([f.recovered for _, f in faults], dtype=bool),
        "kind": np.array([f.kind for _, f in faults], dtype=object),
    }


def _measures(eps: Sequence[_Episode], *, by_kind: bool = False) -> dict[str, _Measure]:
    """Every headline statistic of `eps` (the keys of `HEADLINE`; with `by_kind`, also each fault
    kind's ``recovery_share:<kind>``, ``recovery_median:<kind>`` and ``recovery_rmst:<kind>``)."""
    n = len(eps)
    t = np.array([e.tools for e in eps], dtype=np.float64).reshape(n, 10)
    valid, actions, correct, judged, useful, spent, precise, scored, done, gold = (np.ascontiguousarray(c) for c in t.T)
    p_stat, r_stat = ratio_stat(precise, scored), ratio_stat(done, gold)
    f1 = f1_stat(precise, scored, done, gold)

    fa = _fault_arrays(eps)
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
        "success": _Measure(mean_stat(np.array([e.success for e in eps], dtype=np.float64)), n),
        "score": _Measure(mean_stat(np.array([e.score for e in eps], dtype=np.float64)), n),
        "validity": _Measure(ratio_stat(valid, actions), int(actions.sum())),
        "tool_correctness": _Measure(ratio_stat(correct, judged), int(judged.sum())),
        "tool_efficiency": _Measure(ratio_stat(useful, spent), int(spent.sum())),
        "tool_recall": _Measure(r_stat, int(gold.sum())),
        "tool_precision": _Measure(p_stat, int(scored.sum())),
        "tool_f1": _Measure(f1, int(gold.sum())),
        "recovery_share": _Measure(ratio_stat(rec_ep, per_ep), n_faults),
        "recovery_median": _Measure(median, n_faults),
        "recovery_rmst": _Measure(rmst, n_faults),
        "recovery_median_ms": _Measure(median_ms, n_faults if median_ms is not _nan_stat else 0),
        "recovery_rmst_ms": _Measure(rmst_ms, n_faults if rmst_ms is not _nan_stat else 0),
        "goal_consistency": _Measure(ratio_stat(share * has, has), int(has.sum())),
    }
    if by_kind:
        for kind in FAULT_KINDS:
            sel = fa["kind"] == kind
            k_ep = np.bincount(fa["unit"][sel], minlength=n).astype(np.float64)
            k_rec = np.bincount(fa["unit"][sel & fa["recovered"]], minlength=n).astype(np.float64)
            k_median, k_rmst = km_stats(fa["turns"][sel], fa["recovered"][sel], fa["unit"][sel], tau)
            out[f"recovery_share:{kind}"] = _Measure(ratio_stat(k_rec, k_ep), int(sel.sum()))
            out[f"recovery_median:{kind}"] = _Measure(k_median, int(sel.sum()))
            out[f"recovery_rmst:{kind}"] = _Measure(k_rmst, int(sel.sum()))
    return out


def _point(stat: Stat, n: int) -> float:
    return float(stat(np.ones((1, n)))[0]) if n else math.nan


def _aggregates(measures: Mapping[str, _Measure], n_units: int, width: int, n_boot: int, seed: int,
                alpha: float) -> dict[str, Aggregate]:
    """The aggregate of each measure, all from the same resamples of the units."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    boot = Resamples(n_units, n_boot, seed, width).evaluate({k: m.stat for k, m in measures.items()})
    out: dict[str, Aggregate] = {}
    for name, m in measures.items():
        value = _point(m.stat, n_units) if m.n else math.nan
        out[name] = aggregate(value, interval(boot[name], alpha) if m.n else _NO_VALUE, m.n)
    return out


def headline(records: Sequence[Record], *, by_kind: bool = False, n_boot: int = 2000, seed: int = 0,
             alpha: float = 0.05) -> dict[str, Any]:
    """Every headline metric of a run, each with its bootstrap CI, from one set of resamples.

    Args:
        records: episode records.
        by_kind: also each fault kind's ``recovery_share:<kind>``, ``recovery_median:<kind>`` and
            ``recovery_rmst:<kind>``.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{key: agg}`` for every key of `HEADLINE` (and the per-kind ones), plus ``episodes``,
        ``faults``, ``recovered``, ``censored`` and ``committed`` (episodes with a commitment).
    """
    eps = _episodes(records)
    out: dict[str, Any] = _aggregates(_measures(eps, by_kind=by_kind), len(eps), _width(eps), n_boot, seed, alpha)
    faults = [f for e in eps for f in e.faults]
    out.update(episodes=len(eps), faults=len(faults), recovered=sum(f.recovered for f in faults),
               censored=sum(not f.recovered for f in faults), committed=sum(e.committed > 0 for e in eps))
    return out


def _width(eps: Sequence[_Episode]) -> int:
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
    a, b = _by_key(records_a, "A"), _by_key(records_b, "B")
    if set(a) != set(b):
        missing = sorted(set(a) ^ set(b))
        raise ValueError(f"the runs cover different episodes (e.g. {missing[0]!r}); compare needs the same keys")
    keys = sorted(a)
    eps_a, eps_b = _episodes([a[k] for k in keys]), _episodes([b[k] for k in keys])
    ma, mb = _measures(eps_a, by_kind=by_kind), _measures(eps_b, by_kind=by_kind)
    width = max(_width(eps_a), _width(eps_b))
    diff = {name: _Measure(minus(ma[name].stat, mb[name].stat), min(ma[name].n, mb[name].n)) for name in ma}
    return {"a": _aggregates(ma, len(keys), width, n_boot, seed, alpha),
            "b": _aggregates(mb, len(keys), width, n_boot, seed, alpha),
            "diff": _aggregates(diff, len(keys), width, n_boot, seed, alpha), "n": len(keys)}


def _select(eps: Sequence[_Episode], names: Sequence[str], n_boot: int, seed: int, alpha: float) -> dict[str, Aggregate]:
    measures = _measures(eps)
    return _aggregates({k: measures[k] for k in names}, len(eps), _width(eps), n_boot, seed, alpha)


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
    aggs = _select(eps, ("success", "score"), n_boot, seed, alpha)
    return {"success_rate": aggs["success"], "mean_score": aggs["score"], "episodes": len(eps)}


# ============================================================================ tool accuracy
def tool_accuracy(
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Validity, correctness, efficiency and recall of the agent's tool calls.

    - validity: valid calls over the agent's call attempts (every non-injected call, plus every
      turn-level error such as PARSE_ERROR, each an invalid action).
    - correctness: of the valid calls that decide something (injected failures included: their
      arguments were the agent's; a repeat of a call that already succeeded decides nothing and
      is left out), the share with right arguments. A call is wrong when it contradicts a
      constraint the user had stated (``contradicts``), when a tool refused it for the agent's
      own reasons (an error that is not injected: a policy violation, an unknown id, a full slot)
      or when it calls a tool of the gold plan but fits none of its steps (wrong data), except
      where it carries a value a tool returned corrupted: the agent was told it. A right call
      that no plan needs (a padding read, a decoy) is left out: it is efficiency's business, so
      padding cannot raise correctness.
    - efficiency: valid non-injected calls that advance the work over valid non-injected calls:
      a call that succeeded on a real tool (not a decoy), matches a step of the gold plan or of
      a plan a goal shift replaced, and repeats no call that already succeeded (same tool, equal
      arguments: a verification re-read, a duplicate). So a re-read is correct but not free.
    - recall: gold steps completed by a successful call over gold steps.
    - precision and F1 (legacy): valid non-injected calls matching a gold step not yet done (or
      of a replaced plan), and the harmonic mean of that precision and recall.

    Episodes without a gold plan (no ``metrics.gold``) count for validity and correctness only.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"validity", "correctness", "efficiency", "recall", "precision", "f1": agg, "calls": n,
        "episodes": n}``; for F1, ``n`` is the number of gold steps.
    """
    eps = _episodes(records)
    aggs = _select(eps, ("validity", "tool_correctness", "tool_efficiency", "tool_recall", "tool_precision",
                         "tool_f1"), n_boot, seed, alpha)
    return {"validity": aggs["validity"], "correctness": aggs["tool_correctness"],
            "efficiency": aggs["tool_efficiency"], "recall": aggs["tool_recall"],
            "precision": aggs["tool_precision"], "f1": aggs["tool_f1"],
            "calls": sum(len(e.calls) for e in eps), "episodes": len(eps)}


# ============================================================================ recovery
def recovery(
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
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
      provided no commitment (a valid write call, a proposal) came before it;
    - goal_shift: at the first successful valid write call after the shift that contradicts
      nothing stated and acts on the new goal: it carries the new value (``detail.to``) or is a
      step of the new gold plan (a cancel does neither: alone, it is not a recovery).

    An unrecovered fault is censored at the episode's end (``turns - t`` turns), so it never
    shortens the times: the median and restricted mean are Kaplan-Meier statistics over all
    recoverable faults, the restricted mean up to the largest turn budget of the episodes (in
    ms: the largest time budget). Decoy calls never recover anything.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``share`` (recovered over faults), ``median`` and ``p90`` (Kaplan-Meier quantiles of
        turns to recover), ``rmst`` (restricted mean, turns), ``median_ms`` and ``rmst_ms`` (the
        same in simulated milliseconds; None without latency noise), each an aggregate with a CI
        over episodes (``n``: faults); ``km_median`` (the median's value); the counts
        ``faults``, ``recovered``, ``censored``, ``unrecoverable``, ``unaffected`` and
        ``superseded``; and ``by_kind``, the counts, share and median per fault kind.
    """
    eps = _episodes(records)
    measures = _measures(eps)
    fa = _fault_arrays(eps)
    tau = float(max((e.max_turns for e in eps), default=1))
    p90, _ = km_stats(fa["turns"], fa["recovered"], fa["unit"], tau, q=0.9)
    measures["p90"] = _Measure(p90, measures["recovery_median"].n)
    names = ("recovery_share", "recovery_median", "p90", "recovery_rmst", "recovery_median_ms", "recovery_rmst_ms")
    aggs = _aggregates({k: measures[k] for k in names}, len(eps), _width(eps), n_boot, seed, alpha)
    done = fa["recovered"]
    out: dict[str, Any] = {"share": aggs["recovery_share"], "median": aggs["recovery_median"], "p90": aggs["p90"],
                           "rmst": aggs["recovery_rmst"], "median_ms": aggs["recovery_median_ms"],
                           "rmst_ms": aggs["recovery_rmst_ms"], "km_median": aggs["recovery_median"]["value"]}
    out.update(faults=len(done), recovered=int(done.sum()), censored=int((~done).sum()),
               **{why: sum(w == why for e in eps for _, w in e.left_out) for why in _LEFT_OUT})
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
    records: Sequence[Record], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> dict[str, Any]:
    """Per episode, the share of commitments that satisfy every constraint stated so far; the
    mean over the episodes that made at least one.

    Commitments: every valid write call on a real tool (``contradicts`` empty: it breaks no
    stated constraint; injected failures count, the arguments were the agent's choice), every
    proposal and the final state the env judged (``metrics.commitments``: a proposal against the
    constraints stated before it, the final state against all stated by the end, so a constraint
    that changed and was not acted upon counts against it). Reads commit nothing.

    Args:
        records: episode records.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.

    Returns:
        ``{"goal_consistency": agg, "episodes": n, "committed": n}``; ``n`` of the aggregate is
        the number of episodes with a commitment, and its value None when there are none (an
        episode that commits nothing has no consistency to measure, never 100%).
    """
    eps = _episodes(records)
    aggs = _select(eps, ("goal_consistency",), n_boot, seed, alpha)
    return {"goal_consistency": aggs["goal_consistency"], "episodes": len(eps),
            "committed": sum(e.committed > 0 for e in eps)}


def _mean_agg(values: np.ndarray, n_boot: int, seed: int, alpha: float) -> Aggregate:
    n = len(values)
    if n == 0:
        return aggregate(None, _NO_VALUE, 0)
    return aggregate(float(values.mean()), bootstrap_ci(values, "mean", n_boot, seed, alpha), n)



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
        t[1] += int(_succeeded(rec))
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
            return aggregate(None, _NO_VALUE, 0)
        stats = Resamples(len(cost), n_boot, seed).evaluate({"r": ratio_stat(cost, succ)})["r"]
        return aggregate(float(cost.sum() / succ.sum()), interval(stats, alpha), int(succ.sum()))

    return {
        "turns_per_success": per_success(turns, success),
        "tool_calls_per_success": per_success(calls, success),
        "tokens_per_success": per_success(tokens, success[priced]) if priced else aggregate(None, _NO_VALUE, 0),
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

#: The summary's metric columns: the keys of `HEADLINE`.
SUMMARY_METRICS = tuple(key for key, _, _ in HEADLINE)


def summarise(
    records: Sequence[Record],
    group_by: Sequence[str] = ("env", "noise"),
    *,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    on_group: Callable[[int], None] | None = None,
) -> "pd.DataFrame":
    """One row per group with every headline metric, its bootstrap CI and its n.

    Args:
        records: episode records.
        group_by: fields among ``env``, ``noise`` (``"none"`` when unset), ``agent``,
            ``suite``, ``family``, ``domain``, ``difficulty`` and ``split``.
        n_boot: bootstrap resamples. seed: bootstrap seed. alpha: 1 - the CI's level.
        on_group: called with each group's number of records once its row is done (progress).

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
    groups: dict[tuple[Any, ...], list[Record]] = defaultdict(list)
    for rec in records:
        groups[tuple(_GROUP_FIELDS[g](rec) for g in group_by)].append(rec)
    rows = []
    for key, recs in groups.items():
        row: dict[str, Any] = dict(zip(group_by, key))
        row["n"] = len(recs)
        aggs = headline(recs, n_boot=n_boot, seed=seed, alpha=alpha)
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
            on_group(len(recs))
    columns = [*group_by, "n"]
    for col in SUMMARY_METRICS:
        columns += [col, f"{col}_lo", f"{col}_hi", f"{col}_n"]
    frame = pd.DataFrame(rows, columns=[*columns, "recovery_faults", "recovery_censored", "committed"])
    if rows:
        frame = frame.sort_values(list(group_by), key=lambda s: s.astype(str), kind="stable").reset_index(drop=True)
    return frame


def _nan(x: float | None) -> float:
    return math.nan if x is None else float(x)
