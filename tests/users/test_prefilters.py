"""The cheap pre-tests in front of slow patterns read every text as the plain patterns do.

A pre-test skips a pattern only where the pattern could not change the text; each test here
compares the function with the plain pattern alone on texts built to hit every case, in both
cases and around the characters that case-insensitive matching folds beyond ASCII ("\u017f" is
"s", "\u0130" and "\u0131" are "i").
"""

from __future__ import annotations

import random
import re

import pytest

from agentgym.envs.tooluse import consent, done_said
from agentgym.users.understanding import words

#: Pieces that every form, abbreviation and markup of the patterns under test is made of.
_PIECES = ("e.g.", "E.G", "e.g", "i.e.", "I.e", "vs", "vs.", "VS.", "etc.", "Etc. Then", "incl.", "approx.", "esp.",
           "v\u017f.", "\u0130.e.", "\u0131.e", "jane.e.g@example.com", "3rd", "21st", "2nd", "4TH", "3 rd", "9 p.m.",
           "9:30 a.m.", "P.M.", "09:00Z", "9:00z", "$12.50", "US$ 5", "C$3", "ca$4", "\u20ac 7", "\u00a39", "$x",
           "**Store credit**", "# Plan", "| a | b |", "> quote", "`code`", "__x__", "Refund:", "the lamp", "2,450.00 USD",
           "\u00a0", "\t", "\x1c", "\u2003", "\n", "\n\n", " ", ".", "?", "!", "z", "m.", "th", "st")


def _texts(n: int = 3000) -> list[str]:
    rng = random.Random(20)  # a fixed corpus, not an episode's draw
    return ["".join(rng.choice(_PIECES) + rng.choice(("", " ", "  ")) for _ in range(rng.randint(1, 9)))
            for _ in range(n)] + list(_PIECES)


def test_without_abbreviation_stops_equals_its_pattern() -> None:
    for text in _texts():
        plain = words._ABBREVIATIONS.sub(words._joined, text) if "." in text else text
        assert words.without_abbreviation_stops(text) == plain, repr(text)


_SPACES = re.compile(r"\s+")


def _norm_plain(text: str) -> str:
    text = consent._MARKUP.sub(" ", text.lower())
    for _, pattern, plain in consent._FORMS:
        text = pattern.sub(plain, text)
    return _SPACES.sub(" ", text).strip()


def _parts_plain(message: str, anchors: tuple[str, ...]) -> list[str]:
    """`consent.parts` as its docstring reads, every line and sentence normalised afresh."""
    if not anchors:
        return [_norm_plain(message)]
    out: list[str] = []
    heading = ""
    for line in message.splitlines():
        if not line.strip():
            heading = ""
            continue
        text = _norm_plain(line)
        if not any(consent.has(text, a) for a in anchors) and consent._HEADING.match(line):
            heading = text
            continue
        for sentence in words.SENTENCE_BREAK.split(words.without_abbreviation_stops(line)):
            s = _norm_plain(sentence)
            if not s:
                continue
            if any(consent.has(s, a) for a in anchors) or not out:
                out.append(f"{heading} {s}".strip())
            else:
                out[-1] = f"{out[-1]} {s}"
    return out


def test_a_plan_s_normal_form_equals_every_form_applied() -> None:
    for text in _texts():
        assert consent._norm(text) == _norm_plain(text), repr(text)


@pytest.mark.parametrize("anchors", [(), ("lamp",), ("lamp", "store credit", "3")])
def test_a_plan_s_parts_equal_those_read_afresh(anchors: tuple[str, ...]) -> None:
    for text in _texts(1500):
        assert consent.parts(text, anchors) == _parts_plain(text, anchors), repr(text)


def test_str_split_splits_where_the_pattern_of_spaces_does() -> None:
    """`consent._norm` relies on it: `\\s` and `str.isspace` are one set of characters."""
    import sys

    assert all(bool(_SPACES.fullmatch(c)) == c.isspace() for c in map(chr, range(sys.maxunicode + 1)))


def _language(pattern: re.Pattern[str]) -> set[str]:
    """Every string a pattern of literals, alternatives, groups and optional parts matches
    (lower case; word boundaries match nothing)."""
    from re import _constants as c
    from re import _parser

    def strings(items: list) -> set[str]:
        out = {""}
        for op, av in items:
            if op is c.LITERAL:
                opts = {chr(av).lower()}
            elif op is c.AT:
                continue
            elif op is c.SUBPATTERN:
                opts = strings(av[-1].data)
            elif op is c.BRANCH:
                opts = set().union(*(strings(p.data) for p in av[1]))
            elif op is c.MAX_REPEAT and (av[0], av[1]) == (0, 1):
                opts = {""} | strings(av[2].data)
            else:
                raise AssertionError(f"not a pattern of literals: {op}")
            out = {a + b for a in out for b in opts}
        return out

    return strings(_parser.parse(pattern.pattern, pattern.flags).data)


