"""The compiled matchers (`agentgym.users.understanding.matching`) against the plain code each
stands for, on the compromise reader's own word lists and on random sentences and words."""

from __future__ import annotations

import dataclasses
import json
import random
from importlib import resources
from pathlib import Path

import pytest

from agentgym.users.understanding import compromise
from agentgym.users.understanding.grammar import GAP_MAX
from agentgym.users.understanding.matching import NearWords, Phrase, PhraseSet
from agentgym.users.understanding.words import _one_edit, tokens


def _occurs(stems: list[str], phrase: Phrase, gap_max: int) -> bool:
    """The plain code: `phrase`'s first part at some position, its second part, if any, 0 to
    `gap_max` words after the first part's end."""
    head = phrase[0]
    for i in range(len(stems) - len(head) + 1):
        if tuple(stems[i:i + len(head)]) != head:
            continue
        if len(phrase) == 1:
            return True
        start = i + len(head)
        if any(tuple(stems[j:j + len(phrase[1])]) == phrase[1]
               for j in range(start, min(start + gap_max, len(stems)) + 1)):
            return True
    return False


def _sentences(rng: random.Random, vocab: list[str], n: int) -> list[list[str]]:
    return [[rng.choice(vocab) for _ in range(rng.randint(0, 14))] for _ in range(n)]


def test_phrase_set_equals_the_plain_search_on_the_compromise_lists() -> None:
    w = compromise._words()
    sets = [w.asks, w.asks_in_questions, w.requests, w.negations, w.wholes, w.meets, w.options]
    vocab = sorted({s for ps in sets for p in ps.phrases for part in p for s in part} | {"the", "a", "you", "x"})
    rng = random.Random(7)
    sentences = _sentences(rng, vocab, 3000)
    # Each phrase inside filler, with its gap at every width up to past the limit.
    for ps in sets:
        for p in ps.phrases:
            for gap in range(GAP_MAX + 2):
                tail = list(p[1]) if len(p) > 1 else []
                sentences.append(["x", *p[0], *(["the"] * gap), *tail, "x"])
    found = 0
    for stems in sentences:
        for ps in sets:
            plain = any(_occurs(stems, p, GAP_MAX) for p in ps.phrases)
            assert ps.found(stems) == plain, (stems, ps.phrases[:3])
            assert ps.may_occur(set(stems)) or not plain, (stems, ps.phrases[:3])
            found += plain
    assert found > 1000  # the sentences exercise both answers


def test_phrase_set_on_small_lists_with_gaps_and_empty_heads() -> None:
    phrases = [(("a", "b"),), (("c",), ("d", "e")), (("b",), ("a",)), (("e", "e"), ("c",))]
    rng = random.Random(11)
    for gap_max in (0, 1, 3):
        ps = PhraseSet(phrases, gap_max)
        for stems in _sentences(rng, ["a", "b", "c", "d", "e", "f"], 2000):
            assert ps.found(stems) == any(_occurs(stems, p, gap_max) for p in phrases), (stems, gap_max)
    assert PhraseSet([((),)], 2).found([]) and PhraseSet([((),)], 2).found(["a"])
    assert not PhraseSet([], 2).found(["a"])


def _edits(word: str, rng: random.Random) -> str:
    i = rng.randrange(len(word))
    op = rng.randrange(4)
    if op == 0:
        return word[:i] + word[i + 1:]
    if op == 1:
        return word[:i] + rng.choice("aeirstx") + word[i:]
    if op == 2:
        return word[:i] + rng.choice("aeirstx") + word[i + 1:]
    return word[:i] + word[i + 1:i + 2] + word[i] + word[i + 2:] if i + 1 < len(word) else word


def test_near_words_equals_the_first_listed_word_within_one_edit() -> None:
    cues = compromise._words().cues.words
    corpus = resources.files("agentgym.usercheck").joinpath("data", "dialog.jsonl").read_text("utf-8")
    vocab = sorted({t for line in corpus.splitlines() if line.strip() for t in tokens(json.loads(line)["text"])})
    rng = random.Random(3)
    words = [*cues, *vocab, *(_edits(rng.choice(cues), rng) for _ in range(3000)),
             *(_edits(_edits(rng.choice(cues), rng), rng) for _ in range(1000)), ""]
    near = NearWords(cues)
    hits = 0
    for word in words:
        plain = next((c for c in cues if _one_edit(word, c)), None)
        assert near.first(word) == plain, word
        hits += plain is not None
    assert hits > 3000
    # Listed words close to each other: the first in list order wins, as in the plain code.
    close = ("bend", "band", "bond", "bent", "bend")
    for word in ("bend", "bnd", "bund", "bendy", "ebnd"):
        assert NearWords(close).first(word) == next((c for c in close if _one_edit(word, c)), None)


class _PlainPhrases:
    """A `PhraseSet` done the plain way."""

    def __init__(self, ps: PhraseSet) -> None:
        self.phrases, self.gap_max = ps.phrases, ps.gap_max

    def found(self, stems: list[str]) -> bool:
        return any(_occurs(list(stems), p, self.gap_max) for p in self.phrases)

    def may_occur(self, stems: list[str]) -> bool:
        return True


