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


def _keeping(domain: str, slot: str) -> tuple[Any, Any]:
    """The env and task of the first medium train task of `domain` whose customer keeps its
    detail of `slot` until asked."""
    for seed in range(200):
        env = gym.make("AgentRL/ToolUse-v0", difficulty="medium", split="train")
        env.reset(seed=seed)
        task = env.unwrapped._task
        if task.domain == domain and any(d.slot == slot and d.reveal != "upfront" for d in task.goal.details):
            return env, task
    raise AssertionError(f"no {domain} task keeping its {slot} among the seeds")


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


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
@pytest.mark.parametrize("ask", ["Full refund to the card on file OK? Good to proceed?",
                                 "A refund rather than store credit, right? Shall I go ahead?",
                                 "Is a refund what you want? Good to proceed?"])
def test_a_yes_no_question_about_an_unsaid_wish_the_plan_meets_gets_a_yes(difficulty: str, ask: str) -> None:
    """"Plan: refund the watch. Full refund OK? Good to proceed?": the question asks the yes the
    plan asks, so the customer says it, not its request again (ToolUse playtest 6124 T2)."""
    env, plan = _at_plan("train", "orders", difficulty)
    reply = _reply(env, f"{_PLAN}{plan} {ask}")
    assert reply in _YES, reply


@pytest.mark.parametrize("ask", ["Does that sound right to you?", "Does this work?", "Is that OK with you?",
                                 "Happy with this plan?"])
def test_a_plan_asked_about_in_words_that_ask_for_a_yes_meets_the_unsaid_wish(ask: str) -> None:
    """"1. First, the air purifier ... 3. Therefore you can get a full refund ... Plan: request a
    manager's approval ..., then refund 189.00 USD for the air purifier. Does that sound right to
    you?" got "I'd like my money back for the air purifier, please.", the request again, where the
    plan already meets it (ToolUse playtest 8820, medium, turn 6)."""
    import json
    from pathlib import Path

    turns = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns" / "tooluse-8820-train.jsonl"
    actions = [a if isinstance(a, str) else json.dumps(a) for a in map(json.loads, turns.read_text().splitlines())]
    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="medium")
    env.reset(seed=8820)
    for action in actions[:5]:
        env.step(action)
    wish = next(d.statement for d in env.unwrapped._task.goal.details if d.slot == "refund")
    assert actions[5].endswith("Does that sound right to you?")
    reply = _reply(env, actions[5].replace("Does that sound right to you?", ask))
    assert reply != wish and reply.endswith("go ahead."), reply


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_a_choice_about_an_unsaid_wish_is_still_answered_with_it(difficulty: str) -> None:
    env, plan = _at_plan("train", "orders", difficulty)
    wish = next(d.statement for d in env.unwrapped._task.goal.details if d.slot == "refund")
    product = wish.split(" for the ")[-1].rstrip(", please.")
    reply = _reply(env, f"Would you prefer a refund or an exchange for the {product}? Then I can proceed.")
    assert reply == wish, reply


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


# ------------------------------------------------------------------------------ an account beside the ask


def _orders_exchange(difficulty: str) -> tuple[Any, dict[str, Any]]:
    """An orders task whose one write is an exchange, at `difficulty`, and that exchange's fields."""
    for seed in range(300):
        env = gym.make("AgentRL/ToolUse-v0", difficulty=difficulty, split="train")
        env.reset(seed=seed)
        gold = env.unwrapped._task.gold
        if env.unwrapped._task.domain == "orders" and [e.kind for e in gold.effects] == ["exchange"]:
            return env, gold.effects[0].fields
    raise AssertionError("no exchange task in the first seeds")


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_the_items_colour_now_named_beside_the_wanted_one_is_no_proposal(difficulty: str) -> None:
    env, fields = _orders_exchange(difficulty)
    world = env.unwrapped._task.world
    item = next(i for o in world.orders.values() for i in o.items if i.id == fields["item_id"])
    ask = (f"I can exchange item {item.id} ({item.product}, {item.variant}) for the {fields['new_variant']} variant; it "
           "is in stock and inside the window. Shall I go ahead with the exchange?")
    assert _reply(env, ask) in _YES


