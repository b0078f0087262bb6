"""The shared understanding engine (`agentgym.core.understanding`), on a small lexicon of its own.

Whole words only, inflections, contractions, longest phrase first, asking and non-asking
sentences, clauses that only state, exclusions and their scope, open questions, keyword lists,
the typo fallback, confirmations, places, the memo against the plain computation, strict
parsing, and bad input.
"""

from __future__ import annotations

import json
import random

import pytest

from agentgym.core import understanding as engine
from agentgym.core.understanding import Reading, compile_understanding, parse_lexicon, resolve_place, stem, tokens

LEXICON = parse_lexicon({
    "slots": {
        "area": ["area", "where", "part of town", "neighbourhood", "city"],
        "price": ["budget", "price", "how much", "max price", "spend"],
        "time": ["when", "time", "day", "what time"],
        "amenity": ["amenity", "facility", "must have", "need to have"],
        "food": ["cuisine", "food", "kind"],
    },
    "values": {"amenity": ["wifi", "pool"]},
    "open": ["anything else", "any other", "what else", "something more"],
    "statements": {"done": ["done", "finished", "taken care"]},
})
VALUES = {"area": ["Riverside", "Old Town"], "time": ["friday", "evening"], "food": ["italian"],
          "amenity": ["outdoor seating", "parking"]}
PLACES = ["Garden Apartments", "House of Luna", "stay_007"]
U = compile_understanding(LEXICON, VALUES, PLACES)


def read(text: str) -> Reading:
    return U.read(text)


# ------------------------------------------------------------------ words
def test_tokens_expand_contractions_and_keep_numbers_and_emails_whole() -> None:
    assert tokens("What's your budget? I'd say 4.5") == ["what", "is", "your", "budget", "?", "i", "would", "say", "4.5"]
    assert tokens("Don't — won't, can't") == ["do", "not", "-", "will", "not", ",", "can", "not"]
    assert "ana.lee7@example.com" in tokens("Is it ana.lee7@example.com?")
    assert tokens("must-have") == ["must", "have"]


def test_the_stemmer_meets_inflections_and_spares_listed_words() -> None:
    assert stem("prices") == stem("priced") == stem("pricing") == stem("price")
    assert stem("facilities") == stem("facility")
    assert stem("neighbourhoods") == stem("neighbourhood")
    assert stem("evening") == "evening" and stem("parking") == "parking" and stem("planning") == "planning"


@pytest.mark.parametrize(("text", "slot"), [
    ("Is the needle sharp?", None),  # "need" is not inside "needle"
    ("Do you like the seating?", None),  # "eat" is not inside "seating"
    ("Is somewhere quiet fine?", None),  # "where" is not inside "somewhere"
    ("Where would you like it?", "area"),
    ("What are your budgets?", "price"),
    ("Which cuisines?", "food"),
])
def test_only_whole_words_match(text: str, slot: str | None) -> None:
    assert read(text).asked == ((slot,) if slot else ())


def test_the_longest_phrase_wins() -> None:
    r = read("What's the max price?")
    assert r.asked == ("price",)
    assert read("How about Garden Apartments 5?").places == ("garden apartments 5",)
    names = {"garden apartments": "A", "garden apartments 5": "B"}
    assert resolve_place("garden apartments 5", names) == "B"
    assert resolve_place("garden apartments 5 ii", names) == "B"
    assert resolve_place("garden apartments", names) == "A"
    assert resolve_place("garden", names) is None


# ------------------------------------------------------------------ what asks
@pytest.mark.parametrize("text", [
    "What is your budget?", "what is your budget", "Do you have a budget in mind?", "Tell me your budget.",
    "I'd love to know your budget.", "Could you let me know your budget", "Mind sharing your budget?",
    "Share your budget, please.", "I'll need your budget.", "Budget, please.", "Your budget?",
    "Please provide your budget.", "I was wondering what your budget is.",
])
def test_a_request_in_any_form_asks(text: str) -> None:
    assert read(text).asked == ("price",), text


@pytest.mark.parametrize("text", [
    "I found cafes in Riverside.", "There are places under your budget.", "Let me check the prices.",
    "I searched the whole area.", "The time is up to you, I will look.",
])
def test_a_statement_asks_nothing(text: str) -> None:
    r = read(text)
    assert r.asked == () and not r.question, (text, r)


def test_a_statement_clause_inside_a_question_asks_nothing_it_names() -> None:
    assert read("I found cafes in Riverside, what is your budget?").asked == ("price",)


def test_compound_questions_ask_every_slot_in_mention_order() -> None:
    r = read("What's your budget, which part of town, and when would you like to go?")
    assert r.asked == ("price", "area", "time")


@pytest.mark.parametrize(("text", "asked", "excluded"), [
    ("No need to tell me the price yet — which area?", ("area",), {"price"}),
    ("Besides the price, which area?", ("area",), {"price"}),
    ("Other than the area, what else?", (), {"area"}),
    ("Apart from the budget, when?", ("time",), {"price"}),
    ("Not the price but the area?", ("area",), {"price"}),
    ("Except for the time, anything else?", (), {"time"}),
    ("The price is fine, which area?", ("area",), {"price"}),
    ("Let me know whether or not you need parking.", ("amenity",), set()),
])
def test_exclusions_set_slots_aside_up_to_their_scope(text: str, asked: tuple[str, ...], excluded: set[str]) -> None:
    r = read(text)
    assert r.asked == asked and set(r.excluded) == excluded, (text, r)


