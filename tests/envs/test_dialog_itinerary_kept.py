"""Bookings a re-plan keeps as they were (`agentgym.envs.dialog.itinerary_kept`), and the
itinerary's user filling them in from the last plan it heard."""

from __future__ import annotations

import gymnasium as gym
import pytest
from test_dialog_hard_consent import LAYOUTS, SPLITS, YES, _fresh, _rows, _seeds

from agentgym.envs.dialog.itinerary import LABELS, candidates
from agentgym.envs.dialog.itinerary_kept import ALL, kept_bookings

A, B, C, D = 0, 1, 2, 3
KEPT = {
    "A, B and D stay the same.": {A, B, D},
    "A, B, and D remain unchanged.": {A, B, D},
    "Bookings A and C stay as they are.": {A, C},
    "Booking B stays as planned; C changes.": {B},
    "Keep A, B and D as they are.": {A, B, D},
    "Keeping booking C.": {C},
    "No change to A or B": {A},  # "or" lists no booking kept: the first is said so
    "No changes to A, B and D.": {A, B, D},
    "- B: unchanged\n- C: Forge Lab": {B},
    "D - same as before": {D},
    "Same as before for A and D.": {A, D},
    "A & D will stay the same.": {A, D},
    "A/B can stay where they are.": {A, B},
    "Everything else stays the same.": ALL,
    "The rest remain as agreed.": ALL,
    "Keep everything else.": ALL,
    "No other changes.": ALL,
    "the other bookings stay the same": ALL,
    "the other four stay as in the plan above": ALL,  # Dialog playtest 9605 T10
    "All the others remain as agreed.": ALL,
    "B, C and E stay as in my plan above.": {B, C, 4},
    # a request that points back to the whole plan put before (Dialog playtest 9647 T9)
    "Good to go with the above - shall I book and submit that plan?": ALL,
    "Shall I book the plan I described?": ALL,
    "OK to submit the plan above?": ALL,
    "OK to submit it with the change I described?": ALL,  # Dialog playtest 9657 T12
}
NOT_KEPT = ("A place stays the same.", "A new place is unchanged in price.", "D is the same area as A.",
            "Keep an eye on the budget.", "a, b and d stay the same", "Plan A is the same as plan B in price.",
            "C is the same price as D.", "Booking C: Forge Lab (20 EUR)", "Nothing stays the same.",
            "The rating above 4.0 matters most.", "I described the rules to my team.")


@pytest.mark.parametrize("message", KEPT)
def test_bookings_said_to_stay_are_kept(message: str) -> None:
    assert kept_bookings(message) == KEPT[message], message


@pytest.mark.parametrize("message", NOT_KEPT)
def test_no_booking_is_kept_without_being_said_to_stay(message: str) -> None:
    assert kept_bookings(message) == frozenset(), message


def test_bad_input_never_raises() -> None:
    for message in ("", "A", "A,", "Booking", "keep", "stays the same", "\x00" * 50, "A, " * 2000 + "stay the same"):
        assert isinstance(kept_bookings(message), frozenset)


LEADS = ("{kept} stay the same.", "{kept} remain unchanged.", "Keep {kept} as they are.", "No changes to {kept}.",
         "Everything else stays the same.")


def _changed_plan(task, plan):
    """`plan` with its last booking given another place of its category, or None."""
    leg = task.gold.legs[-1]
    other = next((p for p in candidates(task.world, leg) if p.id not in plan), None)
    return None if other is None else (*plan[:-1], other.id)


def _other_last_places(split: str, n: int = 4):
    """Per seed of `split` whose gold's last booking has another place of its category: the seed,
    the gold's first accepted plan, that plan with the other place last, and the places' names."""
    for seed in _seeds(split, n):
        _env, task = _fresh(split, seed)
        plan = task.gold.accepted[0]
        new = _changed_plan(task, plan)
        if new is not None:
            yield seed, plan, new, {p.id: p.name for p in task.world.places}