@pytest.mark.parametrize(("split", "domain", "difficulty"), CELLS)
def test_also_in_the_account_beside_the_ask_offers_nothing_more(split: str, domain: str, difficulty: str) -> None:
    env, plan = _at_plan(split, domain, difficulty)
    reply = _reply(env, f"I've read everything that bears on it; the policy also allows it. {plan}\n\nOK to proceed?")
    assert reply in _YES, reply


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_confirm_the_email_asks_for_it_beside_a_yes(difficulty: str) -> None:
    env, plan = _at_plan("train", "orders", difficulty)
    email = next(d for d in env.unwrapped._task.goal.details if d.slot == "email")
    env = gym.make("AgentRL/ToolUse-v0", difficulty=difficulty, split="train")
    env.reset(seed=next(s for s in range(40) if _domain("train", difficulty, s) == "orders"))
    reply = _reply(env, f"My understanding: {plan} Before I look it up, could you please confirm the email address on "
                        "your account, and confirm whether that is right?")
    assert email.statement in reply and reply not in _YES, reply


def test_a_detail_already_said_is_not_said_again_beside_a_new_one() -> None:
    env, task = _keeping("orders", "email")
    details = task.goal.details
    said = [d for d in details if d.reveal == "upfront"]
    email = next(d for d in details if d.slot == "email")
    assert said
    reply = _reply(env, "Which order is it, which items, and what is the email on your account?")
    assert email.statement in reply and not any(d.statement in reply for d in said), reply


@pytest.mark.parametrize("ask", ["I have found the claims, which are in EUR, USD and GBP. If I may ask: in which "
                                 "currency would you like the total given?",
                                 "The claims are in EUR, USD and GBP, and rates may differ by the day. Which currency "
                                 "would you like?",
                                 "The claims are in EUR and USD; there may be more. Which currency should it be in?"])
def test_may_as_an_auxiliary_names_no_month(ask: str) -> None:
    # ToolUse playtest 6996 T4: "If I may ask: in which currency ...?" got the month restated
    # ("The expenses are from February 2025.") beside the currency: "may" read as May.
    for seed in range(200):
        env = gym.make("AgentRL/ToolUse-v0", difficulty="medium", split="train")
        env.reset(seed=seed)
        task = env.unwrapped._task
        keeps = any(d.slot == "currency" and d.reveal != "upfront" for d in task.goal.details)
        if task.domain == "finance" and keeps and "May" not in task.goal.request:  # a month May would agree
            break
    currency = next(d.statement for d in task.goal.details if d.slot == "currency")
    reply = _reply(env, ask)
    assert reply == currency, (ask, reply)


@pytest.mark.parametrize("ask", [
    "The claims are in EUR and USD. I should be most grateful if you would kindly confirm in which currency you "
    "would like the total given (we hold accounts in EUR, USD, GBP and CHF).",
    "I'd be grateful if you would confirm which currency you would like.",
    "Kindly confirm in which currency the total should be given.",
    "Would you please verify what currency the total should be in.",
])
def test_a_request_to_confirm_which_value_asks_for_it(ask: str) -> None:
    # CrossTask playtest 8910 T29: "... I should be most grateful if you would kindly confirm in
    # which currency you would like the report totalled and the payout made (we hold company
    # accounts in EUR, USD, GBP and CHF)." got "Yes, please go ahead.": "if you would" opened no
    # request, and "confirm in which" asked for no value, so the options read as a plan to agree to.
    env, task = _keeping("finance", "currency")
    currency = next(d.statement for d in task.goal.details if d.slot == "currency")
    assert _reply(env, ask) == currency, ask


@pytest.mark.parametrize("ask", ["I require the email address associated with your account. Kindly provide it.",
                                 "To find the order we require the email address on your account."])
def test_require_asks_for_the_detail_it_names(ask: str) -> None:
    # CrossTask playtest 7026 T23: "... I require the email address associated with your customer
    # account. Kindly provide it." got "Yes, that's right." (the plan's values restated).
    env, task = _keeping("orders", "email")
    email = next(d.statement for d in task.goal.details if d.slot == "email")
    assert _reply(env, ask) == email


def test_a_question_for_a_detail_is_answered_beside_a_plan_that_waits_for_a_yes() -> None:
    env, task = _keeping("calendar", "duration")
    length = next(d.statement for d in task.goal.details if d.slot == "duration")
    reply = _reply(env, "What I'll do:\n1. Look up each attendee's time zone and working hours.\n2. Propose the "
                        "earliest slot, then book it and send the invite once you confirm.\n\nOne detail I need: how "
                        "long should the meeting be (30, 45, 60 or 90 minutes)?")
    assert reply == length, reply