def test_a_value_asks_only_where_no_slot_word_does() -> None:
    assert read("Would Friday evening work?").asked == ("time",)
    assert read("Do you want Italian?").asked == ("food",)
    assert read("Which area would you like the Italian place in?").asked == ("area",)
    assert read("Do you need wifi?").asked == ("amenity",)  # a generic value word of the lexicon
    # A conjunction that opens a new question starts a new clause.
    assert read("Do you need wifi and what is your budget?").asked == ("amenity", "price")


def test_a_qualifying_slot_word_gives_way() -> None:
    assert read("What kind of budget do you have?").asked == ("price",)


def test_open_questions() -> None:
    for text in ("Anything else I should know?", "Any other requirements?", "Is there something more?"):
        r = read(text)
        assert r.open and not r.asked, text
    assert not read("Anything else about the budget?").open  # a slot named: the slot is asked
    assert read("Anything else about the budget?").asked == ("price",)


def test_confirmations() -> None:
    for text in ("Shall I book it?", "Do you want me to go ahead?", "Should I proceed?"):
        assert read(text).confirm, text
    assert not read("I will book it.").confirm


# ------------------------------------------------------------------ places
def test_places_are_proposed_unless_excluded_or_said_unsuitable() -> None:
    assert read("How about House of Luna?").places == ("house of luna",)
    assert read("Is stay_007 ok?").places == ("stay_007",)
    assert read("House of Luna is closed, but Garden Apartments is open.").places == ("garden apartments",)
    assert read("Instead of House of Luna, how about Garden Apartments?").places == ("garden apartments",)
    r = read("How about House of Luna on Friday evening?")
    assert r.places == ("house of luna",) and r.details == (("time", "friday"), ("time", "evening"))
    assert r.asked == ()  # the day and time belong to the proposal


# ------------------------------------------------------------------ keyword lists and typos
def test_a_list_of_keywords_is_not_a_question() -> None:
    r = read("area where city price budget spend cost when time day amenity facility food cuisine kind")
    assert r.salad and not r.asked
    # A terse compound question is still one.
    assert read("Budget, area and time?").asked == ("price", "area", "time")


def test_one_typo_is_forgiven_only_when_nothing_matched() -> None:
    r = read("What's your budegt?")
    assert r.asked == ("price",) and r.corrected
    r = read("What's your budget and your neighbourhod?")
    assert r.asked == ("price",) and not r.corrected  # an exact match: no repair
    assert not read("What's your zyxwvut?").asked


def test_statement_concepts_are_read_outside_questions_only() -> None:
    assert read("I've taken care of it, all done.").said == {"done"}
    assert read("Is it done?").said == frozenset()


def test_unplaceable_messages() -> None:
    assert not read("asdkj qwelkj zxcv").placed
    assert read("OK.").placed and not read("OK.").question
    assert read("How many people?").question and not read("How many people?").asked


# ------------------------------------------------------------------ the memo, bad input, data
def test_the_memo_equals_the_plain_reading() -> None:
    rng = random.Random(11)
    words = ["what", "is", "your", "budget", "area", "no", "need", "to", "tell", "me", "the", "price", "besides",
             "?", ",", ".", "when", "house", "of", "luna", "how", "about", "anything", "else", "budegt", "i", "found",
             "riverside", "shall", "book", "it", "not", "but", "—", "kind", "friday"]
    for _ in range(3000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 14)))
        assert U.read(text) == U.read_uncached(text) == U.read(text), text


def test_the_memo_is_bounded() -> None:
    u = compile_understanding(LEXICON, VALUES, PLACES)
    for k in range(engine.MEMO_SIZE + 10):
        u.read(f"what is your budget {k}")
    assert len(u._memo) <= engine.MEMO_SIZE


@pytest.mark.parametrize("text", ["", " ", "\ud800 budget?", "\x00" * 100, "?" * 10_000, "budget " * 20_000,
                                  "ÄÖÜ ß 你好 🙂 ?", "'''''", "- - -", "4.5.6.7?", "@@@.com?"])
def test_bad_input_never_raises(text: str) -> None:
    assert isinstance(U.read(text), Reading)


def test_lexicons_parse_strictly() -> None:
    raw = {"slots": {"a": ["x"]}, "values": {"a": ["z"]}, "open": ["y"], "statements": {}}
    parse_lexicon(raw)
    with pytest.raises(ValueError, match="unknown fields.*extra"):
        parse_lexicon({**raw, "extra": 1})
    with pytest.raises(ValueError, match="missing fields.*open"):
        parse_lexicon({k: v for k, v in raw.items() if k != "open"})
    with pytest.raises(ValueError, match="duplicate"):
        parse_lexicon({**raw, "slots": {"a": ["x", "x"]}})
    with pytest.raises(ValueError, match="non-empty strings"):
        parse_lexicon({**raw, "open": [""]})
    with pytest.raises(ValueError, match="unknown slots"):
        parse_lexicon({**raw, "values": {"b": ["z"]}})


def test_the_grammar_file_parses_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.loads(engine.resources.files("agentgym.core").joinpath("grammar.json").read_text("utf-8"))
    engine._grammar.cache_clear()
    try:
        monkeypatch.setattr(engine.json, "loads", lambda text: {**raw, "extra": []})
        with pytest.raises(ValueError, match="unknown fields.*extra"):
            engine._grammar()
    finally:
        monkeypatch.undo()
        engine._grammar.cache_clear()
    assert engine._grammar().phrases
