"""Tests for agentgym.eval.timeline: every call, fault, recovery and commitment at its turn, with the
metrics' own verdicts as marks; a pure function of the record and its texts."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from played import every_family, played
from test_metrics import BK, TF, call, fault, make_record

from agentgym.eval.metrics import judge_episode
from agentgym.eval.timeline import EVENT_KINDS, TONES, episode_summary, timeline
from agentgym.eval.transcript import Transcript, replay_transcript


def _marks(events, metric: str) -> Counter:
    return Counter(m.ok for e in events for m in e.marks if m.metric == metric)


def test_it_is_a_pure_function_of_the_record_and_texts() -> None:
    rec = played("AgentRL/Dialog-v0", 1)[0]
    before = copy.deepcopy(rec)
    texts = replay_transcript(rec)
    assert timeline(rec, texts) == timeline(rec, texts) and timeline(rec) == timeline(rec)
    assert rec == before


@pytest.mark.parametrize("rec", every_family(4), ids=lambda r: r["key"].split("|")[0] + "|" + r["key"].split("|")[2])
def test_every_call_fault_and_recovery_is_there_once_at_its_turn(rec: dict) -> None:
    v = judge_episode(rec)
    events = timeline(rec, replay_transcript(rec))
    assert all(e.kind in EVENT_KINDS and e.tone in TONES and e.text for e in events)
    assert [e.turn for e in events] == sorted(e.turn for e in events)
    sections = [e.text for e in events if e.kind == "section"]
    assert sections == ["the start", *(f"turn {t}" for t in range(1, len(rec["steps"]) + 1)), "the end"]
    calls = [e for e in events if e.kind == "tool_call"]
    assert [(e.turn, e.data["id"]) for e in calls] == [(c["turn"], c["id"]) for c in v.call_log]
    results = [e.data["id"] for e in events if e.kind == "tool_result"]
    assert results == [c["id"] for c in v.call_log]  # the replay gave every result back
    faults = [e for e in events if e.kind == "fault"]
    assert sorted(e.data["index"] for e in faults) == list(range(len(v.noise_log)))
    assert all(e.turn == int(v.noise_log[e.data["index"]]["step"]) for e in faults)
    recovered = [(e.turn, e.data["index"]) for e in events if e.kind == "recovery"]
    assert sorted(recovered) == sorted((f.turn, f.index) for f in v.faults if f.status == "recovered")
    censored = [e.data["index"] for e in events if e.kind == "censored"]
    assert sorted(censored) == [f.index for f in v.faults if f.status == "censored"]
    assert events[-1].kind == "end" and events[-1].data["success"] == v.success
    # The marks are the verdicts the metrics pool.
    n = v.tools
    correctness = _marks(events, "correctness")
    assert correctness[True] == n.right and correctness[False] == n.judged - n.right
    assert _marks(events, "efficiency")[True] == n.useful
    assert _marks(events, "recall")[True] == n.done
    consistency = _marks(events, "goal_consistency")
    assert consistency[True] == v.consistent and consistency[True] + consistency[False] == v.committed
    invalid = _marks(events, "validity")[False]
    assert invalid == n.attempts - n.valid


def test_a_fault_says_what_it_hit_and_what_became_of_it() -> None:
    rec = make_record([call(2, "search", error="TOOL_ERROR", injected=True), call(4, "search"),
                       call(6, "book", error="TOOL_ERROR", injected=True)], turns=7,
                      noise=[fault("tool_failure", 2, "search", hits=TF, mode="timeout"),
                             fault("tool_failure", 6, "book", hits=BK)])
    events = timeline(rec)
    first, second = (e for e in events if e.kind == "fault")
    assert first.turn == 2 and "tool_failure on search [call_2_0]" in first.text and 'mode "timeout"' in first.text
    assert "hits gold step 1 of 3 (search)" in first.text
    assert [(m.metric, m.ok) for m in first.marks] == [("recovery", True)]
    assert "recovered at turn 4, after 2 turns" in first.marks[0].text
    assert "gold step 3 of 3 (book)" in second.text and second.marks[0].ok is False
    assert "censored after 1 turn" in second.marks[0].text
    recovery = next(e for e in events if e.kind == "recovery")
    assert recovery.turn == 4 and "the tool_failure on search of turn 2, after 2 turns" in recovery.text
    assert next(e for e in events if e.kind == "censored").turn == 7


def test_calls_carry_why_they_counted_against_the_agent() -> None:
    rec = make_record([call(1, "search"), call(1, "search", index=1),
                       call(3, "book", error="TOOL_ERROR", arguments={"item_id": "zz", "day": "mon", "slot": "evening"}),
                       call(4, "book", contradicts=("time",)), call(5, "search", valid=False, error="INVALID_ARGS")],
                      parse_errors=(2,), turns=6,
                      commitments=[{"turn": 6, "kind": "final", "contradicts": ["time"]}])
    events = timeline(rec)
    by_turn = {}
    for e in events:
        if e.kind == "tool_call":
            by_turn.setdefault(e.turn, []).append(e)
    repeat = {m.metric: m for m in by_turn[1][1].marks}
    assert repeat["correctness"].ok is None and "a repeat" in repeat["correctness"].text
    assert repeat["efficiency"].ok is False
    refused = {m.metric: m for m in by_turn[3][0].marks}
    assert refused["correctness"].ok is False and "refused (TOOL_ERROR)" in refused["correctness"].text
    assert by_turn[3][0].tone == "bad"
    broke = {m.metric: m for m in by_turn[4][0].marks}
    assert broke["goal_consistency"].ok is False and "breaks time" in broke["goal_consistency"].text
    assert by_turn[5][0].marks[0].metric == "validity" and by_turn[5][0].marks[0].ok is False
    turn_error = next(e for e in events if e.kind == "turn_error")
    assert turn_error.turn == 2 and turn_error.marks[0].ok is False
    final = next(e for e in events if e.kind == "commitment")
    assert final.data == {"kind": "final", "contradicts": ["time"]} and final.tone == "bad"


def test_proposals_constraints_and_agent_errors_are_shown() -> None:
    rec = make_record([], turns=3, commitments=[{"turn": 2, "kind": "proposal", "contradicts": []}],
                      constraints=[{"turn": 0, "known": ["time"]}, {"turn": 2, "known": ["time", "price"]}],
                      agent_error={"type": "TimeoutError", "message": "episode exceeded 5 s"})
    events = timeline(rec)
    stated = [(e.turn, e.data["new"]) for e in events if e.kind == "constraints"]
    assert stated == [(0, ["time"]), (2, ["price"])]
    proposal = next(e for e in events if e.kind == "commitment")
    assert proposal.turn == 2 and proposal.tone == "good" and "a proposal: breaks no stated constraint" == proposal.text
    error = next(e for e in events if e.kind == "agent_error")
    assert error.text == "the agent raised TimeoutError: episode exceeded 5 s"
    assert events[-1].kind == "end" and not events[-1].data["success"]


def test_texts_come_only_from_a_transcript_and_a_missing_one_says_why() -> None:
    rec = played("AgentRL/Dialog-v0", 1)[0]
    bare = timeline(rec)
    assert not any(e.kind in ("tool_result", "user") for e in bare)
    assert next(e for e in bare if e.kind == "task").body is None
    full = timeline(rec, replay_transcript(rec))
    assert next(e for e in full if e.kind == "task").body.startswith("You are")
    assert any(e.kind == "user" and e.turn == 0 for e in full)
    cut = timeline(rec, Transcript(problem="cannot make it here"))
    assert any(e.kind == "note" and "cannot make it here" in e.text for e in cut)


def test_the_episode_summary_counts_faults_as_recovery_does() -> None:
    rec = make_record([call(2, "search", error="TOOL_ERROR", injected=True), call(3, "search")], turns=4,
                      noise=[fault("tool_failure", 2, "search", hits=TF), fault("typos", 3, "user", hits=None)])
    s = episode_summary(rec)
    assert (s["faults"], s["recovered"], s["injections"], s["fault_kinds"]) == (1, 1, 2, ["tool_failure"])
    assert s["key"] == rec["key"] and s["tool_calls"] == 2 and s["agent_error"] is None