def test_asks_yes_rules_out_only_texts_its_pattern_does_not_match() -> None:
    from agentgym.envs.tooluse import asking

    said = _language(asking.ASKS_YES)
    assert len(said) > 100 and "does that work" in said and "happy for me to go ahead" in said
    # Any text the pattern matches holds one of these as it is or in other letter cases.
    for phrase in said:
        assert any(w in phrase for w in asking._ASKS_YES_WORDS), phrase
    for text in [*_texts(), *(f"So, {w.upper()} then?" for w in said), "Is that \u212aK with you?", "Doe\u017f that work?"]:
        assert asking.asks_yes(text) == (asking.ASKS_YES.search(text) is not None
                                         or asking._ASKS_YES_PASSIVE.search(text) is not None), repr(text)
    # The passive forms ("Approval is requested ...") each hold one of their own words.
    for text in ("Approval is requested.", "It is requested that a yes be given.", "Please indicate whether I may go on.",
                 "CONSENT IS SOUGHT.", "Kindly advise if we can proceed.", "Your OK is awaited."):
        assert asking.asks_yes(text) and asking._may_hold(text, asking._ASKS_YES_PASSIVE_WORDS), text


def _messages() -> list[str]:
    """Every message a language model sent in the kept playtests, and each of its sentences."""
    import json
    from pathlib import Path

    from agentgym.eval.play_command import read_actions

    root = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests"
    if not (root / "episodes.json").exists():
        return []
    episodes = json.loads((root / "episodes.json").read_text("utf-8"))
    out = [a for e in episodes for a in read_actions(root / e["turns"])
           if isinstance(a, str) and not a.lstrip().startswith(("{", "["))]
    return list(dict.fromkeys([*out, *(s for m in out for line in m.splitlines()
                                       for s in words.SENTENCE_BREAK.split(line))]))


#: Pieces of the words the patterns of `asking` look for, in several letter cases and with the
#: characters case-insensitive matching folds beyond ASCII.
_ASKING = ("Please confirm", "CONFIRM", "confirmation", "let me know if", "Does that work", "your go-ahead", "Approve",
           "I'll come back", "we will then ask you for", "I'm going to put together a plan", "get back", "you", "YOUR",
           "ok", "Okay", "thumbs up", "green light", "sign-off", "could you verify", "just say the word", "tell me",
           "give me", "look over", "check the plan", "reply", "respond", "may I have the", "could I get your", "kindly "
           "provide", "I'll need", "we require", "remind me", "share which", "\u017fay", "o\u212a", "\u0130", "\u0131",
           "yes or no", "happy to proceed", "works for you", "A, B or C", "a or b", "Or just", "which would you prefer", ".", "?", "!", ",", "\n", " - ", "the plan", "refund",
           "I'll file it", "Will file:", "Plan:", "Proposed writes:", "next, I", "already", "I've", "is now",
           "done", "Triage done", "checks are complete", "is complete", "completed", "refunded", "all set",
           "taken care of", "rolled back", "before", "until", "not yet", "haven't", "nothing has been")


def _asking_texts(n: int = 4000) -> list[str]:
    rng = random.Random(27)  # a fixed corpus, not an episode's draw
    return ["".join(rng.choice(_ASKING) + rng.choice(("", " ", "  ")) for _ in range(rng.randint(1, 8)))
            for _ in range(n)]


def test_every_match_of_a_prefiltered_pattern_holds_one_of_its_words() -> None:
    from agentgym.envs.tooluse import asking

    pairs = [(asking._LATER_ASSENT, asking._LATER_ASSENT_WORDS), (asking._ASKS_ANSWER, asking._ANSWER_WORDS),
             (asking._ASSENT, asking._ASSENT_WORDS), (asking._YOU, ("you",)),
             (asking.VALUE_REQUEST, asking._VALUE_WORDS), (asking._NEEDS_VALUE, asking._VALUE_WORDS),
             (asking.ASKS_YES, asking._ASKS_YES_WORDS), (asking._INTENT, asking._INTENT_WORDS),
             (asking._CLAIM, asking._CLAIM_WORDS), (done_said._DONE_FORMS, done_said._DONE_WORDS),
             (done_said._LOOKED_INTO, done_said._LOOKED_INTO_WORDS), (done_said._UNDONE, done_said._UNDONE_WORDS),
             (asking._ABOUT_OTHERS, asking._OTHERS_WORDS)]
    matched = 0
    for text in [*_messages(), *_asking_texts()]:
        if not text.isascii():
            continue
        for pattern, held in pairs:
            for m in pattern.finditer(text):
                matched += 1
                assert any(w in m.group().lower() for w in held), (pattern.pattern[:40], m.group())
    assert matched > 1000


