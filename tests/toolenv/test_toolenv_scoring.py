"""Tests for agentgym.toolenv.scoring: a scorer's answer as a score, the default score from the gold
plan's writes, and the final state judged at the end."""

from __future__ import annotations

import math

import pytest

from agentgym.core.seeding import fast_stream
from agentgym.core.task import Score, Task
from agentgym.toolenv import Detail, ToolTask, gold_call
from agentgym.toolenv.scoring import as_score, final_state, make_scorer
from agentgym.toolenv.task import GoldPlan
from agentgym.toolenv.user import DetailUser

WRITES = frozenset({"refund", "note"})


def _task(writes: list[dict], gold: list[dict] | None = None) -> Task:
    goal = ToolTask(request="Refund.", details=[Detail("amount", 20, "Refund {value}.")],
                    gold_calls=gold if gold is not None else [gold_call("find", q="x"), gold_call("refund", amount=20)])
    return Task(family="t", domain="d", difficulty="easy", split="train", seed=0, task_id="t/0", brief="",
                world={"n": 1}, goal=goal, gold=GoldPlan(tuple(goal.gold_calls)), extra={"writes": writes})


@pytest.mark.parametrize("result, expected", [
    (True, Score(1.0, True)), (False, Score(0.0, False)), (0.5, Score(0.5, False)), (1, Score(1.0, True)),
    (Score(0.3, True, {"x": 1}), Score(0.3, True, {"x": 1})),
])
def test_a_scorer_may_answer_with_a_bool_a_number_or_a_score(result: object, expected: Score) -> None:
    assert as_score(result) == expected


@pytest.mark.parametrize("result, error", [(1.5, ValueError), (math.nan, ValueError), ("yes", TypeError), (None, TypeError)])
def test_a_scorer_answer_outside_those_is_an_error(result: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        as_score(result)


def test_a_given_scorer_sees_the_task_as_it_stands_and_the_world() -> None:
    seen = []
    score = make_scorer(lambda task, world: seen.append((task.value("amount"), world)) or True, WRITES)
    assert score(_task([])) == Score(1.0, True)
    assert seen == [(20, {"n": 1})]


def test_the_default_score_is_the_gold_writes_met_diluted_by_extra_writes() -> None:
    score = make_scorer(None, WRITES)
    assert score(_task([])) == Score(0.0, False, {"met": [False], "extras": []})
    done = [{"name": "refund", "arguments": {"amount": 20}}]
    assert score(_task(done)).success
    extra = done + [{"name": "note", "arguments": {"text": "x"}}]
    got = score(_task(extra))
    assert (got.score, got.success) == (0.5, False)
    wrong = [{"name": "refund", "arguments": {"amount": 99}}]
    assert score(_task(wrong)).score == 0.0
    with pytest.raises(ValueError, match="no write call"):
        score(_task([], gold=[gold_call("find", q="x")]))


def test_the_final_state_judges_every_successful_write_against_what_was_stated_by_the_end() -> None:
    task = _task([{"name": "refund", "arguments": {"amount": 99}}, {"name": "refund", "arguments": {"amount": 20}}])
    user = DetailUser(task, fast_stream(0, "user"), make_scorer(None, WRITES))
    assert final_state(task, user) == ["amount"]
    assert final_state(_task([]), user) is None  # nothing written: no final state to judge
