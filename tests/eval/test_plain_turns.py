"""E18, R3: what an episode records is what it stepped, as plain JSON, and every record replays.

An agent's dict action may hold values JSON cannot carry (NaN, infinities, numpy scalars, sets,
bytes, complex numbers, huge integers, self-referencing lists, tuples, keys that are not
strings): each is a PARSE_ERROR turn, recorded as the plain stand-in that was stepped, and the
run goes on. A turn over the env's cap is recorded as a bounded marker with its digest and
stepped as a turn just over the cap; a record is kept under its cap as the episode is played
(`agentgym.eval.record_budget`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from fake_agents import odd_values

from agentgym.core.plain_turn import STAND_IN_ROLE, recorded_turn, stepped_turn
from agentgym.core.protocol import MAX_ACTION_BYTES
from agentgym.eval.episode import EpisodeState, play
from agentgym.eval.jobs import AgentSpec, EpisodeJob
from agentgym.eval.record_budget import RecordTooLarge
from agentgym.eval.records import RecordWriter, read_records
from agentgym.eval.runner import run_jobs
from agentgym.leaderboard.verify import replay_episode

ENV = "AgentRL/Dialog-v0"
HERE = Path(__file__).parent
CASES = [(value, "argument") for value in odd_values()] + [("nan", "key"), ("tuple", "key")]


def _replays(rec: dict[str, Any]) -> bool:
    job = EpisodeJob(rec["env"]["id"], seed=rec["seed"], trial=rec["trial"], noise=rec["env"]["noise"],
                     kwargs=tuple(sorted(rec["env"]["kwargs"].items())))
    return replay_episode(job, rec)[1] is None


@pytest.mark.parametrize(("value", "where"), CASES, ids=[f"{v}-{w}" for v, w in CASES])
def test_values_json_cannot_carry_are_parse_errors_and_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              value: str, where: str) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    out = tmp_path / "odd.jsonl"
    spec = AgentSpec("fake_agents:OddValueAgent", (("value", value), ("where", where)))
    summary = run_jobs([EpisodeJob(ENV, seed=s) for s in range(2)], spec, out, workers=1, progress=False)
    records = list(read_records(out))
    assert summary.ran == 2 and len(records) == 2  # 0 runs aborted
    for rec in records:
        assert rec["agent_error"] is None and rec["metrics"]
        first, codes = rec["actions"][0], rec["steps"][0]["errors"]
        if value == "np_nan":  # a float subclass: a float to JSON, a NaN all the same
            assert first["not_json"].endswith("nan) is not a JSON number (numbers must be finite)")
        if first.get("role") is None:
            assert codes == ["PARSE_ERROR"] and "not_json" in first, (first, codes)
        else:  # a self-referencing list runs past the size cap before anything else is said of it
            assert value == "self_referencing" and first["for"] == "message_over_cap" and codes == ["TOO_LARGE"]
        assert _replays(rec), (value, where)


def test_plain_turns_leave_valid_actions_as_they_are() -> None:
    message = {"role": "assistant", "content": "hi", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "search", "arguments": {"q": [1, 2.5, None, True]}}}]}
    assert recorded_turn("hello") == "hello"
    copy = recorded_turn(message)
    assert copy == message and copy is not message and stepped_turn(copy) is copy
    assert recorded_turn({"role": "user", "x": float("nan")}) == {"role": "user"}
    assert recorded_turn({"role": "u" * 100}) == {"role": "u" * 41}
    assert recorded_turn({"role": {1, 2}}) == {"role": None}


def test_an_over_cap_turn_is_recorded_as_a_marker_and_replays(tmp_path: Path) -> None:
    text = "\u00e9" * (MAX_ACTION_BYTES + 10)
    marker = recorded_turn(text)
    assert marker["role"] == STAND_IN_ROLE and marker["chars"] == len(text)
    assert marker["sha256"] == hashlib.sha256(text.encode()).hexdigest() and len(json.dumps(marker)) < 2000
    env = gym.make(ENV)
    env.reset(seed=1)
    direct = env.step(text)[4]["errors"]
    env.reset(seed=1)
    assert env.step(stepped_turn(marker))[4]["errors"] == direct == ["TOO_LARGE"]
    message = {"role": "assistant", "content": "y" * (2 * MAX_ACTION_BYTES)}
    assert recorded_turn(message) == {"role": STAND_IN_ROLE, "for": "message_over_cap"}


def test_one_mib_turns_cost_the_record_bytes_not_megabytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    out = tmp_path / "long.jsonl"
    run_jobs([EpisodeJob(ENV, seed=s) for s in range(2)], AgentSpec("fake_agents:LongTurnAgent"), out, workers=1,
             progress=False)
    lines = out.read_bytes().splitlines()
    records = [json.loads(line) for line in lines]
    assert all(len(line) < 64 * 1024 for line in lines), [len(line) for line in lines]
    for rec in records:
        assert all(a["for"] == "text_over_cap" for a in rec["actions"])
        assert _replays(rec)


@pytest.mark.parametrize("char", ["x", "\x01", "\U0001f600"])
def test_a_record_stays_under_its_cap_and_the_episode_ends_as_an_agent_error(tmp_path: Path, char: str) -> None:
    """Turns just under the env's cap, every turn: the episode ends as an agent error before its
    record passes the cap (the sealed track's 1 MiB), and what was recorded replays."""
    from fake_agents import LongTurnAgent

    cap = 1024 * 1024
    ep = EpisodeState(EpisodeJob(ENV, seed=3, kwargs=(("max_turns", 200),)), AgentSpec("long-turn"),
                      agent=LongTurnAgent(MAX_ACTION_BYTES // len(char.encode()), char), max_record_bytes=cap)
    try:
        play(ep)
    except RecordTooLarge as exc:
        ep.fail(exc)
    else:
        pytest.fail("the episode was not stopped at its record's cap")
    path = tmp_path / "r.jsonl"
    with RecordWriter(path) as writer:
        line = writer.write(ep.record())
    assert len(line) <= cap
    rec = next(read_records(path))
    assert rec["agent_error"]["type"] == "RecordTooLarge" and len(rec["actions"]) >= 1
    assert _replays(rec)