def _agreed(split: str, seed: int, plan: tuple[str, ...]):
    """A fresh episode whose user said yes to `plan`, put as a list."""
    env, task = _fresh(split, seed)
    obs, *_ = env.step(LAYOUTS["list"](_rows(task, plan)) + "\nShall I submit this plan?")
    assert YES in obs, obs
    return env, task


@pytest.mark.parametrize("split", SPLITS)
def test_a_re_plan_that_keeps_bookings_gets_the_yes_to_the_whole_plan(split: str) -> None:
    # A person told "A, B and D stay the same" hears their places from the plan it last heard
    # (Dialog playtest 9336 T15 got "I did not hear one place for bookings B and D").
    checked = 0
    for seed, plan, new, names in _other_last_places(split):
        last = len(plan) - 1
        kept = LABELS[:last]
        kept_words = ", ".join(kept[:-1]) + f" and {kept[-1]}"
        for lead in LEADS:
            env, task = _agreed(split, seed, plan)
            message = (f"A change: booking {LABELS[last]} is now {names[new[-1]]}. {lead.format(kept=kept_words)} "
                       "Shall I submit this plan?")
            obs, *_ = env.step(message)
            heard = ", ".join(f"{label} {names[i]}" for label, i in zip(LABELS, new))
            assert f"works for me: {heard}." in obs and task.extra["plan"].agreed == new, (seed, lead, obs)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("split", SPLITS)
def test_kept_bookings_need_a_plan_heard_before(split: str) -> None:
    for seed in _seeds(split, 3):
        env = gym.make("AgentRL/Dialog-v0", split=split, difficulty="hard")
        env.reset(seed=seed)
        task = env.unwrapped.task
        plan = task.gold.accepted[0]
        names = {p.id: p.name for p in task.world.places}
        last = len(plan) - 1
        # Said beside no plan heard before, or a booking not said to stay: still open.
        obs, *_ = env.step(f"Booking {LABELS[last]} is {names[plan[-1]]}; the others stay the same. Shall I submit?")
        assert YES not in obs and task.extra["plan"].agreed is None, obs
        env, task = _fresh(split, seed)
        env.step(LAYOUTS["list"](_rows(task, plan)) + "\nShall I submit this plan?")
        obs, *_ = env.step(f"Booking {LABELS[last]} is {names[plan[-1]]}; A stays the same. Shall I submit?")
        if last > 1:
            assert YES not in obs and f"{LABELS[1]}" in obs, obs


ONE_BOOKING = ("Booking {label} is in. Next: may I book {name} ({id}) as booking {next}?",
               "Shall I book {name} for booking {next} now?", "Can I go ahead and book {name} as booking {next}?")


@pytest.mark.parametrize("split", SPLITS)
def test_a_booking_of_the_agreed_plan_asked_again_gets_the_yes_to_that_plan(split: str) -> None:
    # After a yes to the whole plan, "may I book X as booking B?" of the plan's own place is that
    # plan: a person does not ask to hear it all again (Dialog playtest 9602 T7 got "I did not
    # hear one place for bookings C and D"); a place other than the agreed one still needs a plan.
    checked = 0
    for seed, plan, new, names in _other_last_places(split):
        heard = ", ".join(f"{label} {names[i]}" for label, i in zip(LABELS, plan))
        for question in ONE_BOOKING:
            env, task = _agreed(split, seed, plan)
            message = question.format(label=LABELS[0], next=LABELS[1], name=names[plan[1]], id=plan[1])
            obs, *_ = env.step(message)
            assert f"works for me: {heard}." in obs and task.extra["plan"].agreed == plan, (seed, question, obs)
        env, task = _agreed(split, seed, plan)
        obs, *_ = env.step(f"Shall I book {names[new[-1]]} for booking {LABELS[len(plan) - 1]} now?")
        assert YES not in obs and task.extra["plan"].agreed == plan, (seed, obs)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("split", SPLITS)