class _PlainNear:
    """A `NearWords` done the plain way."""

    def __init__(self, near: NearWords) -> None:
        self.words = near.words

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def first(self, word: str) -> str | None:
        return next((c for c in self.words if _one_edit(word, c)), None)


def test_compromise_reads_the_same_as_with_plain_matchers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader as a whole, on the check-users corpus and the hard tier's phrasings, against
    the same reader with its phrase searches and typo repair done the plain way."""
    texts = [json.loads(line)["text"] for name in ("dialog.jsonl", "tooluse.jsonl", "negatives.jsonl")
             for line in resources.files("agentgym.usercheck").joinpath("data", name).read_text("utf-8").splitlines()
             if line.strip()]
    phrasings = json.loads((Path(__file__).parents[1] / "envs" / "give_way_phrasings.json").read_text("utf-8"))
    texts += [p["text"] for key in ("gives_way", "ordinary") for p in phrasings[key]]
    texts += [t.replace("e", "", 1) for t in texts[::3]]  # typos
    fast = [compromise.read_compromise(t) for t in texts]
    w = compromise._words()
    plain = dataclasses.replace(w, **{f.name: _PlainPhrases(getattr(w, f.name)) for f in dataclasses.fields(w)
                                      if isinstance(getattr(w, f.name), PhraseSet)}, cues=_PlainNear(w.cues))
    monkeypatch.setattr(compromise, "_words", lambda: plain)
    monkeypatch.setattr(compromise, "_repair", compromise._repair.__wrapped__)
    assert [compromise.read_compromise.__wrapped__(t) for t in texts] == fast
    assert sum(map(bool, fast)) > 100


def _plain_without(clause: list[str], phrases: tuple[Phrase, ...]) -> list[str]:
    """The plain code: each phrase's first part taken out wherever it stands, phrase by phrase."""
    for p in phrases:
        part, i = p[0], 0
        while i <= len(clause) - len(part):
            if tuple(clause[i:i + len(part)]) == part:
                clause = clause[:i] + clause[i + len(part):]
            else:
                i += 1
    return clause


def test_without_takes_out_what_the_plain_walk_takes_out() -> None:
    """`_without` passes over the phrases whose first word the clause lacks; it takes out what
    walking every phrase at every position takes out, the lists' own phrases inside filler too."""
    w = compromise._words()
    lists = [w.not_asks, w.not_negations, w.not_wholes]
    vocab = sorted({s for ps in lists for p in ps for part in p for s in part} | {"the", "a", "you", "x"})
    rng = random.Random(11)
    clauses = _sentences(rng, vocab, 3000)
    clauses += [["x", *p[0], *p[0], "the", *p[0]] for ps in lists for p in ps]
    taken = 0
    for clause in clauses:
        for phrases in lists:
            plain = _plain_without(list(clause), phrases)
            assert compromise._without(list(clause), phrases) == plain, (clause, phrases.phrases[:3])
            assert phrases.without(list(clause)) == plain, (clause, phrases.phrases[:3])
            taken += plain != clause
    assert taken > 100  # the clauses exercise both answers


def _plain_read(message: str) -> compromise.Compromise:
    """`read_compromise` as first written: each sentence's tokens repaired and stemmed afresh,
    the phrases taken out by the plain walk, every clause looked at."""
    c, w = compromise, compromise._words()

    def claims(clause: list[str]) -> bool:
        if not w.negations.found(clause) or not w.wholes.found(clause) or not w.meets.found(clause):
            return False
        clause = _plain_without(_plain_without(clause, tuple(w.not_negations)), tuple(w.not_wholes))
        return w.negations.found(clause) and w.wholes.found(clause)

    found = []
    for sentence in c._SENTENCE.split(c.without_abbreviation_stops(message.strip())):
        words = [c._repair.__wrapped__(t) for t in tokens(sentence)]
        stems = [c.stem(t) for t in words if t not in w.breaks]
        if not stems:
            continue
        question = c._question(words, stems, w)
        asking = _plain_without(stems, tuple(w.not_asks))
        if w.asks.found(asking) or (question and w.asks_in_questions.found(asking)) or \
                any(claims(cl) for cl in c._clauses(words, w)):
            found.append((sentence, question))
    return c.Compromise(tuple(found))


def test_compromise_reads_the_playtests_as_the_plain_reader() -> None:
    root = Path(__file__).parents[2] / "benchmarks" / "playtests"
    if not (root / "episodes.json").exists():
        pytest.skip("no kept playtests in this checkout")
    from agentgym.eval.play_command import read_actions

    episodes = json.loads((root / "episodes.json").read_text("utf-8"))
    messages = list(dict.fromkeys(a for e in episodes if e["env"] != "AgentRL/ToolUse-v0"
                                  for a in read_actions(root / e["turns"]) if isinstance(a, str)
                                  and not a.lstrip().startswith(("{", "["))))
    asked = 0
    for message in messages[::2]:
        got = compromise.read_compromise.__wrapped__(message)
        assert got == _plain_read(message), message
        asked += bool(got)
    assert asked > 100
