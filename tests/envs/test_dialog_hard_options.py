"""Dialog's hard tier: places a give-way question names as options (`agentgym.envs.dialog.options`,
`hard_user`), and a recommendation beside a place ruled out.

Places tied to the needs a question offers to give up are options, not proposals: none is judged
until the user says which need gives way; then the one tied to that need is the agent's proposal,
and the others are set aside (no "which one would you recommend?").
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest
from dialog_hard_seeds import single_seed

import agentgym  # noqa: F401  (registers the ids)
from agentgym.envs.dialog import hard_tier
from agentgym.envs.dialog.options import KEPT_MARK, option_ties
from agentgym.envs.dialog.tasks import Constraint, satisfying_places
from agentgym.envs.dialog.user import place_names, places_named, proposal_of, understanding
from agentgym.envs.dialog.wording import WHICH_ONE

DIALOG_ID = "AgentRL/Dialog-v0"
ASK_ALL = ("So I can find the right place: which category, which area, what's your budget, what minimum "
           "rating, any particular amenities, and which day and time of day?")
#: Give-way questions that tie a place to each need offered ({f}/{g}: the need given up and its
#: place; {o}/{h}: another need and its place), in several forms.
TIED = (
    "Nothing has all of that, sorry. Should {f} go, {g} works; should {o} go, {h} works. Which would you rather drop?",
    "No single place meets every need. Without {o}: {h}. Without {f}: {g}. Which of the two matters least?",
    "I couldn't find one place with everything. Which can give way: {o} (then {h}) or {f} (then {g})?",
    "Nothing ticks every box. {h} (if you drop {o}) or {g} (if you drop {f}): which need can you let go?",
    "There's no exact match. Options are giving up {f}, and {g} fits; or giving up {o}, and {h} fits. Which one can give?",
    # A table of trade-offs, a row a need (a playtest, seed 6072, turn 5).
    "No single place has all of that.\n\n| If you relax... | Best place |\n|---|---|\n| {o} | {h} |\n| {f} | {g} |\n\n"
    "Which one matters least to you?",
    # Each option said by the need it keeps (a playtest, Dialog 9248 T8: the place that keeps the
    # need given up was taken for the proposal, turned down and charged).
    "Nothing has all of that. If {o} matters most, {g}; if {f} matters most, {h}. Which can give way?",
    "No place has everything. If {f} is essential, I would go with {h}; if {o} is the priority, {g}. "
    "Which of the two needs can give way?",
)


def _words(c: Constraint, task: Any) -> str:
    """How a message names need `c`."""
    if c.kind == "amenity":
        return f"the {c.value}"
    if c.kind == "category":
        return f"the {task.world.domain.category_label}"
    return {"area": "the area", "price": "the budget", "rating": "the rating", "time": "the time"}[c.kind]


def _user_text(info: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in info["messages"] if m["role"] == "user")


def _asked(split: str, seed: int) -> tuple[gym.Env, Any]:
    env = gym.make(DIALOG_ID, split=split, difficulty="hard")
    env.reset(seed=single_seed(split, seed))
    env.step(ASK_ALL)
    return env, env.unwrapped.task


def _first_gold(task: Any) -> list[str]:
    g = task.gold
    kept = [c for c in g.constraints if c.id not in (task.extra["flexible"], task.extra["after_booking"])]
    return satisfying_places(task.world, kept, g.day, g.slot)


@pytest.mark.parametrize("form", range(len(TIED)))
@pytest.mark.parametrize("split", ("train", "test"))
def test_the_option_tied_to_the_need_given_up_is_the_proposal_and_the_other_is_not_judged(split: str, form: int) -> None:
    for seed in (31, 32, 33):
        env, task = _asked(split, seed)
        flexible = next(c for c in task.gold.constraints if c.id == task.extra["flexible"])
        other = next(c for c in task.gold.constraints if c.reveal == "ask" and c.kind != "time"
                     and c.id != flexible.id)
        gold = _first_gold(task)
        g, h = task.world.by_id[gold[0]], next(p for p in task.world.places if p.id not in gold)
        message = TIED[form].format(f=_words(flexible, task), g=g.name, o=_words(other, task), h=h.name)
        _, _, terminated, _, info = env.step(message)
        text = info["messages"][-1]["content"]
        assert task.extra.get("relaxed") == flexible.id, (message, text)
        assert f"{g.name} sounds great. Please book it." in text, (message, text)
        assert h.name not in text and WHICH_ONE not in text and not terminated
        assert env.unwrapped.user._costs == 0


@pytest.mark.parametrize("form", range(len(TIED)))
def test_places_named_before_the_user_gives_way_are_options_never_judged(form: int) -> None:
    env = gym.make(DIALOG_ID, split="train", difficulty="hard")
    env.reset(seed=single_seed("train", 34))
    task = env.unwrapped.task
    # Nothing asked yet: the user states a need it held back, gives nothing up, judges nothing.
    flexible = next(c for c in task.gold.constraints if c.id == task.extra["flexible"])
    other = next(c for c in task.gold.constraints if c.kind != "time" and c.id != flexible.id)
    a, b = task.world.places[0], task.world.places[1]
    message = TIED[form].format(f=_words(flexible, task), g=a.name, o=_words(other, task), h=b.name)
    _, _, _, _, info = env.step(message)
    text = info["messages"][-1]["content"]
    assert not task.extra.get("relaxed") and "won't work" not in text and WHICH_ONE not in text, text
    assert env.unwrapped.user._costs == 0


@pytest.mark.parametrize("split", ("train", "test"))
def test_after_a_booking_the_place_asked_about_is_answered_and_the_option_left_is_taken_up(split: str) -> None:
    env, task = _asked(split, 35)
    for _ in range(3):
        env.step("I'm afraid no place meets all of your needs at once. Which need could give way?")
        if task.extra.get("relaxed"):
            break
    booked = task.world.by_id[_first_gold(task)[0]]
    g = task.gold
    env.step(json.dumps({"name": "book", "arguments": {"item_id": booked.id, "day": g.day, "slot": g.slot}}))
    after = next(c for c in task.gold.constraints if c.id == task.extra["after_booking"])
    later = next(c for c in task.gold.constraints if c.id == task.extra["flexible_after"])
    last = [c for c in task.gold.constraints if c.id != later.id]
    place = task.world.by_id[satisfying_places(task.world, last, g.day, g.slot)[0]]
    message = (f"{booked.name} has no {after.value}, so it no longer fits, and nothing has everything. You could "
               f"go without {_words(after, task)}, then {booked.name} stays; or without {_words(later, task)}, "
               f"then {place.name}. Which is it?")
    _, _, _, _, info = env.step(message)
    text = info["messages"][-1]["content"]
    assert task.extra["relaxed"] == later.id, text
    assert f"{booked.name} won't work now" in text and f"{place.name} sounds great. Please book it." in text
    assert WHICH_ONE not in text and env.unwrapped.user._costs == 0


def _three_places() -> list[Any]:
    """Three places of one tier world, for `option_ties` with `_needs_in`."""
    task = hard_tier.generate_task(single_seed("train", 36), {"split": "train", "difficulty": "hard"})
    return task.world.places[:3]


def _needs_in(text: str) -> set[str]:
    """The needs (wifi, area, parking) a piece of text names, as a user's reading would give them."""
    return {w for w in ("wifi", "area", "parking") if w in text}


