"""Which place a message proposes among those it names (`agentgym.envs.dialog.proposals`):
options it labels and then recommends by label (CrossTask 6943 T4: "A) X ... B) Y ...
Recommendation: B")."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.envs.dialog.aside import recommended_by_label
from agentgym.envs.dialog.proposals import proposal_of
from agentgym.envs.dialog.user import place_names, understanding


def _two_places() -> tuple[object, object, object]:
    env = gym.make("AgentRL/Dialog-v0", split="train", difficulty="easy")
    env.reset(seed=5)
    task = env.unwrapped.task
    a, b = task.world.places[:2]
    return task, a, b


def _proposed(template: str) -> tuple[object, object, object, str]:
    """What `template` (with {a} and {b} for two places' names) proposes as the booking user reads
    it, the two places and the message."""
    task, a, b = _two_places()
    message = template.format(a=a.name, b=b.name)
    reading = understanding(task.world.domain).read(message)
    return proposal_of(reading, place_names(task.world), message), a, b, message


@pytest.mark.parametrize("template, pick", [
    ("Options: A) {a}, 60 EUR, rated 3.5. B) {b}, 30 EUR, rated 3.4. Recommendation: B, which costs half as much. "
     "Which one shall I book?", "b"),
    ("Option 1: {a} (60 EUR)\nOption 2: {b} (30 EUR)\nI'd go with option 2. OK?", "b"),
    ("A) {a}\nB) {b}\nB is my pick.", "b"),
    ("1. {a}\n2. {b}\nI recommend 1 since it is rated higher.", "a"),
    ("(a) {a} (b) {b} My recommendation: (A).", "a"),
    # as played (a playtest, seed 8863, turn 4: "You've named more than one place. Which one would you
    # recommend?"): options labelled with a dash, and the other offered back to the user
    ("**Option A \u2014 {a}** (55 EUR)\n**Option B \u2014 {b}** (45 EUR)\n\n---\n\nI'd suggest **Option B** (cheaper). "
     "Shall I book it for Monday afternoon, or would you prefer Option A?", "b"),
    ("Option A - {a}\nOption B - {b}\nI'd suggest Option A. Shall I book it, or would you prefer Option B?", "a"),
    ("**Option 1** \u2013 {a}\n**Option 2** \u2013 {b}\nMy recommendation is option 2, unless you prefer option 1.", "b"),
])
def test_a_recommendation_by_label_proposes_the_place_of_that_label(template: str, pick: str) -> None:
    proposed, a, b, _message = _proposed(template)
    assert proposed is (a if pick == "a" else b)


@pytest.mark.parametrize("template", [
    "A) {a}\nB) {b}\nRecommendation: A cheaper place might open up later. Which would you like?",
    "A) {a}\nB) {b}\nWhich do you prefer?",
    "{a} or {b}? I'd go with a cheaper one.",
    "A) {a}\nB) {b}\nI recommend A or B, both fit.",
    "**Option A** \u2014 {a}\n**Option B** \u2014 {b}\nWould you prefer Option A or Option B?",
    "Option A \u2013 {a}\nOption B \u2013 {b}\nDo you have a preference: A or B?",
])
def test_no_label_recommended_proposes_nothing(template: str) -> None:
    task, a, b = _two_places()
    message = template.format(a=a.name, b=b.name)
    assert recommended_by_label(message, [a, b]) is None


def test_a_cue_at_a_line_end_recommends_no_label_on_the_next_line() -> None:
    # "my pick" ends its line: the "2." after it opens the next item (usercheck recommend/20).
    task, a, b = _two_places()
    message = f"1. {a.name} - my pick\n2. {b.name} - backup option"
    assert recommended_by_label(message, [a, b]) is None
    reading = understanding(task.world.domain).read(message)
    assert proposal_of(reading, place_names(task.world), message) is a


@pytest.mark.parametrize("template", [
    # as played (a playtest, seed 8793, turn 8: "You've named more than one place. Which one would
    # you recommend?"): a mention taken back, and a closing request without a question mark
    "I do apologise for having mentioned {a} before checking its availability. I have found that {b} is open "
    "on Saturday morning. I should be grateful if you would let me know whether you would like me to book it for you.",
    "Sorry for suggesting {a} earlier. {b} is free on Saturday morning. Shall I book it?",
    "My apologies for having mentioned {a}. {b} fits every need you gave. Please let me know whether I should book {b}.",
    "I found that {b} is open then, unlike the one I named before. Please let me know whether you would like me to "
    "book it.",
])
def test_a_mention_taken_back_or_a_closing_request_without_a_question_mark_leaves_one_proposal(template: str) -> None:
    proposed, _a, b, message = _proposed(template)
    assert proposed is b, message


def test_a_closing_statement_that_asks_nothing_proposes_no_place_of_several() -> None:
    assert _proposed("{a} and {b} are both open then. I will wait for your word.")[0] is None


@pytest.mark.parametrize("template", [
    # as played (a playtest, seed 8855, medium noise, turn 5: "You've named more than one place")
    "The one free then is {b}. {a} would have been cheaper and better rated, but it is fully booked then. "
    "Shall I book {b} for Tuesday afternoon, or would you like me to check {a} for another time of day instead?",
    "{b} is free then and {a} is not. Should I reserve {b}, or look at {a} on another day?",
    "Want me to go with {b}, or should I keep an eye on {a} in case it frees up?",
])
def test_a_closing_question_that_books_one_place_and_offers_another_errand_proposes_the_booked_one(template: str) -> None:
    proposed, _a, b, message = _proposed(template)
    assert proposed is b, message


@pytest.mark.parametrize("template", ["Should I book {a} or {b}?", "Both are free: shall I reserve {a} or {b}?"])
def test_a_closing_question_that_books_one_of_two_places_is_a_choice(template: str) -> None:
    proposed, _a, _b, message = _proposed(template)
    assert proposed is None, message


@pytest.mark.parametrize("template, pick", [
    # as played (CrossTask playtest 9044 T8: "Which one would you recommend?")
    ("There are two that fit: (a) {a}, 400 EUR, rated 3.4, or (b) {b}, 1600 EUR, rated 3.1. {a} is both cheaper "
     "and better rated, so it is the one I would suggest. Which would you like me to book?", "a"),
    ("I found {a} and {b}. {b} is cheaper, so I'd recommend it.", "b"),
    ("{a} or {b}: {a} is better rated, and that's my top pick.", "a"),
    # a recommendation taken back names no place: the other one is not proposed by it either
    ("I would not recommend {b}; {a} is the one I'd go with.", "a"),
])
def test_a_recommendation_of_it_proposes_the_place_named_before_and_a_negated_one_none(template: str,
                                                                                        pick: str) -> None:
    proposed, a, b, _message = _proposed(template)
    assert proposed is (a if pick == "a" else b)


def test_a_recommendation_taken_back_proposes_no_place() -> None:
    # Read as a recommendation of {a}, this proposed the place it advised against.
    proposed, _a, _b, _message = _proposed("I would not recommend {a}. {b} is also free then. Which would you like?")
    assert proposed is None
