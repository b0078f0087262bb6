"""The ToolUse user answers a request for a value, whatever else the message says: "may I have
the email on your account?" beside a restatement of the request (ToolUse 7235 T1 got "Before I say
yes: what will you do about ...?" and no e-mail); a plan announced for later ("I will then set out
a plan for your approval") asks for no yes now."""

from __future__ import annotations

import gymnasium as gym
import pytest
from playtest_turns import reply_to

import agentgym  # noqa: F401  (registers the ids)
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


@pytest.mark.parametrize("text", [
    # in the passive (a playtest, ToolUse 9321 T8: "It is requested that an explicit yes be given
    # to these two writes." got "Could you rephrase that?")
    "It is requested that an explicit yes be given to these two writes.",
    "It is kindly requested that approval be given for the refund.",
    "Approval is requested for these two writes.", "Confirmation is hereby requested before the writes are made.",
    "An explicit go-ahead is requested.", "Permission to proceed is requested.", "Your consent is sought.",
    "Please indicate whether these writes may be made.", "Kindly advise if I may proceed.",
])
def test_a_yes_asked_for_in_the_passive_is_asked(text: str) -> None:
    assert asks_yes(text)


@pytest.mark.parametrize("text", [
    "Manager approval is required for refunds above 500 USD.", "No approval is needed under the threshold.",
    "The refund was requested on 2025-03-02.", "Please state whether the parcel arrived damaged.",
])
def test_a_policy_or_a_fact_in_the_passive_asks_no_yes(text: str) -> None:
    assert not asks_yes(text)


def test_a_request_for_that_value_after_a_plan_s_words_gets_the_value() -> None:
    """"Happy to help with the sweater exchange and the cookbook return. | The email address on
    your Brightcart account | ... | Could you share that email?" got "Yes, please go ahead." (a
    playtest of 0.35.0, CrossTask 9348 T1, hard): the opening named both items with an outcome, so
    the question read as one for a yes; "share that email" asks for the email, as "share your email"
    does."""
    from agentgym.envs.tooluse.asking import asks_value

    assert asks_value("Could you share that email?") and asks_value("Please give me those dates.")
    _env, _actions, said = reply_to("crosstask-9348-train.jsonl", 0)
    assert "nora.carter19@example.com" in said, said
