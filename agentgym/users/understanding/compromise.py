"""Whether an assistant's message asks the user to compromise: that is, it asks which need could
give way ("Which matters least to you?", "Is the budget firm?", "Would you be open to another
area?") or says that no place meets every need ("None of the options tick every box",
"Unfortunately there's no exact match").

A user with priorities (the Dialog hard tier's) reads every message with it. Its words are data,
``compromise.json`` beside this module: phrases that ask by themselves (`asks`), phrases that ask
only in a question ("firm", "fixed": `asks_in_questions`), phrases that ask for what must stay
instead ("anything you can't do without?", "any deal-breakers?": `not_asks`), and, for a claim, a negation, a whole
and a verb of meeting within one clause, in any order ("I couldn't find anything that has all of
that"). Words are the engine's (`words.tokens`, stems); a word one edit from a cue of six letters
or more is read as the cue ("flexable", "nthing"), unless it is a real word listed beside them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import islice
from typing import Iterable

from agentgym.core.data import strict
from agentgym.users.understanding.grammar import _AUX, _WH, GAP_MAX, _grammar, _phrases
from agentgym.users.understanding.matching import Cuts, NearWords, Phrase, PhraseSet
from agentgym.users.understanding.words import (
    _DASHES,
    _TOKENS_MAIL,
    _TOKENS_NO_MAIL,
    _expand,
    _normalise,
    stem,
    tokens,
    without_abbreviation_stops,
)

__all__ = ["Compromise", "read_compromise", "offers_option"]

_KEYS = {"asks", "not_asks", "asks_in_questions", "requests", "negations", "not_negations", "wholes", "not_wholes",
         "meets", "clause_breaks", "real_words", "options"}
#: Where a message splits into sentences: a sentence end followed by space, or a line break.
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
#: Cues shorter than this are never reached by a typo (too many real words lie one edit away).
_TYPO_MIN = 6
#: Words whose repair and stem are remembered (each depends on the word alone); bounded, so a
#: stream of garbage cannot grow memory.
_WORD_MEMO = 8192


@dataclass(frozen=True, slots=True)
class Compromise:
    """The sentences of a message that ask the user to compromise, each with whether it is a
    question (a statement such as "since you can do without wifi, I'll book X" asks nothing)."""

    sentences: tuple[tuple[str, bool], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.sentences)

    @property
    def question(self) -> bool:
        """Whether one of them is a question (or a request: "let me know which can give")."""
        return any(q for _, q in self.sentences)

    @property
    def asked(self) -> str:
        """The questions among them, joined: what to read for the needs a question names."""
        return " ".join(s for s, q in self.sentences if q)


@dataclass(frozen=True)
class _Words:
    """Each list as stems (a phrase: one part, or two around a gap of at most `GAP_MAX` words),
    compiled once: the searched lists as `PhraseSet`s."""

    asks: PhraseSet
    asks_in_questions: PhraseSet
    requests: PhraseSet
    negations: PhraseSet
    #: Phrases that ask for what the user must have, not what could give ("anything you can't
    #: do without?", "any deal-breakers?"): taken out before the asks are looked for.
    not_asks: Cuts
    not_negations: Cuts
    wholes: PhraseSet
    not_wholes: Cuts
    meets: PhraseSet
    breaks: frozenset[str]
    #: Cue words a typo may stand for (`_TYPO_MIN` letters or more), and real words that are no typo.
    cues: NearWords
    real: frozenset[str]
    #: Words that offer a need to give up beside what it would bring ("if the area can go, X").
    options: PhraseSet


def _phrase(text: str) -> Phrase:
    return tuple(tuple(stem(t) for t in tokens(part)) for part in text.split("..."))


@lru_cache(maxsize=None)
def _words() -> _Words:
    """``compromise.json``, parsed strictly."""
    raw = json.loads(resources.files(__package__).joinpath("compromise.json").read_text("utf-8"))
    d = strict(raw, _KEYS, "compromise.json")
    lists = {k: _phrases(d[k], f"compromise.json.{k}") for k in _KEYS}
    for k, phrases in lists.items():
        for p in phrases:
            if p.count("...") > 1 or not all(part.strip() for part in p.split("...")):
                raise ValueError(f"compromise.json.{k}: {p!r} holds at most one gap, with words either side")
    cue_lists = ("asks", "asks_in_questions", "negations", "wholes", "meets")
    cues = sorted({w for k in cue_lists for p in lists[k] for w in tokens(p.replace("...", " "))
                   if len(w) >= _TYPO_MIN and w.isalpha()})
    stems = {k: tuple(_phrase(p) for p in lists[k]) for k in _KEYS - {"clause_breaks", "real_words"}}
    searched = {k: PhraseSet(v, GAP_MAX) for k, v in stems.items() if not k.startswith("not_")}
    return _Words(**searched, not_asks=Cuts(stems["not_asks"]), not_negations=Cuts(stems["not_negations"]),
                  not_wholes=Cuts(stems["not_wholes"]),
                  breaks=frozenset(lists["clause_breaks"]), cues=NearWords(cues),
                  real=frozenset(lists["real_words"]))


@lru_cache(maxsize=_WORD_MEMO)
def _repair(word: str) -> str:
    """`word`, or the cue it is a typo of."""
    w = _words()
    if len(word) < _TYPO_MIN - 1 or not word.isalpha() or word in w.real or word in w.cues:
        return word
    return w.cues.first(word) or word


@lru_cache(maxsize=_WORD_MEMO)
def _stem(word: str) -> str:
    return stem(word)


@lru_cache(maxsize=_WORD_MEMO)
def _token_words(raw: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A raw token's words as the reader takes them (`tokens` expands it, `_repair` repairs each),
    and the stems of those that break no clause: a sentence's words and stems are its tokens' in
    turn (each depends on the token alone)."""
    words = tuple(_repair(t) for t in _expand(_DASHES.get(raw, raw), _grammar().contractions))
    return words, tuple(_stem(t) for t in words if t not in _words().breaks)


