"""The hard tier's customer reads a plan in other assistants' words as in the expert's.

Each test is one class of misfire that ``benchmarks/users/consent_sweep.py`` found: values in
their other written forms, a section heading in bold alone, a request for the yes in words that
are no confirmation question, and a question about an unsaid detail that names a write.
"""

from __future__ import annotations

from typing import Any

import pytest
from playtest_turns import played, reply_to
from test_tooluse_consent import _env, _writes  # the hard tier's env of a domain, and its gold writes

import agentgym  # noqa: F401  (registers the ids)
from agentgym.envs.tooluse.consent import Want, date_forms, describes, parts, time_forms
from agentgym.envs.tooluse.domains.consent_rules import RULES
from agentgym.users.stock import CONFIRMED, GO_AHEAD

DOMAINS = ("orders", "finance", "calendar", "ops")
_YES = {CONFIRMED, *GO_AHEAD, "Yes, that's right.", "Alright, I understand. Please go ahead with that."}
#: How a customer who presses starts each of its asks (orders, ops, finance).
_PRESSES = ("Can't you refund", "Please, I'd really like", "Can't you roll", "Please, just roll", "Could you include",
            "Please, add")


def _plan(task: Any) -> str:
    """The oracle's sentence per write, and an outcome for anything asked about that none gives."""
    rules = RULES[task.domain]
    lines = [t for n, a in _writes(task) if (t := rules.describe(task.world, n, a))]
    done = parts("\n".join(lines), task.world.consent.anchors)
    lines += [f"Nothing for {t.label}." for t in rules.targets(task.world, task.goal)
              if not describes(done, Want(t.names, t.outcomes or t.names))]
    return "\n".join(lines)


def _answer(env: Any, message: str) -> str:
    """The customer's answer to `message`, sent again while a customer who presses refuses it."""
    for _ in range(3):
        reply = env.step(message)[4]["messages"][-1]["content"]
        if not reply.startswith(_PRESSES):
            return reply
    return env.step(message)[4]["messages"][-1]["content"]


def _covered(plan: str, want: Want) -> bool:
    return describes(parts(plan, ()), want)


# ------------------------------------------------------------------------------ value forms


@pytest.mark.parametrize("text", ["Book the meeting on July 2nd at 4:00 p.m. UTC.", "Book the meeting on 2nd July, 4 p.m.",
                                  "Book the meeting: Jul 2nd, 16:00Z."])
def test_a_date_or_time_in_another_written_form_names_it(text: str) -> None:
    want = Want(("meeting",), ("book",), values=(date_forms("2025-07-02"), time_forms("16:00")))
    assert _covered(text, want)
    assert not _covered(text.replace("2nd", "3rd").replace("Jul 3rd", "Jul 3"), want)


@pytest.mark.parametrize(("text", "currency"), [("The total comes to $426.78; I'll submit it.", "USD"),
                                                ("Total: €426.78, to submit.", "EUR"),
                                                ("The total is £ 426.78. I'll submit that.", "GBP")])
def test_a_currency_symbol_names_its_currency(text: str, currency: str) -> None:
    assert _covered(text, Want((currency,), ("total", "submit"), (42678,)))
    assert not _covered(text, Want(("CHF",), ("total", "submit"), (42678,)))


@pytest.mark.parametrize("severity", ["sev2", "SEV-2", "Sev 2", "severity 2", "Severity-2"])
@pytest.mark.parametrize("version", ["v3.7.4", "3.7.4"])
def test_a_severity_or_version_in_another_written_form_names_it(severity: str, version: str) -> None:
    want = RULES["ops"].want(None, "file_incident", {"root_cause_service": "payments", "cause_version": "v3.7.4",
                                                     "severity": "sev2"})
    assert want is not None
    assert _covered(f"I'll file a {severity} incident naming payments {version} as the cause.", want)
    assert not _covered(f"I'll file a {severity.replace('2', '3')} incident naming payments {version}.", want)
    back = RULES["ops"].want(None, "rollback", {"service": "payments", "to_version": "v3.7.3"})
    assert back is not None and _covered("Then I'll roll payments back to 3.7.3.", back)
    assert not _covered("Then I'll roll payments back to 3.7.30.", back)


# ------------------------------------------------------------------------------ layout


def test_a_heading_in_bold_alone_belongs_to_every_part_under_it() -> None:
    message = "Here's the plan.\n\n**Store credit**\n- Desk lamp: 45.00 USD\n- Atlas: 48.00 USD\n\n**Refund**\n- Mug: $9"
    assert parts(message, ("desk lamp", "atlas", "mug")) == [
        "here's the plan.", "store credit - desk lamp: 45.00 usd", "store credit - atlas: 48.00 usd", "refund - mug: usd 9"]


def test_an_orders_plan_under_bold_headings_gets_a_yes_and_covers_its_writes() -> None:
    env, u = _env("orders", 101)
    task = u.task
    by_word: dict[str, list[str]] = {}
    for name, args in _writes(task):
        if name == "request_refund_approval":
            continue
        item = next(i for o in task.world.orders.values() for i in o.items if i.id == args["item_id"])
        word = {"refund_item": "Refund", "issue_store_credit": "Store credit", "exchange_item": "Exchange"}[name]
        value = f"{args['amount']:.2f} USD" if "amount" in args else f"for the {args['new_variant']} one"
        by_word.setdefault(word, []).append(f"- {item.product.title()} ({item.id}): {value}")
    written = {a["item_id"] for _, a in _writes(task)}
    refused = [f"- {t.names[0]}" for t in RULES["orders"].targets(task.world, task.goal) if t.names[1] not in written]
    if refused:
        by_word["Final sale, nothing I can do"] = refused
    plan = "\n\n".join(f"**{word}**\n" + "\n".join(rows) for word, rows in by_word.items())
    assert _answer(env, f"{plan}\n\nShall I go ahead?") in _YES
    assert all(task.world.consent.covers(RULES["orders"].want(task.world, n, a)) for n, a in _writes(task))


# ------------------------------------------------------------------------------ asking for the yes

