"""The CrossTask hard tier's user hears other assistants' messages as it hears the expert's
(benchmarks/users/cross_sweep.py finds the classes of misfire these cases stand for; ``-m slow``
runs the sweep itself on one session a split)."""

from __future__ import annotations

import copy
import re
from typing import Any

import gymnasium as gym
import pytest
from crosstask_play import at_comeback
from playtest_turns import REPORT, played, reply_to, step_kept

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.turns import calls_of
from agentgym.users.stock import REPHRASE

ENV_ID = "AgentRL/CrossTask-v0"
_PLAN = "Here is what I'm about to do:"
_YES = re.compile(r"go ahead|that's right|that's everything I can think of", re.IGNORECASE)


def _at_plan(split: str, seed: int) -> tuple[Any, str] | None:
    """The env just before the expert's first plan of a tool-use request, and that plan's body."""
    env = gym.make(ENV_ID, difficulty="hard", split=split)
    agent = make_agent("expert")
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    for _ in range(200):
        action = agent.act(obs, info)
        if not calls_of(action) and action.startswith(_PLAN):
            return env, action.removeprefix(_PLAN).split(" Shall I go ahead")[0].strip()
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return None
    return None


def _said(env: Any, message: str) -> str:
    return step_kept(copy.deepcopy(env), message)[0].removeprefix("[user] ")


#: A plan in the layouts other assistants use, and the ways they ask for a yes.
LAYOUTS = (
    lambda body: f"Here's what I'll do: {body} Let me know if that works.",
    lambda body: "| # | Action |\n|---|---|\n| 1 | " + body.rstrip(".") + " |\n\nShould I go ahead with this?",
    lambda body: "Here's the plan:\nStep 1: " + body.rstrip(".") + "\n\nDoes this look right?",
    lambda body: f"Plan: {body.rstrip('.')}. OK?",
    lambda body: f"Please confirm and I'll take care of it.\n\nHere's the plan:\n- {body.rstrip('.')}",
)


@pytest.mark.parametrize("split,seed", [("train", 0), ("train", 1), ("test", 0), ("train", 3)])
def test_a_plan_in_any_layout_gets_a_yes(split: str, seed: int) -> None:
    got = _at_plan(split, seed)
    assert got is not None
    env, body = got
    # The expert's own "Shall I go ahead, or is there anything else I should know first?" asks
    # for a yes to its plan: the user says it, rather than restate a wish the plan meets.
    own = _said(env, f"{_PLAN} {body} Shall I go ahead, or is there anything else I should know first?")
    assert _YES.search(own), own
    for layout in LAYOUTS:
        said = _said(env, layout(body))
        assert _YES.search(said) and said != REPHRASE, (layout(body), said)


def test_a_question_for_a_detail_is_still_answered_beside_a_plan() -> None:
    got = _at_plan("test", 0)  # an incident: where the errors showed up is not said yet
    assert got is not None
    env, body = got
    # Not a yes to the plan: a question of it asks for a detail, and the detail is the answer.
    said = _said(env, f"{_PLAN} {body} Which service did you first see the errors on?")
    assert said.startswith("It showed up on"), said


def _at_budget(split: str) -> tuple[Any, Any]:
    for seed in range(60):
        env = gym.make(ENV_ID, difficulty="hard", split=split)
        got = at_comeback(env, seed, "costs at most")
        if got is not None and got[0].move.place != got[1].bookings[got[0].move.booking].item_id:
            return env, got[1]
    raise AssertionError("no budget come-back to another place in 60 seeds")


def _booked(split: str) -> tuple[Any, Any, Any, str, str]:
    """At a budget come-back: the env, its segment, the booking to move, its place's name and
    its time as written ("Monday morning")."""
    env, world = _at_budget(split)
    seg = env.unwrapped.user.active
    old = world.bookings[seg.move.booking]
    return env, seg, old, world.by_id[old.item_id].name, f"{old.day.capitalize()} {old.slot}"