def test_descriptions_tie_no_place() -> None:
    a, b, c = _three_places()
    message = (f"In the area you want, {a.name} has wifi but no parking, while {b.name} (parking, no wifi) "
               f"is across town, or {c.name}. Which can give way?")
    assert option_ties(message, [a, b, c], _needs_in) == {}
    message = f"{a.name} (drop the wifi) or {b.name} (drop the parking), or the area: {c.name}. Which?"
    assert option_ties(message, [a, b, c], _needs_in) == {a.id: "wifi", b.id: "parking", c.id: "area"}


def test_an_option_is_tied_to_the_need_it_drops_not_the_one_it_keeps() -> None:
    # One option a line, each labelled with what it keeps and drops, one after "e.g." (a playtest,
    # Dialog seed 6881, turn 7: the user judged the third as a proposal and warned of its patience).
    a, b, c = _three_places()
    message = (f"Closest options:\n- Keep parking, drop wifi: {a.name} (35 EUR, 4.7).\n- Keep wifi, drop parking: "
               f"{b.name} (25 EUR).\n- Keep both amenities, drop the area: e.g. {c.name} (40 EUR).\nWhich can give way?")
    assert option_ties(message, [a, b, c], _needs_in) == {a.id: "wifi", b.id: "parking", c.id: "area"}