def test_the_asking_readers_answer_as_their_plain_patterns() -> None:
    from agentgym.envs.tooluse import asking as a

    def plain_assent_now(text: str) -> str:
        return a._LATER_ASSENT.sub(" ", a._TASK_LINE.sub(" ", text))

    def plain_sentences(message: str, marks: str) -> list[str]:
        return [s for line in message.splitlines() for s in re.split(r"(?<=[.?!])\s+", line.strip(marks))]

    for text in [*_messages()[::3], *_asking_texts()]:
        assert a._assent_now(text) == plain_assent_now(text), text
        assert a.asks_yes(text) == (a.ASKS_YES.search(plain_assent_now(text)) is not None
                                    or a._ASKS_YES_PASSIVE.search(plain_assent_now(text)) is not None), text
        assert a.asks_value(text) == (a.VALUE_REQUEST.search(text) is not None
                                      or a._NEEDS_VALUE.search(text) is not None), text
        assert a.asks_answer(text) == ("?" in text or any(
            a._ASKS_ANSWER.search(s) or a._YOU.search(s) and a._ASSENT.search(plain_assent_now(s))
            for s in plain_sentences(text, " -*#>"))), text
        assert a.says_done.__wrapped__(text) == (done_said._DONE_FORMS.search(
            done_said._UNDONE.sub(" ", done_said._LOOKED_INTO.sub(" ", text))) is not None), text
        assert a.plan_only(text) == (a._INTENT.search(text) is not None and (a._CLAIM.search(text) is None or not any(
            a.says_done(s) and a._INTENT.search(s) is None and (a._CLAIM.search(s) or a._BY_ME.search(s))
            for s in plain_sentences(text, " -*#>|")))), text
        asked = a.questions(text)
        assert a._about_others(text) == (a._ABOUT_OTHERS.search(text) is not None), text
        assert a.refers_back(text) == (a.REFERS_BACK.search(text) is not None), text
        assert a.asks_leave(text) == (a.ASKS_LEAVE.search(text) is not None), text
        assert a.offers_choice(text) == (a.OFFERS_CHOICE.search(text) is not None), text
        assert a.asks_facts_only.__wrapped__(text) == a.asks_facts_only(text), text
        assert a.asks_facts_only(text) == (a.ASKS_LEAVE.search(text) is None and a._INTENT.search(text) is None and (
            len(asked) >= 2 or bool(asked) and all(a._ABOUT_OTHERS.search(q) for q in asked))), text
        assert a.asks_go_ahead(text) == (a.asks_yes(text) or any(
            "?" in s and a._WORD.search(s) and not a.QUESTION_WORD.search(s) or a._ASKS_ANSWER.search(s)
            or a._YOU.search(s) and a._ASSENT.search(plain_assent_now(s)) for s in plain_sentences(text, " -*#>|"))), text


def test_sentences_break_where_the_plain_pattern_breaks_them() -> None:
    plain = re.compile(r"(?<=[.?!])\s+")
    for text in [*_messages(), *_texts(), *_asking_texts(1000), "a.\u00a0b", ".\n\t x", "?!  ", " . ", "x.y. z"]:
        assert words.SENTENCE_BREAK.split(text) == plain.split(text), repr(text)


