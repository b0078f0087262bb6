"""What the step path shares per message text equals the plain computation.

The users' pure functions of a message (`spelled_out`, `says_done`, the consent rule's
normalisation and parts) are memoised: each must answer as its plain version does, when the memo
holds the text and when it does not, and `parts` must hand out a list of its own. The engine
splits a sentence into clauses at break marks found once per message (`_marks`): the clauses
equal those of the plain scan of each sentence, word by word.
"""

from __future__ import annotations

import random

from agentgym.envs.tooluse import asking, consent
from agentgym.users import rule_based
from agentgym.users.understanding import compile_understanding, grammar, parse_lexicon
from agentgym.users.understanding.clauses import _JOINING, _clauses, _first, _marks
from agentgym.users.understanding.words import _TOKEN, _normalise

_PIECES = ("I'll refund the watch (249.00 USD).", "Shall I go ahead?", "It's done.", "Nothing has been filed yet",
           "What are you after? Specifically: the area, your budget.", "kindly tell me:\n1. The email\n2. The order",
           "**Store credit**", "| lamp | 12.50 |", "Triage done.", "and what's your budget", "or which day",
           "but not the price", "I found two places, which one do you like?", "$12.50 on the 3rd at 9 p.m.",
           "the atlas", "the lamp", "e.g. parking", "\n", "\n\n", " ", ",", "; ", "-", "also when?", "plus, may I ask")


def _texts(n: int = 1500) -> list[str]:
    rng = random.Random(30)  # a fixed corpus, not an episode's draw
    return ["".join(rng.choice(_PIECES) + rng.choice(("", " ")) for _ in range(rng.randint(1, 8)))
            for _ in range(n)] + list(_PIECES)


def test_memoised_readers_answer_as_their_plain_versions() -> None:
    anchors = ("atlas", "lamp")
    for text in _texts():
        for _ in range(2):  # the first call fills the memo, the second reads it
            assert rule_based.spelled_out(text) == rule_based.spelled_out.__wrapped__(text)
            assert asking.says_done(text) == asking.says_done.__wrapped__(text)
            assert consent._norm(text) == consent._norm.__wrapped__(text)
            assert consent.parts(text, anchors) == list(consent._parts.__wrapped__(text, anchors))
            assert consent.parts(text, ()) == [consent._norm.__wrapped__(text)]


def test_parts_hands_out_a_list_of_its_own() -> None:
    first = consent.parts("Refund the lamp. Keep the atlas.", ["atlas", "lamp"])
    first.append("changed")
    assert consent.parts("Refund the lamp. Keep the atlas.", ("atlas", "lamp")) == ["refund the lamp.",
                                                                                   "keep the atlas."]


def _plain_clauses(words: list, s: int, e: int, grams: list) -> tuple[list[int], list[bool]]:
    """The plain scan: each sentence word by word, a joining word before a question word or an
    auxiliary of the sentence breaks it."""
    clause: list[int] = []
    statement: list[bool] = []
    c = s
    while c < e:
        d = c
        while d < e and not words[d].flags & grammar._BOUNDARY and not (
                words[d].raw in _JOINING and d + 1 < e and words[d + 1].flags & (grammar._WH | grammar._AUX)):
            d += 1
        first = _first(words, c, d)
        statement.append(first is not None and bool(words[first].flags & grammar._SUBJECT)
                         and not any(words[i].flags & grammar._WH for i in range(c, d))
                         and not any(c <= a < d and code == grammar._REQUEST for a, _, code in grams))
        clause += [len(statement) - 1] * (min(d + 1, e) - c)
        c = d + 1
    return clause, statement


def test_clauses_at_the_messages_marks_equal_the_plain_scan() -> None:
    engine = compile_understanding(parse_lexicon({"slots": {"price": ["budget"]}, "values": {}, "open": ["anything"],
                                                  "statements": {}}))
    for text in _texts():
        words = [w for raw in _TOKEN.findall(_normalise(text)) for w in engine._word(raw)]
        _, grams = engine._scan(words) if words else ([], [])
        breaks, negs = _marks(words)
        assert negs == [i for i, w in enumerate(words) if w.flags & grammar._NEG]
        ends = [i for i, w in enumerate(words) if w.flags & grammar._END] + [len(words)]
        s = 0
        for e in ends:
            if e > s:
                assert _clauses(words, s, e, grams, breaks) == _plain_clauses(words, s, e, grams), text
            s = e + 1


def _plain_repair(reader: object, words: list) -> list | None:
    """`Understanding._repair` as first written: every word's typo looked up afresh."""
    changed, out = False, list(words)
    for i, w in enumerate(words):
        fix = reader._fix(w)
        if fix is not None:
            out[i:i + 1] = [reader._word(fix)[0]]
            changed = True
    return out if changed else None


def test_repairs_kept_per_word_equal_the_plain_repair() -> None:
    from agentgym.envs.dialog.domain import load_domains
    from agentgym.envs.dialog.user import understanding as dialog_understanding
    from agentgym.envs.tooluse.user import understanding as tooluse_understanding

    typos = ("any budegt in mind?", "wich servce and what severty?", "what tiem works?", "whats teh emial?",
             "Which aera do you prefer?", "Shall I go ahaed with the refnd?", "what is your budgte and are?")
    texts = [*typos, *_texts(400)]
    readers = [tooluse_understanding("orders"), tooluse_understanding("finance"), dialog_understanding(load_domains()["cafes"])]
    repaired = 0
    for reader in readers:
        for text in texts:
            words = [w for raw in _TOKEN.findall(_normalise(text)) for w in reader._word(raw)]
            for _ in range(2):  # the first repair fills the memo, the second reads it
                got, plain = reader._repair(words), _plain_repair(reader, words)
                assert got == plain, text
            repaired += plain is not None
            assert reader.read(text) == reader.read_uncached(text)
    assert repaired >= 5