@pytest.mark.parametrize(("split", "domain", "difficulty"), CELLS)
def test_a_yes_asked_for_work_to_come_beside_reads_reported_done(split: str, domain: str, difficulty: str) -> None:
    env, plan = _at_plan(split, domain, difficulty)
    ask = (f"Your earlier request has been handled: it is booked and confirmed.\n\n1. Read the records and the "
           f"policy (done).\n2. Work out what to do (done).\n\n{_PLAN}{plan}\n\nConfirm and I'll go ahead.")
    assert _reply(env, ask) in _YES


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_confirm_and_ill_file_is_put_for_a_yes_beside_work_reported_done(difficulty: str) -> None:
    """A report of an earlier request's booking and of the reads done, then "Confirm and I'll file
    a sev3 incident naming X v1.2 as the cause.": a plan put for a yes (a playtest: CrossTask,
    seed 6024, turn 8)."""
    env = gym.make("AgentRL/ToolUse-v0", difficulty=difficulty, split="test")
    env.reset(seed=0)
    fields = {k: v for e in env.unwrapped._task.gold.effects for k, v in e.fields.items()}
    ask = (f"Booking report: your table is booked for Friday afternoon (B1).\n\nIn short, the new request: find the root "
           f"cause behind the alert and file an incident.\n\nMy approach:\n1. Read the alert, metrics, logs, dependencies "
           f"and deploys (done).\n2. Identify the root cause and the deploy behind it (done).\n3. File the incident once "
           f"you confirm.\n\nConfirm and I'll file a {fields['severity']} incident naming {fields['service']} "
           f"{fields['version']} as the cause.")
    assert _reply(env, ask) in _YES


@pytest.mark.parametrize("lead", ["So that I can locate your order, kindly tell me:", "I need a few details:",
                                  "Could you please provide the following:"])
def test_a_list_under_a_line_that_asks_for_it_is_asked(lead: str) -> None:
    """"kindly tell me:" above "1. The email address on your account." asks for the email (it got
    the order's date; a playtest, CrossTask 6082, turn 14)."""
    env, task = _keeping("orders", "email")
    email = next(d for d in task.goal.details if d.slot == "email")
    reply = _reply(env, f"Thanks for your message. {lead}\n1. The email address on your Brightcart account.")
    assert reply == email.statement, reply


@pytest.mark.parametrize("ask", ["{plan}\n\nKindly confirm.", "{plan}\n\nDo you authorise this?"])
@pytest.mark.parametrize(("split", "domain", "difficulty"), CELLS)
def test_a_formal_request_for_a_yes_gets_a_yes(split: str, domain: str, difficulty: str, ask: str) -> None:
    env, plan = _at_plan(split, domain, difficulty)
    assert _reply(env, ask.format(plan=plan)) in _YES


def test_the_finance_brief_says_an_amount_goes_in_the_requesters_currency() -> None:
    """A sum asked for in no currency, of claims all in one currency, had two readings (the claims'
    currency, or the requester's): the policy says which, and to ask (a playtest, CrossTask 6083)."""
    for difficulty in ("easy", "medium", "hard"):
        env = gym.make("AgentRL/ToolUse-v0", domain="finance", split="train", difficulty=difficulty)
        obs, _ = env.reset(seed=1)
        assert "currency the requester wants" in obs and "where the request does not say which, ask" in obs


@pytest.mark.parametrize(("name", "turns"), [("tooluse-6148.jsonl", 3), ("tooluse-6146.jsonl", 4)])
def test_a_clipped_plan_and_a_clipped_request_for_a_yes_get_the_yes(name: str, turns: int) -> None:
    """Notes in clipped fragments: "Will file: incident, payments, cause v3.13.7, sev2. ... File
    it?" (it got the service again: "Will" opening a sentence was read as asking) and "Total
    308.99 CHF. Submit that total? ok?" (it got "What I told you is right": the two questions
    were read as questions about facts). Both put the plan for a yes (ToolUse playtests 6148 T4,
    6146 T5)."""
    from playtest_turns import played as _played

    env, actions = _played(name, turns)
    assert _reply(env, actions[turns]) in _YES


