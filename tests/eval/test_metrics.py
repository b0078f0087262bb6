"""Tests for agentgym.eval.metrics, on hand-built records whose answers are known.

`make_record` builds a schema-2 record from a few call and noise descriptions, the way the
runner would write it: per-step summaries grouped by turn and the episode metrics beside them.
The gold plan is a dialog-like one: search, check availability, book.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any, Sequence

import numpy as np
import pytest

from agentgym.eval.metrics import (
    HEADLINE,
    bootstrap_ci,
    call_matches,
    compare,
    completion,
    efficiency,
    goal_consistency,
    headline,
    judge_episode,
    paired_comparison,
    pass_at_k,
    pass_hat_k,
    recovery,
    reliability,
    summarise,
    tool_accuracy,
)

SEARCH = {"name": "search", "arguments": {"area": {"if_given": "harbor"}}}
CHECK = {"name": "check", "arguments": {"item_id": {"any": True}, "day": "mon"}}
BOOK_STEP = {"name": "book", "arguments": {"item_id": {"any_of": ["a", "b"]}, "day": "mon", "slot": "evening"}}
GOLD = {"day": "mon", "slot": "evening", "items": ["a", "b"], "calls": [SEARCH, CHECK, BOOK_STEP]}
BOOK = {"item_id": "a", "day": "mon", "slot": "evening"}
DEFAULT_ARGS = {"search": {"area": "harbor"}, "check": {"item_id": "a", "day": "mon"}, "book": BOOK,
                "cancel": {"booking_id": "B1"}}


def call(turn: int, name: str = "search", *, valid: bool = True, error: str | None = None, kind: str | None = None,
         injected: bool = False, contradicts: tuple[str, ...] = (), arguments: dict[str, Any] | None = None,
         distractor: bool = False, index: int = 0) -> dict[str, Any]:
    """One call record as `AgentEnv` writes it (id ``call_<turn>_<index>``)."""
    c: dict[str, Any] = {"turn": turn, "id": f"call_{turn}_{index}", "name": name, "valid": valid, "error": error,
                         "kind": (kind or ("write" if name in ("book", "cancel") else "read")) if valid else None,
                         "injected": injected, "contradicts": list(contradicts)}
    if valid:
        c["arguments"] = arguments if arguments is not None else DEFAULT_ARGS.get(name, {"query": "x"})
    if distractor:
        c["distractor"] = True
    return c


def fault(kind: str, step: int, target: str, *, hits: dict[str, Any] | None = None, call_id: str | None = None,
          at_ms: float = 0.0, **detail: Any) -> dict[str, Any]:
    """One noise event as `AgentEnv.log_noise` writes it (call-level kinds name their call)."""
    if hits is None and kind in ("ambiguity", "goal_shift"):
        hits = {"constraint": target}
    event = {"step": step, "kind": kind, "target": target, "detail": {"recoverable": True, **detail},
             "hits": hits, "at_ms": at_ms}
    if kind in ("tool_failure", "corruption"):
        event["call"] = call_id or f"call_{step}_0"
    return event


def make_record(calls: Sequence[dict[str, Any]] = (), *, success: bool = False, score: float | None = None,
                turns: int | None = None, parse_errors: tuple[int, ...] = (), noise: Sequence[dict[str, Any]] = (),
                constraints: list[dict[str, Any]] | None = None, gold: dict[str, Any] | None = GOLD,
                commitments: Sequence[dict[str, Any]] = (), elapsed: Sequence[float] | None = None,
                score_details: dict[str, Any] | None = None, max_turns: int = 20,
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
        step = {"turn": t, "reward": 0.0, "obs_sha256": "0" * 64, "errors": errors, "calls": step_calls,
                "noise": [e for e in noise if e["step"] == t]}
        if elapsed is not None and elapsed[t - 1]:
            step["elapsed_ms"] = float(elapsed[t - 1])
        steps.append(step)
    error_counts: dict[str, int] = {}
    for s in steps:
        for code in s["errors"]:
            error_counts[code] = error_counts.get(code, 0) + 1
    details: dict[str, Any] = dict(score_details or {"met": {}})
    if policy_violations is not None:
        details["policy_violations"] = policy_violations
    metrics = {
        "success": success, "score": float(score if score is not None else success), "turns": turns,
        "tool_calls": len(calls), "outcome": "accepted" if success else "truncated",
        "task": {"family": "dialog", "domain": "cafes", "difficulty": "easy", "split": "train", "id": f"t{seed}"},
        "calls": calls, "errors": error_counts,
        "constraints": constraints if constraints is not None else [{"turn": 0, "known": []}],
        "score_details": details, "noise": list(noise), "elapsed_ms": float(elapsed[turns - 1]) if elapsed else 0.0,
        "commitments": list(commitments), "max_turns": max_turns, "time_budget_ms": 120_000.0,
    }
    if gold is not None:
        metrics["gold"] = gold
    noise_key = noise_name or "none"
    return {
        "schema_version": 2, "provenance": {}, "suite": None,
        "env": {"id": env_id, "kwargs": {}, "noise": noise_name},
        "key": f"{env_id}|noise={noise_key}|seed={seed}|trial={trial}", "seed": seed, "trial": trial,
        "agent": {"name": "fake", "config": {}, "privileged": False}, "actions": ["..."] * turns, "steps": steps,
        "metrics": metrics if with_metrics else None, "agent_error": agent_error, "usage": usage, "timing": {},
    }


TF = {"gold_step": 0}  # a fault hitting the search step
BK = {"gold_step": 2}  # ... the booking step


# ============================================================================ one episode's verdicts
def test_judge_episode_says_what_each_call_counted_for() -> None:
    rec = make_record([
        call(1, "search"),
        call(2, "check", arguments={"item_id": "z", "day": "mon"}),
        call(3, "check"),
        call(4, "check"),  # a repeat: the check the brief asks for before a write
        call(5, "get_details", arguments={"item_id": "a"}),  # no plan needs it
        call(6, "book", error="TOOL_ERROR", arguments={**BOOK, "item_id": "zz"}),  # refused
        call(7, "book", contradicts=("area",)),
        call(8, "search", error="TOOL_ERROR", injected=True),
        call(9, "book", valid=False, error="INVALID_ARGS"),
    ], parse_errors=(10,))
    v = judge_episode(rec)
    by_turn = {c.turn: c for c in v.calls}
    assert [c.index for c in v.calls] == list(range(9))
    assert by_turn[1].right and by_turn[1].useful and by_turn[1].completes == 0 and by_turn[1].steps == (0,)
    assert by_turn[2].right and by_turn[2].completes == 1 and by_turn[3].completes is None
    assert by_turn[4].repeat and not by_turn[4].judged and by_turn[4].right is None and by_turn[4].useful is True
    assert not by_turn[5].judged and by_turn[5].useful is False
    assert by_turn[6].right is False and "refused (TOOL_ERROR)" in by_turn[6].wrong_because
    assert by_turn[7].right is False and by_turn[7].wrong_because == ("contradicts area",)
    assert by_turn[8].injected and by_turn[8].useful is None
    assert not by_turn[9].valid and by_turn[9].useful is None and not by_turn[9].judged
    # The verdicts are what the aggregates pool.
    out = tool_accuracy([rec])
    n = v.tools
    assert n.valid / n.attempts == pytest.approx(out["validity"]["value"]) and n.attempts == 9
    assert sum(c.right is True for c in v.calls) == n.right and sum(c.judged for c in v.calls) == n.judged
    assert n.right / n.judged == pytest.approx(out["correctness"]["value"])
    assert sum(c.useful is True for c in v.calls) == n.useful
    assert n.useful / n.spent == pytest.approx(out["efficiency"]["value"])
    assert sum(c.completes is not None for c in v.calls) == n.done and v.rate("done", "gold") == 1.0
    # Write calls that went through, or that break a stated constraint, are commitments: the one
    # that contradicts the area breaks it; the refused one broke nothing and committed to nothing.
    assert [(c.turn, c.kind, c.consistent) for c in v.commitments] == [(7, "write", False)]
    assert v.rate("consistent", "committed") == pytest.approx(goal_consistency([rec])["goal_consistency"]["value"])


def test_judge_episode_says_what_became_of_each_fault() -> None:
    rec = make_record(
        [call(2, "search", error="TOOL_ERROR", injected=True), call(5, "search"),
         call(6, "get_details", error="TOOL_ERROR", injected=True), call(7, "book", error="TOOL_ERROR", injected=True)],
        turns=9, elapsed=[0, 100, 200, 300, 400, 500, 600, 700, 800],
        noise=[fault("tool_failure", 2, "search", hits=TF, at_ms=100.0), fault("latency", 3, "search"),
               fault("tool_failure", 6, "get_details", hits=None), fault("tool_failure", 7, "book", hits=BK, at_ms=600.0),
               fault("goal_shift", 8, "time", recoverable=False)])
    v = judge_episode(rec)
    got = [(f.index, f.kind, f.status, f.turn, f.turns) for f in v.faults]
    assert got == [(0, "tool_failure", "recovered", 5, 3), (2, "tool_failure", "unaffected", None, None),
                   (3, "tool_failure", "censored", None, 2), (4, "goal_shift", "unrecoverable", None, None)]
    assert v.faults[0].ms == pytest.approx(300.0) and v.timed  # from 100 ms to the end of turn 5 (400 ms)
    out = recovery([rec])
    assert (out["faults"], out["recovered"], out["censored"], out["unaffected"], out["unrecoverable"]) == (2, 1, 1, 1, 1)
    assert len(v.noise_log) == 5 and len(v.call_log) == 4


def test_judge_episode_of_an_episode_cut_short_reads_its_steps() -> None:
    rec = make_record([call(1, "search")], agent_error={"type": "RuntimeError", "message": "boom"},
                      with_metrics=False, success=True)
    v = judge_episode(rec)
    assert not v.success and v.score == 0.0 and v.turns == 1 and len(v.calls) == 1 and v.commitments == ()
    assert v.rate("consistent", "committed") is None


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
def test_call_matches_and_the_spec_operators() -> None:
    assert call_matches("book", BOOK, BOOK_STEP)
    assert call_matches("book", {**BOOK, "item_id": "b"}, BOOK_STEP)
    assert call_matches("book", {**BOOK, "note": "window seat"}, BOOK_STEP)  # extra args the step leaves open
    assert not call_matches("book", {**BOOK, "item_id": "c"}, BOOK_STEP)
    assert not call_matches("book", {"item_id": "a", "day": "mon"}, BOOK_STEP)  # a step argument missing
    assert not call_matches("book_now", BOOK, BOOK_STEP)
    assert not call_matches("book", None, BOOK_STEP)
    assert call_matches("f", {"n": 1}, {"name": "f", "arguments": {"n": 1.0}})
    assert not call_matches("f", {"n": True}, {"name": "f", "arguments": {"n": 1}})
    # if_given: may be left out, must match when given; bounds; subsets; any text.
    assert call_matches("search", {}, SEARCH) and call_matches("search", {"area": "harbor", "page": 2}, SEARCH)
    assert not call_matches("search", {"area": "old town"}, SEARCH)
    budget = {"name": "s", "arguments": {"max_price": {"at_least": 40}, "min_rating": {"at_most": 4.0},
                                         "amenities": {"subset_of": ["wifi", "quiet"]}, "summary": {"any": True}}}
    good = {"max_price": 50, "min_rating": 3.5, "amenities": ["wifi"], "summary": "anything"}
    assert call_matches("s", good, budget)
    for bad in ({"max_price": 30}, {"min_rating": 4.5}, {"amenities": ["pool"]}, {"max_price": "50"}):
        assert not call_matches("s", {**good, **bad}, budget), bad
    assert not call_matches("s", {k: v for k, v in good.items() if k != "summary"}, budget)  # any: still required


def test_validity_correctness_efficiency_recall() -> None:
    rec = make_record([
        call(1, "search"),
        call(2, "check", arguments={"item_id": "z", "day": "mon"}),  # exploring another place: on plan
        call(3, "check"),
        call(4, "check"),  # the same call again before the write: the check the brief asks for
        call(5, "get_details", arguments={"item_id": "a"}),  # no step of the plan: not efficient
        call(6, "book", error="TOOL_ERROR", arguments={**BOOK, "item_id": "zz"}),  # refused: incorrect
        call(7, "book"),
    ], parse_errors=(8,), success=True)
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == pytest.approx(7 / 8) and out["validity"]["n"] == 8
    # The repeat decides nothing new and get_details is no plan tool: neither is judged.
    assert out["correctness"]["value"] == pytest.approx(4 / 5) and out["correctness"]["n"] == 5
    assert out["efficiency"]["value"] == pytest.approx(5 / 7)  # search, check z, check a (twice), book
    assert out["recall"]["value"] == 1.0 and out["recall"]["n"] == 3


def test_one_check_of_a_read_before_a_write_is_efficient_and_no_other_repeat() -> None:
    rec = make_record([
        call(1, "search"),
        call(1, "search", index=1),  # the same turn: its result not yet seen, no check
        call(2, "check"),
        call(3, "check"),  # the check the brief asks for
        call(4, "check"),  # a second check: padding
        call(4, "get_details", arguments={"item_id": "a"}),
        call(5, "get_details", arguments={"item_id": "a"}),  # a check of a read no plan needs
        call(6, "book"),
        call(7, "search"),  # first repeat of the search, but after the last write: no check
    ], success=True)
    useful = [c.useful for c in judge_episode(rec).calls]
    assert useful == [True, False, True, True, False, False, False, True, False]
    assert tool_accuracy([rec])["efficiency"]["value"] == pytest.approx(4 / 9)


def test_a_booking_made_anew_that_the_plan_needs_again_is_useful() -> None:
    # A come-back asks for a booking again after it was cancelled (CrossTask 7212): the same call
    # completes a step still open, so it is as useful as the first; a third one is a duplicate.
    cancel = {"name": "cancel", "arguments": {"booking_id": "B1"}}
    gold = {**GOLD, "calls": [SEARCH, CHECK, BOOK_STEP, cancel, BOOK_STEP]}
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(4, "cancel"), call(5, "book"),
                       call(6, "book")], gold=gold, success=True)
    assert [c.useful for c in judge_episode(rec).calls] == [True, True, True, True, True, False]
    assert tool_accuracy([rec])["recall"]["value"] == 1.0


def test_a_call_passing_on_a_corrupted_value_is_left_out_of_efficiency() -> None:
    # The search came back with a corrupted id ("zz"); the booking that passes it on is refused:
    # the noise's doing, left out of efficiency as correctness leaves it unblamed (CrossTask 7216).
    rec = make_record([call(1, "search"), call(2, "book", error="TOOL_ERROR", arguments={**BOOK, "item_id": "zz"}),
                       call(3, "check"), call(4, "book")],
                      noise=[fault("corruption", 1, "search", to="zz")], success=True)
    calls = judge_episode(rec).calls
    assert calls[1].carries_corrupted and calls[1].useful is None and calls[1].right is not False
    assert tool_accuracy([rec])["efficiency"]["value"] == 1.0


def test_a_corrupted_result_earns_one_more_read_of_it() -> None:
    # Two results that disagree (one corrupted) are settled by a third read: as useful as the
    # check; a fourth read is padding. Without the corruption the third read would be padding too.
    calls = [call(1, "search"), call(2, "check"), call(3, "check"), call(4, "check"), call(5, "check"),
             call(6, "book")]
    rec = make_record(calls, noise=[fault("corruption", 2, "check", to="b")], success=True)
    assert [c.useful for c in judge_episode(rec).calls] == [True, True, True, True, False, True]
    plain = make_record(calls, success=True)
    assert [c.useful for c in judge_episode(plain).calls] == [True, True, True, False, False, True]


def test_a_corrupted_read_after_the_last_write_earns_one_more_read_of_it() -> None:
    # A read checked before the write, then read again after the last write, corrupted: the read
    # that settles what the writes left is useful though no write follows it (CrossTask playtest
    # 9402 T19-T22: list_bookings checked, a cancel, the read-back corrupted, read again). A
    # fifth read is padding, and so is the same re-read without the corruption.
    calls = [call(1, "check"), call(2, "check"), call(3, "book"), call(4, "check"), call(5, "check"),
             call(6, "check")]
    rec = make_record(calls, noise=[fault("corruption", 4, "check", to="b")], success=True)
    assert [c.useful for c in judge_episode(rec).calls] == [True, True, True, False, True, False]
    plain = make_record(calls, success=True)
    assert [c.useful for c in judge_episode(plain).calls] == [True, True, True, False, False, False]


def test_a_later_page_completes_its_own_step_not_the_first_pages() -> None:
    # Straight to page 3 first: that read completes the plan's page-3 step, not its first page's,
    # which names no page and so matches any (a playtest, ToolUse 9257 T6, was told the page it
    # had read was "not done"); the first page read after it completes the first step.
    page3 = {"name": "search", "arguments": {**SEARCH["arguments"], "page": 3}}
    gold = {**GOLD, "calls": [SEARCH, page3, CHECK, BOOK_STEP]}
    rec = make_record([call(1, "search", arguments={"area": "harbor", "page": 3}), call(2, "search"),
                       call(3, "check"), call(4, "book")], gold=gold, success=True)
    assert [c.completes for c in judge_episode(rec).calls] == [1, 0, 2, 3]
    assert tool_accuracy([rec])["recall"]["value"] == 1.0
    in_order = make_record([call(1, "search"), call(2, "search", arguments={"area": "harbor", "page": 3}),
                            call(3, "check"), call(4, "book")], gold=gold, success=True)
    assert [c.completes for c in judge_episode(in_order).calls] == [0, 1, 2, 3]


def test_recall_is_not_success() -> None:
    # A booking without the reads a sound agent makes completes one step of three.
    rec = make_record([call(1, "book")], success=True)
    assert tool_accuracy([rec])["recall"]["value"] == pytest.approx(1 / 3)


def test_contradicting_calls_are_incorrect_and_decoys_inefficient() -> None:
    rec = make_record([call(1, "search", contradicts=("area",), arguments={"area": "old town"}),
                       call(2, "search_all", distractor=True), call(3, "book", distractor=True),
                       call(4, "book", arguments={**BOOK, "day": "tue"})])  # a plan tool, no step of the plan
    out = tool_accuracy([rec])
    assert out["correctness"]["value"] == 0.0 and out["correctness"]["n"] == 2  # decoys: not judged
    assert out["efficiency"]["value"] == 0.0  # a wrong-area search is no step; decoys never are
    assert out["recall"]["value"] == 0.0


def test_no_tool_calls_is_undefined_not_perfect() -> None:
    quiet = make_record([], turns=3)
    out = tool_accuracy([quiet])
    for name in ("validity", "correctness", "efficiency", "precision"):
        assert out[name]["value"] is None and out[name]["ci"] == [None, None] and out[name]["n"] == 0, name
    assert out["f1"]["value"] is None and out["f1"]["n"] == 3  # F1's n is the gold steps
    assert out["recall"]["value"] == 0.0  # the gold plan was never carried out
    busy = make_record([call(1, "search"), call(2, "book")])
    both = tool_accuracy([quiet, busy])
    assert both["validity"]["value"] == 1.0 and both["efficiency"]["value"] == 1.0
    assert both["recall"]["value"] == pytest.approx(2 / 6)


def test_injected_failures_are_not_the_agents() -> None:
    rec = make_record([
        call(1, "book", error="TOOL_ERROR", injected=True),
        call(2, "book"),  # the legitimate retry
    ], success=True)
    out = tool_accuracy([rec])
    assert out["validity"] == {"value": 1.0, "ci": [1.0, 1.0], "n": 1}
    # Its arguments were right, and the retry repeats its decision: judged once.
    assert out["correctness"]["value"] == 1.0 and out["correctness"]["n"] == 1
    assert out["efficiency"]["value"] == 1.0 and out["efficiency"]["n"] == 1
    assert out["precision"]["value"] == 1.0


def test_padding_and_verification_re_reads_leave_correctness_alone() -> None:
    plain = make_record([call(1, "search"), call(2, "book", contradicts=("time",))])
    padded = make_record([call(1, "search"), call(1, "list_policies", index=1), call(1, "get_details", index=2),
                          call(2, "search"), call(2, "search", index=1), call(3, "book", contradicts=("time",))])
    a, b = tool_accuracy([plain]), tool_accuracy([padded])
    assert a["correctness"]["value"] == b["correctness"]["value"] == 0.5
    assert b["efficiency"]["value"] < a["efficiency"]["value"]


def test_a_read_of_a_plan_tool_off_the_plan_is_not_wrong_data() -> None:
    # A careful agent's look at a record the plan does not need (the search of another area, a
    # check of the other candidate day) decides nothing: it is left out of correctness and costs
    # efficiency only. A write of a plan tool off the plan is wrong data, as before.
    looked = make_record([call(1, "search"), call(2, "search", arguments={"area": "old town"}),
                          call(3, "check"), call(4, "check", arguments={"item_id": "a", "day": "tue"}),
                          call(5, "book")], success=True)
    out = tool_accuracy([looked])
    assert out["correctness"]["value"] == 1.0 and out["correctness"]["n"] == 3
    assert out["efficiency"]["value"] == pytest.approx(3 / 5)
    verdicts = judge_episode(looked).calls
    assert [v.right for v in verdicts] == [True, None, True, None, True]
    wrote = make_record([call(1, "search"), call(2, "check"),
                         call(3, "book", arguments={"item_id": "a", "day": "tue", "slot": "evening"})])
    out = tool_accuracy([wrote])
    assert out["correctness"]["value"] == pytest.approx(2 / 3)
    assert judge_episode(wrote).calls[2].wrong_because == ("fits no step of the plan",)


def test_a_refusal_of_a_corrupted_value_is_not_the_agents() -> None:
    noise = [fault("corruption", 1, "search", hits=BK, **{"from": "a", "to": "a9", "path": "results[0].id"})]
    rec = make_record([call(1, "search"), call(2, "check", error="TOOL_ERROR", arguments={"item_id": "a9", "day": "mon"})],
                      noise=noise)
    assert tool_accuracy([rec])["correctness"]["value"] == 1.0


def test_calls_of_a_plan_abandoned_by_a_goal_shift_stay_efficient() -> None:
    tue = {"item_id": "a", "day": "tue", "slot": "evening"}
    gold = {**GOLD, "day": "tue", "calls": [SEARCH, {**CHECK, "arguments": {**CHECK["arguments"], "day": "tue"}},
                                            {**BOOK_STEP, "arguments": {**BOOK_STEP["arguments"], "day": "tue"}}],
            "superseded_calls": [CHECK, BOOK_STEP, {"name": "cancel", "arguments": {}}]}
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(4, "cancel"),
                       call(5, "check", arguments={"item_id": "a", "day": "tue"}), call(6, "book", arguments=tue)],
                      success=True, gold=gold)
    out = tool_accuracy([rec])
    assert out["efficiency"]["value"] == 1.0 and out["precision"]["value"] == 1.0
    assert out["recall"]["value"] == 1.0


def test_episode_without_gold_counts_for_validity_and_correctness_only() -> None:
    rec = make_record([call(1, "book"), call(2, "x", valid=False, error="UNKNOWN_TOOL")], gold=None)
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == pytest.approx(1 / 2) and out["correctness"]["value"] == 1.0
    assert out["recall"]["value"] is None and out["precision"]["value"] is None


def test_agent_error_episode_uses_its_steps() -> None:
    rec = make_record([call(1, "search"), call(2, "book")], agent_error={"type": "E", "message": "m"},
                      with_metrics=False)
    out = tool_accuracy([rec])
    assert out["validity"]["value"] == 1.0
    assert out["recall"]["value"] is None  # no gold in the record
    assert goal_consistency([rec])["goal_consistency"]["value"] == 1.0  # the booking was a commitment
    assert completion([rec])["success_rate"]["value"] == 0.0


# ============================================================================ recovery
def test_tool_failure_is_recovered_by_completing_its_step() -> None:
    rec = make_record(
        [call(2, "search", error="TOOL_ERROR", injected=True),
         call(3, "search", arguments={"area": "old town"}),  # the same tool, other arguments: no recovery
         call(5, "search")],  # recovers: 3 turns
        turns=6, noise=[fault("tool_failure", 2, "search", hits=TF)])
    out = recovery([rec])
    assert out["faults"] == 1 and out["recovered"] == 1 and out["median"]["value"] == 3
    assert out["by_kind"]["tool_failure"] == {"faults": 1, "recovered": 1, "share": 1.0, "median": 3.0}


def test_a_same_turn_duplicate_recovers_in_zero_turns_and_a_failure_hitting_nothing_is_left_out() -> None:
    rec = make_record([call(2, "search", error="TOOL_ERROR", injected=True), call(2, "search", index=1),
                       call(3, "get_details", error="TOOL_ERROR", injected=True)],
                      noise=[fault("tool_failure", 2, "search", hits=TF),
                             fault("tool_failure", 3, "get_details", hits=None)])
    out = recovery([rec])
    assert out["faults"] == 1 and out["median"]["value"] == 0 and out["unaffected"] == 1


def test_a_failure_of_a_step_a_goal_shift_replaced_is_superseded() -> None:
    gold = {**GOLD, "calls": [SEARCH, CHECK, {**BOOK_STEP, "arguments": {**BOOK_STEP["arguments"], "day": "tue"}}]}
    rec = make_record([call(2, "book", error="TOOL_ERROR", injected=True)], gold=gold,
                      noise=[fault("tool_failure", 2, "book", hits=BK)])
    out = recovery([rec])
    assert out["faults"] == 0 and out["superseded"] == 1


def _corrupted(to: str = "a9", **kw: Any) -> dict[str, Any]:
    return fault("corruption", 1, "search", hits=BK, **{"from": "a", "to": to, "path": "results[0].id"}, **kw)


def test_corruption_is_recovered_only_when_the_true_value_is_used_and_the_corrupted_never() -> None:
    # Re-read at turn 2 (a different result), booked with the true id at turn 4: recovered at the
    # re-read, 1 turn after the corruption.
    verified = make_record([call(1, "search"), call(2, "search"), call(4, "book")], noise=[_corrupted()])
    # The same re-read, then the corrupted id reaches a successful call: not recovered.
    ignored = make_record([call(1, "search"), call(2, "search"),
                           call(3, "check", arguments={"item_id": "a9", "day": "mon"}), call(4, "book")],
                          noise=[_corrupted()], seed=1)
    # The corrupted id fails when used (a check), then the true one is booked: recovered at the booking.
    caught = make_record([call(1, "search"), call(2, "check", error="TOOL_ERROR", arguments={"item_id": "a9", "day": "mon"}),
                          call(3, "book")], noise=[_corrupted()], seed=2)
    # The corrupted value in the final state: not recovered.
    kept = make_record([call(1, "search"), call(3, "book")], noise=[_corrupted()],
                       score_details={"met": {}, "booking": "a9"}, seed=3)
    times = [(r["faults"], r["recovered"], r["median"]["value"]) for r in map(lambda x: recovery([x]),
                                                                              (verified, ignored, caught, kept))]
    assert times == [(1, 1, 1.0), (1, 0, None), (1, 1, 2.0), (1, 0, None)]


def test_a_same_turn_check_recovers_in_zero_turns() -> None:
    rec = make_record([call(1, "search"), call(1, "search", index=1), call(2, "book")], noise=[_corrupted()])
    assert recovery([rec])["median"]["value"] == 0


def test_a_corrupted_option_the_agent_never_touches_hits_nothing() -> None:
    # "a" is one gold place of two; the agent books "b" and never uses "a" or its corrupted id.
    rec = make_record([call(1, "search"), call(2, "book", arguments={**BOOK, "item_id": "b"})], noise=[_corrupted()])
    out = recovery([rec])
    assert out["faults"] == 0 and out["unaffected"] == 1
    # Moving on to "b" after the corrupted id failed is no recovery either: the true value never came back.
    moved = make_record([call(1, "search"), call(2, "check", error="TOOL_ERROR", arguments={"item_id": "a9", "day": "mon"}),
                         call(3, "book", arguments={**BOOK, "item_id": "b"})], noise=[_corrupted()])
    out = recovery([moved])
    assert out["faults"] == 1 and out["recovered"] == 0


def test_ambiguity_is_recovered_only_if_obtained_before_the_first_commitment() -> None:
    asked = make_record([call(3, "book")], noise=[fault("ambiguity", 0, "time")],
                        constraints=[{"turn": 0, "known": []}, {"turn": 2, "known": ["time"]}])
    guessed = make_record([call(1, "book")], noise=[fault("ambiguity", 0, "time")],
                          constraints=[{"turn": 0, "known": []}, {"turn": 2, "known": ["time"]}], seed=1)
    proposed = make_record([], turns=3, noise=[fault("ambiguity", 0, "time")],
                           commitments=[{"turn": 1, "kind": "proposal", "contradicts": []}],
                           constraints=[{"turn": 0, "known": []}, {"turn": 2, "known": ["time"]}], seed=2)
    assert recovery([asked])["median"]["value"] == 2
    assert recovery([guessed])["recovered"] == 0 and recovery([proposed])["recovered"] == 0


def test_ambiguity_is_recovered_only_by_using_the_detail() -> None:
    # The detail became known (the user said it anyway) but nothing was ever committed: the agent
    # recovered nothing, so doing nothing scores 0 on recovery, never a share of it.
    known = [{"turn": 0, "known": []}, {"turn": 2, "known": ["time"]}]
    idle = make_record([], turns=6, noise=[fault("ambiguity", 0, "time")], constraints=known)
    # Used against itself: the first booking after it breaks the time it was told.
    ignored = make_record([call(3, "book", contradicts=("time",)), call(4, "book")], turns=6,
                          noise=[fault("ambiguity", 0, "time")], constraints=known, seed=1)
    # A booking made in the turn the user answered with the detail was made without it.
    same_turn = make_record([call(2, "book")], turns=6, noise=[fault("ambiguity", 0, "time")], constraints=known,
                            seed=2)
    # A refused booking is no use of the detail; the next one that goes through is.
    refused = make_record([call(3, "book", error="TOOL_ERROR"), call(5, "book")], turns=6,
                          noise=[fault("ambiguity", 0, "time")], constraints=known, seed=3)
    for rec in (idle, ignored, same_turn):
        out = recovery([rec])
        assert (out["faults"], out["recovered"]) == (1, 0), rec["seed"]
    assert recovery([refused])["median"]["value"] == 2
    assert recovery([idle])["share"]["value"] == 0.0


def test_goal_shift_recovery_needs_a_write_for_the_new_goal_not_a_cancel() -> None:
    shift = fault("goal_shift", 2, "time", **{"from": ["mon", "evening"], "to": ["tue", "evening"]})
    tue = {"item_id": "a", "day": "tue", "slot": "evening"}
    cancelled = make_record([call(1, "book"), call(3, "cancel")], turns=6, noise=[shift])
    old_again = make_record([call(1, "book"), call(3, "cancel"), call(4, "book", contradicts=("time",))], turns=6,
                            noise=[shift], seed=1)
    rebooked = make_record([call(1, "book"), call(3, "cancel"), call(5, "book", arguments=tue)], turns=6,
                           noise=[shift], seed=2)
    assert recovery([cancelled])["recovered"] == 0 and recovery([old_again])["recovered"] == 0
    assert recovery([rebooked])["median"]["value"] == 3


def test_goal_shift_recovery_is_a_write_of_the_shifted_task() -> None:
    # A session: the booking's time moves to Tuesday, and the agent never rebooks; the next
    # sub-task's write fits that sub-task's plan, but acts on nothing the shift changed.
    shift = fault("goal_shift", 2, "0:time", **{"from": ["mon", "evening"], "to": ["tue", "evening"]})
    transfer = {"name": "create_transfer", "arguments": {"amount": 10.0, "currency": "EUR"}}
    tue_book = {**BOOK_STEP, "arguments": {**BOOK_STEP["arguments"], "day": "tue"}}
    gold = {**GOLD, "calls": [SEARCH, CHECK, tue_book, transfer], "superseded_calls": [SEARCH, CHECK, BOOK_STEP]}
    moved_on = make_record([call(1, "book"), call(4, "create_transfer", kind="write", arguments=transfer["arguments"])],
                           turns=6, noise=[shift], gold=gold)
    rebooked = make_record([call(1, "book"), call(4, "book", arguments={**BOOK, "day": "tue"})], turns=6,
                           noise=[shift], gold=gold, seed=1)
    assert recovery([moved_on])["recovered"] == 0
    assert recovery([rebooked])["median"]["value"] == 2


def test_unrecoverable_faults_are_left_out_and_last_turn_faults_censored() -> None:
    last = make_record([call(5, "book", error="TOOL_ERROR", injected=True)], turns=5,
                       noise=[fault("tool_failure", 5, "book", hits=BK)])
    shift = make_record([call(1, "search")], turns=6, noise=[fault("goal_shift", 6, "time", recoverable=False)])
    out = recovery([last, shift])
    assert out["faults"] == 1 and out["censored"] == 1 and out["unrecoverable"] == 1
    assert out["share"]["value"] == 0.0 and out["median"]["value"] is None


def test_without_faults_every_recovery_figure_is_n_a() -> None:
    out = recovery([make_record([call(1, "book")], noise=[fault("typos", 1, "user")])])
    assert out["faults"] == 0 and out["by_kind"] == {}
    for name in ("share", "median", "p90", "rmst", "median_ms", "rmst_ms"):
        assert out[name] == {"value": None, "ci": [None, None], "n": 0}, name


def _failure_then(turn_fixed: int | None, *, turns: int = 10, seed: int = 0, at: int = 1) -> dict[str, Any]:
    calls = [call(at, "search", error="TOOL_ERROR", injected=True)]
    if turn_fixed is not None:
        calls.append(call(turn_fixed, "search"))
    return make_record(calls, turns=turns, noise=[fault("tool_failure", at, "search", hits=TF)], seed=seed)


def test_kaplan_meier_by_hand() -> None:
    # Recovered after 1, censored at 1, recovered at 3 and 3: S(1) = 3/4; at 3 the two at risk
    # recover, S(3) = 0: the median is 3. RMST to the horizon 20: 1 * 1 + 2 * 3/4 = 2.5.
    recs = [_failure_then(2, seed=1), _failure_then(None, turns=2, seed=2), _failure_then(4, seed=3),
            _failure_then(4, seed=4)]
    out = recovery(recs)
    assert out["censored"] == 1 and out["median"]["value"] == 3 and out["rmst"]["value"] == pytest.approx(2.5)
    # Fewer than half recovered: no median, and the restricted mean counts the survivors to the horizon.
    recs = [_failure_then(2, seed=1), _failure_then(None, turns=9, seed=2), _failure_then(None, turns=9, seed=3)]
    out = recovery(recs)
    assert out["median"]["value"] is None and out["median"]["n"] == 3
    assert out["rmst"]["value"] == pytest.approx(1 + 2 / 3 * 19)


@pytest.mark.parametrize("seed", range(5))
def test_an_unrecovered_fault_never_shortens_the_times(seed: int) -> None:
    rng = np.random.default_rng(seed)
    recs = [_failure_then(2 + int(rng.integers(0, 6)), seed=i) for i in range(12)]
    base = recovery(recs, n_boot=10)
    for censor_at in (1, 3, 9):
        more = recovery(recs + [_failure_then(None, turns=1 + censor_at, seed=100 + censor_at)], n_boot=10)
        assert (more["median"]["value"] or math.inf) >= base["median"]["value"]
        assert more["rmst"]["value"] >= base["rmst"]["value"] - 1e-9
        assert more["share"]["value"] < base["share"]["value"]


def test_recovery_in_simulated_milliseconds() -> None:
    # The failure at 400 ms of simulated time; the retry's turn ended at 1,500 ms.
    rec = make_record([call(1, "search", error="TOOL_ERROR", injected=True), call(2, "search")], turns=3,
                      noise=[fault("tool_failure", 1, "search", hits=TF, at_ms=400.0)], elapsed=[400.0, 1500.0, 1900.0])
    out = recovery([rec])
    assert out["median_ms"]["value"] == pytest.approx(1100.0) and out["rmst_ms"]["n"] == 1
    assert recovery([_failure_then(2)])["median_ms"]["value"] is None  # no time charged: n/a


def test_padding_and_re_reads_do_not_raise_recovery() -> None:
    # A failure of the agent's own search, retried: recovered once. Reads no plan needs, and
    # their own failures, add no fault and no recovery.
    plain = make_record([call(1, "search", error="TOOL_ERROR", injected=True), call(2, "search"), call(3, "book")],
                        noise=[fault("tool_failure", 1, "search", hits=TF)])
    padded = make_record([call(1, "search", error="TOOL_ERROR", injected=True), call(1, "list_policies", index=1),
                          call(2, "search"), call(2, "list_policies", error="TOOL_ERROR", injected=True, index=1),
                          call(3, "book"), call(3, "list_policies", index=1)],
                         noise=[fault("tool_failure", 1, "search", hits=TF),
                                fault("tool_failure", 2, "list_policies", hits=None, call_id="call_2_1")])
    a, b = recovery([plain]), recovery([padded])
    assert (a["faults"], a["recovered"], a["median"]["value"]) == (b["faults"], b["recovered"], b["median"]["value"])
    assert tool_accuracy([padded])["efficiency"]["value"] < tool_accuracy([plain])["efficiency"]["value"]
    assert goal_consistency([padded])["goal_consistency"] == goal_consistency([plain])["goal_consistency"]


def test_recovery_ci_brackets_the_estimate() -> None:
    rng = np.random.default_rng(1)
    recs = []
    for i in range(60):
        d = int(rng.integers(1, 5))
        recs.append(_failure_then(2 + d if rng.random() < 0.7 else None, turns=8, at=2, seed=i))
    out = recovery(recs)
    for name in ("share", "median", "rmst"):
        agg = out[name]
        assert agg["ci"][0] <= agg["value"] <= agg["ci"][1], name


# ============================================================================ goal consistency
def test_goal_consistency_is_the_mean_share_of_consistent_commitments() -> None:
    rec = make_record([
        call(1, "search", contradicts=("area",)),  # a read commits nothing
        call(2, "book", contradicts=("time",)),
        call(3, "cancel"),
        call(4, "book", error="TOOL_ERROR", injected=True),  # stopped, breaking nothing: its retry counts
        call(5, "book_tentative", kind="write", distractor=True),  # a decoy commits nothing
        call(6, "book", error="TOOL_ERROR", injected=True, contradicts=("time",)),  # against what was said
        call(7, "book", error="TOOL_ERROR"),  # refused, breaking nothing: it committed to nothing
        call(8, "book", error="TOOL_ERROR", contradicts=("area",)),  # refused, but against what was said
    ], commitments=[{"turn": 9, "kind": "proposal", "contradicts": ["area"]},
                    {"turn": 10, "kind": "final", "contradicts": []}])
    other = make_record([call(1, "book")], seed=1)
    out = goal_consistency([rec, other])
    assert out["goal_consistency"]["value"] == pytest.approx((2 / 6 + 1) / 2)
    assert out["goal_consistency"]["n"] == 2 and out["committed"] == 2


def test_writes_that_miss_the_world_are_not_consistent_commitments() -> None:
    # The random agent's writes: refused ones that break nothing commit to nothing (n/a), and
    # refused ones against a stated constraint count against it (0%), never "consistent".
    misses = make_record([call(1, "cancel", error="TOOL_ERROR"), call(2, "book", error="TOOL_ERROR")])
    assert goal_consistency([misses])["goal_consistency"]["value"] is None
    against = make_record([call(1, "cancel", error="TOOL_ERROR"), call(2, "book", error="TOOL_ERROR",
                                                                          contradicts=("time",))], seed=1)
    assert goal_consistency([against])["goal_consistency"]["value"] == 0.0


def test_no_commitment_means_no_value_never_100_percent() -> None:
    reads = make_record([call(1, "search"), call(2, "check")])
    out = goal_consistency([reads, make_record([], turns=4, seed=1)])
    assert out["goal_consistency"] == {"value": None, "ci": [None, None], "n": 0}
    # An episode without commitments adds nothing to the others' mean.
    assert goal_consistency([reads, make_record([call(1, "book")], seed=2)])["goal_consistency"]["value"] == 1.0


def test_a_changed_constraint_not_acted_on_counts_against_the_final_state() -> None:
    # Booked for Monday, then the user moved to Tuesday and the agent did nothing: the final
    # state breaks the time the user now wants.
    rec = make_record([call(1, "book")], noise=[fault("goal_shift", 2, "time", **{"from": ["mon"], "to": ["tue"]})],
                      commitments=[{"turn": 6, "kind": "final", "contradicts": ["time"]}], turns=6)
    assert goal_consistency([rec])["goal_consistency"]["value"] == 0.5


# ============================================================================ headline and compare
def test_headline_has_every_metric_with_its_n() -> None:
    rec = make_record([call(1, "search"), call(2, "book")], success=True)
    out = headline([rec])
    assert [k for k, _, _ in HEADLINE] == [k for k in out if k in dict((h[0], 0) for h in HEADLINE)]
    assert out["success"]["value"] == 1.0 and out["tool_recall"]["value"] == pytest.approx(2 / 3)
    assert out["recovery_share"] == {"value": None, "ci": [None, None], "n": 0}
    assert out["episodes"] == 1 and out["faults"] == 0


def test_compare_pairs_episodes_and_marks_a_real_difference() -> None:
    good = [_failure_then(2, seed=i) for i in range(40)]
    bad = [_failure_then(2 if i % 2 else None, seed=i) for i in range(40)]
    out = compare(bad, good, n_boot=500)
    diff = out["diff"]["recovery_share"]
    assert diff["value"] == pytest.approx(-0.5) and diff["ci"][1] < 0
    assert out["diff"]["success"] == {"value": 0.0, "ci": [0.0, 0.0], "n": 40}
    with pytest.raises(ValueError, match="different episodes"):
        compare(bad[:-1], good)


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
    start = time.process_time()  # CPU time: a loaded machine does not fail it
    bootstrap_ci(x, "mean", n_boot=2000)
    assert time.process_time() - start < 0.5


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
def test_summarise_groups_with_n_and_n_a() -> None:
    records = (
        [make_record([call(1), call(2, "book")], success=True, seed=s) for s in range(3)]
        + [make_record([call(1, "search", error="TOOL_ERROR", injected=True)], turns=3, seed=s,
                       noise_name="tool_failure=0.5", noise=[fault("tool_failure", 1, "search", hits=TF)])
           for s in range(2)]
    )
    df = summarise(records)
    assert list(df["noise"]) == ["none", "tool_failure=0.5"]
    assert list(df["n"]) == [3, 2]
    for key, _, _ in HEADLINE:
        for col in (key, f"{key}_lo", f"{key}_hi", f"{key}_n"):
            assert col in df.columns, col
    clean, noisy = df.iloc[0], df.iloc[1]
    assert clean["success"] == 1.0 and clean["tool_recall"] == pytest.approx(2 / 3)
    assert math.isnan(clean["recovery_share"]) and clean["recovery_share_n"] == 0 and clean["recovery_faults"] == 0
    assert noisy["success"] == 0.0 and noisy["recovery_share"] == 0.0 and noisy["recovery_censored"] == 2
    # An undefined median over faults that never recovered is n/a with its n, not 0.
    assert math.isnan(noisy["recovery_median"]) and noisy["recovery_median_n"] == 2
    assert math.isnan(noisy["validity"]) and noisy["validity_n"] == 0  # its only call was an injected failure
    assert summarise([], group_by=("agent",)).empty
    with pytest.raises(ValueError, match="unknown group_by"):
        summarise(records, group_by=("colour",))


def test_all_metrics_of_2400_episodes_are_quick() -> None:
    rng = np.random.default_rng(0)
    recs = []
    for i in range(2400):
        d = int(rng.integers(1, 4))
        recs.append(make_record([call(1, "search", error="TOOL_ERROR", injected=True), call(1 + d, "search"),
                                 call(2 + d, "check"), call(3 + d, "book")], success=bool(rng.random() < 0.6),
                                noise=[fault("tool_failure", 1, "search", hits=TF)], seed=i, trial=i % 2))
    start = time.process_time()  # CPU time: other jobs on a shared machine disturb it less
    headline(recs)
    summarise(recs, n_boot=500)
    assert time.process_time() - start < 2.0  # benchmarks/bench_metrics.py times a real core-v0 run


def test_a_read_the_gold_points_to_is_useful_never_required() -> None:
    # The ops policies say get_metrics gives the onset and the rate; the plan reads the onset off
    # the logs (ToolUse 7224, 7237): the pointed read is useful when made, and recall is as before.
    metrics = {"name": "get_metrics", "arguments": {"service": "pricing"}}
    gold = {**GOLD, "useful_calls": [metrics]}
    rec = make_record([call(1, "search"), call(2, "get_metrics", arguments={"service": "pricing"}),
                       call(2, "get_metrics", arguments={"service": "checkout"}, index=1), call(3, "check"),
                       call(4, "book")], gold=gold, success=True)
    assert [c.useful for c in judge_episode(rec).calls] == [True, True, False, True, True]
    assert tool_accuracy([rec])["recall"]["value"] == 1.0
    without = make_record([call(1, "search"), call(3, "check"), call(4, "book")], gold=gold, success=True)
    assert tool_accuracy([without])["recall"]["value"] == 1.0


def test_a_look_at_the_bookings_the_gold_points_to_is_useful_once_a_plan_write_was_sent() -> None:
    # Dialog's golds list one list_bookings "after_plan_write" (CrossTask 8919 T19, 8913 T29): a
    # look at what the plan's writes left counts; one before any of them shows nothing the task
    # wrote and does not (a random agent's list_bookings beside its random bookings earned it
    # efficiency).
    look = {"name": "list_bookings", "arguments": {}, "after_plan_write": True}
    gold = {**GOLD, "useful_calls": [look]}
    before = make_record([call(1, "list_bookings", arguments={}), call(2, "search"), call(3, "check"), call(4, "book")],
                         gold=gold, success=True)
    assert [c.useful for c in judge_episode(before).calls] == [False, True, True, True]
    after = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(4, "list_bookings", arguments={}),
                         call(5, "list_bookings", arguments={})], gold=gold, success=True)
    assert [c.useful for c in judge_episode(after).calls] == [True, True, True, True, False]
    stray = make_record([call(1, "book", arguments={"item_id": "zz", "day": "mon", "slot": "evening"}),
                         call(2, "list_bookings", arguments={})], gold=gold, success=False)
    assert judge_episode(stray).calls[1].useful is False  # after a write no plan has
    assert tool_accuracy([make_record([call(1, "search"), call(2, "check"), call(3, "book")], gold=gold,
                                      success=True)])["recall"]["value"] == 1.0


def test_a_guard_look_before_the_first_write_is_useful_only_where_a_write_of_the_plan_follows() -> None:
    # Players read the incidents or the transfers before filing or paying, to see the work is not
    # done already (ToolUse 9415, 9425, 9455 T2): a read-back marked "before_plan_write" counts
    # once then; with no write of the plan after it, it guards nothing (a random agent's reads).
    look = {"name": "list_bookings", "arguments": {}, "after_plan_write": True, "before_plan_write": True}
    gold = {**GOLD, "useful_calls": [look]}
    guarded = make_record([call(1, "list_bookings", arguments={}), call(1, "list_bookings", arguments={}, index=1),
                           call(2, "search"), call(3, "check"), call(4, "book"), call(5, "list_bookings", arguments={})],
                          gold=gold, success=True)
    assert [c.useful for c in judge_episode(guarded).calls] == [True, False, True, True, True, True]
    idle = make_record([call(1, "list_bookings", arguments={}), call(2, "search")], gold=gold, success=False)
    assert [c.useful for c in judge_episode(idle).calls] == [False, True]


def test_a_look_at_the_bookings_after_new_writes_is_useful_again() -> None:
    # A session's later requests book and cancel again (CrossTask 9031 T23): a list_bookings
    # after those writes shows something new, where one with no write since the last shows
    # nothing new and stays "a repeat".
    look = {"name": "list_bookings", "arguments": {}, "after_plan_write": True}
    gold = {**GOLD, "useful_calls": [look]}
    cancel = call(5, "cancel", arguments={"booking_id": "B1"})
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(4, "list_bookings", arguments={}),
                       cancel, call(6, "book"), call(7, "list_bookings", arguments={}),
                       call(8, "list_bookings", arguments={})], gold=gold, success=True)
    assert [c.useful for c in judge_episode(rec).calls][3:] == [True, False, True, True, False]


def test_the_read_after_a_write_a_fault_stopped_is_useful_once() -> None:
    # list_bookings "is how to tell whether a book ... that failed or timed out took effect"
    # (CrossTask 7240 T15, Dialog 7238 T9): the first read after it, before the next write, counts.
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book", error="TIMEOUT", injected=True),
                       call(4, "list_bookings", arguments={}), call(4, "list_bookings", arguments={"x": 1}, index=1),
                       call(5, "book")], noise=[fault("tool_failure", 3, "book")], success=True)
    assert [c.useful for c in judge_episode(rec).calls] == [True, True, None, True, False, True]
    plain = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(4, "list_bookings", arguments={})],
                        success=True)
    assert [c.useful for c in judge_episode(plain).calls] == [True, True, True, False]


def test_a_plan_write_made_again_after_other_writes_is_useful_a_duplicate_is_not() -> None:
    # An itinerary planned anew (Dialog 7238 T25-28): the booking cancelled with the old plan is
    # made again, and the submission the world turned back is sent again; both are needed. The
    # same booking sent twice running duplicates it.
    submit = {"name": "submit", "arguments": {}}
    gold = {**GOLD, "calls": [SEARCH, CHECK, BOOK_STEP, submit]}
    cancel = call(4, "cancel", arguments={"booking_id": "B1"})
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(3, "submit", kind="write",
                                                                                   arguments={}, index=1),
                       cancel, call(5, "book"), call(6, "submit", kind="write", arguments={})], gold=gold, success=True)
    assert [c.useful for c in judge_episode(rec).calls] == [True, True, True, True, False, True, True]
    twice = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(4, "book")], success=True)
    assert [c.useful for c in judge_episode(twice).calls] == [True, True, True, False]


def test_a_write_made_again_after_other_writes_is_judged_again() -> None:
    # A series' booking made anew after its cancel (CrossTask 9013 T38, 8987 T40) was "a repeat
    # of an earlier call" and never judged: a wrong one would have gone unjudged. It is a new
    # decision; the same write sent twice running is still judged once.
    wrong = {"item_id": "z", "day": "mon", "slot": "evening"}
    cancel = call(4, "cancel", arguments={"booking_id": "B1"})
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book"), cancel, call(5, "book")], success=True)
    assert [c.turn for c in judge_episode(rec).calls if c.judged and c.right][-1] == 5
    bad = make_record([call(1, "search"), call(2, "check"), call(3, "book", arguments=wrong), cancel,
                       call(5, "book", arguments=wrong)])
    assert [(c.turn, c.right) for c in judge_episode(bad).calls if c.judged][-2:] == [(3, False), (5, False)]
    twice = make_record([call(1, "search"), call(2, "check"), call(3, "book"), call(4, "book")], success=True)
    assert [c.turn for c in judge_episode(twice).calls if c.judged] == [1, 2, 3]


def test_the_read_after_a_faulted_write_counts_past_writes_sent_in_its_turn() -> None:
    # Dialog 7271 T16-17: the timed-out booking went with two cancels in one turn, before its
    # result was seen; the next turn's read still tells what it left.
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book", error="TIMEOUT", injected=True),
                       call(3, "cancel", index=1), call(4, "list_bookings", arguments={}), call(5, "book")],
                      noise=[fault("tool_failure", 3, "book")], success=True)
    assert [c.useful for c in judge_episode(rec).calls][4] is True
    later = make_record([call(1, "search"), call(2, "check"), call(3, "book", error="TIMEOUT", injected=True),
                         call(4, "cancel"), call(5, "list_bookings", arguments={}), call(6, "book")],
                        noise=[fault("tool_failure", 3, "book")], success=True)
    assert [c.useful for c in judge_episode(later).calls][4] is False


def test_a_retry_of_a_call_a_fault_stopped_is_judged_once() -> None:
    # Dialog 7286 T10-11, T24-25: a booking of a place no plan takes was stopped by an injected
    # 503 and sent again; correctness counted the one decision wrong twice. It is judged at the
    # retry, the call that did the work (Dialog 7295, CrossTask 7300: the retry was listed as "a
    # repeat" when the stopped call was judged).
    wrong = {"item_id": "z", "day": "mon", "slot": "evening"}
    rec = make_record([call(1, "search"), call(2, "check"), call(3, "book", arguments=wrong, error="TOOL_ERROR",
                                                               injected=True),
                       call(4, "book", arguments=wrong), call(5, "book")],
                      noise=[fault("tool_failure", 3, "book")], success=True)
    judged = [c for c in judge_episode(rec).calls if c.judged]
    assert [(c.turn, c.right) for c in judged] == [(1, True), (2, True), (4, False), (5, True)], judged
    alone = make_record([call(1, "search"), call(2, "check"), call(3, "book", arguments=wrong, error="TOOL_ERROR",
                                                                 injected=True)], noise=[fault("tool_failure", 3, "book")])
    assert [(c.turn, c.right) for c in judge_episode(alone).calls if c.judged][-1] == (3, False)