#: Requests for the yes that are no confirmation question of the engine's: a question of any
#: words, an imperative that asks for the customer's answer, or a sentence that speaks of its
#: assent; "{plan}" is where the plan goes.
ASKS = ("{plan}\n\nJust say the word and I'll get started.", "I've reviewed everything.\n{plan}\n\nReply yes and "
        "I'll take care of it.", "Before I make any changes, please review the plan below and confirm.\n\n{plan}",
        "{plan}\n\nDoes this look right? If so, I'll proceed.", "{plan}\n\nConfirm?", "{plan}\n\nOK to submit?",
        "{plan}\n\nNote: these changes are final once made.\n\nDo you want me to proceed?",
        "{plan}\n\nAwaiting your confirmation.", "{plan}\n\nOnce you confirm, I'll make the changes.",
        "{plan}\n\nGive me a thumbs up and I'll start.")


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("ask", ASKS)
def test_a_plan_with_a_request_for_the_yes_in_other_words_gets_a_yes(domain: str, ask: str) -> None:
    for seed in (103, 106):
        env, u = _env(domain, seed)
        assert _answer(env, ask.format(plan=_plan(u.task))) in _YES, (domain, seed, ask)
        assert all(u.task.world.consent.covers(RULES[domain].want(u.task.world, n, a)) for n, a in _writes(u.task))


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_question_mark_in_a_table_s_header_asks_nothing_and_the_plan_gets_its_yes(domain: str) -> None:
    # ToolUse playtest 6355 T7: a table headed "| Attendee | ... | Day off on 04-09? |" above the
    # plan, then "Does this look right to you?", got "What I told you is right; ..." (two
    # questions about what is so), and no yes.
    table = "| Record | Checked? | Off that day? |\n|---|---|---|\n| every one | yes | no |"
    for seed in (103, 106):
        env, u = _env(domain, seed)
        reply = _answer(env, f"What I found:\n\n{table}\n\n{_plan(u.task)}\n\nDoes this look right to you?")
        assert reply in _YES, (domain, seed, reply)
        assert all(u.task.world.consent.covers(RULES[domain].want(u.task.world, n, a)) for n, a in _writes(u.task))


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("ask", ["Confirm?", "OK to submit?", "Just say the word and I'll get started.",
                                 "Please review and confirm.", "yes?"])
def test_a_request_for_the_yes_without_a_plan_gets_none(domain: str, ask: str) -> None:
    env, u = _env(domain, 103)
    reply = env.step(ask)[4]["messages"][-1]["content"]
    assert reply not in _YES and not u.task.world.consent.plans, (domain, ask, reply)


def test_a_plan_stated_without_any_request_gets_no_yes() -> None:
    env, u = _env("finance", 103)
    env.step(_plan(u.task))
    assert not u.task.world.consent.plans


_CURRENCIES = ("EUR", "USD", "GBP", "CHF", "SEK", "CAD")


def test_a_question_about_an_unsaid_detail_that_names_a_write_asks_for_the_detail() -> None:
    """"Which currency should I pay it in?" names the payment: it still asks for the currency."""
    for seed in range(100, 160):
        env, u = _env("finance", seed)
        if u.task.gold.kind != "reimburse" or any(c in u.task.goal.request for c in _CURRENCIES):
            continue
        reply = env.step("Which currency should I pay it in?")[4]["messages"][-1]["content"]
        assert any(c in reply for c in _CURRENCIES) and not u.task.world.consent.plans, reply
        return
    pytest.fail("no reimbursement without its currency among the seeds")



def test_a_detail_asked_beside_a_yes_is_answered_and_the_yes_waits_for_the_plan() -> None:
    """"Which currency should the payment be in? ... the meals claim (249.63 EUR) is capped. Is that
    acceptable?": the currency, not read as proposed by the amount's "EUR", and a word on the yes
    (ToolUse playtest 6984 T4 got the currency alone; a variant got a yes to "in EUR?")."""
    for seed in range(100, 160):
        env, u = _env("finance", seed)
        if u.task.gold.kind != "reimburse" or any(c in u.task.goal.request for c in _CURRENCIES):
            continue
        want = next(c for d in u.task.goal.details if d.slot == "currency" for c in _CURRENCIES if c in d.statement)
        other = next(c for c in _CURRENCIES if c != want)
        for told in (want, other):
            for report, said in (("", "what will you do about the expense report?"),
                                 ("I'll file the expense report first. ", "put the whole plan to me")):
                env, u = _env("finance", seed)
                reply = _answer(env, f"{report}Which currency should the payment be in? Also, one claim (249.63 "
                                     f"{told}) is over the policy's cap, so I can pay it only up to the cap. Is that "
                                     "acceptable?")
                assert want in reply and said in reply, (told, reply)
                assert not u.task.world.consent.plans, reply
        return
    pytest.fail("no reimbursement without its currency among the seeds")


# ------------------------------------------------------------------------------ a choice of plans


def _seeds(domain: str, labels: list[str]) -> list[int]:
    """Dev seeds of hard tasks of `domain` whose customer asks about exactly `labels`."""
    out = []
    for seed in range(60):
        _, u = _env(domain, seed)
        if [t.label for t in RULES[domain].targets(u._task.world, u._task.goal)] == labels:
            out.append(seed)
    assert out, (domain, labels)
    return out[:3]


#: (domain, what the customer asked about, the offer's other plan: what it leaves out). In the tier
#: the customer asks for every write a choice could add, so its yes names them all.
_CHOICES = [("ops", ["the incident", "the rollback"], "the incident"),
            ("finance", ["the expense report", "the payment"], "the payment"),
            ("calendar", ["the meeting", "the invitation"], "the meeting")]


@pytest.mark.parametrize(("domain", "labels", "other"), _CHOICES)
@pytest.mark.parametrize("offer", [
    "I can do either of these: (a) {plan} or (b) only {other}. Which would you prefer?",
    "Would you like me to do all of this: {plan} Or only {other}?",
    "Option 1: {plan}\nOption 2: just {other}, nothing else.\nWhich option do you want?",
    # The options as a list of yeses (ToolUse playtest 6977 T10 got "go ahead with that").
    "Your options:\n- Yes to both: {plan}\n- Or yes to {other} only.\nWhich would you like?",
    # Options by capital letter (playtest CrossTask 9650 T5 got a bare "Yes, please go ahead.")
    "A) {plan}\nB) Only {other}.\nC) Nothing for now.\nI recommend A. Shall I go ahead with A, B or C?",
])
def test_a_yes_to_a_choice_of_plans_says_which_in_the_customers_words(domain: str, labels: list[str], other: str,
                                                                      offer: str) -> None:
    for seed in _seeds(domain, labels):
        env, u = _env(domain, seed)
        answer = _answer(env, offer.format(plan=_plan(u._task), other=other))
        assert answer.endswith(f"Please go ahead with {' and '.join(labels)}, as you set it out."), (seed, answer)
        # The yes is a yes: the plan's writes may follow.
        world = u._task.world
        for name, arguments in _writes(u._task):
            want = RULES[domain].want(world, name, arguments)
            assert want is not None and world.consent.covers(want), (seed, name)