@pytest.mark.parametrize("split", ["train", "test"])
def test_naming_the_booking_as_it_stands_is_no_proposal(split: str) -> None:
    env, seg, old, name, when = _booked(split)
    for message in (f"Sure! Which booking do you mean: the one at {name} on {when}?",
                    f"Just to confirm: you'd like me to change your booking at {name} ({when}), right?",
                    f"| Booking | When |\n|---|---|\n| {name} | {when} |\n\nThis is the one you mean, correct?"):
        said = _said(env, message)
        assert said.startswith("Yes, that's the booking.") and "isn't what I asked for" not in said, (message, said)
    # The booked place at another time is a move there, which this come-back does not ask for.
    other = next(s for s in ("morning", "afternoon", "evening") if s != old.slot)
    said = _said(env, f"Shall I move it to {name} on {old.day.capitalize()} {other}?")
    assert "isn't what I asked for" in said, said


@pytest.mark.parametrize("split", ["train", "test"])
def test_the_booking_named_only_as_the_one_to_give_up_is_no_proposal(split: str) -> None:
    # "... cancel Blue Mug (B1, Monday morning) and book the new cafe. Is that right?" restates
    # the come-back: it got "That isn't what I asked for" (CrossTask playtest 9610 T23).
    env, seg, old, name, when = _booked(split)
    new = f"{seg.move.day.capitalize()} {seg.move.slot}"
    for message in (f"Let me make sure I understood: the new place is for {new}. I'll find the best-rated one within "
                    f"what's left, then cancel {name} ({old.id}, {when}) and book the new one. Is that right?",
                    f"So for {new} the plan is to replace {name} with a cheaper place in the same area. Correct?"):
        said = _said(env, message)
        assert "isn't what I asked for" not in said, (message, said)


@pytest.mark.slow
def test_the_sweep_finds_no_misfire_on_a_session_a_split() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "users"))
    import cross_sweep

    rows = cross_sweep.sweep(range(1), 3)["rows"]
    assert rows and {r["kind"] for r in rows} >= {"ask", "propose", "plan", "comeback"}
    assert [r for r in rows if r["misfire"] or r["lost"]] == []




def test_a_question_for_a_value_among_its_options_is_answered_beside_a_request_for_a_yes() -> None:
    """A table of claims in three currencies, "which currency should the amount be in? And just to
    confirm, you only want the figure submitted?": the currencies named are options, not the
    user's; it names its own (a playtest, seed 5935, turn 24)."""
    env, actions = played("crosstask-5935.jsonl", 23)
    said = _said(env, actions[23])
    assert "EUR" in said and "go ahead" not in said, said


def test_a_list_asked_for_under_a_checklist_of_the_requests_is_asked() -> None:
    """"[x] 1. ... [ ] 4. Order of 2025-10-09: swap the air purifier for the white one" above "To
    pull up the order I need: - The email address on your Brightcart account.": the list is what
    the message asks, not a yes to the checklist's work, and a checklist's "[ ]" is no JSON (it
    got "Yes, please go ahead."; a playtest, seed 6129, turn 14)."""
    env, actions = played("crosstask-6129.jsonl", 13)
    for message in (actions[13], actions[13].split("\n", 2)[2]):  # from "[ ] 3. ..."
        said = _said(env, message)
        assert said.startswith("My email address is"), said


def test_a_write_a_policy_refuses_ends_its_sub_task_at_once() -> None:
    """A rollback with a made-up incident id is refused: the user leaves that request at that turn,
    before another write can be done for it (a playtest, seed 5936, turn 13)."""
    env, actions = played("crosstask-5936.jsonl", 12)
    before = env.unwrapped.user.active.index
    info = step_kept(env, actions[12])[4]
    assert "broke one of our policies" in info["messages"][-1]["content"]
    assert env.unwrapped.user.active.index == before + 1


def test_a_question_for_it_asks_for_what_the_sentence_before_it_names() -> None:
    """"... to look it up I'll need the email address on your account. Could you share it?" asks
    for the email, not for a yes (a playtest, seed 5955, turn 17)."""
    env, actions = played("crosstask-5955.txt", 16)
    said = _said(env, actions[16])
    assert "@" in said and "go ahead" not in said, said


