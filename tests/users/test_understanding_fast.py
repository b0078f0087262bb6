"""The engine's speed kernel (`agentgym.users.understanding._fast`) equals the plain reading.

`Understanding.read` reads through the kernel and `read_uncached` through the plain code (the
definition): on the check-users corpus (held-out phrasings too), on every message a language
model sent in the kept playtests and on random strings of the engine's own words and marks, with
every domain's engine of both families, the readings must be equal; so must the kernel's tokens
and the plain tokens, and each word's `scan` bits must say what it opens and marks.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentgym.eval.play_command import read_actions
from agentgym.usercheck.corpus import load_corpus, parse_lines
from agentgym.users.understanding import _fast, words
from agentgym.users.understanding.clauses import _JOINING
from agentgym.users.understanding.grammar import _BOUNDARY, _END, _NEG
from agentgym.users.understanding.words import _TOKEN, _normalise

ROOT = Path(__file__).resolve().parents[2]
PLAYTESTS = ROOT / "benchmarks" / "playtests"
_PIECES = ("What is your budget?", "Which area", "no need to tell me the price", "besides the area,", "I found",
           "Shall I book it?", "Garden Apartments 5 II", "anything else?", "e.g. parking, a pool", "etc. What",
           "jane.doe@example.com", "a/b", "4.5/5", "24/7", "morning / afternoon", " - ", "--", "\u2013", "\u2014",
           "* item", "\u2022 item", "x*y", "co-op", "4th", "4.5", "_x", "what's", "don't", "\u0663\u0664", "(a)",
           ";", ":", "\n", "\n- ", "...", "\u2026", "it's \u2019fine\u2019", "Could you tell me:", "| a | b |\n|--|--|",
           "may I ask", "budegt", "wich servce", "and what", "or which day", "not Monday but Friday", "plus")


def _engines() -> list:
    from agentgym.envs.dialog.domain import load_domains as dialog_domains
    from agentgym.envs.dialog.user import understanding as dialog_understanding
    from agentgym.envs.tooluse.domains import load_domains as tooluse_domains
    from agentgym.envs.tooluse.user_words import understanding as tooluse_understanding

    return [*(dialog_understanding(d) for d in dialog_domains().values()),
            *(tooluse_understanding(d) for d in tooluse_domains())]


def _random_texts(n: int) -> list[str]:
    rng = random.Random(26)  # a fixed corpus, not an episode's draw
    return ["".join(rng.choice(_PIECES) + rng.choice(("", " ", "  ")) for _ in range(rng.randint(1, 9)))
            for _ in range(n)]


def _corpus_texts() -> list[str]:
    held = ROOT / "tests" / "usercheck" / "data"
    phrasings = [*load_corpus(), *(p for f in sorted(held.glob("heldout_*.jsonl"))
                                   for p in parse_lines(f.read_text("utf-8").splitlines(), f.name))]
    return list(dict.fromkeys(p.message("hotel") for p in phrasings))


def _playtest_messages() -> list[str]:
    episodes = json.loads((PLAYTESTS / "episodes.json").read_text("utf-8"))
    out = [a for e in episodes for a in read_actions(PLAYTESTS / e["turns"])
           if isinstance(a, str) and not a.lstrip().startswith(("{", "["))]
    return list(dict.fromkeys(out))


def _assert_equal(engines: list, texts: list[str]) -> None:
    for u in engines:
        for text in texts:
            assert u._read(_fast.words(u, text), _fast.analyse, _fast.repair) == u.read_uncached(text), text


def test_the_kernel_reads_the_check_users_corpus_as_the_plain_code() -> None:
    _assert_equal(_engines(), [*_corpus_texts(), *_random_texts(1500)])


@pytest.mark.skipif(not (PLAYTESTS / "episodes.json").exists(), reason="no kept playtests in this checkout")
def test_the_kernel_reads_the_playtests_messages_as_the_plain_code() -> None:
    engines = _engines()
    messages = _playtest_messages()
    assert len(messages) > 1000
    # Every message with the two engines of its family's kind would take minutes: each engine
    # reads its share, and every message is read by one engine of each family.
    dialog, tooluse = engines[:-5], engines[-5:]
    for k, text in enumerate(messages):
        _assert_equal([dialog[k % len(dialog)], tooluse[k % len(tooluse)]], [text])


def test_the_kernels_tokens_are_the_plain_tokens() -> None:
    for text in [*_corpus_texts(), *_random_texts(3000)]:
        low = _normalise(text)
        pattern = words._TOKENS_MAIL if "@" in low else words._TOKENS_NO_MAIL
        assert pattern.findall(low) == _TOKEN.findall(low), text
        assert words._TOKENS_MAIL.findall(low) == _TOKEN.findall(low), text


def test_a_text_s_words_are_those_of_its_pieces() -> None:
    """`_fast.words` reads a text piece by piece, between whitespace of any kind, unless it holds
    a slash: the words are the plain tokens' all the same."""
    u = _engines()[0]
    odd = ["4 / 5", "a /b", "x/ 5", "a\u00a0-\u00a0b", "a\u2003*\u2003b", "- x -", "x -- y", "\u2022 a\n\u2022 b",
           "4.5km", "4.5 km", "jo@x.io / 3", "a\u2028b", "3rd/4th", "e.g. x", "it's \u2019ok\u2019"]
    texts = [*_corpus_texts(), *_random_texts(3000), *odd, *_playtest_messages()[::5]]
    for text in texts:
        plain = [w for raw in _TOKEN.findall(_normalise(text)) for w in u._word(raw)]
        assert _fast.words(u, text) == plain, text
        assert _fast.words(u, text) == plain, text  # the pieces kept


def test_each_word_s_scan_bits_say_what_it_opens_and_marks() -> None:
    u = _engines()[0]
    for text in [*_corpus_texts()[:300], *_random_texts(300)]:
        for w in _fast.words(u, text):
            marks = bool(w.flags & (_END | _BOUNDARY | _NEG)) or w.raw in _JOINING
            bits = {words.MARKS: marks, words.ONE: bool(w.gram[0]), words.LONGER: bool(w.gram[1]),
                    words.GAPS: bool(w.gaps), words.SLOT: w.single is not None or bool(w.multi)}
            assert w.scan == sum(bit for bit, on in bits.items() if on), w


def test_the_kernel_s_readings_are_made_field_by_field_as_the_dataclass_makes_them() -> None:
    from dataclasses import fields

    from agentgym.users.understanding.understood import Reading

    names = [f.name for f in fields(Reading)]
    assert names == ["asked", "excluded", "open", "question", "confirm", "places", "details", "values", "recommended",
                     "alternatives", "said", "salad", "placed", "corrected", "chatter"]
    rng = random.Random(31)
    for _ in range(200):
        values = [rng.choice(((), ("area",), True, False, frozenset({"x"}), (("area", "x"),))) for _ in names]
        made = _fast._reading(*values)
        assert made == Reading(*values) and hash(made) == hash(Reading(*values))
        assert [getattr(made, n) for n in names] == values


def test_the_kernel_repairs_as_the_plain_repair() -> None:
    """`_fast.repair` against `Understanding._repair` (they share the engine's memo of fixes, each
    entry a pure function of its word), on the corpus and on it with typos in every third text."""
    for u in _engines()[::4]:
        texts = [*_corpus_texts(), *(t.replace("e", "", 1).replace("a", "aa", 1) for t in _corpus_texts()[::3])]
        repaired = 0
        for text in texts:
            words_of = _fast.words(u, text)
            plain = u._repair(words_of)
            assert _fast.repair(u, words_of) == plain, text
            repaired += plain is not None
        assert repaired > 50