def test_a_question_that_is_no_choice_of_plans_gets_the_plain_yes() -> None:
    for seed in _seeds("ops", ["the incident", "the rollback"]):
        env, u = _env("ops", seed)
        answer = _answer(env, _plan(u._task) + " Shall I go ahead, or is there anything else I should know first?")
        assert "Please go ahead with the incident" not in answer and answer in _YES, (seed, answer)


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("request_", ["Please confirm that I should go ahead as described.",
                                      "Please review the plan and confirm.", "Shall I proceed?"])
def test_a_note_beside_the_plan_is_no_addition_to_it(domain: str, request_: str) -> None:
    # "Note that rolling back also removes v1.10.9": the plan's account of the work, not an
    # extra write the request for the yes asks about (ToolUse playtest 5832 T8).
    for seed in range(3):
        env, u = _env(domain, seed)
        plan = _plan(u._task)
        answer = _answer(env, f"{plan}\nNote that this also changes nothing else you asked about. {request_}")
        assert answer in _YES, (domain, seed, answer)
        env, u = _env(domain, seed)
        answer = _answer(env, f"{plan}\nPlease confirm, and shall I also send you a summary by e-mail?")
        assert answer == "Just what I asked for, please.", (domain, seed, answer)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_yes_asked_apart_from_an_offer_of_more_is_a_yes_to_the_plan_alone(domain: str) -> None:
    # "Does that sound good to go ahead with? And ... would you like me to leave that out?": yes
    # to the plan, no to more, and the plan's writes may follow (ToolUse playtests 5874, 5889).
    from test_tooluse_consent import _writes

    for seed in range(3):
        env, u = _env(domain, seed)
        task = u._task
        answer = _answer(env, f"{_plan(task)}\nDoes that sound good to go ahead with? And while I'm at it, there's "
                              "also a separate alert on another service: would you like me to add it as well?")
        # A customer who presses gives in with its own yes.
        assert answer in ("Yes, please go ahead with that, but just what I asked for.",
                          "Alright, I understand. Please go ahead with that."), (domain, seed, answer)
        rules = RULES[domain]
        assert all(task.world.consent.covers(rules.want(task.world, n, a)) for n, a in _writes(task)), (domain, seed)

@pytest.mark.parametrize("domain", DOMAINS)
def test_also_joining_a_second_question_is_no_offer_of_more(domain: str) -> None:
    # "Do I have your yes for both writes, ..., and also: do you want anything different in the
    # summary?": "also" joins a question to the customer, not work; the yes is asked (ToolUse
    # playtest 8761 T6 got "Just what I asked for, please.").
    for seed in range(3):
        env, u = _env(domain, seed)
        answer = _answer(env, f"{_plan(u._task)}\nDo I have your yes for this, and also: do you want anything "
                              "different in it?")
        assert answer != "Just what I asked for, please." and answer not in ("Yes, please go ahead with that, but "
                                                                            "just what I asked for.",), (domain, seed, answer)
        env, u = _env(domain, seed)
        answer = _answer(env, f"{_plan(u._task)}\nMay I go ahead? Also, would you like me to send you a copy?")
        assert answer == "Yes, please go ahead with that, but just what I asked for." or answer.startswith(
            "Alright, I understand."), (domain, seed, answer)




# ------------------------------------------------------------------ what a message says of the work


@pytest.mark.parametrize("text", [
    "Each item gets decided on its own, so some may qualify for a refund and others may not.",
    "With your tier, the windows are 45 days for apparel and home goods and 29 days for books.",
    "The desk lamp arrived damaged, so it gets a refund of 45.00 USD to your payment method.",
    "I want to walk you through my reasoning before anything is done.",
    "Nothing has been processed yet.", "I haven't refunded anything so far.",
    "Once it's booked, you'll get an invite.", "Triage done. I am ready to file a sev1 incident.",
    "My checks are complete, so here is the plan.",
    # "complete" before a noun is no state of the work (trial playtest 7466 T1: "It's not done on
    # my side yet" to an assistant that had claimed nothing)
    "I will then present a complete plan for your approval.", "Here is the complete list of the items."])
def test_a_word_of_the_work_in_another_form_or_a_clause_of_work_not_done_claims_nothing(text: str) -> None:
    from agentgym.envs.tooluse.asking import says_done

    assert not says_done(text)


@pytest.mark.parametrize("text", ["The lamp is refunded.", "I've filed the report.", "Done: the transfer is sent.",
                                  "Nothing else is needed: the refund has been processed.",
                                  "The refund is complete.", "All complete.", "The refunds are completed."])
def test_work_said_done_is_a_claim(text: str) -> None:
    from agentgym.envs.tooluse.asking import says_done

    assert says_done(text)


def test_a_preamble_that_names_the_work_and_asks_for_a_detail_gets_the_detail() -> None:
    """"... some may qualify for a refund and others may not. Could you tell me the email on your
    account?": no plan is put to the customer, and nothing is claimed done."""
    asked = 0
    for seed in range(60):
        env, u = _env("orders", seed)
        if u.task.goal.kind != "bulk_return" or "@" in u.task.goal.request:
            continue
        products = [p for p in u.task.world.consent.anchors if " " in p][:3]
        message = (f"Thanks, that's clear: {', '.join(products)}. Before I can promise anything I need your account, "
                   "since your tier changes the return windows. Each item gets decided on its own, so some may "
                   "qualify for a refund and others may not. Could you tell me the email address on your account?")
        reply = env.step(message)[4]["messages"][-1]["content"]
        assert "@" in reply and not u.task.world.consent.plans, (seed, reply)
        asked += 1
    assert asked >= 3


def test_a_question_among_options_of_a_slot_asks_for_the_value() -> None:
    """"... three currencies (EUR, CAD, USD) ... which currency should the amount be in?": the values
    named are options, not the customer's answer."""
    import gymnasium as gym

    for seed in range(100, 160):
        env = gym.make("AgentRL/ToolUse-v0", domain="finance", split="train", difficulty="medium")
        env.reset(seed=seed)
        u = env.unwrapped
        if u.task.gold.kind != "reimburse" or any(c in u.task.goal.request for c in _CURRENCIES):
            continue
        message = ("Her claims are in three currencies (EUR, CAD, USD), so I have to convert each at its date into one. "
                   "Which currency should the payment be in? And just to confirm, shall I pay it once it's worked out?")
        reply = env.step(message)[4]["messages"][-1]["content"]
        assert any(c in reply for c in _CURRENCIES) and reply not in _YES, reply
        return
    pytest.fail("no reimbursement without its currency among the seeds")