def test_asked_whether_to_cancel_the_places_named_are_reasons_not_proposals() -> None:
    """"No venue fits the new need (X lacks it, Y is full); shall I cancel B4 now?": the come-back's
    user answers whether to cancel, and does not call the places named a wrong proposal (a
    playtest, seed 5972, turn 27)."""
    env, actions = played("crosstask-5972.txt", 26)
    said = _said(env, actions[26])
    assert "isn't what I asked for" not in said and "ancel" in said, said


def test_confirm_the_email_beside_a_request_for_a_yes_asks_for_the_email() -> None:
    """"... could you please confirm the email address on your account, and confirm whether
    assumptions (1) and (2) are correct?" asks for the email as well as a yes (a playtest, seed
    5989, turn 1)."""
    env, actions = played("crosstask-5989.txt", 0)
    said = _said(env, actions[0])
    assert "@" in said and "go ahead" not in said, said


def test_also_in_the_account_beside_approvals_of_each_item_is_no_offer_of_more() -> None:
    """An account that says the speaker "is also past the window", then "(a) do you approve store
    credit of ... (b) ...?": a yes, not "just what I asked for" (a playtest, seed 5989, turn 7)."""
    env, actions = played("crosstask-5989.txt", 6)
    said = _said(env, actions[6])
    assert said == "Yes, please go ahead.", said


def test_a_report_of_the_last_request_beside_the_next_plan_is_no_claim_about_it() -> None:
    """"Transfer done: 357.03 GBP sent ... Plan: exchange it for the paperback variant. OK?": the
    plan is put for a yes (it got "It's not done on my side yet"; a playtest, seed 6114, turn 6)."""
    env, actions = played("crosstask-6114.jsonl", 5)
    said = _said(env, actions[5])
    assert said == "Yes, please go ahead.", said


@pytest.mark.parametrize("turn", [19, 27])
def test_ok_after_a_plan_asks_the_come_backs_for_a_yes(turn: int) -> None:
    """"... I'll book Saturday afternoon and cancel the Thursday booking (B2). OK?" (the move, turn
    20) and a plan of days ending "OK?" (the series, turn 28) ask for a yes: they got "Could you
    rephrase that?" and the request repeated (a playtest, seed 6112)."""
    env, actions = played("crosstask-6112.jsonl", turn)
    said = _said(env, actions[turn])
    assert "go ahead" in said and "rephrase" not in said, said


def test_a_change_of_mind_replaces_the_customers_press() -> None:
    """The customer who presses for a rollback, changing its mind at that reply, says only the
    change ("Can't you roll pricing back to v1.15.4 instead? ... Actually, don't roll anything
    back" said both; a playtest, ToolUse 6095, turn 8)."""
    env, actions = played("tooluse-6095.jsonl", 7)
    said = _said(env, actions[7]).lower()
    assert "anything back" in said and "can't you" not in said and "manager" not in said, said  # typos may land elsewhere


def test_a_place_named_only_to_say_it_was_no_suggestion_is_not_the_proposal() -> None:
    """"Sorry: I listed Hazel Quarters only to show what was out there, not as a suggestion ... My
    proposal: **Meadow Haven** ... Shall I book it for you?" proposes Meadow Haven (the user judged
    Hazel Quarters and left; a playtest, Dialog 6102, turn 6)."""
    env, actions = played("dialog-6102.jsonl", 5)
    said = _said(env, actions[5])
    assert "Meadow Haven sounds great" in said, said


def test_the_yes_to_the_place_of_a_come_back_names_no_time_it_left_to_the_assistant() -> None:
    """Asked "it's the Thursday booking, B2, yes?" of a move to "the next day after it on which the
    place is open", the user agrees in its own words; it names the new time only when the message
    did (it said "please book it for Friday afternoon", the answer the assistant was to find; a
    playtest, seed 6491, turn 16)."""
    env, actions = played("crosstask-6491-test.jsonl", 15)
    said = _said(env, actions[15])
    assert said.startswith("Yes, that one: please move it to the next day after it") and "Friday" not in said, said
    env, actions = played("crosstask-6491-test.jsonl", 15)
    said = _said(env, "Shall I move Nest Exchange 6 to Friday afternoon and cancel B2?")
    assert said == "Yes, that one: please book it for Friday afternoon and cancel the old booking.", said


