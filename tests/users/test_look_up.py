"""Which questions only ask leave to look something up (`agentgym.users.understanding.look_up`)."""

from __future__ import annotations

import pytest

from agentgym.users.understanding.look_up import asks_leave_to_look


@pytest.mark.parametrize("text", [
    "Is it all right if I now check which of these 30 places are open at each booking's day and time?",
    "May I check Forge Hub for Tuesday morning, and re-check the places that came back as full?",
    "Before I put a plan together, may I run a few more checks (Forge Hub on Tuesday morning)?",
    "Should I quickly verify the prices?",
    "I am on it. To start, may I look at the alerts firing now? Nothing will be changed.",
    "Is it OK if I take a look at your orders?",
])
def test_a_question_asking_leave_to_look_something_up(text: str) -> None:
    assert asks_leave_to_look(text)


@pytest.mark.parametrize("text", [
    "A: X, B: Y, C: Z. Shall I submit this plan?",
    "Shall I check out with this plan?",
    "Plan: A X, B Y. Is that OK? May I check availability first?",
    "May I confirm the plan?",
    "The plan: A X, B Y. Can I check that this is fine with you?",
    "May I check the deploys and then file the incident?",
    "May I check it is free and book it?",
    "Shall I go ahead and file it?",
    "I'll check availability next.",
])
def test_a_question_that_asks_to_act_or_for_the_users_word_is_none(text: str) -> None:
    assert not asks_leave_to_look(text)