def test_an_option_said_by_the_need_it_keeps_is_tied_to_keeping_it() -> None:
    a, b, c = _three_places()
    message = (f"If the wifi matters most, {a.name}; if the parking is essential, I'd go with {b.name}; "
               f"if the area isn't essential, {c.name}. Which can give way?")
    assert option_ties(message, [a, b, c], _needs_in) == {a.id: KEPT_MARK + "wifi", b.id: KEPT_MARK + "parking",
                                                          c.id: "area"}


def test_options_labelled_with_what_they_keep_are_no_proposals() -> None:
    """The user gives up the wifi and takes the option for it; the option for dropping the area it
    keeps is no proposal (a playtest, seed 6881, turn 7: "Summit Quarters won't work for me ...
    I'm starting to lose my patience")."""
    from playtest_turns import reply_to

    _env, _actions, said = reply_to("dialog-6881-test.jsonl", 6)
    assert "Forge Commons sounds great" in said and "patience" not in said, said


RULED_OUT = (
    "{a} was my first choice (lovely reviews), but it is fully booked that day. So I recommend {b}. Book it?",
    "I'd have gone with {a}, but it's not available then, so my suggestion is {b}.",
    "{a} would be ideal, however it is unavailable at that time; I'd go with {b}.",
    "Top pick would have been {a}, but sadly it's booked up. How about {b}?",
)


@pytest.mark.parametrize("form", RULED_OUT)
def test_a_place_said_to_be_unavailable_is_no_rival_to_the_one_recommended(form: str) -> None:
    task = hard_tier.generate_task(single_seed("test", 37), {"split": "test", "difficulty": "hard"})
    a, b = task.world.places[3], task.world.places[4]
    r = understanding(task.world.domain).read(form.format(a=a.name, b=b.name))
    names = place_names(task.world)
    assert [p.id for p in places_named(r, names)] == [b.id] and proposal_of(r, names) is b


@pytest.mark.parametrize("text", [
    "Just to be clear, nothing has had to give way yet; I have not searched.",
    "You will not have to compromise on anything if I ask first.",
    "I would rather ask about everything that matters to you than propose something that misses a need you had "
    "not mentioned yet."])
def test_a_statement_that_no_need_has_to_give_way_asks_for_none(text: str) -> None:
    from agentgym.users.understanding.compromise import read_compromise

    assert not read_compromise(text), text
    assert read_compromise("No place has all of your needs. Which one could give way?")


@pytest.mark.parametrize("invitation", [
    "If you are open on any of these, say so and I will leave it flexible.",
    "If any of them is flexible, just say which.",
    "If you're flexible on any of these, let us know.",
])
@pytest.mark.parametrize("split", ("train", "test"))
def test_an_invitation_to_say_which_needs_are_flexible_beside_questions_gets_them_answered(split: str,
                                                                                         invitation: str) -> None:
    """A request to say which needs are flexible, beside questions for the needs, asks what they
    are: the user answers every one, as without it (a playtest, Dialog 9248 T1: "... say so and I
    will leave it flexible." got a late need and one need, the area, rating and amenities unsaid)."""
    for seed in (31, 32):
        plain = gym.make(DIALOG_ID, split=split, difficulty="hard")
        plain.reset(seed=single_seed(split, seed))
        env = gym.make(DIALOG_ID, split=split, difficulty="hard")
        env.reset(seed=single_seed(split, seed))
        expected = plain.step(ASK_ALL)[4]["messages"][-1]["content"]
        said = env.step(f"{ASK_ALL} {invitation}")[4]["messages"][-1]["content"]
        assert said == expected and not env.unwrapped.task.extra.get("relaxed"), (said, expected)