@pytest.mark.parametrize("text", ["Do you mean a refund rather than an exchange for another size?",
                                  "I'd refund it instead of issuing another credit.", "A refund, not an extra credit.",
                                  "I'll exchange it at no extra cost to you; just reply confirm.",
                                  "As a Plus member you get 15 extra days, so shall I go ahead?",
                                  # the whole plan, with a part of it named (a playtest, seed 6734, turn 7)
                                  "Shall I go ahead with all of it including the 139.00 USD store credit for the e-reader?",
                                  "Proceed with everything, including the approval?"])
def test_what_a_plan_is_not_is_no_offer_of_more(text: str) -> None:
    from agentgym.envs.tooluse.asking import offers_more

    assert not offers_more(text)
    assert offers_more("Shall I also issue store credit for the lamp?")
    # "also" that joins a question to the user adds no work; one that asks leave to do more does
    assert not offers_more("Shall I go ahead, and also: is there a deadline I should know of?")
    assert offers_more("Shall I go ahead? Also, would you like me to refund the shipping?")
    assert offers_more("Also, can I issue store credit for the rest?")
    assert offers_more("Shall I go ahead with all of it, including an extra gift card?")


def test_questions_about_what_is_so_before_any_plan_get_no_yes() -> None:
    """"1) Could you confirm that X is the email on your account? 2) Is it right that you'd like
    the A, B and C handled? 3) Did any of these items arrive damaged?": no yes to work (it would
    claim a fact, and record the questions as a plan the customer said yes to); a question that
    asks leave to act is still answered as one (a playtest, seed 6031, turn 1)."""
    from agentgym.envs.tooluse.replies import AS_SAID

    asked = 0
    for seed in range(60):
        env, u = _env("orders", seed)
        email = getattr(u.task.world, "email", "")
        if u.task.goal.kind != "bulk_return" or email not in u.task.goal.request:
            continue
        products = [p for p in u.task.world.consent.anchors if " " in p][:3]
        questions = (f"Before I pull up your records, a few quick questions: 1) Could you confirm that {email} is the "
                     f"email on your account? 2) Is it right that you'd like the {', '.join(products)} handled? "
                     "3) Did any of these items arrive damaged?")
        reply = env.step(questions)[4]["messages"][-1]["content"]
        assert reply == AS_SAID and not u.task.world.consent.plans, (seed, reply)
        asked += 1
    assert asked >= 3


def test_a_table_of_values_beside_a_question_to_go_ahead_asks_nothing() -> None:
    """A table of claims in three currencies, then "Shall I submit 238.70 USD as the answer?": the
    currencies converted ask nothing; the question names the customer's own (a playtest, seed
    6034, turn 6)."""
    import gymnasium as gym

    for seed in range(60):
        env = gym.make("AgentRL/ToolUse-v0", domain="finance", split="train", difficulty="medium")
        env.reset(seed=seed)
        u = env.unwrapped
        currency = next((d for d in u.task.goal.details if d.slot == "currency"), None)
        if u.task.gold.kind != "quote" or currency is None or currency.reveal != "upfront":
            continue
        mine = next(c for c in _CURRENCIES if c in currency.statement)
        others = [c for c in _CURRENCIES if c != mine][:2]
        table = "\n".join(f"| X-{n} | 2025-04-0{n} | 10.00 {c} | converted | 12.00 |" for n, c in enumerate(others, 1))
        message = (f"Here's the breakdown:\n\n| Expense | Date | Original | Outcome | Amount ({mine}) |\n|---|---|---|---|---|"
                   f"\n{table}\n| **Total** | | | | **24.00** |\n\nShall I submit 24.00 {mine} as the answer?")
        reply = env.step(message)[4]["messages"][-1]["content"]
        assert reply in _YES, (seed, reply)
        return
    pytest.fail("no answer task with its currency said among the seeds")


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_plan_asked_about_part_by_part_is_still_a_plan(domain: str) -> None:
    """"I'll do this: ... Is that what you want? Does that match your request?": questions about
    a plan the message puts are the plan's, answered with a yes (a playtest, ToolUse 5924 T8)."""
    for seed in range(20):
        env, u = _env(domain, seed)
        if u.task.world.press is None:
            break
    reply = _answer(env, f"Here is what I'll do:\n{_plan(u.task)}\nIs that what you want? Does that match your request?")
    assert reply in _YES and u.task.world.consent.plans, reply


def test_a_terse_question_for_a_detail_asks_for_it_beside_the_claims_found() -> None:
    """"E-652. Feb: 2 approved claims, both GBP. Need:\\n- payout currency? (EUR / USD / GBP / CHF
    accounts available)": a question of a few words asks for what it names, not for a yes to a
    plan ("Before I say yes: what will you do about the expense report?"; a playtest, seed 6063,
    turn 3)."""
    asked = 0
    for seed in range(40):
        env, u = _env("finance", seed)
        currency = next((d for d in u.task.goal.details if d.slot == "currency"), None)
        if currency is None or currency.reveal == "upfront":
            continue
        reply = _answer(env, "Found the employee. Their claims are listed, two of them approved. Need:\n"
                             "- payout currency? (EUR / USD / GBP / CHF accounts available)")
        assert reply == currency.statement, (seed, reply)
        asked += 1
    assert asked >= 2


# ------------------------------------------------------------------------------ lists asked for under a heading
_REQUEST = ("**Request (in your words)**: you want to return ten items and would prefer refunds over store credit:\n"
            "1. From the order placed on `2025-09-07`: denim jeans, desk lamp, running shoes, coffee grinder, duvet set.\n"
            "2. From the order placed on `2025-09-13`: chef knife, air purifier, e-reader, action camera, rain jacket.\n\n")
_ASKED = "1. The email address on your account, so I can find you and the two orders."


@pytest.mark.parametrize("heading", ["**What I need from you**", "## Questions for you", "**Information needed**",
                                     "### Before I can proceed", "__Needed from you__", "**What I need from you:**"])
@pytest.mark.parametrize("after", ["", "\n\nOnce I have it I will check each item against our return rules and come back "
                                       "with a line-by-line plan for your yes before anything is processed."])
def test_a_list_under_a_heading_that_asks_for_it_is_asked(heading: str, after: str) -> None:
    """A heading that says what the assistant needs ("**What I need from you**") asks for the list
    under it as "I need:" does, and a plan "for your yes" to come asks for no yes now: the
    customer gives its email (it said "Yes, please go ahead."; a playtest, seed 6485, turn 1)."""
    import gymnasium as gym

    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="hard")
    env.reset(seed=6485)
    reply = env.step(f"{_REQUEST}{heading}\n{_ASKED}{after}")[4]["messages"][-1]["content"]
    assert reply.startswith("It's ") and "@" in reply, reply