def test_an_opening_will_asks_only_with_its_subject() -> None:
    from agentgym.envs.tooluse.user import understanding

    read = understanding("ops").read
    assert "done" in read("Will file the incident for payments, sev2.").said
    assert not read("Will file the incident for payments, sev2.").question
    for asking in ("Will you file it.", "Will the refund go to the card on file."):
        assert read(asking).question, asking


def _kept(name: str, env_id: str, split: str, difficulty: str, noise: str | None, seed: int, turns: int) -> tuple[Any, list[str]]:
    """The env of a kept playtest stepped plainly through its first `turns` turns, and its turns."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns" / name
    actions = [a if isinstance(a, str) else json.dumps(a) for a in map(json.loads, path.read_text().splitlines())]
    env = gym.make(env_id, split=split, difficulty=difficulty, **({"noise": noise} if noise else {}))
    env.reset(seed=seed)
    for action in actions[:turns]:
        env.step(action)
    return env, actions


@pytest.mark.parametrize("ask", ["Which would you prefer?", "Which do you prefer?", "Which of the two would you like?"])
def test_a_choice_of_plans_gets_the_wish_it_turns_on_not_a_value_of_the_account(ask: str) -> None:
    """A recap naming the alerting service and the root cause, then "My recommendation is to file a
    sev2 incident ...; the alternative is to file it and then also roll search back to v3.12.4 ...
    Which would you prefer?" got "The alert is on profile.": the two services of the recap were
    heard as a choice of services (a playtest, CrossTask seed 8835, medium, turn 5). The choice
    turns on the rollback, and the user says what it wants of it."""
    env, actions = _kept("crosstask-8835-test.jsonl", "AgentRL/CrossTask-v0", "test", "medium", None, 8835, 4)
    message = actions[4]
    assert message.endswith("Which would you prefer?")
    reply = _reply(env, message.removesuffix("Which would you prefer?") + ask)
    assert reply == "No rollback, please; just file the incident.", reply


def test_a_word_of_another_kind_of_job_beside_a_request_for_a_yes_asks_nothing() -> None:
    """"Just to confirm, you'd like me to file a sev2 incident naming billing v3.9.4 as the cause,
    and then roll billing back to v3.9.3 ... is that right?" got "I'm not sure about that": "naming"
    read as a name asked for (a meeting's or an employee's), which an on-call engineer has none of
    (a playtest, ToolUse seed 8841, medium noise, turn 5)."""
    env, actions = _kept("tooluse-8841-test.jsonl", "AgentRL/ToolUse-v0", "test", "medium", "medium", 8841, 4)
    assert _reply(env, actions[4]) in _YES


@pytest.mark.parametrize("layout", [
    "So the choice is between:\n(A) {credit} store credit for the grinder now, or\n(B) leave the order as it is for now.\n"
    "Which would you prefer?",
    "Options: (A) {credit} store credit now; (B) leave it as is. Which do you prefer?",
    "Your options:\n- **Option A** - {credit} store credit now\n- **Option B** - leave the order as it is\n\n"
    "Which one works for you?",
    "1. {credit} store credit now\n2. leave the order as it is\nWhich would you like?",
])
def test_a_question_which_of_the_labelled_options_above_gets_the_wish_they_turn_on(layout: str) -> None:
    """"(A) 95.00 USD store credit for the grinder now, or (B) leave the order as it is for now.
    Which would you prefer?" got "Yes, that's right.", as if the account above were read back, and
    the player asked again (a playtest, ToolUse 9286 T6); the same choice in one sentence got the
    customer's wish. The question asks which of the options, and is answered so."""
    env, actions = _kept("tooluse-9286-train.jsonl", "AgentRL/ToolUse-v0", "train", "medium", None, 9286, 5)
    head = actions[5].split("So the choice is between:")[0]
    wish = next(d.statement for d in env.unwrapped._task.goal.details if d.slot == "refund")
    assert _reply(env, head + layout.format(credit="95.00 USD")) == wish


