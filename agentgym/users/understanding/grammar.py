"""The engine's vocabulary: a family's lexicon, parsed strictly, and the English grammar every
family shares (``grammar.json`` beside this module), with the word and phrase classes it defines."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

from agentgym.core.data import strict

__all__ = ["Lexicon", "parse_lexicon", "GAP_MAX"]

# Token flags (a bit each): the single-word grammar classes.
_WH, _AUX, _FILLER, _IMPERATIVE, _SUBJECT, _BOUNDARY, _END, _NEG, _NEG_FILLER, _COMMON, _PLEASE = (
    1 << k for k in range(11))
# Phrase classes of the grammar layer.
_REQUEST, _EXCLUDE, _POST_EXCLUDE, _CONFIRM, _OPEN = "request", "exclude", "post_exclude", "confirm", "open"
_SMALL_TALK, _IDIOM, _RECOMMEND, _ALTERNATIVE = "small_talk", "idiom", "recommend", "alternative"
#: The most words a hint's gap spans ("what would you like me to book": four).
GAP_MAX = 5


@dataclass(frozen=True)
class Lexicon:
    """A family's vocabulary: per slot the words that ask about it ("budget"), the words that
    point at it without naming it (`hints`: "include" points at amenities, "what ... book" at the
    category), and the words that name one of its values in any domain ("wifi", "sushi"); the
    phrases of an open question, and per statement concept the phrases that make it (e.g. a claim
    the work is done).

    A hint may hold a gap, ``"what ... book"``: its two parts with one to `GAP_MAX` words between
    them, within one clause."""

    slots: Mapping[str, tuple[str, ...]]
    values: Mapping[str, tuple[str, ...]]
    open: tuple[str, ...]
    statements: Mapping[str, tuple[str, ...]]
    hints: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _phrases(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where}: expected a list of non-empty strings")
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: duplicate entries")
    return tuple(value)


def parse_lexicon(raw: Any, where: str = "lexicon.json") -> Lexicon:
    """A family lexicon from its JSON object, strictly (unknown or missing fields are errors;
    ``hints`` may be left out)."""
    d = strict(raw, {"slots", "values", "open", "statements", *(("hints",) if isinstance(raw, dict) and "hints" in raw
                                                                 else ())}, where)
    hints = d.get("hints", {})
    for key, value in (("slots", d["slots"]), ("values", d["values"]), ("statements", d["statements"]),
                       ("hints", hints)):
        if not isinstance(value, dict):
            raise ValueError(f"{where}.{key}: expected an object")
    for key in ("values", "hints"):
        unknown = set(d.get(key, {})) - set(d["slots"])
        if unknown:
            raise ValueError(f"{where}.{key}: {key} of unknown slots {sorted(unknown)}")
    for slot, phrases in hints.items():
        for p in _phrases(phrases, f"{where}.hints.{slot}"):
            parts = p.split("...")
            if len(parts) > 2 or not all(part.strip() for part in parts):
                raise ValueError(f"{where}.hints.{slot}: {p!r} holds at most one gap, with words either side")
    return Lexicon(
        slots={k: _phrases(v, f"{where}.slots.{k}") for k, v in d["slots"].items()},
        values={k: _phrases(v, f"{where}.values.{k}") for k, v in d["values"].items()},
        open=_phrases(d["open"], f"{where}.open"),
        statements={k: _phrases(v, f"{where}.statements.{k}") for k, v in d["statements"].items()},
        hints={k: _phrases(v, f"{where}.hints.{k}") for k, v in hints.items()},
    )


@dataclass(frozen=True)
class _Grammar:
    flags: dict[str, int]
    phrases: dict[str, tuple[str, ...]]
    unstemmed: frozenset[str]
    contractions: dict[str, str]


_GRAMMAR_FLAGS = {"question_words": _WH, "auxiliaries": _AUX, "fillers": _FILLER, "imperatives": _IMPERATIVE,
                  "statement_starts": _SUBJECT, "boundaries": _BOUNDARY, "sentence_ends": _END,
                  "narrow_negations": _NEG, "negation_fillers": _NEG_FILLER, "common_words": _COMMON}
_GRAMMAR_PHRASES = {"requests": _REQUEST, "exclusions": _EXCLUDE, "post_exclusions": _POST_EXCLUDE,
                    "confirmations": _CONFIRM, "small_talk": _SMALL_TALK, "idioms": _IDIOM,
                    "recommendations": _RECOMMEND, "alternatives": _ALTERNATIVE}
#: Word lists that only fill placeholders of phrases ("<periods>" in "how was your <periods>").
_GRAMMAR_WORDS = ("evaluatives", "periods")
_PLACEHOLDER = re.compile(r"^<([a-z_]+)>$")


def _fill(phrase: str, lists: Mapping[str, tuple[str, ...]], where: str) -> list[str]:
    """`phrase` with each ``<list>`` placeholder replaced by every word of that grammar list, in
    turn ("if you <imperatives>" -> "if you tell", "if you share", ...)."""
    out = [""]
    for part in phrase.split():
        m = _PLACEHOLDER.match(part)
        if m is None:
            options: tuple[str, ...] = (part,)
        elif m.group(1) in lists:
            options = lists[m.group(1)]
        else:
            raise ValueError(f"{where}: {phrase!r} names no word list {part}")
        out = [f"{head} {o}".strip() for head in out for o in options]
    return out


@lru_cache(maxsize=None)
def _grammar() -> _Grammar:
    """The shared English grammar, ``grammar.json`` beside this module, parsed strictly."""
    raw = json.loads(resources.files(__package__).joinpath("grammar.json").read_text("utf-8"))
    d = strict(raw, {*_GRAMMAR_FLAGS, *_GRAMMAR_PHRASES, *_GRAMMAR_WORDS, "unstemmed", "contractions"},
               "grammar.json")
    flags: dict[str, int] = {}
    lists: dict[str, tuple[str, ...]] = {}
    for key, bit in _GRAMMAR_FLAGS.items():
        lists[key] = _phrases(d[key], f"grammar.json.{key}")
        for w in lists[key]:
            flags[w] = flags.get(w, 0) | bit
    for key in _GRAMMAR_WORDS:
        lists[key] = _phrases(d[key], f"grammar.json.{key}")
    flags["please"] = flags.get("please", 0) | _PLEASE
    if not isinstance(d["contractions"], dict) or not all(isinstance(v, str) for v in d["contractions"].values()):
        raise ValueError("grammar.json.contractions: expected an object of strings")
    phrases = {code: tuple(dict.fromkeys(f for p in _phrases(d[key], f"grammar.json.{key}")
                                         for f in _fill(p, lists, f"grammar.json.{key}")))
               for key, code in _GRAMMAR_PHRASES.items()}
    return _Grammar(flags, phrases, frozenset(_phrases(d["unstemmed"], "grammar.json.unstemmed")),
                    dict(d["contractions"]))

