"""Tests for agentgym.eval.metrics, on hand-built records whose answers are known.

`make_record` builds a schema-1 record from a few call and noise descriptions, the way the
runner would write it: per-step summaries grouped by turn and the episode metrics beside them.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any, Sequence

import numpy as np
import pytest

from agentgym.eval.metrics import (
    bootstrap_ci,
    call_matches,
    completion,
    efficiency,
    goal_consistency,
    pass_at_k,
    pass_hat_k,
    paired_comparison,
    recovery,
    reliability,
    summarise,
    tool_accuracy,
)

GOLD = {"day": "mon", "slot": "evening", "items": ["a", "b"],
        "calls": [{"name": "book", "arguments": {"item_id": {"any_of": ["a", "b"]}, "day": "mon", "slot": "evening"}}]}
BOOK = {"item_id": "a", "day": "mon", "slot": "evening"}


def call(turn: int, name: str = "search", *, valid: bool = True, error: str | None = None, kind: str | None = None,
         injected: bool = False, contradicts: tuple[str, ...] = (), arguments: dict[str, Any] | None = None,
         distractor: bool = False) -> dict[str, Any]:
    """One call record as `AgentEnv` writes it."""
    c: dict[str, Any] = {"turn": turn, "id": f"call_{turn}", "name": name, "valid": valid, "error": error,
                         "kind": (kind or ("write" if name in ("book", "cancel") else "read")) if valid else None,
                         "injected": injected, "contradicts": list(contradicts)}
    if valid:
        c["arguments"] = arguments if arguments is not None else (BOOK if name == "book" else {"query": "x"})
    if distractor:
        c["distractor"] = True
    return c


def fault(kind: str, step: int, target: str, **detail: Any) -> dict[str, Any]:
    return {"step": step, "kind": kind, "target": target, "detail": detail or "injected"}


def make_record(calls: Sequence[dict[str, Any]] = (), *, success: bool = False, score: float | None = None,
                turns: int | None = None, parse_errors: tuple[int, ...] = (), noise: Sequence[dict[str, Any]] = (),
                constraints: list[dict[str, Any]] | None = None, gold: dict[str, Any] | None = GOLD,
                env_id: str = "AgentRL/Dialog-v0", noise_name: str | None = None, seed: int = 0, trial: int = 0,
                agent_error: dict[str, Any] | None = None, usage: dict[str, int] | None = None,
                policy_violations: list[str] | None = None, with_metrics: bool = True) -> dict[str, Any]:
    """A record with steps and metrics consistent with each other."""
    calls = list(calls)
    last = max([c["turn"] for c in calls] + list(parse_errors) + [e["step"] for e in noise] + [1])
    turns = turns if turns is not None else last
    steps = []
    for t in range(1, turns + 1):
        step_calls = [c for c in calls if c["turn"] == t]
        errors = [c["error"] for c in step_calls if c["error"] is not None and not c["injected"]]
        errors += ["PARSE_ERROR"] * parse_errors.count(t)
        steps.append({"turn": t, "reward": 0.0, "obs_sha256": "0" * 64, "errors": errors, "calls": step_calls,
                      "noise": [e for e in noise if e["step"] == t]})
    error_counts: dict[str, int] = {}
    for s in steps:
        for code in s["errors"]:
            error_counts[code] = error_counts.get(code, 0) + 1
    details: dict[str, Any] = {"met": {}}
    if policy_violations is not None:
        details["policy_violations"] = policy_violations
    metrics = {
        "success": success, "score": float(score if score is not None else success), "turns": turns,
        "tool_calls": len(calls), "outcome": "accepted" if success else "truncated",
        "task": {"family": "dialog", "domain": "cafes", "difficulty": "easy", "split": "train", "id": f"t{seed}"},
        "calls": calls, "errors": error_counts,
        "constraints": constraints if constraints is not None else [{"turn": 0, "known": []}],
        "score_details": details, "noise": list(noise), "elapsed_ms": 0.0,
    }
    if gold is not None:
        metrics["gold"] = gold
    noise_key = noise_name or "none"
    return {
        "schema_version": 1, "provenance": {}, "suite": None,
        "env": {"id": env_id, "kwargs": {}, "noise": noise_name},
        "key": f"{env_id}|noise={noise_key}|seed={seed}|trial={trial}", "seed": seed, "trial": trial,
        "agent": {"name": "fake", "config": {}, "privileged": False}, "actions": ["..."] * turns, "steps": steps,
        "metrics": metrics if with_metrics else None, "agent_error": agent_error, "usage": usage, "timing": {},
    }


# ============================================================================ completion
def test_completion_counts_agent_errors_as_failures() -> None:
    records = [
        make_record(success=True),
        make_record(success=False, score=0.5),
        make_record(success=True, score=1.0),
        # The metrics claim success, but the agent crashed: a failure with score 0.
        make_record(success=True, agent_error={"type": "RuntimeError", "message": "boom"}),
        make_record(agent_error={"type": "TimeoutError", "message": "slow"}, with_metrics=False),
    ]
    out = completion(records)
    assert out["episodes"] == 5
    assert out["success_rate"]["value"] == pytest.approx(2 / 5)
    assert out["mean_score"]["value"] == pytest.approx(2.5 / 5)
    lo, hi = out["success_rate"]["ci"]
    assert 0 <= lo <= 0.4 <= hi <= 1
    assert out["success_rate"]["n"] == 5


def test_completion_empty_and_constant() -> None:
    assert completion([])["success_rate"] == {"value": None, "ci": [None, None], "n": 0}
    out = completion([make_record(success=True)] * 10)
    assert out["success_rate"] == {"value": 1.0, "ci": [1.0, 1.0], "n": 10}


# ============================================================================ tool accuracy
def test_call_matches() -> None:
    gold = GOLD["calls"][0]
    assert call_matches("book", BOOK, gold)
    assert call_matches("book", {**BOOK, "item_id": "b"}, gold)
    assert call_matches("book", {**BOOK, "note": "window seat"}, gold)  # extra args the gold leaves open
    assert not call_matches("book", {**BOOK, "item_id": "c"}, gold)
    assert not call_matches("book", {"item_id": "a", "day": "mon"}, gold)  # a gold argument missing
    assert not call_matches("book", {**BOOK, "slot": "morning"}, gold)
    assert not call_matches("book_now", BOOK, gold)
    assert not call_matches("book", None, gold)
    assert call_matches("f", {"n": 1}, {"name": "f", "arguments": {"n": 1.0}})
    assert not call_matches("f", {"n": True}, {"name": "f", "arguments": {"n": 1}})


def test_tool_accuracy_basic() -> None:
    rec = make_record([call(1, "search"), call(3, "book")], parse_errors=(2,), success=True)
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == pytest.approx(2 / 3)  # the parse error is an invalid action
    assert out["validity"]["n"] == 3
    assert out["precision"]["value"] == pytest.approx(1 / 2)  # search is not in the gold plan
    assert out["recall"]["value"] == 1.0
    assert out["f1"]["value"] == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_calls_of_a_plan_abandoned_by_a_goal_shift_stay_precise() -> None:
    # Booked for Monday, the user shifted to Tuesday: the first booking and its cancellation
    # were right when made, so an oracle keeps precision 1.
    tue = {"item_id": "a", "day": "tue", "slot": "evening"}
    gold = {**GOLD, "day": "tue",
            "calls": [{"name": "book", "arguments": {"item_id": {"any_of": ["a"]}, "day": "tue", "slot": "evening"}}],
            "superseded_calls": [GOLD["calls"][0], {"name": "cancel", "arguments": {}}]}
    rec = make_record([call(1, "book"), call(2, "cancel", arguments={"booking_id": "B1"}),
                       call(3, "book", arguments=tue)], success=True, gold=gold)
    out = tool_accuracy([rec])
    assert out["precision"]["value"] == 1.0
    assert out["recall"]["value"] == 1.0
    # Without the shift, the same Monday booking would be imprecise.
    plain = make_record([call(1, "book"), call(3, "book", arguments=tue)], success=True,
                        gold={k: v for k, v in gold.items() if k != "superseded_calls"})
    assert tool_accuracy([plain])["precision"]["value"] == pytest.approx(1 / 2)


def test_invalid_calls_count_against_validity_only() -> None:
    rec = make_record([call(1, "serch", valid=False, error="UNKNOWN_TOOL"),
                       call(2, "book", valid=False, error="SCHEMA"), call(3, "book")])
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == pytest.approx(1 / 3)
    assert out["precision"]["value"] == 1.0
    assert out["recall"]["value"] == 1.0


def test_no_tool_calls_is_undefined_not_perfect() -> None:
    quiet = make_record([], turns=3)
    out = tool_accuracy([quiet])
    assert out["validity"]["value"] is None and out["validity"]["ci"] == [None, None]
    assert out["precision"]["value"] is None
    assert out["recall"]["value"] == 0.0  # the gold booking was never made
    assert out["f1"]["value"] is None
    # A call-less episode adds nothing to the pooled validity and precision of others.
    busy = make_record([call(1, "search"), call(2, "book")])
    both = tool_accuracy([quiet, busy])
    assert both["validity"]["value"] == 1.0
    assert both["precision"]["value"] == pytest.approx(1 / 2)
    assert both["recall"]["value"] == pytest.approx(1 / 2)


def test_injected_failures_are_not_the_agents() -> None:
    rec = make_record([
        call(1, "book", error="TIMEOUT", injected=True),
        call(2, "book"),  # the legitimate retry
    ], success=True)
    out = tool_accuracy([rec])
    assert out["validity"] == {"value": 1.0, "ci": [1.0, 1.0], "n": 1}
    assert out["precision"]["value"] == 1.0 and out["precision"]["n"] == 1
    assert out["recall"]["value"] == 1.0


def test_retry_after_own_failure_and_duplicates() -> None:
    retried = make_record([call(1, "book", error="TOOL_ERROR"), call(2, "book", arguments={**BOOK, "item_id": "b"})])
    assert tool_accuracy([retried])["precision"]["value"] == 1.0
    # A second booking after a successful one is a duplicate, not a retry.
    twice = make_record([call(1, "book"), call(2, "book", arguments={**BOOK, "item_id": "b"})])
    out = tool_accuracy([twice])
    assert out["precision"]["value"] == pytest.approx(1 / 2)
    assert out["recall"]["value"] == 1.0


def test_failed_gold_call_gives_no_recall() -> None:
    rec = make_record([call(1, "book", error="TOOL_ERROR"), call(2, "book", error="TIMEOUT", injected=True)])
    out = tool_accuracy([rec])
    assert out["precision"]["value"] == 1.0  # it was the right call
    assert out["recall"]["value"] == 0.0


def test_distractor_calls_are_valid_but_never_match() -> None:
    rec = make_record([call(1, "book_now", arguments=BOOK, distractor=True),
                       call(2, "book", distractor=True),  # even with a gold name, a distractor is not the real tool
                       call(3, "book")])
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == 1.0
    assert out["precision"]["value"] == pytest.approx(1 / 3)
    assert out["recall"]["value"] == 1.0


def test_episode_without_gold_counts_for_validity_only() -> None:
    rec = make_record([call(1, "book"), call(2, "x", valid=False, error="UNKNOWN_TOOL")], gold=None)
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == pytest.approx(1 / 2)
    assert out["precision"]["value"] is None and out["recall"]["value"] is None


def test_agent_error_episode_uses_its_steps() -> None:
    rec = make_record([call(1, "search"), call(2, "book")], agent_error={"type": "E", "message": "m"},
                      with_metrics=False)
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == 1.0
    assert out["precision"]["value"] is None  # no gold in the record
    assert goal_consistency([rec])["goal_consistency"]["value"] == 1.0
    assert completion([rec])["success_rate"]["value"] == 0.0


# ============================================================================ recovery
def test_recovery_per_fault_kind() -> None:
    rec = make_record(
        [
            call(2, "search", error="TIMEOUT", injected=True),
            call(2, "search"),  # same turn as the failure: sent before the agent saw it
            call(4, "search"),  # recovers the tool failure: 2 turns
            call(5, "get_details", error="TOOL_ERROR"),  # any later call recovers corruption: 4 turns
            call(6, "book", contradicts=("time",)),  # acts on the old goal: not a recovery
            call(7, "cancel", error="TIMEOUT", injected=True),
            call(8, "cancel"),  # recovers the goal shift: 3 turns
        ],
        turns=9,
        noise=[fault("ambiguity", 0, "c_area"), fault("tool_failure", 2, "search", code="TIMEOUT"),
               fault("corruption", 1, "get_details"), fault("goal_shift", 5, "time", recoverable=True),
               fault("typos", 3, "user"), fault("latency", 2, "search")],
        constraints=[{"turn": 0, "known": ["c_cat"]}, {"turn": 3, "known": ["c_cat", "c_area"]}],
    )
    out = recovery([rec])
    assert out["faults"] == 4 and out["recovered"] == 4 and out["censored"] == 0 and out["unrecoverable"] == 0
    # Turns to recover: ambiguity 3, tool_failure 2, corruption 4, goal_shift 3.
    assert {k: v["median"] for k, v in out["by_kind"].items()} == {
        "tool_failure": 2, "corruption": 4, "ambiguity": 3, "goal_shift": 3}
    assert out["share"]["value"] == 1.0 and out["share"]["n"] == 4
    assert out["median"]["value"] == 3  # inverted-CDF median of 2, 3, 3, 4
    assert out["p90"]["value"] == 4
    assert out["km_median"] == 3


def test_recovery_without_faults() -> None:
    out = recovery([make_record([call(1, "book")], noise=[fault("typos", 1, "user")])])
    assert out["faults"] == 0
    assert out["share"] == {"value": None, "ci": [None, None], "n": 0}
    assert out["median"]["value"] is None and out["p90"]["value"] is None
    assert out["km_median"] is None
    assert out["by_kind"] == {}


def test_fault_on_last_turn_is_censored_and_unrecoverable_is_left_out() -> None:
    last = make_record([call(5, "book", error="RATE_LIMIT", injected=True)], turns=5,
                       noise=[fault("tool_failure", 5, "book")])
    shift = make_record([call(1, "search")], turns=6,
                        noise=[fault("goal_shift", 6, "time", recoverable=False)])
    never = make_record([call(1, "search", error="TIMEOUT", injected=True),
                         call(3, "search", error="TIMEOUT", injected=True)], turns=4,
                        noise=[fault("tool_failure", 1, "search"), fault("tool_failure", 3, "search")])
    out = recovery([last, shift, never])
    assert out["faults"] == 3 and out["recovered"] == 0 and out["censored"] == 3
    assert out["unrecoverable"] == 1
    assert out["share"]["value"] == 0.0
    assert out["median"]["value"] is None and out["km_median"] is None


def test_distractor_and_invalid_calls_do_not_recover() -> None:
    rec = make_record([call(1, "search", error="TIMEOUT", injected=True),
                       call(2, "search", distractor=True), call(3, "search", valid=False, error="SCHEMA"),
                       call(4, "book", distractor=True)],
                      turns=5, noise=[fault("tool_failure", 1, "search"), fault("goal_shift", 1, "time")])
    out = recovery([rec])
    assert out["recovered"] == 0 and out["censored"] == 2


def test_recovery_ties_and_kaplan_meier() -> None:
    # Recovered after 1, 1, 2, 2 turns: the inverted-CDF median takes the lower tie.
    recs = [make_record([call(t + d, "search")], noise=[fault("tool_failure", t, "search")], seed=i)
            for i, (t, d) in enumerate([(1, 1), (2, 1), (1, 2), (3, 2)])]
    out = recovery(recs)
    assert out["median"]["value"] == 1 and out["p90"]["value"] == 2 and out["km_median"] == 1
    # KM with a censoring tied to an event: recovered at 1, censored at 1, recovered at 3 and 3.
    # S(1) = 3/4; at 3 two are at risk and both recover: S(3) = 0, so the KM median is 3.
    recs = [
        make_record([call(2, "search")], noise=[fault("tool_failure", 1, "search")], seed=1),
        make_record([], turns=2, noise=[fault("tool_failure", 1, "search")], seed=2),
        make_record([call(4, "search")], noise=[fault("tool_failure", 1, "search")], seed=3),
        make_record([call(4, "search")], noise=[fault("tool_failure", 1, "search")], seed=4),
    ]
    out = recovery(recs)
    assert out["censored"] == 1 and out["median"]["value"] == 3 and out["km_median"] == 3
    # Most faults censored: KM survival never reaches one half.
    recs = [make_record([call(2, "search")], noise=[fault("tool_failure", 1, "search")], seed=1)] + [
        make_record([], turns=9, noise=[fault("tool_failure", 1, "search")], seed=s) for s in (2, 3)]
    assert recovery(recs)["km_median"] is None


def test_recovery_ci_brackets_the_estimate() -> None:
    rng = np.random.default_rng(1)
    recs = []
    for i in range(60):
        d = int(rng.integers(1, 5))
        got = rng.random() < 0.7
        recs.append(make_record([call(2 + d, "search")] if got else [], turns=8,
                                noise=[fault("tool_failure", 2, "search")], seed=i))
    out = recovery(recs)
    for name in ("share", "median", "p90"):
        agg = out[name]
        assert agg["ci"][0] <= agg["value"] <= agg["ci"][1], name


# ============================================================================ goal consistency
def test_goal_consistency() -> None:
    rec = make_record([
        call(1, "search"),
        call(2, "search", contradicts=("c_area",)),
        call(3, "search", valid=False, error="SCHEMA"),  # not an action on the goal
        call(4, "book", error="TIMEOUT", injected=True, contradicts=("time",)),  # the agent's choice all the same
        call(5, "book"),
    ])
    out = goal_consistency([rec])
    assert out["goal_consistency"]["value"] == pytest.approx(2 / 4)
    assert out["goal_consistency"]["n"] == 4
    assert goal_consistency([make_record([])])["goal_consistency"]["value"] is None


# ============================================================================ pass^k
def _trials(seed: int, outcomes: list[bool], **kw: Any) -> list[dict[str, Any]]:
    return [make_record(success=s, seed=seed, trial=i, **kw) for i, s in enumerate(outcomes)]


def test_pass_hat_k_by_hand() -> None:
    records = (_trials(1, [True, False, True, False]) + _trials(2, [True] * 4) + _trials(3, [True])
               + _trials(1, [True, True], noise_name="tool_failure=0.5"))
    # Tasks: (1, none) n=4 c=2; (2) n=4 c=4; (3) n=1 c=1; (1, noise) n=2 c=2.
    assert pass_hat_k(records, 1) == pytest.approx((2 / 4 + 1 + 1 + 1) / 4)
    assert pass_hat_k(records, 2) == pytest.approx((1 / 6 + 1 + 1) / 3)
    assert pass_hat_k(records, 4) == pytest.approx((0 + 1) / 2)
    assert math.isnan(pass_hat_k(records, 5))
    assert pass_at_k(records, 2) == pytest.approx((5 / 6 + 1 + 1) / 3)
    assert pass_at_k(records, 4) == 1.0
    with pytest.raises(ValueError):
        pass_hat_k(records, 0)


def test_pass_hat_k_matches_enumeration_and_agent_errors_fail() -> None:
    outcomes = [True, True, False, True, False, True, True]
    records = _trials(7, outcomes)
    records[0]["agent_error"] = {"type": "E", "message": "m"}  # the recorded success no longer counts
    effective = [False] + outcomes[1:]
    for k in range(1, 8):
        subsets = list(itertools.combinations(effective, k))
        assert pass_hat_k(records, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))
        assert pass_at_k(records, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))


def test_reliability_resamples_tasks() -> None:
    records = [r for s in range(30) for r in _trials(s, [s % 3 != 0, s % 2 == 0, True])]
    out = reliability(records, ks=(1, 2, 4))
    assert out["tasks"] == 30
    assert out["pass^2"]["n"] == 30
    assert out["pass^2"]["value"] == pytest.approx(pass_hat_k(records, 2))
    lo, hi = out["pass^2"]["ci"]
    assert lo < out["pass^2"]["value"] < hi
    assert out["pass^4"] == {"value": None, "ci": [None, None], "n": 0}


# ============================================================================ efficiency
def test_efficiency() -> None:
    records = [
        make_record([call(1), call(2, "book")], success=True, turns=2,
                    usage={"prompt_tokens": 100, "completion_tokens": 20}, policy_violations=[]),
        make_record([call(1)] * 3, success=False, turns=6, usage={"prompt_tokens": 300, "completion_tokens": 40},
                    policy_violations=["booked without confirming", "shared a phone number"]),
        make_record([call(1, "book")], success=True, turns=4),
    ]
    out = efficiency(records)
    assert out["successes"] == 2
    assert out["turns_per_success"]["value"] == pytest.approx(12 / 2)
    assert out["tool_calls_per_success"]["value"] == pytest.approx(6 / 2)
    assert out["tokens_per_success"]["value"] == pytest.approx(460 / 1)  # only episodes with usage
    assert out["policy_violations"]["value"] == pytest.approx(1.0) and out["policy_violations"]["n"] == 2
    assert out["policy_violations_total"] == 2
    none = efficiency([make_record(success=False)])
    assert none["turns_per_success"]["value"] is None and none["tokens_per_success"]["value"] is None
    assert none["policy_violations"]["value"] is None


# ============================================================================ bootstrap
def test_bootstrap_ci_forms() -> None:
    x = np.arange(100) % 2
    lo, hi = bootstrap_ci(x, "mean", n_boot=1000, seed=3)
    assert lo < 0.5 < hi and (lo, hi) == bootstrap_ci(x, "mean", n_boot=1000, seed=3)
    assert (lo, hi) == bootstrap_ci(x, lambda r: r.mean(axis=1), n_boot=1000, seed=3)
    ratio = np.stack([x, np.ones(100)], axis=1)
    assert bootstrap_ci(ratio, "ratio", n_boot=1000, seed=3) == pytest.approx((lo, hi))
    recs = [make_record(success=bool(v), seed=i) for i, v in enumerate(x[:40])]
    rlo, rhi = bootstrap_ci(recs, lambda rs: completion(rs, n_boot=1)["success_rate"]["value"], n_boot=200)
    assert rlo < 0.5 < rhi
    assert all(math.isnan(v) for v in bootstrap_ci([], "mean"))
    with pytest.raises(ValueError):
        bootstrap_ci(x, "median")


def test_bootstrap_is_fast() -> None:
    x = (np.random.default_rng(0).random(1000) < 0.6).astype(float)
    start = time.perf_counter()
    bootstrap_ci(x, "mean", n_boot=2000)
    assert time.perf_counter() - start < 0.5


def test_bootstrap_coverage_by_simulation() -> None:
    # A 95% interval for p = 0.7 from 200 Bernoulli episodes must cover p in about 95% of runs.
    rng = np.random.Generator(np.random.PCG64(2024))
    runs = rng.random((1000, 200)) < 0.7
    covered = 0
    for i, run in enumerate(runs):
        lo, hi = bootstrap_ci(run, "mean", n_boot=500, seed=i)
        covered += lo <= 0.7 <= hi
    assert 0.93 <= covered / len(runs) <= 0.97


# ============================================================================ paired comparison
def _run(p_success: np.ndarray, draws: np.ndarray, seeds: range) -> list[dict[str, Any]]:
    return [make_record(success=bool(u < p), seed=s) for s, u, p in zip(seeds, draws, p_success)]


def test_paired_comparison_finds_a_known_difference() -> None:
    rng = np.random.Generator(np.random.PCG64(5))
    n = 400
    u = rng.random(n)  # common random numbers: B succeeds only where A does
    a = _run(np.full(n, 0.8), u, range(n))
    b = _run(np.full(n, 0.5), u, range(n))
    out = paired_comparison(a, b[::-1])  # order does not matter: episodes align by key
    true = float(np.mean(u < 0.8) - np.mean(u < 0.5))
    assert out["n"] == n and not out["partial"]
    assert out["diff"]["value"] == pytest.approx(true)
    lo, hi = out["diff"]["ci"]
    assert 0 < lo < 0.3 < hi
    assert paired_comparison(a, a)["diff"] == {"value": 0.0, "ci": [0.0, 0.0], "n": n}  # all ties
    assert paired_comparison(a, b, "turns")["diff"]["value"] == 0.0


def test_paired_comparison_needs_the_same_episodes() -> None:
    a = [make_record(success=True, seed=s) for s in range(5)]
    b = [make_record(success=False, seed=s) for s in range(1, 6)]
    with pytest.raises(ValueError, match=r"seed=0\|trial=0.*seed=5"):
        paired_comparison(a, b)
    out = paired_comparison(a, b, "score", intersect=True)
    assert out["partial"] and out["n"] == 4 and out["only_in_a"] == 1 and out["only_in_b"] == 1
    assert out["diff"]["value"] == 1.0
    with pytest.raises(ValueError, match="twice"):
        paired_comparison(a + a[:1], a)
    with pytest.raises(ValueError):
        paired_comparison(a, a, "luck")


# ============================================================================ summary
def test_summarise_groups() -> None:
    records = (
        [make_record([call(1), call(2, "book")], success=True, seed=s) for s in range(3)]
        + [make_record([call(1, "search", error="TIMEOUT", injected=True)], turns=3, seed=s,
                       noise_name="tool_failure=0.5", noise=[fault("tool_failure", 1, "search")]) for s in range(2)]
    )
    df = summarise(records)
    assert list(df["noise"]) == ["none", "tool_failure=0.5"]
    assert list(df["n"]) == [3, 2]
    for col in ("success", "success_lo", "success_hi", "score", "tool_f1", "recovery_share", "recovery_median",
                "goal_consistency", "validity"):
        assert col in df.columns
    clean, noisy = df.iloc[0], df.iloc[1]
    assert clean["success"] == 1.0 and clean["tool_f1"] == pytest.approx(2 * 0.5 / 1.5)
    assert math.isnan(clean["recovery_share"]) and clean["recovery_faults"] == 0
    assert noisy["success"] == 0.0 and noisy["recovery_share"] == 0.0 and noisy["recovery_censored"] == 2
    assert math.isnan(noisy["validity"])  # its only call was an injected failure
    assert summarise([], group_by=("agent",)).empty
    with pytest.raises(ValueError, match="unknown group_by"):
        summarise(records, group_by=("colour",))
