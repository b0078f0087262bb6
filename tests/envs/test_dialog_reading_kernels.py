"""The Dialog users' quick readings of places in a message equal their plain definitions.

`options._spans` finds a place's name as `options._name_pattern` does; `aside._sections` skips
the section pattern only in a text none of whose headings it could match; `aside._clause_start`
finds the last clause start as the plain scan of `aside._CLAUSE_START` does. Checked on every
message a language model sent in the kept playtests, on every name and id of every domain's
places, and on random strings of names, marks and digits.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentgym.envs.dialog import aside, options
from agentgym.envs.dialog.domain import load_domains
from agentgym.envs.dialog.tasks import place_phrases
from agentgym.eval.play_command import read_actions

PLAYTESTS = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests"
_BITS = ("stone fork", "stone fork 2", "fork", "cafe_007", "cafe_0071", "é", "_", "-", " ", "  ", ".", "4.5", "1.",
         ".2", "(", ")", ":", ";", "!", "?", "\n", "#", "**", "x", "9", "\u0663", "ß", "stone", "forks")


def _random_texts(n: int) -> list[str]:
    rng = random.Random(26)  # a fixed corpus, not an episode's draw
    return ["".join(rng.choice(_BITS) for _ in range(rng.randint(0, 14))) for _ in range(n)]


def _messages() -> list[str]:
    if not (PLAYTESTS / "episodes.json").exists():
        return []
    episodes = json.loads((PLAYTESTS / "episodes.json").read_text("utf-8"))
    out = [a.lower() for e in episodes if e["env"] != "AgentRL/ToolUse-v0" for a in read_actions(PLAYTESTS / e["turns"])
           if isinstance(a, str) and not a.lstrip().startswith(("{", "["))]
    return list(dict.fromkeys(out))


def _plain_spans(text: str, key: str) -> list[tuple[int, int]]:
    return [m.span() for m in options._name_pattern(key).finditer(text)]


def test_place_names_are_found_where_the_pattern_finds_them() -> None:
    keys = sorted({k for d in load_domains().values() for k in place_phrases(d)})
    messages = _messages()
    for text in messages:
        for key in keys:
            if key in text:
                assert list(options._spans(text, key)) == _plain_spans(text, key), (key, text)
    for text in _random_texts(4000):
        for key in ("stone fork", "stone fork 2", "fork", "cafe_007", "forks", "é", "_", ".", "4.5", "", " "):
            assert list(options._spans(text, key)) == _plain_spans(text, key), (key, text)


@pytest.mark.parametrize("source", ["playtests", "random"])
def test_sections_and_clause_starts_equal_the_plain_scans(source: str) -> None:
    texts = _messages() if source == "playtests" else _random_texts(4000)
    for text in texts:
        if "#" not in text and ":" not in text and "**" not in text:
            assert aside._SECTION.search(text) is None, text
        for end in {0, len(text), *range(0, len(text) + 1, max(1, len(text) // 7)), *(
                k for k, ch in enumerate(text) if ch == "(")}:
            plain = max((m.end() for m in aside._CLAUSE_START.finditer(text, 0, end)), default=0)
            assert aside._clause_start(text, end) == plain, (end, text)


def _spaces(items: list) -> float:
    """The most whitespace characters a match of the parsed pattern `items` can hold (inf: no bound,
    or whitespace other than a literal)."""
    from re import _constants as c

    total = 0.0
    for op, av in items:
        if op is c.LITERAL:
            total += chr(av).isspace()
        elif op is c.IN:
            if any(o is c.NEGATE or (o is c.LITERAL and chr(a).isspace())
                   or (o is c.RANGE and any(chr(x).isspace() for x in range(a[0], a[1] + 1)))
                   or (o is c.CATEGORY and a not in (c.CATEGORY_WORD, c.CATEGORY_UNI_WORD, c.CATEGORY_DIGIT,
                                                     c.CATEGORY_UNI_DIGIT)) for o, a in av):
                return float("inf")
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            k = _spaces(av[2])
            total += k and (float("inf") if av[1] == c.MAXREPEAT else av[1] * k)
        elif op is c.BRANCH:
            total += max(_spaces(b) for b in av[1])
        elif op is c.SUBPATTERN:
            total += _spaces(av[-1])
        elif op not in (c.AT, c.ASSERT, c.ASSERT_NOT):
            return float("inf")
    return total


def test_a_lead_in_is_looked_for_among_the_last_words_only() -> None:
    from re import _parser

    source = aside._SET_ASIDE_BEFORE.pattern
    assert source.endswith(r")\s*$")
    assert _spaces(list(_parser.parse(source[:-len(r"\s*$")]))) <= aside._LEAD_SPACES
    rng = random.Random(30)
    leads = ("instead of", "rather than the", "someone else snapped up the", "apologies for having mentioned the",
             "no room left for the", "switched away from the", "over the better-rated", "not", "cancelled the")
    texts = [*_messages(), *_random_texts(2000),
             *(" ".join(rng.choice((*leads, "x", "the", "a", "\n", "\t", " ", "(", "-")) for _ in range(rng.randint(0, 12)))
               for _ in range(4000))]
    for text in texts:
        for end in range(0, len(text) + 1, max(1, len(text) // 9)):
            before = text[:end]
            assert aside.led_in(before) == (aside._SET_ASIDE_BEFORE.search(before) is not None), before


def test_the_itinerary_user_reads_requests_and_form_questions_as_its_plain_patterns() -> None:
    """`itinerary_user`: `_requests` as `_REQUEST.search`, and `answer` with every topic pattern
    tried only where its words are as `answer` trying each, on the playtests' messages (in lower
    case, as the user reads them) and random ones."""
    import re

    from agentgym.envs.dialog import itinerary_user as iu
    from agentgym.users.understanding.compromise import read_compromise

    def plain_answer(message: str, form: list[str], rules: list[str], distinct: bool) -> str:
        text = message.lower()
        said: list[str] = []
        labels = {x.upper() for m in iu._BOOKINGS.finditer(text)
                  for x in re.findall(rf"\b{iu._LABEL.lower()}\b", m.group(1))}
        about = [line for line, label in zip(form, iu.LABELS) if label in labels]
        if not about and iu._FORM.search(text):
            about = list(form)
        if about:
            said.append("My form says: " + " ".join(line[2:] for line in about))
        picked: list[str] = []
        if iu._TWICE.search(text):
            picked.append(rules[1])
        area = iu._AREA.search(text)
        if area and distinct:
            picked.append(rules[2])
        if iu._BUDGET.search(text):
            picked.append(rules[-2])
        if iu._PRIORITY.search(text):
            picked.append(rules[-1])
        if picked and iu._FORM.search(text):
            picked.insert(0, rules[0])
        if picked:
            said.append("The rules say: " + " ".join(picked))
        if area and not distinct:
            said.append(iu._NO_AREA_RULE)
        if read_compromise(message).question:
            said.insert(0, iu.FIRM)
        return " ".join(said) if said else iu.FORM_ANSWER

    rng = random.Random(29)  # a fixed corpus, not an episode's draw
    bits = ("booking a", "bookings b and c", "budget", "total", "caps", "rated", "ties", "area", "neighbourhood",
            "twice", "same place", "form", "needs", "what would you like", "once you confirm, i'll submit",
            "and i'll book them", "please confirm", "say the word", "ok?", "if you agree i will", ".", "?", ",")
    texts = [*_messages(), *("".join(rng.choice(bits) + " " for _ in range(rng.randint(1, 8))) for _ in range(3000))]
    form, rules = ["A: a desk", "B: a cafe", "C: a hotel"], ["1. one", "2. two", "3. three", "4. four", "5. five"]
    for text in texts:
        for sentence in iu._SENTENCES.split(text):
            assert iu._requests(sentence) == (iu._REQUEST.search(sentence) is not None), sentence
        for distinct in (True, False):
            assert iu.answer(text, form, rules, distinct) == plain_answer(text, form, rules, distinct), text
    for text in texts[::3]:  # every match holds one of its pattern's words
        for pattern, held in [*iu._TOPIC_WORDS.items(), (iu._WILL_ONCE, iu._WILL)]:
            for m in pattern.finditer(text):
                assert any(w in m.group() for w in held), (pattern.pattern[:30], m.group())
