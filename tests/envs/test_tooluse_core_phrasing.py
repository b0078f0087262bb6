"""The easy/medium ToolUse customer reads other assistants' messages as it reads the expert's.

Each test is one class of misfire that ``benchmarks/users/core_sweep.py`` found: a request for
a yes in words that are no confirmation question of the engine's, a word of the plan taken for
a question about a detail, a plan that asks to go ahead taken for a report of work done, a plan
that names the customer's own value taken for a question about it, and a question that offers a
choice of values under a label. Each case is the expert's own plan (its values), laid out and
asked as another assistant would; the guards keep what must not change.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.users.stock import CONFIRMED, GO_AHEAD, REPHRASE

#: A dev seed per domain whose task at both difficulties is of that domain (never 5000-5999).
SEEDS = {("train", "orders"): 2, ("train", "finance"): 0, ("train", "calendar"): 4, ("test", "ops"): 0}
_YES = {CONFIRMED, *GO_AHEAD, "Yes, that's right."}
_PLAN = "Here is what I'm about to do: "


def _at_plan(split: str, domain: str, difficulty: str) -> tuple[Any, str]:
    """The env, played by the expert up to its plan, and the plan's words (without its ask)."""
    seed = next(s for s in range(40) if _domain(split, difficulty, s) == domain)
    env = gym.make("AgentRL/ToolUse-v0", difficulty=difficulty, split=split)
    agent = make_agent("expert")
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    for _ in range(30):
        a = agent.act(obs, info)
        if a.startswith(_PLAN):
            return env, a[len(_PLAN):].split(" Shall I go ahead")[0]
        obs, _, term, trunc, info = env.step(a)
        assert not (term or trunc)
    raise AssertionError("the expert never put its plan")


def _domain(split: str, difficulty: str, seed: int) -> str:
    env = gym.make("AgentRL/ToolUse-v0", difficulty=difficulty, split=split)
    env.reset(seed=seed)
    return env.unwrapped._task.domain


def _reply(env: Any, message: str) -> str:
    return env.step(message)[0].removeprefix("[user] ")


CELLS = [(split, domain, difficulty) for split, domain in SEEDS for difficulty in ("easy", "medium")]


@pytest.mark.parametrize("ask", ["{plan}\n\nConfirm?", "{plan}\n\nOK to submit?", "{plan}\n\nWould that work for you?",
                                 "{plan}\n\nIs that alright with you?", "{plan}\n\nLet me know if that works.",
                                 "{plan}\n\nPlease reply 'yes' to confirm.",
                                 "Before I make any changes, please review the plan below and confirm.\n\n- {plan}",
                                 "| # | Details |\n|---|---|\n| 1 | {plan} |\n\nPlease confirm and I'll process these."])
@pytest.mark.parametrize(("split", "domain", "difficulty"), CELLS)
def test_a_yes_asked_for_in_other_words_gets_a_yes(split: str, domain: str, difficulty: str, ask: str) -> None:
    env, plan = _at_plan(split, domain, difficulty)
    assert _reply(env, ask.format(plan=plan)) in _YES


@pytest.mark.parametrize("ask", ["{plan}\n\nNote: these changes are final once made, so please double-check the "
                                 "amounts.\n\nDo you want me to proceed?",
                                 "{plan}\n\nJust say the word and I'll get started."])
@pytest.mark.parametrize(("split", "domain", "difficulty"), CELLS)
def test_a_word_of_the_plan_the_customer_has_no_detail_of_asks_nothing(split: str, domain: str, difficulty: str,
                                                                         ask: str) -> None:
    env, plan = _at_plan(split, domain, difficulty)
    assert _reply(env, ask.format(plan=plan)) in _YES


@pytest.mark.parametrize("ask", ["Plan: {plan}\n\nShall I go ahead? And is there anything else I should know?",
                                 "Thanks for waiting. I've looked into it. {plan}\n\nReply yes and I'll take care of it.",
                                 "Here's the plan:\n- {plan}\n\nDoes this look right? If so, I'll proceed."])