def test_a_series_user_says_which_days_it_sees_booked() -> None:
    """Four bookings of a series in one turn, two of them failed (a timeout, a 503): told it is
    done, the user says which days it sees, so the days left out show (it said "Thanks, I see
    it."; a playtest, seed 6612, medium noise, turn 39). At the writes it says nothing: it hears
    the outcome from the assistant."""
    env, _actions, said = reply_to("crosstask-6612-train.jsonl", 38)
    assert said.startswith('{"booking_id"'), said  # the last tool result: no word from the user
    said = env.step("All the nights are booked now.")[4]["messages"][-1]["content"]
    assert said.startswith("That isn't everything I asked for yet: I see the bookings for Tuesday, Friday and "
                           "Saturday so far, and I'd like"), said


def test_a_sub_task_s_user_counts_turns_from_where_its_request_opened() -> None:
    """A session's later sub-tasks count turns as they would alone: the dialog opened at turn 13
    of a medium session holds its late need back until its own due turn (it arrived in the first
    answer, "My friend just told me something: ..."; a playtest, seed 6614, turn 14), and a
    change of mind in the fourth sub-task, at session turn 20, is logged recoverable by that
    sub-task's own turns (it was logged unrecoverable; seed 6612, medium noise, turn 20)."""
    _env, _actions, said = reply_to("crosstask-6614-train.jsonl", 13)
    assert "just told me" not in said and "Nothing comes to mind about the rating" in said, said
    env, actions = played("crosstask-6612-train.jsonl", 19)
    shifts = [e for e in step_kept(env, actions[19])[4]["noise"] if e["kind"] == "goal_shift"]
    assert shifts and all(e["detail"]["recoverable"] for e in shifts), shifts


def test_a_come_back_says_plainly_which_needs_it_gives_up() -> None:
    """The needs a come-back gives up in the user's own words ("... though it no longer needs to
    have a gym or be of the hotel type, and is open ..."); it said "except "gym" and its type
    being hotel and is open", which four playtesters found hard to read (seed 6754, turn 26)."""
    env, _actions, said = reply_to("crosstask-6754-train.jsonl", 25)
    said = env.step(REPORT)[4]["messages"][-1]["content"]  # told the last request is done
    assert ("still has everything else I asked for, though it no longer needs to have a gym or be of the hotel "
            "type, and is open at the same time") in said, said


def test_a_place_said_to_lack_a_need_beside_the_proposal_costs_no_patience() -> None:
    """"Little Lantern ... It is the only Harbor bakery cafe with both pet friendly and wifi
    (Birch Spoon has no wifi). Shall I book it?" proposes Little Lantern (the user judged Birch
    Spoon and warned it was losing patience; a playtest, seed 6766, turn 10)."""
    _env, _actions, said = reply_to("crosstask-6766-train.jsonl", 9)
    assert "Little Lantern sounds good" in said and "patience" not in said, said


def test_a_lettered_list_asked_for_is_answered_item_by_item() -> None:
    """"tell me what you want on:" over "A) cuisine" ... "E) must-have amenities (...)": the user
    states every need it has of them (it gave the cuisine alone, and never the wheelchair access
    a later come-back held the agent to; a playtest, seed 6800, turn 9)."""
    _env, _actions, said = reply_to("crosstask-6800-train.jsonl", 8)
    assert "thai" in said and "Riverside" in said and "kids menu" in said and "wheelchair access" in said, said


def test_a_time_restated_beside_the_one_it_replaces_is_heard_as_the_new_one() -> None:
    """"Just to confirm: you now want Monday evening, not Monday morning." after the user moved
    the booking to Monday evening: the user hears the evening (it answered "Not quite: I need it
    on Monday evening", as if the morning were restated; a playtest, seed 6829, turn 10)."""
    _env, _actions, said = reply_to("crosstask-6829-test.jsonl", 9)
    assert "Grid Exchange 8 sounds great" in said and "Not quite" not in said, said