def test_options_asked_puts_labelled_options_in_the_question_and_leaves_other_messages() -> None:
    from agentgym.envs.tooluse.asking import options_asked

    said = options_asked("I can offer two things.\n(A) a refund of 45 USD, or\n(B) store credit.\nWhich would you prefer?")
    assert said == "I can offer two things.\nWhich would you prefer: a refund of 45 USD, or store credit?", said
    for other in ("Plan:\n1. refund the lamp\n2. credit the grinder\nShall I go ahead?",
                  "Your order has 3 items. Which one?", "The total is 45.00 USD. Which currency?",
                  "(B) store credit, or (A) a refund. Which?", "Which would you prefer?"):
        assert options_asked(other) is None, other


@pytest.mark.parametrize("ask", ["May I re-read the May expenses once to confirm the amount and statuses, and then request "
                                 "approval for {amount} EUR?", "May I request approval for {amount} EUR?",
                                 "Is it OK if I request approval for {amount} EUR now?"])
def test_a_yes_no_question_beside_an_account_in_other_currencies_is_no_proposal_of_them(ask: str) -> None:
    """An account of the claims ("X-5979, 317.95 GBP for hardware, still pending, so I'll leave
    it out") before "May I ... then request approval for 2,236.15 EUR?" got "Pay it in EUR,
    please.": the claim's currency was heard as the payout's (a playtest, CrossTask 9338 T4).
    The question's own sentence names what it asks; a currency it names otherwise is still put
    right."""
    env, actions = _kept("crosstask-9338-train.jsonl", "AgentRL/CrossTask-v0", "train", "medium", None, 9338, 3)
    account, _, _ = actions[3].rpartition("May I")
    assert "GBP" in account and "EUR" in account
    reply = _reply(env, account + ask.format(amount="2,236.15"))
    assert reply in _YES, reply
    env, actions = _kept("crosstask-9338-train.jsonl", "AgentRL/CrossTask-v0", "train", "medium", None, 9338, 3)
    assert "EUR" in _reply(env, account + "May I pay it in GBP instead?")


def test_an_either_or_question_gets_what_the_user_knows_not_a_yes() -> None:
    """"Are the complaints only about gateway, or have you noticed other services misbehaving as
    well?" got "Yes, that's right." (a playtest, ToolUse 9448, turn 1): a yes answers neither half;
    the user says what it knows. The question without its alternative still gets the yes."""
    env, actions = _kept("tooluse-9448-test.jsonl", "AgentRL/ToolUse-v0", "test", "hard", None, 9448, 0)
    reply = _reply(env, actions[0])
    assert reply != "Yes, that's right." and "gateway" in reply, reply
    env, _ = _kept("tooluse-9448-test.jsonl", "AgentRL/ToolUse-v0", "test", "hard", None, 9448, 0)
    assert _reply(env, "One question first: are the complaints only about gateway?") == "Yes, that's right."


def test_a_plan_beside_a_clause_opened_by_where_is_noted_not_asked_about() -> None:
    """"I know you'd prefer money back; where the window has passed, store credit for the full
    price is the most I can give. ... What I'd do: make these three refunds ... and issue these
    five store credits ..." got the customer's wish per item again: the clause opened by "where"
    was read as a question about the refund (ToolUse playtest 9659 T7). A plan put without a
    question is noted."""
    env, actions = _kept("tooluse-9659-train.jsonl", "AgentRL/ToolUse-v0", "train", "hard", None, 9659, 6)
    assert "where the window has passed" in actions[6]
    assert _reply(env, actions[6]) == "Okay, noted."


def test_a_task_list_line_naming_the_yes_to_come_asks_for_no_yes() -> None:
    """A running checklist ("[ ] Propose a plan and get your yes") above a question for the email
    got the email and "Before I say yes: what will you do about ...?" with no plan put (ToolUse
    playtest 9698 T1): a line of a task list is the state of the work, no request for a yes."""
    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="hard")
    env.reset(seed=9698)
    message = ("I can help with those returns.\n\nChecklist:\n[ ] Find your account\n"
               "[ ] Order of 2025-03-20: duvet set, denim jeans\n"
               "[ ] Order of 2025-03-19: chef knife, wireless headphones, rain jacket\n"
               "[ ] Order of 2025-04-04: bluetooth speaker, novel box set, coffee grinder\n"
               "[ ] Check return windows, damage, final-sale and opened status for each item\n"
               "[ ] Propose a plan and get your yes\n- [ ] Carry out the refunds / credits\n\n"
               "What email address is your account under?")
    reply = _reply(env, message)
    assert reply.startswith("It's ") and "Before I say yes" not in reply, reply
