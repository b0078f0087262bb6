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

from agentgym.envs.tooluse import consent
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
        assert asking.asks_yes(text) == (asking.ASKS_YES.search(text) is not None), repr(text)