def _at(stems: list[str], part: tuple[str, ...], i: int) -> bool:
    return tuple(stems[i:i + len(part)]) == part


def _clauses(words: list[str], w: _Words) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for t in words:
        if t in w.breaks:
            out.append([])
        else:
            out[-1].append(_stem(t))
    return [c for c in out if c]


def _without(clause: list[str], phrases: Iterable[Phrase]) -> list[str]:
    """`clause` with every occurrence of `phrases` (gapless ones) taken out (the plain code of
    `Cuts.without`, which the reader calls)."""
    # Taking words out never brings one in: a phrase whose first word the clause lacks now is
    # never found later, so it is passed over (most are: the lists are long, a clause short).
    present = set(clause)
    for p in phrases:
        part = p[0]
        head = part[0]
        if head not in present:
            continue
        i = 0
        while i <= len(clause) - len(part):
            if clause[i] == head and _at(clause, part, i):
                clause = clause[:i] + clause[i + len(part):]
            else:
                i += 1
    return clause


def _claims(clause: list[str], w: _Words) -> bool:
    """A clause that says no place meets every need: a negation (not "no problem"), a whole (not
    "all the details") and a verb of meeting."""
    if not w.negations.found(clause) or not w.wholes.found(clause) or not w.meets.found(clause):
        return False
    clause = w.not_wholes.without(w.not_negations.without(clause))
    return w.negations.found(clause) and w.wholes.found(clause)


#: An acknowledgement that opens a statement: "Got it: the stage can go" asks nothing, where
#: "Got a minute?" opens a question with its auxiliary.
_ACKNOWLEDGED = ("got", "it")


def _question(words: list[str], stems: list[str], w: _Words) -> bool:
    g = _grammar()
    alpha = list(islice((t for t in words if t.isalpha()), 2))  # the first two are all it reads
    first = "" if tuple(alpha[:2]) == _ACKNOWLEDGED else next(iter(alpha), "")
    return "?" in words or first in g.flags and bool(g.flags[first] & (_WH | _AUX)) or w.requests.found(stems)


@lru_cache(maxsize=4096)
def read_compromise(message: str) -> Compromise:
    """The sentences of `message` that ask the user to compromise (see the module docstring)."""
    w = _words()
    found: list[tuple[str, bool]] = []
    for sentence in _SENTENCE.split(without_abbreviation_stops(message.strip())):
        # As ``words = [_repair(t) for t in tokens(sentence)]`` and the stems of those that
        # break no clause, token by token.
        words: list[str] = []
        stems: list[str] = []
        text = _normalise(sentence)
        for raw in (_TOKENS_MAIL if "@" in text else _TOKENS_NO_MAIL).findall(text):
            more, more_stems = _token_words(raw)
            words += more
            stems += more_stems
        if not stems:
            continue
        question = _question(words, stems, w)
        asking = w.not_asks.without(stems)
        # A claim needs a negation in its clause: a sentence that holds none makes none.
        if w.asks.found(asking) or (question and w.asks_in_questions.found(asking)) or \
                (w.negations.may_occur(stems) and any(_claims(c, w) for c in _clauses(words, w))):
            found.append((sentence, question))
    return Compromise(tuple(found))


def offers_option(text: str) -> bool:
    """Whether `text` offers a need to give up beside what that would bring ("if the sea view
    can go", "without the stage", "the parking (then"), by the words of ``compromise.json``."""
    w = _words()
    return w.options.found([stem(t) for t in tokens(text)])
