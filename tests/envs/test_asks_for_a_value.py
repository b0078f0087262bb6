"""A request for a value is answered, whatever else the message says: "may I have the email on
your account?" beside a restatement of the request (ToolUse 7235 T1 got "Before I say yes: what
will you do about ...?" and no e-mail), a plan announced for later ("I will then set out a plan
for your approval") that asks for no yes now, and "waste your time", an idiom that asks no time
(CrossTask 7244 T1: a recap with an open question got "Yes, that's right."); and "Got it: the
stage can give way" opens a statement, not a question (Dialog 7253 T6)."""

from __future__ import annotations

import gymnasium as gym
import pytest
from playtest_turns import reply_to

import agentgym  # noqa: F401  (registers the ids)
from agentgym.envs.dialog.domain import load_domains
from agentgym.envs.dialog.user import understanding
from agentgym.envs.dialog.wording import RIGHT
from agentgym.envs.tooluse.asking import VALUE_REQUEST, asks_yes

EMAIL = "mia.cooper24@example.com"


def test_the_playtests_request_for_the_email_gets_it() -> None:
    _env, _actions, said = reply_to("tooluse-7235-train.jsonl", 0)
    assert EMAIL in said and "Before I say yes" not in said, said


@pytest.mark.parametrize("ask", [
    "To look up your account, may I please have the email address on your account?",
    "Could I get the email address on your account?",
    "May I have your email address, please?",
    "Can we have the e-mail on your account so I can look you up?",
])
def test_a_request_for_the_email_beside_the_request_restated_gets_it(ask: str) -> None:
    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="hard", domain="orders", noise="medium")
    env.reset(seed=7235)
    restated = ("To confirm, you would like to return the novel box set and the chef knife, the action camera and "
                "the duvet set, and the rain jacket, the winter coat and the denim jeans. I will aim for refunds "
                f"wherever the policies allow.\n\n{ask}")
    said = env.step(restated)[4]["messages"][-1]["content"]
    assert EMAIL in said and "Before I say yes" not in said, said


@pytest.mark.parametrize("text", [
    "I will then check every item and set out a plan, item by item, for your approval.",
    "Once I have it, I'll put together a plan for your yes.",
    "I'm going to present you the full plan for your approval shortly.",
])
def test_a_plan_announced_for_later_asks_for_no_yes_now(text: str) -> None:
    assert not asks_yes(text)


@pytest.mark.parametrize("text", [
    "Shall I go ahead with this plan for your approval?", "I'll process the refunds once you approve the plan.",
    "May I have your go-ahead?", "Please approve the plan above.",
])
def test_a_yes_asked_for_now_is_still_asked(text: str) -> None:
    assert asks_yes(text)
    assert not VALUE_REQUEST.search(text)


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