@pytest.mark.parametrize("heading", ["**Your needs**", "**What you need**", "## Summary", "**What I heard from you**",
                                     "**How to proceed**", "**Changes needed**"])
def test_a_heading_that_restates_the_request_asks_nothing(heading: str) -> None:
    from agentgym.users.rule_based import spelled_out

    message = f"{heading}\n- Refunds for all ten items"
    assert spelled_out(message) == message


@pytest.mark.parametrize("later, asks", [
    ("I'll come back with a plan for your approval.", False),
    ("Then I'll ask for your yes on the whole plan.", False),
    ("Refund 249.00 USD for the watch. Do I have your approval?", True),
    ("Refund 249.00 USD for the watch; I'll wait for your yes before I process it.", True),
])
def test_a_yes_put_off_to_a_later_plan_is_asked_for_no_now(later: str, asks: bool) -> None:
    from agentgym.envs.tooluse.asking import asks_go_ahead

    assert asks_go_ahead(later) is asks


def test_a_yes_to_the_rest_of_the_plan_unchanged_is_a_yes_to_the_plan_it_points_back_to() -> None:
    """A plan of eight items with their amounts, pressed against; then "Rest of plan unchanged
    (refunds 634.30 USD on e-reader/air purifier/...). Proceed w/ the above?" and the customer's
    "please go ahead with that": the refunds of the plan above are agreed to (all five were
    refused as unagreed, and the customer left; a playtest, seed 6505, turn 8)."""
    from playtest_turns import played

    env, actions = played("tooluse-6505-train.jsonl", 7)
    info = env.step(actions[7])[4]
    assert not info["errors"], info["errors"]
    assert env.step("All done.")[4]["episode"]["success"]


def test_a_yes_to_the_plan_i_gave_you_that_stays_as_it_was_covers_its_store_credits() -> None:
    """After a press for a refund past its window, "Everything else in the plan I gave you stays
    exactly as it was: ..., store credit for the action camera, cookbook, ... at their full prices
    ... Shall I go ahead with that plan?" and the customer's yes: the store credits whose amounts
    the plan before gave are agreed to (four were refused as unagreed and the customer left; a
    playtest, seed 9785, turns 9-10). Only the injected rate limit stops a write."""
    from playtest_turns import played

    env, actions = played("tooluse-9785-train.jsonl", 9)
    info = env.step(actions[9])[4]
    assert info["errors"] == [] and all(c["error"] is None or c["injected"] for c in info["calls"]), info["calls"]
    assert sum(c["name"] == "issue_store_credit" and c["error"] is None for c in info["calls"]) == 4


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("back", ["OK to go ahead with what I described?", "Shall I do both now?",
                                  "Shall I go ahead exactly as in my last message?"])
def test_a_question_that_points_back_to_the_plan_put_last_is_weighed_with_it(domain: str, back: str) -> None:
    """The plan in one message (put as findings, no question), then a short request for the yes
    that points back to it: the customer weighs that plan and says yes, and the writes it
    describes are covered (it asked "what will you do about ...?" each time; ToolUse playtests
    9627 T7, 9628 T7, 9629 T10 and T12)."""
    for seed in range(3):
        env, u = _env(domain, seed)
        env.step("Here is what I found and what I would do.\n" + _plan(u.task))
        reply = _answer(env, back)
        assert reply in _YES and u.task.world.consent.plans, (domain, seed, reply)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_question_that_points_back_and_adds_a_detail_is_weighed_with_the_plan(domain: str) -> None:
    """"Right - that's why the severity is sev1. OK to go ahead with the incident and rollback I
    described?" names the writes without their values: weighed with the plan put last, it gets
    the yes (it got "please put the whole plan to me"; ToolUse playtest 9635 T8)."""
    for seed in range(3):
        env, u = _env(domain, seed)
        env.step("Here is what I found and what I would do.\n" + _plan(u.task))
        outcomes = " and ".join(t.label.removeprefix("the ") for t in RULES[domain].targets(u.task.world, u.task.goal))
        reply = _answer(env, f"Right, that's why. OK to go ahead with the {outcomes} I described?")
        assert reply in _YES and u.task.world.consent.plans, (domain, seed, reply)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_plan_said_as_what_i_would_do_is_no_question(domain: str) -> None:
    """"Here's what I found. ... What I'd do: file an incident ..., then roll ... back" puts a plan;
    it was read as a question and got "I don't know more than what I told you" (CrossTask playtest
    9658 T13). Put without a request for an answer, the tier hears it; so it does a plan's lines
    in the imperative ("Send the invitation of meeting M-708.", which got "I'm not sure what you
    mean")."""
    from agentgym.envs.tooluse.replies import NOTED
    from agentgym.envs.tooluse.user_words import plan_said_as_such

    assert plan_said_as_such("What I'd do: refund it.") == "my plan: refund it."
    assert plan_said_as_such("What would you like me to do?") == "What would you like me to do?"
    for seed in range(3):
        env, u = _env(domain, seed)
        plan = " ".join(line for line in _plan(u.task).splitlines() if not line.startswith("Nothing for"))
        reply = env.step("Here's what I found. What I'd do: " + plan)[4]["messages"][-1]
        assert reply["content"] == NOTED, (domain, seed, reply)


def test_a_plan_with_a_total_said_as_refunded_claims_nothing_done() -> None:
    """"I've checked both orders. Findings and what I'd do: ... Totals: 537.00 USD refunded to your
    payment method" puts a plan; it got "Not quite yet: I don't see anything done about the
    e-reader yet." (ToolUse playtest 9633 T5). A sentence saying the assistant did the work still
    claims it."""
    from agentgym.envs.tooluse.asking import plan_only

    plan = ("I've checked both orders. Findings and what I'd do:\n- Lamp: refund 45.00 USD.\n- Mug: store credit "
            "12.00 USD.\n\nTotals: 45.00 USD refunded to your payment method, 12.00 USD in store credit.")
    assert plan_only(plan)
    assert not plan_only(plan + "\nI filed the refund of the lamp already. I'll do the mug next.")
    env, u = _env("orders", 1)
    reply = env.step(plan)[4]["messages"][-1]["content"]
    assert not reply.startswith(("Not quite yet", "It's not done")), reply