def test_a_place_whose_booking_is_cancelled_by_its_id_is_no_second_choice(split: str) -> None:
    # "- D: Y (id), Wednesday evening - to book" then, on the next line, "To get there: cancel B4
    # (X, Wednesday evening) and book Y": X is set aside (Dialog playtest 9602 T14 got "I heard
    # more than one place for booking D").
    checked = 0
    for seed, plan, new, names in _other_last_places(split):
        lines = "\n".join(f"- {label}: {names[i]} ({i}) - to book" for label, i in zip(LABELS, plan))
        for cancel in ("cancel B4", "cancel booking B4", "cancelling B12"):
            env, task = _fresh(split, seed)
            message = (f"New plan (four bookings, within budget):\n{lines}\nTo get there I would make a change: "
                       f"{cancel} ({names[new[-1]]}, same slot), and book {names[plan[-1]]}.\n\n"
                       "Shall I make these changes and submit this plan?")
            obs, *_ = env.step(message)
            assert YES in obs and task.extra["plan"].agreed == plan, (seed, cancel, obs)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("split", SPLITS)
def test_a_request_that_points_back_to_a_whole_plan_put_without_a_question_gets_its_answer(split: str) -> None:
    # A plan put whole with no question, then "Good to go with the above - shall I book and
    # submit that plan?": the user answers that plan (Dialog playtest 9647 T9 got "I did not hear
    # one place for bookings A, B, C, D and E"); a task whose user changes its mind says so first.
    checked = 0
    for seed in _seeds(split, 4):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[0]
        env.step(LAYOUTS["list"](_rows(task, plan)))
        obs, *_ = env.step("Good to go with the above - shall I book and submit that plan?")
        assert "did not hear" not in obs, (seed, obs)
        if YES in obs:
            assert task.extra["plan"].agreed == plan, (seed, obs)
            checked += 1
        else:
            assert "changed my mind" in obs, (seed, obs)
    assert checked >= 1


@pytest.mark.parametrize("split", SPLITS)
def test_a_change_put_without_a_question_then_pointed_back_to_is_the_plan(split: str) -> None:
    # "Same as before, but booking E is now X. A, B, C and D stay as they were." with no question,
    # then "OK to submit it with the change I described?": the plan with the change (Dialog
    # playtest 9657 T12 got "I did not hear one place for bookings A, B, C, D and E"); "good to go
    # with the plan above?" after the yes gets it again (T7 got the form's "nothing to add").
    checked = 0
    for seed, plan, new, names in _other_last_places(split):
        env, task = _agreed(split, seed, plan)
        obs, *_ = env.step("Just so it's on record before I submit: good to go with the plan above?")
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)
        last = LABELS[len(plan) - 1]
        kept = ", ".join(LABELS[:len(plan) - 1])
        env.step(f"A change: booking {last} is now {names[new[-1]]}. {kept} stay as they were.")
        obs, *_ = env.step("Yes, the new plan keeps all of that. OK to submit it with the change I described?")
        heard = ", ".join(f"{label} {names[i]}" for label, i in zip(LABELS, new))
        assert f"works for me: {heard}." in obs and task.extra["plan"].agreed == new, (seed, obs)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("split", SPLITS)
def test_a_numbered_plan_by_label_is_the_plan_whatever_its_reasoning_names(split: str) -> None:
    # "Only three gardens have a stage (X, Y, Z) ..." above "1. A, rooftop, Wednesday evening: W ...":
    # the numbered lines give each booking its place (Dialog playtest 9664 T12 got "I heard more
    # than one place for bookings D and E").
    checked = 0
    for seed, plan, new, names in _other_last_places(split):
        env, task = _fresh(split, seed)
        legs = task.gold.legs
        lines = "\n".join(f"{k}. {label}, {leg.needs[0][1]}, {leg.day.capitalize()} {leg.slot}: {names[i]} ({i})."
                          for k, (label, leg, i) in enumerate(zip(LABELS, legs, plan), 1))
        message = (f"Only these fit booking {LABELS[len(plan) - 1]}: {names[new[-1]]} and {names[plan[-1]]}.\n"
                   f"{lines}\nShall I submit this plan?")
        obs, *_ = env.step(message)
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)
        checked += 1
    assert checked >= 3