def test_the_rule_for_cancelling_names_what_the_user_described() -> None:
    """"... should i cancel it, or is Atlas Collective at 55 ok after all?" beside a come-back for a
    late need: the user's rule names the needs it holds to, the budget an earlier come-back set
    among them (it said "Cancel it only if no place fits what I described", and the budget had
    two readings; a playtest, seed 6859, turn 25)."""
    _env, _actions, said = reply_to("crosstask-6859-test.jsonl", 24)
    assert said.startswith("Cancel it only if no place fits what I described") and "at most 15 EUR per day" in said, said


def test_a_change_of_mind_on_seeing_a_write_is_said_at_once() -> None:
    """Filing the incident (turn 16) met the ops request as the user's shifted goal (no rollback)
    had it: the user's change of mind was held with its thanks for the assistant's next word, so
    the rollback made in the next turn went against a goal it never heard (a playtest, seed 7029,
    medium noise). The change is said in the step of the write; the thanks still waits."""
    env, actions = played("crosstask-7029-test.jsonl", 15)
    said = [m["content"] for m in step_kept(env, actions[15])[4]["messages"] if m["role"] == "user"]
    assert said and "don't roll anything back" in said[0] and "Thank" not in said[0], said


def test_a_list_of_examples_trailing_off_asks_every_need_it_names() -> None:
    # "... the setting (rooftop, ballroom, garden...), the area, your budget, a minimum rating, or
    # amenities ...?": the user answered all but the setting, read as cut off by the ellipsis
    # (CrossTask 7166 T1).
    _env, _actions, said = reply_to("crosstask-7166-test.jsonl", 0)
    assert "warehouse" in said and "Industrial Park" in said and "900" in said and "stage" in said


def test_a_place_ruled_out_after_its_id_in_a_bracket_is_no_second_proposal() -> None:
    """"- Ash Yard 4 (stay_055), 140 EUR: ok - fits all needs ... - Juniper Yard (stay_007), 60
    EUR, 4.4: out - no free parking ... Plan: book Ash Yard 4 for Tuesday afternoon. OK to go
    ahead?": what is said after the id is said of the place the name before it names (it said
    "You've named more than one place"; a playtest, seed 8740, turn 11)."""
    env, actions = played("crosstask-8740-train.jsonl", 10)
    reply = env.step(actions[10])[0]
    assert "more than one place" not in reply and "Ash Yard 4 sounds good" in reply, reply


@pytest.mark.parametrize("ask", [
    "To find it I need the email address on your account; could you give it to me?",
    "I'll need the email address on your account; could you send it over?",
    "We require the email address on your account, so kindly provide it.",
])
def test_a_value_asked_as_a_need_beside_a_stated_assumption_is_answered(ask: str) -> None:
    """"To find it I need the email address on your account; could you give it to me? Assumption:
    by "return the cookbook" you mean a refund ...; please correct me if you would rather have
    something else." got "Yes, please go ahead." and no email (a playtest, seed 8790, turn 7): a
    need of a value is a question for it, whatever the assumption after it asks."""
    import json
    from pathlib import Path

    turns = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns" / "crosstask-8790-train.jsonl"
    actions = [a if isinstance(a, str) else json.dumps(a) for a in map(json.loads, turns.read_text().splitlines())]
    env = gym.make("AgentRL/CrossTask-v0", split="train", difficulty="hard")
    env.reset(seed=8790)
    for action in actions[:6]:  # turn 6 is the report that closes the booking (no REPORT before it)
        env.step(action)
    played_ask = "To find it I need the email address on your account; could you give it to me?"
    assert played_ask in actions[6]
    said = _said(env, actions[6].replace(played_ask, ask))
    assert "@" in said and "go ahead" not in said, said


