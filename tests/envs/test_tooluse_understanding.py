"""How the ToolUse user understands real phrasing: every detail of every domain asked in many
forms, in plain words too, against the user of its domain; and what it answers.

Figures asserted: per detail at least 95% of the phrasings below (written for these tests)
ask about that detail and at most 1% of all ask about another detail of the domain; asked
details are stated, a detail the task lacks gets "I don't know", an open question one unstated
detail, a message it cannot place a request to rephrase.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

from agentgym.envs.tooluse.env import ToolUseEnv
from agentgym.envs.tooluse.user import KEYWORDS, REPHRASE, SMALL_TALK, understanding

#: The domain whose tasks carry each detail, and the details of each domain.
DOMAIN_OF = {"employee": "finance", "month": "finance", "currency": "finance", "attendees": "calendar",
             "date": "calendar", "duration": "calendar", "title": "calendar", "email": "orders", "order": "orders",
             "product": "orders", "variant": "orders", "service": "ops", "severity": "ops", "rollback": "ops"}
DETAILS_OF = {d: {s for s, dd in DOMAIN_OF.items() if dd == d} for d in set(DOMAIN_OF.values())}

PHRASINGS: dict[str, tuple[str, ...]] = {
    'employee': (
        'Who is this for?',
        'Which employee?',
        'Whose expenses are these?',
        'Who should I reimburse?',
        'Who do we owe the money to?',
        "What's the employee's name?",
        'Could you tell me the name of the employee?',
        'Which colleague is it?',
        'Who is the payee?',
        'Who should receive the payment?',
        "I'll need the employee's name.",
        'Could you let me know who the claims belong to?',
        'Tell me who the expenses are for.',
        "Mind sharing the colleague's name?",
        'Who exactly should get the money?',
        'Which staff member?',
        'For whom is the reimbursement?',
        'whos this for',
    ),
    'month': (
        'Which month?',
        'What month are the expenses from?',
        'For which period?',
        'When were the expenses?',
        'What time frame should I look at?',
        'Which month should I check?',
        'Could you tell me the month?',
        'What period do the claims cover?',
        "I'd love to know which month.",
        'Tell me the month, please.',
        'What month should I look at?',
        "Which month's expenses?",
        'For what month?',
        'Please specify the period.',
        'When were they incurred?',
    ),
    'currency': (
        'Which currency?',
        'What currency should I pay in?',
        'In which currency should the amount be?',
        'Should I pay in EUR or USD?',
        'What currency would you like?',
        'Which currency should the amount be in?',
        'Do you want it in dollars or euros?',
        'Could you let me know the payout currency?',
        'What currency do you need the total in?',
        'Paid in what currency?',
        "I'll need the currency.",
        'Mind telling me the currency?',
        'What currency?',
        'Currency, please.',
        'Do you want it paid in euros?',
        'Should the payout be in GBP?',
        'which curency?',
    ),
    'attendees': (
        'Who should attend?',
        'Who is joining?',
        'Who should I invite?',
        'Which participants?',
        'Who will be at the meeting?',
        'Who else is coming?',
        'Could you tell me who the attendees are?',
        'With whom is the meeting?',
        'Who will attend the meeting?',
        'Tell me who should be invited.',
        "Who's attending?",
        'Could you list the participants?',
        'Who are the invitees?',
        'Who needs to be there?',
        'Which people should I invite?',
    ),
    'date': (
        'What date?',
        'Which day is the meeting?',
        'When is it?',
        'On what date should I book it?',
        'What day should I schedule it for?',
        'Could you confirm the date?',
        'Which date works?',
        'What day is it on?',
        'Tell me the date, please.',
        'When should the meeting happen?',
        'Could you let me know the day?',
        'On which day?',
    ),
    'duration': (
        'How long should the meeting be?',
        'How much time should I block?',
        "What's the duration?",
        'How many minutes?',
        'How long will it last?',
        'Should it be 30 or 60 minutes?',
        'What length should the meeting be?',
        'Could you tell me how long it should run?',
        'How long do you need?',
        'How long is the meeting?',
        'How many minutes should I book?',
        'Tell me how long it should be.',
        "What's the length of the meeting?",
        'How long will you need the room?',
        'Should I block an hour?',
        'How much time do you need?',
        'duraton?',
    ),
    'title': (
        'What should I call the meeting?',
        "What's the title?",
        'What is the meeting about?',
        "What's the subject?",
        'What topic should I put?',
        'Is there a name for the meeting?',
        'How should I title it?',
        "What's the meeting called?",
        'What title should I use?',
        'Tell me the subject of the meeting.',
        'What should the invite say?',
        "What's the topic?",
        'What name should I give it?',
    ),
    'email': (
        "What's your email?",
        'Which address should the confirmation go to?',
        'What email is on your account?',
        'Could you share the email address on the order?',
        'What is the email associated with your account?',
        'Can I have your email address?',
        "I'll need your email.",
        'What email did you use?',
        'Where should I send the confirmation?',
        'What email address should I use?',
        'Tell me your email, please.',
        'Mind sharing your email?',
        'Could you let me know your email address?',
        'Which email is the account under?',
        "What's the e-mail on file?",
        'Email, please.',
        'whats ur email',
    ),
    'order': (
        'Which order?',
        "What's the order number?",
        'Do you have the order ID?',
        'When did you place the order?',
        'Which purchase is it about?',
        'Could you tell me the order?',
        'When did you buy it?',
        'What is the order number?',
        'Could you tell me the order ID?',
        'Which order is it?',
        'Tell me which order you mean.',
        'When was the order placed?',
        'Do you have a receipt or order number?',
    ),
    'product': (
        'Which item?',
        'Which product is it?',
        'What item would you like to return?',
        'What did you buy?',
        'Which item is the problem?',
        'What product are we talking about?',
        'Which one do you want to return?',
        'Which product do you want to return?',
        'Tell me which item it is.',
        'What are you returning?',
        'Which item do you mean?',
        "What's the product?",
        'Which of the items?',
    ),
    'variant': (
        'What size would you like instead?',
        'Which colour do you want?',
        'What variant should I swap it for?',
        'Which version would you like instead?',
        'What would you like to exchange it for?',
        'Which color?',
        'What would you like to swap it for?',
        'Which size do you need?',
        'What colour would you like instead?',
        'Tell me which variant you want.',
        'What should I exchange it for?',
        'Which option would you prefer?',
    ),
    'service': (
        'Which service is affected?',
        "What's affected?",
        'Where did the errors show up?',
        'Which system is failing?',
        'What service is down?',
        'Which component is broken?',
        'Where did you see the alert?',
        'What is failing?',
        'Which service is having problems?',
        'What system is affected?',
        'Tell me where the errors show up.',
        'Which service raised the alert?',
        "What's broken?",
        'Which application is failing?',
        'Where are the errors?',
    ),
    'severity': (
        'How serious is it?',
        'What severity is it?',
        'How bad is it?',
        'What priority should I give it?',
        'How critical is this?',
        'Is it a sev1?',
        'How urgent is it?',
        'What severity should I file it as?',
        'How severe is it?',
        'What priority is this?',
        'Tell me the severity.',
        'How bad are things?',
        'Is it critical?',
        'What level should I classify it as?',
        'How serious is the impact?',
    ),
    'rollback': (
        'Should I roll it back?',
        'Do you want a rollback?',
        'Should I revert the deploy?',
        'Do you want me to undo the release?',
        'Should the culprit be rolled back?',
        'Roll back as well?',
        'Should I revert it?',
        'Do you want me to roll back the deploy?',
        'Should I restore the previous version?',
        'Roll it back?',
        'Should I undo the change?',
        'Do you want the culprit rolled back?',
    ),
}


@pytest.mark.parametrize("detail", list(PHRASINGS))
def test_every_detail_is_understood_in_many_phrasings(detail: str) -> None:
    domain = DOMAIN_OF[detail]
    read = understanding(domain).read
    missed = [p for p in PHRASINGS[detail] if detail not in read(p).asked]
    wrong = [p for p in PHRASINGS[detail] if (set(read(p).asked) & DETAILS_OF[domain]) - {detail}]
    assert len(missed) <= 0.05 * len(PHRASINGS[detail]), missed
    assert not wrong, wrong


def test_no_more_than_one_percent_of_all_phrasings_ask_another_detail() -> None:
    total = sum(len(v) for v in PHRASINGS.values())
    wrong = sum(1 for d, ps in PHRASINGS.items() for p in ps
                if (set(understanding(DOMAIN_OF[d]).read(p).asked) & DETAILS_OF[DOMAIN_OF[d]]) - {d})
    assert wrong <= 0.01 * total


def _reset(domain: str, pred: Any = lambda t: True) -> tuple[ToolUseEnv, dict[str, Any]]:
    env = ToolUseEnv(split="test" if domain == "ops" else "train")
    for seed in range(500):
        _, info = env.reset(seed=seed, options={"domain": domain})
        if pred(env.task):
            return env, info
    raise AssertionError("no task fits")


def _reply(info: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in info["messages"] if m["role"] == "user")


def test_an_asked_detail_is_stated_even_when_it_was_left_to_be_asked() -> None:
    env, _ = _reset("finance", lambda t: any(d.id == "currency" and d.reveal == "ask" for d in t.goal.details))
    detail = next(d for d in env.task.goal.details if d.id == "currency")
    assert "currency" not in env.user.known_constraints()
    _, _, _, _, info = env.step("Which address should the money go to, and in what currency?")
    assert detail.statement in _reply(info) and "currency" in env.user.known_constraints()


@pytest.mark.parametrize(("domain", "message", "detail"), [
    ("calendar", "How much time should I block?", "duration"),
    ("orders", "Which address should the confirmation go to?", "email"),
    ("ops", "How serious is it?", "severity"),
    ("ops", "What's affected?", "service"),
])
def test_plain_words_are_answered(domain: str, message: str, detail: str) -> None:
    env, _ = _reset(domain, lambda t: any(d.slot == detail for d in t.goal.details))
    _, _, _, _, info = env.step(message)
    assert any(d.statement in _reply(info) for d in env.task.goal.details if d.slot == detail), _reply(info)


def test_a_detail_the_task_lacks_gets_i_dont_know_never_another_detail() -> None:
    env, _ = _reset("finance")
    _, _, _, _, info = env.step("What should I call the meeting?")
    text = _reply(info)
    assert "don't know" in text or "not sure" in text
    assert not any(d.statement in text for d in env.task.goal.details)


def test_an_open_question_states_one_unstated_detail_then_everything() -> None:
    env, _ = _reset("orders", lambda t: any(d.reveal == "ask" for d in t.goal.details))
    before = set(env.user.known_constraints())
    env.step("Is there anything else I should know?")
    assert len(set(env.user.known_constraints()) - before) == 1
    _, _, _, _, info = env.step("Anything else?")
    assert "everything" in _reply(info)


@pytest.mark.parametrize("message", ["qwpeoriu zxmcnv", "Why would that be?", "Is it a good idea?"])
def test_a_message_it_cannot_place_gets_a_request_to_rephrase(message: str) -> None:
    env, _ = _reset("calendar")
    _, _, _, _, info = env.step(message)
    assert REPHRASE in _reply(info)


def test_keywords_claims_and_confirmations() -> None:
    env, _ = _reset("ops")
    _, _, _, _, info = env.step("employee month currency attendees date duration title email order product variant "
                                "service severity rollback")
    assert KEYWORDS in _reply(info)
    _, _, _, _, info = env.step("I've taken care of everything, it's all done.")
    # A claim of work done is checked against the world: the user says what it does not see yet.
    assert "not quite yet" in _reply(info).lower() or "not done on my side yet" in _reply(info)
    assert "I don't see an incident filed yet" in _reply(info)
    _, _, _, _, info = env.step("Shall I go ahead?")
    assert "go ahead" in _reply(info).lower()


def test_understanding_is_the_same_in_every_process_of_a_seed() -> None:
    env = gym.make("AgentRL/ToolUse-v0")
    a = [env.reset(seed=5)[0], env.step("How long should it be, and who is coming?")[0]]
    b = [env.reset(seed=5)[0], env.step("How long should it be, and who is coming?")[0]]
    assert a == b


def test_your_email_is_the_address_even_where_a_service_is_called_email() -> None:
    read = understanding("ops").read
    assert read("Could I get your email?").asked == ("email",)
    assert read("Is the email service alerting?").asked == ("service",)
    assert read("How bad is the outage?").asked == ("severity",)  # the outage is what it is about
    assert read("What email did you use?").asked == ("email",)  # a question word asks the address too
    assert read("Is this a minor outage?").asked == ("severity",)  # how big the outage is, not which service


# ------------------------------------------------------------------ phrasing classes real assistants use
def test_an_auxiliary_that_is_also_a_value_opens_a_question_and_names_nothing() -> None:
    read = understanding("finance").read
    assert "month" not in read("May we go over the details once more?").asked
    assert read("May or June?").asked == ("month",)


def test_a_request_inside_a_statement_asks_and_the_assistants_own_plans_do_not() -> None:
    assert understanding("orders").read("I can look it up as soon as you send me the email.").asked == ("email",)
    assert understanding("ops").read("Happy to file it once you tell me how bad it is.").asked == ("severity",)
    r = understanding("calendar").read("Is there anything to add before I start?")
    assert r.open and not r.asked  # "before I start" is the assistant's own plan
    assert understanding("orders").read("The email address and the order number, please.").asked == ("email", "order")


def test_closing_questions_are_open() -> None:
    for domain in ("finance", "calendar", "orders", "ops"):
        read = understanding(domain).read
        for text in ("Is that everything?", "Any further instructions?", "Will that be all?"):
            r = read(text)
            assert r.open and not r.asked, (domain, text, r)


def test_small_talk_gets_a_friendly_reply_and_reveals_nothing() -> None:
    env, _ = _reset("finance")
    before = list(env.user.known_constraints())
    _, _, _, _, info = env.step("How's your week going?")
    assert SMALL_TALK in _reply(info) and env.user.known_constraints() == before


@pytest.mark.parametrize(("domain", "detail", "plan"), [
    ("finance", "currency", "My recommendation is to pay it in {other}; shall I go ahead?"),
    ("finance", "currency", "I'll make the transfer in {other} then."),
    ("calendar", "duration", "Shall I go ahead with a {other}-minute meeting?"),
    ("calendar", "duration", "I will book {other} minutes for it, is that right?"),
    ("ops", "severity", "I'm going to file it as {other}. OK?"),
])
def test_a_plan_with_another_value_than_the_users_is_corrected_and_its_own_is_confirmed(
        domain: str, detail: str, plan: str) -> None:
    """A person answers what a plan says: the wrong currency, length or severity gets the right
    one (the user's own words for it), the right one a go-ahead; a plan is never a claim of work
    done ("not quite yet")."""
    env, _ = _reset(domain, lambda t: any(d.id == detail for d in t.goal.details))
    want = env.user._values[detail]
    others = {"currency": ["EUR", "USD", "GBP", "CHF"], "duration": [30, 45, 60, 90],
              "severity": ["sev1", "sev2", "sev3"]}[detail]
    other = next(v for v in others if v != want)
    statement = next(d.statement for d in env.task.goal.details if d.id == detail)
    _, _, _, _, info = env.step(plan.format(other=other))
    assert statement in _reply(info) and detail in env.user.known_constraints()
    _, _, _, _, info = env.step(plan.format(other=want))  # its own value: a yes, or the value said again
    assert "not quite" not in _reply(info).lower() and all(str(v) not in _reply(info) for v in others if v != want)


@pytest.mark.parametrize(("domain", "field", "asks", "write"), [
    ("ops", "rollback", ("Should I also roll the culprit back once the incident is filed?", "Do you want a rollback too?"),
     ("rollback", {"service": "x", "to_version": "v1", "incident_id": "INC-1"})),
    ("finance", "report", ("Should I file an expense report as well?", "Do you also need a report?"),
     ("file_expense_report", {"employee_id": "E-1", "month": "2025-01", "expense_ids": ["X-1"], "total": 1.0,
                              "currency": "EUR"})),
])
def test_asked_about_a_write_it_did_not_ask_for_the_user_says_no(domain: str, field: str, asks: tuple[str, ...],
                                                                  write: tuple[str, dict[str, Any]]) -> None:
    """A careful assistant that checks whether to make a write the request did not ask for (a
    rollback, an expense report) gets the user's no, never a go-ahead it would then take back."""
    env, _ = _reset(domain, lambda t: getattr(t.goal.job, field) is False and t.goal.kind != "quote")
    for ask in asks:
        _, _, _, _, info = env.step(ask)
        assert "No " in _reply(info) and "go ahead" not in _reply(info).lower(), _reply(info)
    assert field in env.user.contradictions(*write)  # making it after that no contradicts it


def test_asked_whether_store_credit_would_do_the_customer_answers_as_it_can() -> None:
    """In the window the customer wants its money back; past it, it takes what the policy gives.
    Never a plain yes to a write that is not what it asked for."""
    for late in (False, True):
        env, _ = _reset("orders", lambda t: len(t.gold.effects) == 1
                        and t.gold.effects[0].kind == ("credit" if late else "refund"))
        _, _, _, _, info = env.step("Would store credit work for you instead of a refund?")
        said = _reply(info)
        assert ("store credit is fine" in said) == late and ("money back" in said) == (not late), said


@pytest.mark.parametrize(("domain", "detail", "check"), [
    ("finance", "currency", "Just to confirm: the total of the approved claims, in {value}, right?"),
    ("finance", "currency", "So that's in {value}?"),
    ("ops", "severity", "Just to confirm, {value}?"),
    ("ops", "severity", "So I file it as {value}, correct?"),
])
def test_a_question_that_restates_what_the_user_said_gets_a_yes_or_the_correction(
        domain: str, detail: str, check: str) -> None:
    """A person asked to confirm what they said says yes, or corrects what differs; the value
    is then known to be the user's (goal consistency holds writes to it)."""
    env, _ = _reset(domain, lambda t: any(d.id == detail for d in t.goal.details))
    want = env.user._values[detail]
    statement = next(d.statement for d in env.task.goal.details if d.id == detail)
    _, _, _, _, info = env.step(check.format(value=want))
    assert _reply(info) == "Yes, that's right." and detail in env.user.known_constraints()
    other = next(v for v in {"currency": ["EUR", "USD", "GBP", "CHF"], "severity": ["sev1", "sev2", "sev3"]}[detail]
                 if v != want)
    _, _, _, _, info = env.step(check.format(value=other))
    assert _reply(info) == statement


@pytest.mark.parametrize(("domain", "ask"), [
    ("finance", "Do you want me to include the pending expenses too?"),
    ("finance", "Should I add the rejected claims as well?"),
    ("calendar", "Do you want me to book a second meeting in addition?"),
    ("orders", "Should I also issue some extra store credit as a goodwill gesture?"),
    ("ops", "Should I open another incident as well?"),
])
def test_a_confirmation_proposing_more_than_the_request_gets_no_go_ahead(domain: str, ask: str) -> None:
    """A user says yes to going ahead with its request, not to an extra it never asked for (the
    grader would count the extra against the agent)."""
    env, _ = _reset(domain)
    _, _, _, _, info = env.step(ask)
    assert "go ahead" not in _reply(info).lower() and "yes" not in _reply(info).lower(), _reply(info)
    _, _, _, _, info = env.step("Shall I go ahead?")
    assert _reply(info).startswith("Yes")


def test_a_question_about_one_detail_is_answered_with_it_alone() -> None:
    """A slot word beside the one asked ("the currency for the total") brings no "I don't know"
    about it; "I don't know" comes only when the user has nothing to say to any slot asked."""
    env, _ = _reset("finance", lambda t: any(d.id == "currency" for d in t.goal.details))
    statement = next(d.statement for d in env.task.goal.details if d.id == "currency")
    _, _, _, _, info = env.step("Could you let me know which currency you'd prefer for the total?")
    assert _reply(info) == statement


def test_a_value_agrees_with_what_the_user_said_only_as_whole_words() -> None:
    """"S" is not said by "It's about the winter coat", nor "L" by "the XL winter coat"."""
    from agentgym.envs.tooluse.base import Detail
    from agentgym.envs.tooluse.detail_values import agree as _agree

    said = [Detail("variant:I-1", "variant", "I'd like the XL winter coat instead.", "upfront"),
            Detail("product:I-1", "variant", "It's about the winter coat.", "upfront")]
    assert _agree(said, ["xl"]) and _agree(said, ["winter coat"])
    assert not _agree(said, ["l"]) and not _agree(said, ["s"]) and not _agree(said, ["xl", "m"])
    assert _agree([Detail("email", "email", "It's ana.lima7@example.com.", "upfront")], ["ana.lima7@example.com"])


@pytest.mark.parametrize("message", [
    "Great, the incident is filed. Let me know if you need anything else!",
    "All done! Anything else I can help with?",
    "Is everything done now?",
    "Could you confirm it looks right on your side?",
    "Can you check that it worked?",
])
def test_a_claim_of_work_done_or_a_request_to_check_it_gets_what_the_user_sees(message: str) -> None:
    """Told the work is done (a courtesy "anything else?" after it changes nothing), or asked to
    look at it, the user says what it does not see yet: never a held-back detail or a rephrase."""
    env, _ = _reset("ops")
    _, _, _, _, info = env.step(message)
    assert _reply(info).startswith(("Not quite yet", "It's not done on my side yet")), _reply(info)


def test_a_terse_recap_that_asks_one_thing_is_no_keyword_list() -> None:
    # CrossTask 6928 T15 (playtest): the items recapped in statements are what the assistant
    # tells; the question after them asks for the email.
    read = understanding("orders").read
    r = read("Order of 2025-07-26: 2 items. 1) Denim jeans, swap to size 36. 2) Bluetooth speaker, return. "
             "Need your account email to find the order. Email?")
    assert not r.salad and "email" in r.asked, r
    # Values set aside are only those told in a statement: the same words run into the
    # question are still a keyword list.
    assert read("Order of 2025-07-26: 2 items, denim jeans swap to size 36, bluetooth speaker return, "
                "account email, order email?").salad


@pytest.mark.parametrize(("domain", "message", "detail"), [
    # a playtest's (ToolUse 9301 T1, T3): "It showed up on sessions." alone, twice
    ("ops", "May I look at the alerts firing now and the team's written policies? Nothing will be changed.", "service"),
    ("ops", "Is it OK if I look into the alerts next?", "service"),
    ("orders", "May I look up your account with your email?", "email"),
])
def test_a_question_asking_leave_to_look_gets_leave_and_the_detail_its_words_ask(domain: str, message: str,
                                                                                   detail: str) -> None:
    env, _ = _reset(domain, lambda t: any(d.slot == detail and d.reveal == "ask" for d in t.goal.details))
    _, _, _, _, info = env.step(message)
    text = _reply(info)
    assert text.startswith("Sure, go ahead.") and any(
        d.statement in text for d in env.task.goal.details if d.slot == detail), text
    # Asked again, the detail already said: leave alone (a playtest of 0.35.0, ToolUse 9359 T4-T10,
    # got "Sure, go ahead. It showed up on pricing." at every hop of the walk).
    _, _, _, _, info = env.step(message)
    assert _reply(info) == "Sure, go ahead.", _reply(info)


def test_a_question_asking_leave_to_look_at_nothing_the_user_has_gets_leave_alone() -> None:
    env, _ = _reset("ops")
    _, _, _, _, info = env.step("May I run a few read-only checks first?")
    assert _reply(info) == "Sure, go ahead.", _reply(info)
