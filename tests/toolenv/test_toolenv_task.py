"""Tests for agentgym.toolenv.task: details, shifts and tasks are checked when made, and a goal
shift moves the gold with the detail."""

from __future__ import annotations

import math

import pytest

from agentgym.toolenv import Detail, Shift, ToolTask, gold_call
from agentgym.toolenv.task import GoldPlan


def _task(**overrides: object) -> ToolTask:
    fields: dict[str, object] = dict(
        request="Refund my order.",
        details=[Detail("email", "a@b.com", "My email is {value}."),
                 Detail("amount", 20, "Refund {value} euros.", reveal="ask", arguments=("amount", "total"))],
        gold_calls=[gold_call("find", email="a@b.com"),
                    gold_call("refund", order_id="o-1", amount=20, note={"any": True}),
                    gold_call("log", total={"any_of": [20, 30]})],
        shifts=[Shift("amount", 25)],
    )
    fields.update(overrides)
    return ToolTask(**fields)  # type: ignore[arg-type]


def test_a_detail_says_its_value_and_lists_the_words_that_ask_for_it() -> None:
    d = Detail("order_id", "o-7", "It's order {value}.", ask=("order number",))
    assert d.said() == "It's order o-7."
    assert d.ask_phrases == ("order id", "order number")
    assert d.argument_names == ("order_id",)
    assert Detail("amount", 25.0, "{value} euros").said() == "25 euros"  # a whole float reads as a person says it
    assert Detail("days", ["mon", "tue"], "On {value}.").said() == "On mon, tue."


@pytest.mark.parametrize("kwargs, match", [
    ({"id": "2x"}, "letters"),
    ({"id": "a b"}, "letters"),
    ({"value": math.nan}, "finite"),
    ({"value": object()}, "JSON"),
    ({"value": {1: 2}}, "keys"),
    ({"statement": " "}, "statement"),
    ({"reveal": "later"}, "reveal"),
    ({"ask": "email"}, "ask"),
    ({"arguments": "email"}, "arguments"),
])
def test_a_malformed_detail_is_refused_when_made(kwargs: dict[str, object], match: str) -> None:
    fields: dict[str, object] = {"id": "email", "value": "a@b.com", "statement": "It is {value}."}
    fields.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        Detail(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("overrides, match", [
    ({"request": ""}, "request"),
    ({"gold_calls": "find"}, "gold_calls"),
    ({"gold_calls": [("find",)]}, "gold call"),
    ({"gold_calls": [{"name": "find", "args": {}}]}, "keys"),
    ({"gold_calls": [gold_call("")]}, "tool name"),
    ({"gold_calls": [("find", {"x": math.inf})]}, "finite"),
    ({"details": [Detail("a", 1, "x"), Detail("a", 2, "y")]}, "repeat"),
    ({"shifts": [Shift("colour", "red")]}, "no detail"),
    ({"difficulty": "brutal"}, "difficulty"),
    ({"max_turns": 0}, "max_turns"),
    ({"max_turns": True}, "max_turns"),
])
def test_a_malformed_task_is_refused_when_made(overrides: dict[str, object], match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        _task(**overrides)


def test_gold_calls_accept_the_three_spellings() -> None:
    task = _task(gold_calls=[gold_call("a", x=1), ("b", {"y": 2}), {"name": "c", "arguments": {"z": 3}}, {"name": "d"}])
    assert task.gold_calls == ({"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {"y": 2}},
                               {"name": "c", "arguments": {"z": 3}}, {"name": "d", "arguments": {}})


def test_a_shift_moves_the_detail_and_every_literal_gold_argument_that_carries_it() -> None:
    task = _task()
    after = task.shifted(task.shifts[0])
    assert after.value("amount") == 25 and task.value("amount") == 20  # the task itself is unchanged
    assert after.detail("amount").reveal == "upfront"  # the user has now said it
    assert after.gold_calls[1]["arguments"] == {"order_id": "o-1", "amount": 25, "note": {"any": True}}
    # An operator spec is not a literal: it keeps its options (the new value may not be one of them).
    assert after.gold_calls[2]["arguments"] == {"total": {"any_of": [20, 30]}}
    assert after.gold_calls[0] == task.gold_calls[0]
    assert after.shifts == ()  # one shift per episode
    with pytest.raises(KeyError, match="no detail"):
        task.value("colour")


def test_the_gold_plan_reports_copies_of_the_plan_and_of_what_a_shift_replaced() -> None:
    plan = GoldPlan(({"name": "a", "arguments": {"x": [1]}},), ({"name": "b", "arguments": {}},))
    view = plan.to_dict()
    assert view == {"calls": [{"name": "a", "arguments": {"x": [1]}}], "superseded_calls": [{"name": "b", "arguments": {}}]}
    view["calls"][0]["arguments"]["x"].append(2)
    assert plan.calls[0]["arguments"] == {"x": [1]}