@pytest.mark.parametrize("text, back", [
    ("Rest of plan unchanged (refunds on the lamp and the coat). Proceed w/ the above?", True),
    ("Everything else as listed above. OK to go?", True),
    ("The plan above stands; the watch gets store credit. Shall I go ahead?", True),
    ("Refund 45.00 for the lamp. Shall I go ahead?", False),
    ("Above all, I want to get this right. Shall I go ahead?", False),
    # a list named with words before it (trial playtest 7444 T11: "Before I say yes: ..." again)
    ("so the wireless headphones stay at store credit 159.00. the per-item list above stands as is. ok to proceed?",
     True),
    ("The full refund table above is unchanged. Go ahead?", True),
    ("Above, the list of my favourite items. Shall I go ahead?", False),
    # ToolUse playtests 9627 T7, 9628 T7, 9629 T10 and T12 got "Before I say yes: what will you do about ...?"
    ("OK to go ahead with both writes I described?", True),
    ("Shall I do both now?", True),
    ("Everything else stays as I listed in my last message. Yes to go ahead with that?", True),
    ("Shall I go ahead with the other seven items exactly as in my last message?", True),
    ("Go ahead as proposed?", True),
    ("OK to go ahead with the refund and store credits I listed?", True),  # ToolUse playtest 9629 T8
    ("Do you want both a refund and store credit?", False),
    ("I described the problem to the team. Shall I go ahead?", False),
    # ToolUse playtest 9785 T9: after a press, the rest of the plan "stays exactly as it was"
    ("Everything else in the plan I gave you stays exactly as it was: store credit for the rest. Go ahead?", True),
    ("Everything else in the plan stays exactly as it was. Shall I go ahead?", True),
    ("The rest remains just as they were. OK?", True),
    ("The items I offered you stand. Shall I proceed?", True),
    ("Everything else stays the way you like it. Go ahead?", False),
])
def test_words_that_point_back_to_the_plan_put_before(text: str, back: bool) -> None:
    from agentgym.envs.tooluse.asking import REFERS_BACK

    assert (REFERS_BACK.search(text) is not None) is back


@pytest.mark.parametrize("lead", ["Could you verify the plan below:", "Please verify the plan below:",
                                  "Could you check the plan below:", "Please review the plan below:",
                                  "Please confirm the following:", "I'll need your OK on these:"])
@pytest.mark.parametrize("domain", DOMAINS)
def test_a_plan_under_a_line_that_asks_to_check_it_gets_the_yes(domain: str, lead: str) -> None:
    """A plan's lines under "Could you verify the plan below:" ask for a yes as "Shall I go
    ahead?" does (it got "I don't know more than what I told you", or the customer's wish again)."""
    for seed in range(3):
        env, u = _env(domain, seed)
        reply = _answer(env, lead + "\n" + "\n".join(f"- {line}" for line in _plan(u.task).splitlines()))
        assert reply in _YES and u.task.world.consent.plans, (seed, reply)


def test_details_asked_under_confirm_the_following_are_given() -> None:
    """"Could you please confirm the following:" over "- The email address on your account" asks
    for the e-mail, which the customer has not said: no yes, and no question about the plan."""
    import gymnasium as gym

    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="hard")
    env.reset(seed=6485)
    reply = env.step("Could you please confirm the following:\n- The email address on your account\n"
                     "- Which order you mean")[4]["messages"][-1]["content"]
    assert reply.startswith("It's ") and "@" in reply, reply


@pytest.mark.parametrize("name, turn, said", [
    # "Reply 'yes' to approve both rows, or 'incident only' to approve row 1 alone." after the
    # customer pressed: its giving in says which plan it takes (it said "Please go ahead with
    # that.", which picks neither; seed 6591, turn 9).
    pytest.param("tooluse-6591-test.jsonl", 8,
                 "Alright, I understand. Please go ahead with the incident and the rollback, as you set it out.",
                 id="answer-in-quotes"),
    # "Proposed writes: a) ... b) ... Do I have your yes to both writes? Or would you prefer only
    # the incident for now?" puts a plan and asks for a yes (it answered "What I told you is right;
    # anything else, please check with your tools.", as to questions of facts before any plan;
    # seed 6711, turn 6).
    pytest.param("tooluse-6711-test.jsonl", 5, "Yes, please go ahead.", id="yes-beside-an-alternative"),
    # "Shall I go ahead with all of it including the 139.00 USD store credit for the e-reader, or
    # ...?" offers nothing beyond the request: the pressing customer presses again (it answered
    # "Just what I asked for, please.", as to an offer of more; seed 6734, turn 7).
    pytest.param("tooluse-6734-train.jsonl", 6, "Please, I'd really like my money back for the e-reader. "
                 "I've been a customer here for ten years.", id="all-of-it-including"),
])
def test_the_customer_answers_what_a_kept_playtest_turn_asked(name: str, turn: int, said: str) -> None:
    """The replies to playtests' turns that the customer misread."""
    from playtest_turns import reply_to

    _env, _actions, reply = reply_to(name, turn)
    assert reply == said, reply


@pytest.mark.parametrize("text, asks", [
    ("Sorry, could you say again which days you'd like booked, and where?", False),
    ("Could you tell me the email on your account?", False),
    ("Could you verify the plan below:", True),
    ("Can you please confirm the plan above?", True),
])
def test_could_you_asks_for_a_yes_only_to_check_the_work(text: str, asks: bool) -> None:
    """"Could you verify the plan below:" asks for a yes; "could you say again which days ..."
    asks for words (the series user answered it "Yes, go ahead", and the expert asked again until
    the session ran out of turns)."""
    from agentgym.envs.tooluse.asking import asks_answer

    assert asks_answer(text.rstrip("?") + ".") is asks


@pytest.mark.parametrize("text, leave", [
    ("Proposed writes:\n1. File the incident.\n2. Roll back pricing.\nDo I have your yes? Or only the first?", True),
    ("Planned actions: a refund of the lamp. Is the lamp the one you mean? Was it opened?", True),
    ("Is it right that the lamp arrived damaged? Did you open it?", False),
    # One question about what others did is a question of fact too (ToolUse 9220: "Has anyone
    # already filed an incident for this today?" got "Yes, please go ahead.").
    ("Has anyone already filed an incident for this today?", False),
    ("Did someone on your team roll anything back?", False),
    ("Has anyone already filed one? Shall I go ahead with the plan above?", True),
    ("Is that right?", True),
])
def test_a_plan_or_a_request_for_leave_is_more_than_questions_of_facts(text: str, leave: bool) -> None:
    from agentgym.envs.tooluse.asking import asks_facts_only

    assert asks_facts_only(text) is not leave


def test_a_lone_question_about_what_others_did_gets_no_yes() -> None:
    from playtest_turns import played

    env, actions = played("tooluse-9220-test.jsonl", 1)
    reply = env.step("Has anyone already filed an incident for this today?")[0].strip().splitlines()[-1]
    assert reply == "[user] What I told you is right; anything else, please check with your tools.", reply


