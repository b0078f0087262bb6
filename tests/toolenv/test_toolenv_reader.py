"""Tests for agentgym.toolenv.reader: the shared understanding engine over a lexicon made from the
details reads which detail a message asks about, by whole words, and the cues of an open
question, a confirmation, a claim of work done and a list of keywords."""

from __future__ import annotations

import pytest

from agentgym.toolenv.reader import reader_for

PHRASES = (("email", ("email", "e-mail", "address")), ("amount", ("amount", "how much")),
           ("order_id", ("order id", "order number")))
READER = reader_for(PHRASES)


@pytest.mark.parametrize("message, asked", [
    ("What is your email?", ("email",)),
    ("Could you tell me your e-mail address and how much to refund?", ("email", "amount")),
    ("Please share your EMAIL.", ("email",)),  # a request without a question mark
    ("Which amounts did you have in mind?", ("amount",)),  # an inflected form
    ("What's the order\n number?", ("order_id",)),  # words split by any whitespace
    ("Is the unaddressed parcel yours?", ()),  # "address" is not inside "unaddressed"
    ("What is your mailbox?", ()),  # nor "email" inside another word
    ("I found your email. What next?", ()),  # named in a statement beside the question: not asked
    ("Got it. And the amount?", ("amount",)),
    ("No need for your email, but how much should I refund?", ("amount",)),  # an exclusion
])
def test_a_detail_is_asked_only_by_its_whole_words_in_a_question(message: str, asked: tuple[str, ...]) -> None:
    r = READER.read(message)
    assert r.asked == asked
    assert r.question


def test_a_statement_asks_nothing_even_when_it_names_a_detail() -> None:
    r = READER.read("I have refunded the amount to your email.")
    assert not r.asked and not r.question and r.placed


@pytest.mark.parametrize("message", ["Done.", "All set, the refund is processed.", "I've completed it."])
def test_a_claim_of_work_done_is_said_outside_questions(message: str) -> None:
    r = READER.read(message)
    assert "done" in r.said and not r.question


def test_open_questions_confirmations_and_keyword_lists_are_recognised() -> None:
    assert READER.read("Is there anything else I should know?").open
    assert READER.read("Anything else about the amount?").asked == ("amount",)  # scoped by a detail: asks it
    r = READER.read("Shall I go ahead and refund it?")
    assert r.confirm and r.question and not r.asked
    assert READER.read("Should I proceed with 25 euros?").confirm
    assert READER.read("email amount email amount how much email address amount").salad
    assert not READER.read("qwzx vbnm").placed


def test_readers_are_compiled_once_per_set_of_details() -> None:
    assert reader_for(PHRASES) is READER
