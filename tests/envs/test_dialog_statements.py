"""Statements that ask the Dialog user nothing, and places a message sets aside: "waste your time"
and kin are idioms, not a question about the time (CrossTask 7244 T1: a recap with an open
question got "Yes, that's right."); "Got it: the stage can give way" opens a statement, not a
question which need gives way (Dialog 7253 T6); a rival "with it no plan fits the budget" is no
second choice for a booking (Dialog 7268 T6)."""

from __future__ import annotations

import pytest
from playtest_turns import reply_to

from agentgym.envs.dialog.domain import load_domains
from agentgym.envs.dialog.user import understanding
from agentgym.envs.dialog.wording import RIGHT


@pytest.mark.parametrize("idiom", ["a proposal that misses one would just waste your time",
                                   "I don't want to waste your time", "this will save you time"])
def test_an_idiom_with_your_time_asks_no_time(idiom: str) -> None:
    read = understanding(load_domains()["coworking"]).read
    assert "time" not in read(f"So far I have Wednesday afternoon. Before I search, {idiom}. "
                              "What else must the space have?").asked


def test_the_playtests_open_question_after_a_recap_gets_a_need() -> None:
    _env, _actions, said = reply_to("crosstask-7244-test.jsonl", 0)
    assert said != RIGHT and "need" in said.lower(), said


def test_got_it_opens_no_question_about_a_need_that_gives_way() -> None:
    # Dialog 7253 T6: "Got it: standing desks can give way, ..." with a proposal and "Shall I book
    # it?" got "As I said: ... it doesn't need to have standing desks." and no word on the place.
    _env, _actions, said = reply_to("dialog-7253-test.jsonl", 5)
    assert "book it" in said.lower() and not said.startswith("As I said"), said


def test_a_rival_with_which_no_plan_fits_is_set_aside() -> None:
    # Dialog 7268 T6: "... the higher-rated warehouse, Brick Arcade (4.1), costs EUR 1,900 and with
    # it no plan fits the budget" beside the plan's one place for booking E got "I heard more than
    # one place for booking E"; the plan is heard (here the user's change of mind about E comes).
    _env, _actions, said = reply_to("dialog-7268-test.jsonl", 5)
    assert "more than one place" not in said, said