def _asked_at(name: str, turns: int, text: str) -> tuple[str, ...]:
    """The details the customer of a kept playtest, after its first `turns` turns, hears `text`
    ask for and has not said yet."""
    from playtest_turns import played

    env, _ = played(name, turns)
    return env.unwrapped._user._asked_unsaid(text)


def _writes_go_through(env: Any, action: str) -> None:
    """Step `action` (the writes the customer said yes to): none is refused, no policy broken."""
    info = env.step(action)[4]
    assert not info["errors"] and not env.unwrapped.episode_summary()["score_details"]["policy_violations"], info["errors"]


def test_a_yes_question_with_an_alternative_after_it_asks_for_the_yes() -> None:
    """"Go ahead with all of it? Or refunds only and skip the credits?" after a bulk return's plan
    asks for a yes (or the other way): the customer answered with its wish for money back, as to
    a question about it, and the writes that followed were refused as unagreed (a playtest, seed
    6723, turns 8 and 9)."""
    from playtest_turns import reply_to

    env, actions, reply = reply_to("tooluse-6723-train.jsonl", 7)
    assert reply == "Yes, please go ahead.", reply
    _writes_go_through(env, actions[8])


@pytest.mark.parametrize("text, asked", [
    ("Go ahead with all of it? Or refunds only and skip the credits?", ()),
    ("- Or would you rather have store credit for the lot?", ()),
    ("What would you prefer, store credit? Or a refund?", ("refund",)),
])
def test_a_question_opening_with_or_offers_another_way_and_asks_for_no_detail(text: str, asked: tuple[str, ...]) -> None:
    assert _asked_at("tooluse-6723-train.jsonl", 1, text) == asked


def test_a_request_for_a_yes_that_offers_to_hear_a_change_asks_for_the_yes() -> None:
    """"Reply yes to confirm that I should issue the eight store credits, or tell me which items to
    leave out." after the customer pressed for a refund: the customer answered with what it wants
    for each item, as to a question about it, and the credits that followed were refused as
    unagreed (a playtest, seed 6867, turn 7)."""
    from playtest_turns import reply_to

    env, actions, reply = reply_to("tooluse-6867-train.jsonl", 6)
    # The yes to the plan, naming what it takes of the choice offered ("or tell me which ...").
    assert reply.startswith("Alright, I understand.") and reply.endswith("as you set it out."), reply
    _writes_go_through(env, actions[7])


@pytest.mark.parametrize("text, asked", [
    ("Reply yes to confirm that I should issue the credits, or tell me which items to leave out.", ()),
    ("Please confirm and I'll go ahead, or just tell me which items you want refunded.", ()),
    # No yes asked for: the same words ask for the detail.
    ("Tell me which items you want refunded.", ("product", "refund")),
])
def test_an_offer_to_hear_a_change_after_a_yes_asked_for_asks_for_no_detail(text: str, asked: tuple[str, ...]) -> None:
    assert _asked_at("tooluse-6867-train.jsonl", 6, text) == asked


def test_a_customer_giving_in_names_the_plan_it_chose_among_those_offered() -> None:
    # ToolUse 7310 T10: 'Please tell me which: "yes to A and B", "yes to A only", or neither.' got
    # "Alright, I understand. Please go ahead with that.": which of the three, the reply left open.
    _env, _actions, said = reply_to("tooluse-7310-test.jsonl", 9)
    assert said.startswith("Alright, I understand. Please go ahead with ") and "rollback" in said, said


def test_a_restatement_naming_a_product_with_a_weather_word_is_no_small_talk() -> None:
    """"... the rain jacket and the atlas from your order placed on 2025-05-22 ... I will then
    present a complete plan for your approval": the customer heard small talk ("rain") and a
    claim of work done ("complete"), and answered "Could we get back to my request?" or "It's not
    done on my side yet" (trial playtests 7446 T1, 7466 T1); it hears a restatement."""
    import gymnasium as gym

    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="hard", domain="orders")
    env.reset(seed=7500)
    said = env.step("Thank you for contacting us. If I understand your request correctly, you would like to return "
                    "the wireless headphones, the bluetooth speaker, the rain jacket and the atlas from your order "
                    "placed on 2025-05-22, and five items from your order placed on 2025-05-10. I will now look up "
                    "your account and will then present a complete plan for your approval before anything is "
                    "processed.")[4]["messages"][-1]["content"]
    assert "get back to my request" not in said and "not done" not in said, said


def test_a_plan_naming_the_employee_by_first_name_describes_the_report() -> None:
    """"Shall I go ahead with the report for Kavya of 1366.13 CHF and then the 1366.13 CHF transfer
    to Kavya?" and a yes: the report was refused as unagreed, and the requester left (a playtest,
    seed 8705, turns 7-8). A first name no one of another name has names the employee."""
    env, actions = played("tooluse-8705-train.jsonl", 7)
    info = env.step(actions[7])[4]
    assert not info["errors"], info["errors"]


@pytest.mark.parametrize("offer", [
    "If you would rather not take store credit for some of the items, just tell me which ones and I will leave "
    "those untouched.",
    "And if you don't want the credit for one of them, let me know which."])
def test_an_offer_to_leave_part_of_the_plan_out_asks_no_detail(offer: str) -> None:
    """A plan with every item's outcome, "May I have your yes to issue these seven store credits?"
    and an offer to leave items out: the customer answers the plan (it restated its wish and
    asked for "the whole plan" again; a playtest, seed 8743, turn 7)."""
    env, actions = played("tooluse-8743-train.jsonl", 6)
    plan = actions[6].rsplit("If you would rather not", 1)[0]
    said = env.step(plan + offer)[4]["messages"][-1]["content"]
    assert "put the whole plan" not in said and "my money back where the policy allows" not in said, said


@pytest.mark.parametrize("name", ["tooluse-9220-test.jsonl", "tooluse-9236-train.jsonl"])
def test_a_question_about_what_others_did_beside_a_plan_gets_the_user_s_word_and_the_yes(name: str) -> None:
    # A playtest's (ToolUse 9238 T1): "has anyone already rolled back ...? And ... OK to file at
    # the policy severity?" got "Yes, that's right.", as if someone had. The user knows of no one:
    # it says so first, and its yes to the plan still counts.
    from playtest_turns import played

    env, actions = played(name, 0)
    first_write = next(i for i, a in enumerate(actions) if '"file_incident"' in a or '"book_meeting"' in a)
    plan = max(i for i in range(first_write) if actions[i][:1] not in "{[")  # the message the yes answered
    asked = False
    for i, action in enumerate(actions):
        if i == plan:
            action = action + " Also, has anyone already acted on this before me?"
            asked = True
            reply = env.step(action)
            said = reply[0].strip().splitlines()[-1]
            assert said.startswith("[user] Not that I know of."), said
            *_, terminated, truncated, info = reply
        else:
            *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert asked and info["episode_summary"]["success"], info["episode_summary"].get("outcome")