@pytest.mark.parametrize(("split", "domain", "difficulty"), CELLS)
def test_a_plan_that_asks_to_go_ahead_reports_nothing_done(split: str, domain: str, difficulty: str, ask: str) -> None:
    env, plan = _at_plan(split, domain, difficulty)
    reply = _reply(env, ask.format(plan=plan))
    assert not reply.startswith(("Not quite yet", "It's not done")), reply


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_a_plan_that_names_the_customers_value_is_no_question_about_it(difficulty: str) -> None:
    env, plan = _at_plan("train", "calendar", difficulty)
    plan = plan.replace(" minutes", "-minute slot")  # "for 60-minute slot": the value, named
    assert "-minute slot" in plan
    reply = _reply(env, f"Before I make any changes, please review the plan below and confirm.\n\n- **Action:** {plan}")
    assert reply in _YES, reply


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_a_question_offering_values_under_a_label_asks_for_that_detail(difficulty: str) -> None:
    env = gym.make("AgentRL/ToolUse-v0", difficulty=difficulty, split="train")
    env.reset(seed=next(s for s in range(40) if _domain("train", difficulty, s) == "finance"))
    currency = next(d.statement for d in env.unwrapped._task.goal.details if d.slot == "currency")
    assert _reply(env, "**Currency:** which one should I use (EUR, USD, GBP, ...)?") == currency


# ------------------------------------------------------------------------------ guards


@pytest.mark.parametrize(("split", "domain", "difficulty"), CELLS)
def test_a_report_of_work_done_is_still_judged(split: str, domain: str, difficulty: str) -> None:
    env, _ = _at_plan(split, domain, difficulty)
    for report in ("Everything you asked for is done. Let me know if you need anything else.",
                   "I've taken care of it. Is that alright with you?",
                   "I have done what I can for this request. What else should I keep in mind?"):
        reply = _reply(env, report)
        assert reply.startswith(("Not quite yet", "It's not done")), (report, reply)


def test_a_question_for_a_detail_is_still_answered() -> None:
    env, _ = _at_plan("train", "finance", "medium")
    reply = _reply(env, "Which currency should I pay it in? Please confirm.")
    assert reply not in _YES and reply != REPHRASE


# ------------------------------------------------------------------------------ the expert's own plan


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_a_plan_that_meets_an_unsaid_wish_gets_a_yes_not_the_wish(difficulty: str) -> None:
    env, plan = _at_plan("train", "orders", difficulty)
    wish = next(d.statement for d in env.unwrapped._task.goal.details if d.slot == "refund")
    reply = _reply(env, f"{_PLAN}{plan} Shall I go ahead, or is there anything else I should know first?")
    assert reply != wish and reply.endswith("Please go ahead."), reply


def test_an_unsaid_wish_a_plan_could_break_is_still_said() -> None:
    env, plan = _at_plan("test", "ops", "medium")
    details = {d.slot: d for d in env.unwrapped._task.goal.details}
    if "rollback" not in details:
        pytest.skip("this task's customer says nothing of a rollback")
    ask = f"{_PLAN}{plan} Then I'll roll the service back. Shall I go ahead, or is there anything else I should know first?"
    replies = [_reply(env, ask) for _ in range(3)]  # a detail per reply, the first unsaid first
    said = replies.index(details["rollback"].statement)
    assert not any(r.endswith("Please go ahead.") for r in replies[:said]), replies


def test_the_memo_of_proposes_equals_the_plain_reading() -> None:
    from agentgym.envs.tooluse import asking
    from agentgym.envs.tooluse.user import understanding

    read = understanding("orders").read
    texts = ["Here is what I'll do: refund the lamp (40.00 USD). Shall I go ahead?", "OK to submit?",
             "I've refunded the lamp. Anything else?", "? ? book", "Which area, what budget?",
             "Plan: refund the smart watch ($249.00). Please reply 'yes' to confirm." * 40]
    for text in texts * 2:  # the second pass reads from the memo (the last text is too long for it)
        assert asking.proposes(text, read) == asking.proposes_uncached(text, read), text
    assert len(asking._PROPOSES) <= asking.MEMO_SIZE
