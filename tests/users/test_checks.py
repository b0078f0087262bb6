"""A question whether the assistant has it right, and a recap that ends in "Correct?", are
answered in both families' users, never met with "Could you rephrase that?".

Probes of 0.24.0: "Have I got that right?", "Am I right?", "Does that sound right?", "Is this
accurate?", "Did I get everything?" and "Summary: Saturday morning; boutique hotel; Station
District. Correct?" each got a request to rephrase. Dialog seed 3 (train, easy): a boutique hotel
in Station District from Saturday morning, area and type said after two questions; ToolUse seed 3
(train, easy, finance): Kavya Haddad's June 2025 expenses in EUR.
"""

from __future__ import annotations

import copy

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.users.rule_based import asks_if_right

RIGHT = "Yes, that's right."
EVERYTHING = "That's everything I can think of"


@pytest.fixture(scope="module")
def dialog() -> gym.Env:
    env = gym.make("AgentRL/Dialog-v0", split="train", difficulty="easy")
    env.reset(seed=3)
    for message in ("Hi! What are you looking for?", "What kind of place would you like?"):
        env.step(message)
    return env


@pytest.fixture(scope="module")
def tooluse() -> gym.Env:
    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="easy", domain="finance")
    env.reset(seed=3)
    return env


def _reply(env: gym.Env, message: str) -> str:
    return copy.deepcopy(env).step(message)[4]["messages"][-1]["content"]


@pytest.mark.parametrize("message", ["Have I got that right?", "Did I get that right?", "Am I right?",
                                     "Is this accurate?", "Does that sound right?"])
def test_a_question_whether_it_is_right_gets_a_yes(dialog: gym.Env, tooluse: gym.Env, message: str) -> None:
    assert _reply(dialog, message) == RIGHT
    assert _reply(tooluse, message) == RIGHT


@pytest.mark.parametrize("message", ["Did I get everything?", "Did I capture everything?", "Have I covered everything?",
                                     "Have I got it all right?", "Does that cover it?", "Does this capture it?"])
def test_a_question_whether_anything_is_missing_is_an_open_question(dialog: gym.Env, tooluse: gym.Env,
                                                                     message: str) -> None:
    assert _reply(dialog, message).startswith(EVERYTHING)
    assert _reply(tooluse, message).startswith(EVERYTHING)


@pytest.mark.parametrize(("message", "said"), [
    ("Summary: Saturday morning; boutique hotel; Station District. Correct?", RIGHT),
    ("That's Saturday morning, a boutique hotel, Station District. Right?", RIGHT),
    ("Summary: Saturday morning; boutique hotel; Old Town. Correct?", "Not quite: Somewhere in Station District"),
    ("That's Sunday morning, a boutique hotel, Station District. Right?", "Not quite: It's for Saturday morning"),
])
def test_a_recap_that_asks_no_question_of_its_own_gets_the_users_word(dialog: gym.Env, message: str,
                                                                      said: str) -> None:
    assert _reply(dialog, message).startswith(said)


def test_asks_if_right_is_a_question_in_so_many_words() -> None:
    assert asks_if_right("Summary done. Have I got that right?")
    for message in ("Is the price right for you?", "Right, I'll search now.", "I have got that right.",
                    "Which one is right for you?"):
        assert not asks_if_right(message), message