def test_the_word_on_others_comes_once_and_only_to_a_question_about_them() -> None:
    from agentgym.envs.tooluse.asking import NOT_THAT_I_KNOW, with_word_on_others

    assert with_word_on_others("Did anyone roll it back? OK to file?", "Yes.") == f"{NOT_THAT_I_KNOW} Yes."
    assert with_word_on_others("Did the deploy roll back? OK to file?", "Yes.") == "Yes."  # no one else named
    assert with_word_on_others("Has anyone filed one?", "What I told you is right; anything else, please check "
                               "with your tools.").startswith("What I told you")  # that answer says it already
    assert with_word_on_others("Someone else may have acted.", "Okay.") == "Okay."  # no question


def _kept_9659() -> tuple[Any, list[Any], str]:
    """Orders 9659 (hard, train) after its reads, its turns, and its plan put in full (T7) but
    for the question it closed with."""
    env, actions = played("tooluse-9659-train.jsonl", 6)
    plan = actions[6]
    return env, actions, plan[:plan.index("I know you'd prefer")]


def test_an_answer_to_the_customer_s_question_about_one_item_is_heard_with_the_plan_put() -> None:
    """A plan that left the coffee grinder out got "what will you do about the coffee grinder?";
    the answer for the grinder alone ("The coffee grinder gets a refund of 95.00 USD. Shall I go
    ahead?") got "what will you do about" the seven items the plan had just given: an answer to
    the customer's own question about part of the plan is heard with that plan, as a person
    hears it (the lead's probes on Orders 9659)."""
    env, actions, plan = _kept_9659()
    without = "\n".join(line for line in plan.splitlines() if "grinder" not in line)
    assert env.step(without + "Shall I go ahead?")[0] == "[user] Before I say yes: what will you do about the coffee grinder?"
    said = env.step("The coffee grinder gets a refund of 95.00 USD (it arrived damaged, so no restocking fee). "
                    "Shall I go ahead?")[0]
    assert said.removeprefix("[user] ").startswith(_PRESSES), said  # the whole plan: the customer presses
    refused = "I'm sorry, but the headphones are past their window; store credit of 179.00 USD is the most I can give."
    assert env.step(f"{refused} Shall I go ahead?")[0].removeprefix("[user] ").startswith(_PRESSES)
    assert env.step(f"{refused} Shall I go ahead?")[0] == "[user] Alright, I understand. Please go ahead with that."
    env.step(actions[11])  # the eight writes, as the player made them
    info = env.step("All done: three refunds and five store credits, as listed.")[4]
    assert info["episode_summary"]["success"], info["episode_summary"]


@pytest.mark.parametrize("ask", ["Shall I go ahead?", "If you're happy with this, just say so and I'll process all eight."])
def test_a_refusal_of_a_press_with_a_request_for_the_yes_is_heard_with_the_plan_put(ask: str) -> None:
    """After "Can't you refund the wireless headphones anyway?", "I'm sorry, but the headphones
    are past their window; store credit of 179.00 USD is the most I can give. Shall I go ahead?"
    got "what will you do about" all eight items, the headphones among them (the lead's probes on
    Orders 9659; Orders 9607 T7 asked for a yes to the plan's first write in the same place)."""
    env, _actions, plan = _kept_9659()
    assert env.step(plan + "Shall I go ahead?")[0].removeprefix("[user] ").startswith("Can't you refund")
    said = env.step("I'm sorry, but the headphones are past their window; store credit of 179.00 USD is the most I "
                    f"can give. {ask}")[0]
    assert said.removeprefix("[user] ").startswith("Please, I'd really like"), said


@pytest.mark.parametrize("ask", ["Unless you instruct otherwise, I will proceed with the eight lines above.",
                                 "I await your instructions.", "Unless I hear otherwise, I'll go ahead as listed.",
                                 "If you have no objection, I'll process these now."])
def test_an_opt_out_invites_the_answer_as_a_request_for_the_yes_does(ask: str) -> None:
    """"Unless you instruct otherwise, I will proceed" under the whole plan got "Okay, noted.", a
    reply a person gives as leave and the tier does not count as a yes (the lead's probes on
    Orders 9659): an opt-out invites the answer, and the customer answers the plan."""
    env, _actions, plan = _kept_9659()
    said = env.step(plan + ask)[0].removeprefix("[user] ")
    assert said.startswith(_PRESSES), said


def test_a_request_for_the_email_in_order_to_proceed_gets_the_email() -> None:
    """"In order to proceed, I require the following: (1) the email address associated with your
    Brightcart account ... and revert to you with a proposed resolution for each item before any
    action is taken." got "Before I say yes: what will you do about ...?" and no e-mail (ToolUse
    playtest 9745 T1): "in order to proceed" asks for no yes."""
    _env, actions, said = reply_to("tooluse-9745-train.jsonl", 0)
    assert actions[0].startswith("Thank you for your request. In order to proceed, I require")
    assert said.startswith("My email address is"), said


@pytest.mark.parametrize(("text", "asks"), [("I need your explicit yes to these five writes.", False),
                                            ("We require your written approval first.", False),
                                            ("I need your email.", True), ("I'll need the order number.", True)])
def test_a_need_of_the_customer_s_yes_in_any_words_asks_for_no_value(text: str, asks: bool) -> None:
    """"In order to proceed, I need your explicit yes to these five writes (three refunds and two
    store credits)." under the whole plan got the customer's wish per item and "please put the
    whole plan to me" (ToolUse playtest 9749 T6): a need of the customer's yes, with an adjective
    before it, asks for the yes, not for a value."""
    from agentgym.envs.tooluse.asking import asks_value

    assert asks_value(text) is asks, text


def test_a_whole_plan_closed_by_a_need_of_the_explicit_yes_gets_the_yes() -> None:
    """ToolUse playtest 9749 T6: the whole plan, closed by "In order to proceed, I need your
    explicit yes to these five writes (three refunds and two store credits). ... I await your
    instructions.", got the wish per item and "please put the whole plan to me"."""
    _env, actions, said = reply_to("tooluse-9749-train.jsonl", 5)
    assert "I need your explicit yes" in actions[5]
    assert said == "Yes, please go ahead.", said