def test_a_list_of_needs_asked_for_with_please_list_these_is_answered_in_full() -> None:
    """"To find the right cafe I need: area, preferred style, ..., and the day and time of day
    (morning, afternoon or evening) for the booking. Please list these." got "Not quite: I'm
    thinking Saturday, in the morning." (the times offered heard as one proposed) and nothing else
    (a playtest, seed 8837, medium noise, turn 1)."""
    import json
    from pathlib import Path

    turns = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns" / "crosstask-8837-train.jsonl"
    first = json.loads(turns.read_text().splitlines()[0])
    env = gym.make("AgentRL/CrossTask-v0", split="train", difficulty="medium", noise="medium")
    env.reset(seed=8837)
    said = env.step(first)[0]
    assert "Not quite" not in said and "Northgate" in said and "Saturday" in said, said


def test_the_sign_off_declines_an_offer_of_more_at_the_end_of_a_report() -> None:
    """"... filed INC-150 as sev3 (severity goes by payments' 4.6%). want me to roll search back
    to v1.16.7?" got "Perfect, that's all done. Thanks! That's everything for today.", the offer
    not answered (a playtest, seed 8858, medium noise, last turn)."""
    import json
    from pathlib import Path

    turns = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns" / "crosstask-8858-test.jsonl"
    actions = [a if isinstance(a, str) else json.dumps(a) for a in map(json.loads, turns.read_text().splitlines())]
    env = gym.make("AgentRL/CrossTask-v0", split="test", difficulty="medium", noise="medium")
    env.reset(seed=8858)
    for action in actions:
        obs, _, terminated, truncated, _ = env.step(action)
    assert terminated and obs.startswith("[user] No, thanks. "), obs


def test_an_offer_of_more_before_the_next_request_is_answered_by_that_request() -> None:
    """"No, thanks. Compass Commons 9 it is. Great, thanks a lot! One more thing: ..." said no to
    more and asked for more in one breath (a playtest, seed 8901, turn 8), and "Nothing more on
    that one, thanks. Great, that's done. Thank you! One more thing: ..." signed off twice
    (CrossTask 9439 T9): the next request answers the offer; the last sign-off keeps its "No,
    thanks." first."""
    import json
    from pathlib import Path

    turns = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns" / "crosstask-8901-test.jsonl"
    actions = [a if isinstance(a, str) else json.dumps(a) for a in map(json.loads, turns.read_text().splitlines())]
    env = gym.make("AgentRL/CrossTask-v0", split="test", difficulty="easy")
    env.reset(seed=8901)
    said = [env.step(action)[0] for action in actions]
    assert said[7].startswith("[user] Compass Commons 9 it is.") and "One more thing: " in said[7], said[7]
    assert not any("No, thanks." in s and "thing: " in s for s in said), said
    assert said[-1].startswith("[user] No, thanks. "), said[-1]


def test_a_formal_request_to_confirm_which_value_is_answered_with_it() -> None:
    """"... I should be most grateful if you would kindly confirm in which currency you would like
    the report totalled and the payout made (we hold company accounts in EUR, USD, GBP and CHF)."
    got "Yes, please go ahead." (a playtest, seed 8910, turn 29): the currencies named are options,
    and the sentence asks for one."""
    env, actions = played("crosstask-8910-train.jsonl", 28)
    said = _said(env, actions[28])
    assert "CHF" in said and "go ahead" not in said, said


def test_indirect_questions_after_to_know_a_little_more_are_each_answered() -> None:
    """"... it would help me to know a little more about what you have in mind, since the choice
    depends on it: which kind of plan you are after (...), whether there is a part of town you
    would prefer to be in, how much you would like to spend at most per day, whether a minimum
    rating matters to you, and whether there are any amenities you cannot do without. What would
    you like?" got the area alone (CrossTask playtest 9689 T1): "to know a little more" is a
    request, and a question word opening the list after the colon asks."""
    _env, actions, said = reply_to("crosstask-9689-test.jsonl", 0)
    assert "to know a little more" in actions[0]
    for answer in ("plan", "Tech Park", "price", "rating", "lockers"):
        assert answer in said, said
