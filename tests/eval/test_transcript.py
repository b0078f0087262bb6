"""Tests for agentgym.eval.transcript: replayed texts, checked step by step against the record."""

from __future__ import annotations

import copy

from played import ENV_IDS, NOISY, played

from agentgym.eval.transcript import job_of, replay_transcript


def test_a_replay_gives_every_steps_texts_back() -> None:
    for env_id in ENV_IDS:
        for rec in played(env_id, 3):
            t = replay_transcript(rec)
            assert t.problem is None, (rec["key"], t.problem)
            assert len(t.steps) == len(rec["steps"])
            assert [m["role"] for m in t.opening] == ["system", "user"]
            for step, texts in zip(rec["steps"], t.steps):
                assert all(m["role"] != "assistant" for m in texts)
                results = [m["tool_call_id"] for m in texts if m["role"] == "tool"]
                assert results == [c["id"] for c in step["calls"]]


def test_the_job_of_a_record_is_the_one_that_played_it() -> None:
    rec = played("AgentRL/Dialog-v0", 1)[0]
    job = job_of(rec)
    assert job.key == rec["key"] and job.noise == NOISY and job.seed == 0


def test_texts_stop_where_the_replay_differs_from_the_record() -> None:
    rec = copy.deepcopy(played("AgentRL/ToolUse-v0", 1)[0])
    rec["steps"][1]["obs_sha256"] = "0" * 64
    t = replay_transcript(rec)
    assert len(t.steps) == 1 and "turn 2 replays differently" in t.problem and "texts end at turn 1" in t.problem


def test_a_record_that_cannot_be_replayed_has_a_reason_not_an_exception() -> None:
    rec = copy.deepcopy(played("AgentRL/Dialog-v0", 1)[0])
    rec["task"] = {**rec["task"], "id": "another"}
    assert "another task" in replay_transcript(rec).problem
    rec["env"] = {**rec["env"], "id": "Nope/Missing-v0"}
    t = replay_transcript(rec)
    assert t.problem.startswith("cannot make Nope/Missing-v0 here") and t.steps == ()
    short = copy.deepcopy(played("AgentRL/Dialog-v0", 1)[0])
    short["actions"] = short["actions"][:1]
    assert "no action for turn 2" in replay_transcript(short).problem
