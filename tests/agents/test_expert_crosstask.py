"""The expert's cross-task strategy: each request of a session played by its family's expert, and
the booking made earlier moved when the user comes back to it.

Figures asserted (sampled here; the full figures are in benchmarks/expert/RESULTS.md): on 15
sessions of every split and difficulty the expert succeeds in every one with noise off, and in
at least 90% under `medium`; a follow-up whose read-back of the bookings holds a corrupted id is
still moved.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

from agentgym.agents import make_agent
from agentgym.agents.expert import ExpertAgent
from agentgym.agents.experts.crosstask import CrossTaskExpert, FollowUpExpert, Ledger
from agentgym.agents.turns import calls_of
from agentgym.eval.episode import run_episode

CROSSTASK_ID = "AgentRL/CrossTask-v0"
CELLS = [(split, difficulty) for split in ("train", "test") for difficulty in ("easy", "medium", "hard")]


def test_the_expert_plays_sessions_with_its_cross_task_strategy() -> None:
    assert isinstance(ExpertAgent().make_strategy("crosstask"), CrossTaskExpert)


@pytest.mark.parametrize(("split", "difficulty"), CELLS)
def test_with_noise_off_every_session_succeeds(split: str, difficulty: str) -> None:
    env = gym.make(CROSSTASK_ID, split=split, difficulty=difficulty)
    for seed in range(3000, 3015):
        result = run_episode(env, make_agent("expert"), seed)
        assert result.success, (split, difficulty, seed, result.episode["subtasks"])
    env.close()


@pytest.mark.parametrize("split", ["train", "test"])
def test_under_medium_noise_it_still_succeeds(split: str) -> None:
    env = gym.make(CROSSTASK_ID, split=split, noise="medium")
    wins = [run_episode(env, make_agent("expert"), seed).success for seed in range(4000, 4040)]
    env.close()
    assert sum(wins) >= 0.9 * len(wins)


def _tool_step(name: str, content: str, call_id: str = "c1") -> dict:
    return {"messages": [{"role": "tool", "tool_call_id": call_id, "name": name, "content": content}],
            "calls": [{"id": call_id, "name": name}]}


def test_a_follow_up_moves_the_booking_even_when_a_read_back_holds_a_wrong_id() -> None:
    ledger = Ledger()
    ledger.take(_tool_step("book", '{"booking_id": "B1", "item_id": "cafe_003", "name": "Olive Cup", '
                                   '"day": "monday", "slot": "evening", "status": "confirmed"}'))
    follow = FollowUpExpert(ledger)
    follow.reset("", {"messages": [{"role": "user", "content": "Could you move the cafe we booked earlier to "
                                                               "Thursday morning? Same place, just the new time."}]})
    # The new time is checked first, as the session's brief asks (read twice: a read may be wrong).
    thursday = {"item_id": "cafe_003", "day": "thursday", "slot": "morning"}
    assert [(c.name, c.arguments) for c in calls_of(follow.act("", {}))] == [("check_availability", thursday)] * 2
    free = '{"item_id": "cafe_003", "day": "thursday", "slot": "morning", "available": true}'
    checked = {"messages": [{"role": "tool", "tool_call_id": f"c{k}", "name": "check_availability", "content": free}
                            for k in (1, 2)],
               "calls": [{"id": f"c{k}", "name": "check_availability"} for k in (1, 2)]}
    assert [(c.name, c.arguments) for c in calls_of(follow.act("", checked))] == [("book", thursday)]
    booked = _tool_step("book", "[error TOOL_ERROR] book: the request timed out after 30 s without a response")
    ledger.take(booked)
    assert [c.name for c in calls_of(follow.act("", booked))] == ["list_bookings"]
    # The read-back shows the new booking, and the old one under an id that does not resolve.
    read = _tool_step("list_bookings", '{"bookings": [{"booking_id": "B71", "item_id": "cafe_003", "name": "Olive Cup", '
                                       '"day": "monday", "slot": "evening", "status": "active"}, {"booking_id": "B2", '
                                       '"item_id": "cafe_003", "name": "Olive Cup", "day": "thursday", "slot": '
                                       '"morning", "status": "active"}]}')
    ledger.take(read)
    assert [(c.name, c.arguments) for c in calls_of(follow.act("", read))] == \
        [("cancel_booking", {"booking_id": "B71"})]
    refused = _tool_step("cancel_booking", "[error TOOL_ERROR] no active booking with id 'B71'")
    ledger.take(refused)
    assert [c.name for c in calls_of(follow.act("", refused))] == ["list_bookings"]