@pytest.mark.parametrize("split", ("train", "test"))
def test_a_recommendation_tied_to_a_need_kept_leaves_the_give_way_answer_alone(split: str) -> None:
    """"Which matters least? If it were me, I'd let {o} go: {h} fits the rest. What would you
    prefer?": the user gives up its own flexible need, and the place tied to a need it keeps is
    an option it neither judges nor asks to have rephrased."""
    from agentgym.users.stock import REPHRASE

    for seed in (31, 32, 33):
        env, task = _asked(split, seed)
        flexible = next(c for c in task.gold.constraints if c.id == task.extra["flexible"])
        other = next(c for c in task.gold.constraints if c.reveal == "ask" and c.kind != "time"
                     and c.id != flexible.id)
        h = next(p for p in task.world.places if p.id not in _first_gold(task))
        message = (f"I'm afraid nothing has everything you asked for, so one need will have to give way. Which matters "
                   f"least to you? If it were me, I'd let {_words(other, task)} go: {h.name} fits the rest. If "
                   f"{_words(other, task)} is a must, I could look at other places instead. What would you prefer?")
        _, _, terminated, _, info = env.step(message)
        text = info["messages"][-1]["content"]
        assert task.extra.get("relaxed") == flexible.id, (message, text)
        assert REPHRASE not in text and h.name not in text and not terminated, (message, text)


@pytest.mark.parametrize("split", ("train", "test"))
def test_places_listed_by_what_they_have_beside_a_give_way_question_are_not_judged(split: str) -> None:
    """"Places with {f}: X. Places with {o}: Y. Which matters least?": X and Y are what there is,
    each keeping the need named before it; the user gives way and judges neither (it judged Y as
    the option of the need it gave up, and warned of its patience; a playtest, seed 6102, turn 4)."""
    from agentgym.envs.dialog.wording import WARNING
    from agentgym.users.stock import REPHRASE

    for seed in (31, 32, 33):
        env, task = _asked(split, seed)
        flexible = next(c for c in task.gold.constraints if c.id == task.extra["flexible"])
        other = next(c for c in task.gold.constraints if c.reveal == "ask" and c.kind != "time"
                     and c.id != flexible.id)
        places = [p for p in task.world.places if p.id not in _first_gold(task)][:3]
        message = (f"I've been through every place, and nothing has all of that.\n1. Places with {_words(flexible, task)}: "
                   f"{places[0].name}.\n2. Places with {_words(other, task)}: {places[1].name} and {places[2].name}.\n\n"
                   "Which one matters least to you?")
        _, _, terminated, _, info = env.step(message)
        text = info["messages"][-1]["content"]
        assert task.extra.get("relaxed") == flexible.id, (message, text)
        assert WARNING not in text and REPHRASE not in text and not any(p.name in text for p in places), text
        assert not terminated


def test_a_place_ruled_out_and_named_again_to_add_to_it_is_no_option() -> None:
    """"(Grand Court, Glass Arcade, Iron Pavilion 3) all lack a projector and a dance floor; Iron
    Pavilion 3 is also 2000 EUR." beside a give-way question: once the user gives way, Iron
    Pavilion 3 is no proposal (it was judged, and the user warned of its patience; a playtest,
    seed 6913, turn 13)."""
    from playtest_turns import reply_to

    _env, _actions, said = reply_to("dialog-6913-test.jsonl", 12)
    assert "Iron Pavilion 3" not in said and "patience" not in said, said


def test_options_said_with_what_they_keep_and_the_one_need_they_break_are_tied_to_it() -> None:
    """"X keeps French, Chinatown and both amenities but is rated only 3.1; Y keeps everything
    but is in Old Town": once the user gives up the rating, X is the option it took, not two
    places to choose between (a playtest, Dialog 7117, turn 8)."""
    from playtest_turns import reply_to

    a, b, c = _three_places()
    message = (f"For example: {a.name} keeps wifi and the area but has no parking; {b.name} keeps everything except "
               f"the wifi. Or, if the area can go, {c.name}. Which matters least?")
    assert option_ties(message, [a, b, c], _needs_in) == {a.id: "parking", b.id: "wifi", c.id: "area"}
    _env, _actions, said = reply_to("dialog-7117-train.jsonl", 7)
    assert "Copper Kitchen sounds great" in said and WHICH_ONE not in said, said