def test_a_come_back_s_topics_are_read_as_the_plain_patterns_read_them() -> None:
    from agentgym.envs.crosstask import clarify as c

    def topics_of(sentence: str) -> set[str]:
        topics = {topic for topic, pattern in c._TOPICS if pattern.search(sentence)}
        outright = c._THEN_CANCEL.search(sentence) is not None
        if not c._INSTEAD.search(sentence) and (outright or c._REPLACE.search(sentence)):
            topics = (topics - {c.CANCEL}) | {c.REPLACE}
        elif outright:
            topics |= {c.REPLACE}
        return topics

    def plain(message: str) -> frozenset[str]:
        out = set()
        sentences = words.SENTENCE_BREAK.split(words.without_abbreviation_stops(message).lower())
        for k, sentence in enumerate(sentences):
            # asked by itself; a cancel, by a later sentence that asks and puts no topic
            if c._ASKS.search(sentence):
                out |= topics_of(sentence)
            elif any(c._ASKS.search(s) and not topics_of(s) for s in sentences[k + 1:]):
                out |= topics_of(sentence) & {c.CANCEL}
        return frozenset(out)

    rng = random.Random(28)  # a fixed corpus, not an episode's draw
    pieces = ("Should I", "cancel", "Cancel it instead?", "or just cancel", "keep it as it is", "leave the booking",
              "stick with", "do your other needs still apply?", "everything else", "the rest of your wishes",
              "once the new one is booked, then cancel the old one", "let me know", "?", ".", "Which do you", "and",
              "1. Cancel the booking at X (B2).", "Plan: cancel B2.", "Cancel B2 and book X.", "Yes?", "OK?",
              "Do you still want it?", "Keep it.")
    texts = [*_messages()[::2], *("".join(rng.choice(pieces) + " " for _ in range(rng.randint(1, 8))) for _ in range(3000))]
    for text in texts:
        assert c.asked(text) == plain(text), text
    for text in texts:  # every match, in lower case, holds one of its pattern's words
        low = text.lower()
        for topic, pattern in c._TOPICS:
            for m in pattern.finditer(low):
                assert any(w in m.group() for w in c._TOPIC_WORDS[topic]), m.group()
        for pattern in (c._REPLACE, c._THEN_CANCEL, c._INSTEAD):
            for m in pattern.finditer(low):
                assert "cancel" in m.group(), m.group()


def test_the_statements_checked_for_findings_are_those_of_every_line_split() -> None:
    from agentgym.envs.tooluse import findings as f

    def plain(message: str) -> list[str]:  # every line split, as the docstring reads
        out: list[str] = []
        before = ""
        for line in message.splitlines():
            for s in f._sentences(line):
                if "?" in s:
                    if f._TAG.fullmatch(s) or f.asks_if_right(s) and len(s) < 40:
                        out += [before] if before else []
                    elif f._TAG_END.search(s) or not f.QUESTION_WORD.search(s) and f._FACT_QUESTION.match(s):
                        out.append(s)
                before = s
        return out

    texts = [*_messages(), *_asking_texts(), "Cart fails on its own.\n\nCorrect?", "Shipping calls ledger.\n- Right?",
             "It is free at 9.\n---\nCorrect?"]
    checked = 0
    for text in texts:
        assert f._checked_statements(text) == plain(text), text
        checked += bool(plain(text))
        assert f._findings_asked("ops", text) == f._findings_asked_uncached("ops", text), text
    assert checked > 100


def test_a_folded_search_answers_as_its_case_insensitive_pattern() -> None:
    from agentgym.envs.tooluse import asking as a
    from agentgym.envs.tooluse.prefilter import Folded

    texts = [*_messages()[::10], *_asking_texts(1500), *_texts(500), "\u017fay the word", "o\u212a to proceed", "I\u0307",
             "\u0130F YOU PREFER", "sa\u0131d"]
    patterns = [p for p in vars(a).values() if isinstance(p, re.Pattern) and p.flags & re.I and p is not a.OFFERS_CHOICE
                and p is not a._LABEL]
    assert len(patterns) > 20
    hits = 0
    for pattern in patterns:
        folded = Folded(pattern)
        for text in texts:
            plain = pattern.search(text) is not None
            assert folded.search(text) == plain, (pattern.pattern[:40], text)
            hits += plain
    assert hits > 1000


@pytest.mark.parametrize("pattern", [re.compile("yes"), re.compile("Yes", re.I), re.compile("(?-i:A)|b", re.I),
                                     re.compile("[A-Z]x", re.I), re.compile("(?i)yes")])
def test_a_folded_search_refuses_a_pattern_its_twin_would_read_otherwise(pattern: re.Pattern[str]) -> None:
    from agentgym.envs.tooluse.prefilter import Folded

    with pytest.raises(ValueError):
        Folded(pattern)


def test_a_folded_search_takes_escapes_that_are_capitals() -> None:
    from agentgym.envs.tooluse.prefilter import Folded

    folded = Folded(re.compile(r"\bok\S*\W+\d", re.I))
    assert folded.search("OK!! 5") and folded.search("Okay, 5") and not folded.search("OK five")


def test_a_line_that_asks_for_a_list_ends_in_a_colon() -> None:
    from agentgym.users import rule_based

    lines = [line for text in [*_messages(), *_texts(), *_asking_texts(1000)] for line in text.split("\n")]
    lines += ["Please tell me:\u2003", "Please tell me:\x1c", "Please tell me:\u00a0\t", "please share: x"]
    found = 0
    for line in lines:
        if rule_based._ASKS_LIST.search(line) is not None:
            found += 1
            assert line.rstrip().endswith(":"), repr(line)
    assert found > 20
