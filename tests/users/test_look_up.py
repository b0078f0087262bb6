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
    # examples after "e.g." in the question, and a go-ahead asked for the checks (playtests,
    # Dialog 9303 T6-T7, CrossTask 9304 T22)
    "May I re-check a few of those results and look at the details of the leading places (e.g. Forge Base 6, "
    "Forge Works 4) before I propose a plan?",
    "I'm only asking for your permission to double-check some results. May I go ahead with those checks?",
    "May I check its afternoon availability on the following days, e.g. Sunday first, then Monday and so on?",
    # read, fetch, retry a read, "start by", and the past tense after "if I" (a playtest's, r1-c of
    # 0.35.0: ToolUse 9337 T1-T9 and CrossTask 9335 T11-T17 got "It showed up on search." alone)
    "To start, may I read the domain's policies and the alerts firing now?",
    "Would it be all right if I read the second page of search's error logs and then looked into shipping?",
    "May I retry gateway's dependencies and look into notifications: its metrics and deploy history?",
    "On to the errors: may I start by looking at the alerts firing now?",
    "Would it be all right if I fetched the remaining pages for all five plans?",
    "Would it be all right if I searched all Station District spaces up to 40 EUR, then checked the top-rated ones?",
    "May I first look up the employee record, and then list their May 2025 expense claims?",
    # casual leave ("Mind if I ...", "OK if I ...", "OK to ...")
    "Mind if I pull up the logs?", "Hmm, let me see... OK if I have a quick look at the deploys?",
    "Okay to check the deploys next?", "Would you mind if I looked at your orders?",
    "Any objection if I search the area first?", "Do you mind if I take a quick look at the calendar first?",
    "Cart is a victim too. One more hop \u2014 OK if I have a quick look at cart (metrics, logs and deploys)?",
    "One more hop - may I check the deploys?",
    # a playtest's (Dialog 9361 T10, round 3 of 0.35.0): got "The rules say: 3. No two bookings ..."
    "Got it. Mind if I have another quick look at the Station District meeting rooms and rework the plan around that?",
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
    "May I go ahead and book it?",
    "I'll check availability next.",
    "May I read you the plan?", "OK to proceed?", "OK to book it?", "Is it OK to check availability and book it?",
    "May I retry the booking?",
    "May I re-read the May expenses once, and then request approval for 2,236.15 EUR?",
    "May I check the logs and then roll it back?",
    "May I check availability and change the booking?",
])
def test_a_question_that_asks_to_act_or_for_the_users_word_is_none(text: str) -> None:
    assert not asks_leave_to_look(text)
