"""One language-understanding engine for every simulated user: what an assistant's message asks,
proposes, confirms or claims.

Rule-based and deterministic. A message is tokenised once (lower-cased words, numbers, e-mail
addresses, punctuation; contractions expanded, so "what's" reads as "what is"), every word is
reduced by a light stemmer (plurals and -ing/-ed forms, a final -e), and one pass over the tokens
finds, with dict look-ups only, two layers of phrases:

* the family's lexicon (``data/lexicon.json`` of each family, parsed strictly by `parse_lexicon`):
  per slot the words that ask about it ("budget", "how much", "part of town"), the words that
  only point at it (hints: "include" at the amenities, "what ... book" at the category, a gap of
  a few words allowed), the domain's values that name it ("Riverside", "Friday"), the names and
  ids of bookable places, the phrases of an open question ("anything else") and of statements the
  family reacts to ("done"). Where phrases overlap, the longest wins ("Garden Apartments 5" over
  "Garden Apartments", "max price" over "price"); matching is by whole words only, so "need" is
  not inside "needle", "eat" not inside "seating", "where" not inside "somewhere";
* English grammar shared by every family (``agentgym/core/grammar.json``): question words,
  auxiliaries that open a yes/no question, request phrases ("tell me", "I'd love to know",
  "mind sharing", "if you could share", "I meant"), imperatives ("share your budget"), exclusions
  ("no need to tell me", "besides", "other than", "not X but Y", "X is fine"), confirmations
  ("shall I book it?"), small talk ("how are you today?", "is it sunny where you are?", "have a
  good weekend") and idioms whose words name no slot ("for the time being", "so kind as to"). A
  grammar phrase may hold a placeholder, ``<periods>``, standing for each word of that list.

The message is then read sentence by sentence. A sentence asks when it ends with a question mark,
opens with a question word, an auxiliary or an imperative, holds a request phrase, ends with
"please" or is a short one with it. Within an asking sentence the slots named are asked, except
where an exclusion covers them (up to the next comma, dash, "but", "before" or question word), in
a clause that is a statement of the assistant's own ("I found cafes in Riverside, which one do
you like?" does not ask about the area) and in small talk. Within a clause a slot word outranks
a hint and a hint a value: "would Friday work?" asks the time, "which area would you like the
Italian place in?" only the area, "should the hotel include breakfast?" the amenities; an open
question sets aside the values of its clause ("how can I help you today?"), and a value after
"the", "this", "that" beside another slot's word is the thing in view ("should the hotel have
wifi?"). A sentence that asks nothing asks about no slot. A place named outside an exclusion and
not said to be closed or unsuitable is proposed. A message that is mostly slot words, naming
slots several times over, is a keyword list, not a question (`Reading.salad`). When an asking
message names no slot at all, or is a short compound question ("wich service and what
severty?"), one typo per longer word is forgiven (one edit: a letter dropped, added, changed or
two swapped; in a four-letter word only two swapped or a letter dropped from a longer slot word),
so the common path pays nothing for it. An open question that asks beyond a slot word ("anything
else about the order?") or is made of a hint ("any special requests?") stays open.

`Understanding.read` returns an immutable `Reading`; readings are memoised per text in a small
bounded table (the same text always reads the same), and `Understanding.read_uncached` is the
plain computation the memo must equal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Mapping

from agentgym.core.data import strict

__all__ = ["Lexicon", "Reading", "Understanding", "parse_lexicon", "compile_understanding", "resolve_place", "stem",
           "tokens"]

# Token flags (a bit each): the single-word grammar classes.
_WH, _AUX, _FILLER, _IMPERATIVE, _SUBJECT, _BOUNDARY, _END, _NEG, _NEG_FILLER, _COMMON, _PLEASE = (
    1 << k for k in range(11))
# Phrase classes of the grammar layer.
_REQUEST, _EXCLUDE, _POST_EXCLUDE, _CONFIRM, _OPEN = "request", "exclude", "post_exclude", "confirm", "open"
_SMALL_TALK, _IDIOM, _RECOMMEND, _ALTERNATIVE = "small_talk", "idiom", "recommend", "alternative"
#: Readings memoised per Understanding; the table is emptied when full (readings are immutable).
MEMO_SIZE = 4096
#: Texts longer than this are read without the memo (an agent rarely repeats a long message).
MEMO_MAX_CHARS = 2000
#: Distinct words remembered per Understanding; past it a word is analysed afresh each time, so a
#: stream of garbage cannot grow memory without bound.
WORD_MEMO_SIZE = 50_000
#: A message that is mostly slot words is a keyword list when it names its slots twice over on
#: average, or names this many slots: no question asks about so many things at once.
SALAD_SLOTS = 8
#: Typos are forgiven only in words at least this long (shorter ones are too easy to confuse).
TYPO_MIN_LEN = 5
#: Compound questions ("... and ...") of at most this many tokens that ask something are still
#: checked for a typo (one slot word misspelt); other messages only when they ask nothing.
TYPO_COMPOUND_WORDS = 10
#: The most words a hint's gap spans ("what would you like me to book": four).
GAP_MAX = 5

_TOKEN = re.compile(
    r"[a-z0-9_.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+"  # an e-mail address, whole
    r"|\d+(?:\.\d+)?(?![a-z_])"  # a number, decimals kept ("4.5" is not two sentences)
    r"|[a-z0-9_]+(?:'[a-z]+)*"  # a word, with its contraction ("what's")
    r"|[?!.;:,()]"
    r"|(?<!\S)-+(?!\S)|[\u2013\u2014]"  # a dash standing alone (not a hyphen inside a word)
)
_DASHES = {"\u2013": "-", "\u2014": "-"}
#: Prepositions after which a slot word only locates the one before it.
_LOCATING = frozenset({"on", "for", "in", "from", "with", "at", "under", "of"})
_DETERMINERS = frozenset({"the", "a", "an", "your", "this", "that", "my", "our"})
_LOCATING_OR_SUBJECT = _LOCATING | {"is", "are", "was", "were"}
_JOINING = frozenset({"and", "or", "also", "plus"})
#: Determiners that refer to a thing already in view ("at the hotel"), not to a kind of it.
_DEFINITE = frozenset({"the", "this", "that", "your", "my", "our"})
#: Determiners that point at the thing in view: "the hotel" beside another slot's word is the
#: place being discussed, not a question about its kind.
_REFERRING = frozenset({"the", "this", "that"})
#: Subject pronouns: an auxiliary before one opens a question ("may I ask"), whatever else it names.
_PRONOUNS = frozenset({"i", "we", "you", "he", "she", "it", "they"})


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
    """The shared English grammar, ``agentgym/core/grammar.json``, parsed strictly."""
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


# ------------------------------------------------------------------ words


def stem(word: str) -> str:
    """A light stem of a lower-cased word: plural and -ing/-ed endings and a final -e removed, so
    inflections meet ("prices", "priced", "pricing" -> "pric"; "facilities" -> "facility")."""
    return _stem(word, _grammar().unstemmed)


def _stem(w: str, keep: frozenset[str]) -> str:
    if len(w) <= 3 or w in keep or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("es") and (w[-3] in "sxz" or w[-4:-2] in ("ch", "sh")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w in keep:
        return w
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "aeiousl":
            w = w[:-1]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "aeiousl":
            w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


@lru_cache(maxsize=1 << 16)
def _phrase_stems(phrase: str) -> tuple[str, ...]:
    """The stems of a lexicon or grammar phrase (shared by every compile: the grammar's phrases
    are the same in each)."""
    keep = _grammar().unstemmed
    return tuple(_stem(t, keep) for t in tokens(phrase))


def _expand(raw: str, contractions: dict[str, str]) -> list[str]:
    """A raw token as the words it stands for ("what's" -> "what is", "don't" -> "do not")."""
    full = contractions.get(raw)
    if full is not None:
        return full.split()
    if "'" not in raw:
        return [raw]
    head, _, tail = raw.partition("'")
    if tail == "t" and head.endswith("n"):
        return [head[:-1], "not"]
    return [head, {"s": "is", "re": "are", "ve": "have", "d": "would", "ll": "will", "m": "am"}.get(tail, tail)]


def tokens(text: str) -> list[str]:
    """The raw tokens of `text` as the engine reads them (lower-cased, contractions expanded)."""
    g = _grammar()
    out: list[str] = []
    for raw in _TOKEN.findall(_normalise(text)):
        out += _expand(_DASHES.get(raw, raw), g.contractions)
    return out


def _normalise(text: str) -> str:
    text = text.lower()
    if "\u2019" in text:
        text = text.replace("\u2019", "'")
    return text


# ------------------------------------------------------------------ the reading


@dataclass(frozen=True, slots=True)
class Reading:
    """What one assistant message says, as the simulated user understands it."""

    #: Slots the message asks about, in order of first mention (exclusions removed).
    asked: tuple[str, ...] = ()
    #: Slots the message explicitly sets aside ("no need to tell me the price").
    excluded: frozenset[str] = frozenset()
    #: An open question ("anything else I should know?") naming no slot, or asking beyond the
    #: slots it names ("anything else about the order?"; those are in `asked` too: a user with
    #: nothing new to say about them answers the open question).
    open: bool = False
    #: Whether any sentence asks or requests something.
    question: bool = False
    #: A confirmation question ("shall I book it?", "do you want me to go ahead?").
    confirm: bool = False
    #: Places proposed, in order of mention: each the lower-cased name or id as written,
    #: with any number or "ii" that follows it (`resolve_place` finds the longest real name).
    places: tuple[str, ...] = ()
    #: Values named beside a proposal (e.g. the day and time a place is proposed for): slot -> values.
    details: tuple[tuple[str, str], ...] = ()
    #: Every value named outside an exclusion, in order: (slot, value).
    values: tuple[tuple[str, str], ...] = ()
    #: Of `places`, those recommended ("I'd go with A", "Top pick: A", "Shall I book A?") and
    #: those offered as alternatives ("B is also an option", "Runner-up: B"): how a message
    #: naming several places says which one it proposes.
    recommended: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()
    #: Statement concepts the message makes outside questions (e.g. ``done``).
    said: frozenset[str] = frozenset()
    #: A keyword list rather than a question: many slot words, the same slots over and over.
    salad: bool = False
    #: Whether the user recognises anything in the message at all (False: garbage).
    placed: bool = False
    #: Whether a typo had to be forgiven to read it.
    corrected: bool = False
    #: Small talk ("how are you today?", "is it sunny where you are?"): about the person, not
    #: the task; it asks about no slot it names.
    chatter: bool = False


#: What a slot-layer phrase says: (kind: cue, hint, value or place; its slots; its value).
_Payload = tuple[str, tuple[str, ...], str]


@dataclass(frozen=True, slots=True)
class _Word:
    raw: str
    stem: str
    flags: int
    #: The slot-layer phrase of this one word, or None: (kind, slots, value).
    single: tuple[str, tuple[str, ...], str] | None
    #: Slot-layer phrases starting here, longest first: (rest stems, length, payload).
    multi: tuple[tuple[list[str], int, tuple[str, tuple[str, ...], str]], ...]
    #: Grammar-layer phrases starting here: the classes of the one-word ones, and the longer ones
    #: by their second stem: second stem -> ((stems after the second, length, class), ...).
    gram: tuple[tuple[str, ...], Mapping[str, tuple[tuple[list[str], int, str], ...]]]
    #: Hints with a gap whose head starts here, per head: (rest of the head's stems, head length,
    #: tails by their first stem: first stem -> ((rest of the tail's stems, tail length, payload), ...)).
    gaps: tuple[tuple[list[str], int, Mapping[str, tuple[tuple[list[str], int, _Payload], ...]]], ...] = ()


#: The grammar-layer phrases of a word that opens none.
_NO_GRAM: tuple[tuple[str, ...], Mapping[str, Any]] = ((), {})

#: A slot-layer phrase found in a message: (first token, end, (kind, slots, value)).
_Hit = tuple[int, int, tuple[str, tuple[str, ...], str]]


class Understanding:
    """A compiled lexicon: reads messages into `Reading`s. Build with `compile_understanding`."""

    def __init__(self, lexicon: Lexicon, values: Mapping[str, Iterable[str]], places: Iterable[str]) -> None:
        g = _grammar()
        self._g = g
        #: Phrases where a domain's value overrode the family's word for a slot, with that word's
        #: reading: after "your" it is the person's own, and after a question word it is asked
        #: about ("your email", "which email" in a domain with an email service ask the address).
        self._owned: dict[tuple[str, ...], tuple[str, tuple[str, ...], str]] = {}
        slot_phrases = self._slot_phrases(lexicon, values, places)
        self._single: dict[str, tuple[str, tuple[str, ...], str]] = {}
        multi: dict[str, list[tuple[list[str], int, tuple[str, tuple[str, ...], str]]]] = {}
        for key, payload in slot_phrases.items():
            if len(key) == 1:
                self._single[key[0]] = payload
            else:
                multi.setdefault(key[0], []).append((list(key[1:]), len(key), payload))
        self._multi = {k: tuple(sorted(v, key=lambda c: -c[1])) for k, v in multi.items()}
        gaps: dict[tuple[str, ...], dict[str, list[tuple[list[str], int, tuple[str, tuple[str, ...], str]]]]] = {}
        for slot, phrases in lexicon.hints.items():
            for p in phrases:
                if "..." in p:
                    head, tail = (self._stems(part) for part in p.split("..."))
                    gaps.setdefault(tuple(head), {}).setdefault(tail[0], []).append(
                        (tail[1:], len(tail), ("hint", (slot,), "")))
        # Grouped by head, so a frequent head ("what") scans its window once for every tail.
        by_first: dict[str, list[tuple[list[str], int, dict[str, tuple[Any, ...]]]]] = {}
        for head, tails in gaps.items():
            by_first.setdefault(head[0], []).append((list(head[1:]), len(head),
                                                     {t: tuple(v) for t, v in tails.items()}))
        self._gaps = {k: tuple(v) for k, v in by_first.items()}
        gram: dict[str, tuple[list[str], dict[str, list[tuple[list[str], int, str]]]]] = {}
        for phrase, code in [*((p, code) for code, ps in g.phrases.items() for p in ps),
                             *((p, _OPEN) for p in lexicon.open),
                             *((p, f"said:{c}") for c, ps in lexicon.statements.items() for p in ps)]:
            key = self._stems(phrase)
            if key:
                one, longer = gram.setdefault(key[0], ([], {}))
                if len(key) == 1:
                    one.append(code)
                else:
                    longer.setdefault(key[1], []).append((key[2:], len(key), code))
        # Indexed by the first two stems: a word that opens many phrases ("if you <imperative>")
        # costs one look-up, not one comparison per phrase.
        self._gram = {k: (tuple(one), {s: tuple(v) for s, v in longer.items()}) for k, (one, longer) in gram.items()}
        self._words: dict[str, tuple[_Word, ...]] = {}
        self._memo: dict[str, Reading] = {}
        # Typo repair: every slot word (and word of an open question) of five letters or more, and
        # its plural, under itself and each one-letter deletion of it (a message word matches when
        # it, or one of its deletions, is a key); a four-letter slot word under each swap of two
        # neighbouring letters ("tiem").
        self._fuzzy: dict[str, list[str]] = {}
        slot_words = {w for ps in (*lexicon.slots.values(), *lexicon.hints.values(), *lexicon.values.values(),
                                   *values.values(), lexicon.open)
                      for p in ps for w in tokens(p.replace("...", " "))}
        for raw in sorted(slot_words):
            if not raw.isalpha() or len(raw) < TYPO_MIN_LEN - 1:
                continue
            if len(raw) < TYPO_MIN_LEN:
                for k in {raw[:i] + raw[i + 1] + raw[i] + raw[i + 2:] for i in range(len(raw) - 1)} - {raw}:
                    self._fuzzy.setdefault(k, []).append(raw)
                continue
            for form in {raw, _plural(raw)}:
                for k in {form, *(form[:i] + form[i + 1:] for i in range(len(form)))}:
                    self._fuzzy.setdefault(k, []).append(form)
        self._known_stems = frozenset({s for key in slot_phrases for s in key} | set(gram) | set(by_first)
                                      | {self._stem1(w) for w in g.flags})

    def _slot_phrases(self, lexicon: Lexicon, values: Mapping[str, Iterable[str]],
                      places: Iterable[str]) -> dict[tuple[str, ...], tuple[str, tuple[str, ...], str]]:
        """The slot layer: each phrase's stems -> (kind: cue, hint, value or place, its slots, its value)."""
        table: dict[tuple[str, ...], tuple[str, tuple[str, ...], str]] = {}

        def add(phrase: str, kind: str, slot: str | None, value: str, generic: bool = False) -> None:
            key = tuple(self._stems(phrase))
            if not key:
                return
            old = table.get(key)
            if generic and old is not None and old[0] not in ("cue", "hint"):
                return  # the domain's own word for it says what it is
            if kind == "value" and any(table.get(key[:j], ("",))[0] == "cue" and slot in table[key[:j]][1]
                                       for j in range(1, len(key) + 1)):
                # A domain listing its own slot's word ("cuisine", "kind of") still asks about it.
                if old is None:
                    table[key] = ("cue", (slot,), "")
                return
            if kind == "place" or old is None or (kind == "value" and old[0] in ("cue", "hint")):
                # A place's name is a name whatever else its words mean, and a domain's own value
                # overrides the family's generic word ("outdoor" is a setting of event venues).
                if kind == "value" and old is not None and old[0] == "cue" and slot not in old[1]:
                    self._owned[key] = old
                table[key] = (kind, (slot,) if slot else (), value)
            elif old[0] == kind and slot not in old[1]:
                # A phrase several slots share asks about each of them ("when": a date, a month).
                table[key] = (kind, (*old[1], slot), old[2] or value)

        for slot, phrases in lexicon.slots.items():
            for p in phrases:
                add(p, "cue", slot, "")
        for slot, phrases in lexicon.hints.items():
            for p in phrases:
                if "..." not in p:
                    add(p, "hint", slot, "")
        # The domain's own values before the family's generic value words: where they disagree,
        # the domain knows better.
        for slot, phrases in values.items():
            for p in phrases:
                add(p, "value", slot, p.lower())
        for slot, phrases in lexicon.values.items():
            for p in phrases:
                add(p, "value", slot, p.lower(), generic=True)
        for p in places:
            add(p, "place", None, p.lower())
        return table

    # -------------------------------------------------------------- words
    def _stem1(self, raw: str) -> str:
        return _stem(raw, self._g.unstemmed)

    def _stems(self, phrase: str) -> list[str]:
        return list(_phrase_stems(phrase))

    def _word(self, raw: str) -> tuple[_Word, ...]:
        got = self._words.get(raw)
        if got is not None:
            return got
        out = []
        for sub in _expand(_DASHES.get(raw, raw), self._g.contractions):
            s = self._stem1(sub)
            flags = self._g.flags.get(sub, 0)
            out.append(_Word(sub, s, flags, self._single.get(s), self._multi.get(s, ()), self._gram.get(s, _NO_GRAM),
                             self._gaps.get(s, ())))
        got = tuple(out)
        if len(self._words) < WORD_MEMO_SIZE:
            self._words[raw] = got
        return got

    # -------------------------------------------------------------- reading
    def read(self, text: str) -> Reading:
        """What `text` says (memoised per text; equal to `read_uncached`)."""
        got = self._memo.get(text)
        if got is None:
            got = self.read_uncached(text)
            if len(text) <= MEMO_MAX_CHARS:
                if len(self._memo) >= MEMO_SIZE:
                    self._memo.clear()
                self._memo[text] = got
        return got

    def read_uncached(self, text: str) -> Reading:
        """What `text` says, computed afresh."""
        words: list[_Word] = []
        word = self._word
        for raw in _TOKEN.findall(_normalise(text)):
            words += word(raw)
        if not words:
            return Reading()
        reading = self._analyse(words)
        if not reading.question or reading.places or reading.salad:
            return reading
        if not reading.asked:
            # A question about nothing it names, or only an open one ("any budegt in mind?" is
            # open until the slot word is read right): a repair that finds what it asks counts.
            repaired = self._repair(words)
            if repaired is not None:
                again = self._analyse(repaired)
                if again.asked or (again.open and not reading.open):
                    return replace(again, corrected=True)
        elif len(words) <= TYPO_COMPOUND_WORDS and any(w.raw in _JOINING for w in words):
            # A short compound question may hold a typo beside a word read right ("wich service
            # and what severty?"): the repair counts when it only adds to what was asked.
            repaired = self._repair(words)
            if repaired is not None:
                again = self._analyse(repaired)
                if set(again.asked) > set(reading.asked) and again.open == reading.open:
                    return replace(again, corrected=True)
        return reading

    def _repair(self, words: list[_Word]) -> list[_Word] | None:
        """`words` with each unknown longer word replaced by the one slot word within one edit of
        it, or None when nothing could be repaired."""
        changed = False
        out = list(words)
        for i, w in enumerate(words):
            if w.flags or w.single or w.multi or w.gram is not _NO_GRAM or len(w.raw) < TYPO_MIN_LEN - 1 \
                    or not w.raw.isalpha():
                continue
            if w.stem in self._known_stems:
                continue
            hits = sorted({c for k in (w.raw, *(w.raw[:j] + w.raw[j + 1:] for j in range(len(w.raw))))
                           for c in self._fuzzy.get(k, ()) if _one_edit(w.raw, c)})
            if hits:
                out[i:i + 1] = [self._word(hits[0])[0]]
                changed = True
        return out if changed else None

    def _scan(self, words: list[_Word]) -> tuple[list[_Hit], list[tuple[int, int, str]]]:
        """One pass over the words: the slot layer's phrases (the longest at each position, none
        overlapping; none inside an idiom, "for the time being"), the hints with a gap, and the
        grammar layer's phrases (every one that matches)."""
        stems = [w.stem for w in words]
        slot_hits: list[_Hit] = []
        gap_hits: list[_Hit] = []
        gram_hits: list[tuple[int, int, str]] = []
        covered = 0
        n = len(words)
        for i, w in enumerate(words):
            one, longer = w.gram
            for code in one:
                gram_hits.append((i, i + 1, code))
            if longer and i + 1 < n:
                for rest, length, code in longer.get(stems[i + 1], ()):
                    if stems[i + 2:i + length] == rest:
                        gram_hits.append((i, i + length, code))
                        if code == _IDIOM:
                            covered = max(covered, i + length)
            if w.gaps:
                gap_hits += _gapped(words, stems, i)
            if i < covered:
                continue
            hit = None
            for rest, length, payload in w.multi:
                if stems[i + 1:i + length] == rest:
                    hit = (i, i + length, payload)
                    break
            if hit is None and w.single is not None:
                hit = (i, i + 1, w.single)
                if hit[2][0] == "value" and w.flags & _AUX and i + 1 < len(words) and words[i + 1].raw in _PRONOUNS:
                    hit = None  # "May I ask ...": the auxiliary, not the month
            if hit is not None and self._owned and i > 0 and (words[i - 1].raw == "your" or words[i - 1].flags & _WH):
                owned = self._owned.get(tuple(stems[i:hit[1]]))
                if owned is not None:
                    hit = (i, hit[1], owned)
            if hit is not None:
                if hit[2][0] == "place":
                    hit = self._extend_place(words, hit)
                slot_hits.append(hit)
                covered = hit[1]
        if gap_hits:
            slot_hits = sorted(slot_hits + gap_hits, key=lambda h: h[0])
        return _drop_qualifiers(words, slot_hits), gram_hits

    def _analyse(self, words: list[_Word]) -> Reading:
        n = len(words)
        slot_hits, gram_hits = self._scan(words)
        # ---- keyword lists are not questions
        n_words = sum(1 for w in words if not w.flags & (_END | _BOUNDARY))
        slots_named = {s for _, _, p in slot_hits if p[0] != "place" for s in p[1]}
        offered = _offered(words, slot_hits)
        hit_words = sum(b - a for k, (a, b, p) in enumerate(slot_hits) if p[0] != "place" and k not in offered)
        n_hits = sum(1 for k, (*_, p) in enumerate(slot_hits) if p[0] != "place" and k not in offered)
        if 2 * hit_words >= n_words and (n_hits >= max(6, 2 * len(slots_named)) or len(slots_named) >= SALAD_SLOTS):
            return Reading(salad=True, placed=True, question=True)
        placed = bool(slot_hits or gram_hits) or any(w.flags for w in words)
        # ---- sentences, then clauses
        sentences: list[tuple[int, int, str]] = []
        start = 0
        for i, w in enumerate(words):
            if w.flags & _END:
                if i > start:
                    sentences.append((start, i, w.raw))
                start = i + 1
        if start < n:
            sentences.append((start, n, ""))
        # Parts joined by semicolons are one list ("Could you tell me: the area; your budget;
        # any minimum rating?"): each part asks as the list's closing mark says, and a part after
        # one that asks asks too.
        closing = ""
        for part in range(len(sentences) - 1, -1, -1):
            s, e, end = sentences[part]
            if end != ";":
                closing = end
            else:
                sentences[part] = (s, e, closing)
        joined_on = {part for part in range(1, len(sentences)) if words[sentences[part][0] - 1].raw == ";"}
        asked_before = False
        asked: list[str] = []
        excluded: set[str] = set()
        places: list[str] = []
        details: list[tuple[str, str]] = []
        values: list[tuple[str, str]] = []
        recommended: list[str] = []
        alternatives: list[str] = []
        said: set[str] = set()
        scoped: set[str] = set()
        is_open = confirm = question = chatter = False
        for part, (s, e, end) in enumerate(sentences):
            grams = [h for h in gram_hits if s <= h[0] < e]
            hits = [h for h in slot_hits if s <= h[0] < e]
            asks = self._asks(words, s, e, end, grams) or (asked_before and part in joined_on)
            asked_before = asks
            question = question or asks
            out = self._exclusions(words, s, e, grams, hits)
            has_place = any(h[2][0] == "place" for k, h in enumerate(hits) if k not in out)
            clause, statement = self._clauses(words, s, e, grams)
            for a, _, code in grams:
                if code == _SMALL_TALK:
                    # "How are you today?", "Is it sunny where you are?": the clause is about the
                    # person, and asks about nothing it names.
                    statement[clause[a - s]] = chatter = True
            # A slot word outranks a hint, and a hint a value, within a clause: "would Friday
            # work?" asks the time, "which area would you like the Italian place in?" only the
            # area, "should the hotel include breakfast?" the amenities.
            cued: set[int] = set()
            hinted: set[int] = set()
            valued = False
            for k, (a, _, p) in enumerate(hits):
                if k not in out:
                    if p[0] == "cue":
                        cued.add(clause[a - s])
                    elif p[0] == "hint":
                        hinted.add(clause[a - s])
                    elif p[0] == "value":
                        valued = True
            opens = [(a, b) for a, b, code in grams if code == _OPEN]
            opened: set[int] = set()
            if opens:
                located = _locating_open(words, grams, hits)
                # The last option of an offer ("a hotel or something else?") is no open question.
                offered = {i for a, b in opens if a > 0 and words[a - 1].raw == "or" for i in range(a, b)}
                opens = [(a, b) for a, b in opens if a not in offered]
                beyond = {clause[a - s] for a, b in opens if _asks_beyond(words, a, b)}
                # An open question asking beyond a hint ("anything else the venue should offer?"),
                # or made of one ("any special requests?"), is scoped by it, as by a slot word
                # after "about".
                if hinted:
                    located.update(k for k, (a, _, p) in enumerate(hits) if p[0] == "hint" and clause[a - s] not in cued
                                   and (clause[a - s] in beyond or any(x <= a < y for x, y in opens)))
                scoped.update(slot for k in located for slot in hits[k][2][1])
                # An open question ("how can I help you today?") sets aside the values its clause
                # names, as a slot word does.
                opened = beyond | {clause[a - s] for a, b in opens if b - a > 1}
            # A value or hint listed beside a slot word ("the setting and the price range") is
            # asked with it.
            joined = _joined(words, hits, out) if cued and (hinted or valued) else _NONE
            roles = _roles(words, grams, [h for k, h in enumerate(hits) if k not in out], clause, s, e) \
                if has_place else {}
            for k, (a, b, (kind, slots, value)) in enumerate(hits):
                if k in out:
                    if kind != "place":
                        excluded.update(slots)
                    continue
                c = clause[a - s]
                if kind == "value":
                    values += [(slot, value) for slot in slots]
                if kind == "place":
                    places.append(value)
                    role = roles.get(a)
                    if role == _RECOMMEND:
                        recommended.append(value)
                    elif role == _ALTERNATIVE:
                        alternatives.append(value)
                elif kind == "value" and has_place:
                    details += [(slot, value) for slot in slots]
                elif asks and not statement[c] and (kind == "cue" or k in joined or (
                        c not in cued and (kind == "hint" or (c not in hinted and c not in opened)))):
                    if kind == "value" and a > s and words[a - 1].raw in _REFERRING and k not in joined \
                            and _named_beside(words, hits, out, clause, s, k):
                        continue  # "should the hotel have wifi?": the hotel is the one in view
                    asked += [slot for slot in slots if slot not in asked]
            if asks:
                scopes = self._scopes(words, s, e, grams)
                for a, b, code in grams:
                    if code == _OPEN and not any(x <= a < y for x, y in scopes):
                        is_open = True
                    elif code == _CONFIRM:
                        confirm = True
            else:
                said.update(code[5:] for _, _, code in grams if code.startswith("said:"))
        return Reading(
            asked=tuple(asked), excluded=frozenset(excluded - set(asked)), open=is_open and scoped >= set(asked),
            question=question, confirm=confirm, places=tuple(dict.fromkeys(places)), details=tuple(details),
            values=tuple(values), recommended=tuple(dict.fromkeys(recommended)),
            alternatives=tuple(dict.fromkeys(alternatives)), said=frozenset(said), placed=placed, chatter=chatter)

    # -------------------------------------------------------------- sentence helpers
    @staticmethod
    def _first(words: list[_Word], s: int, e: int) -> int | None:
        for i in range(s, e):
            if not words[i].flags & (_FILLER | _BOUNDARY):
                return i
        return None

    def _asks(self, words: list[_Word], s: int, e: int, end: str, grams: list[tuple[int, int, str]]) -> bool:
        if end == "?":
            return True
        first = self._first(words, s, e)
        # "What a week it has been!": a question word opening an exclamation asks nothing.
        if first is not None and words[first].flags & (_AUX | _IMPERATIVE | (_WH if end != "!" else 0)):
            return True
        # An imperative opening a later clause asks as well ("To narrow it down, please share:").
        if any(words[i].flags & _BOUNDARY and words[i + 1].flags & _IMPERATIVE for i in range(s, e - 1)):
            return True
        if any(code == _REQUEST for _, _, code in grams):
            return True
        # "Your budget, please." A short sentence with a please, or one that ends with it, is a
        # request ("Your email and the order number, please.").
        return bool(words[e - 1].flags & _PLEASE) or (e - s <= 5 and any(words[i].flags & _PLEASE for i in range(s, e)))

    def _scopes(self, words: list[_Word], s: int, e: int, grams: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
        """The token ranges an exclusion phrase covers: from it to the next comma, dash, "but",
        question word or sentence end."""
        out = []
        for a, b, code in grams:
            if code != _EXCLUDE:
                continue
            j = b
            while j < e and not words[j].flags & (_BOUNDARY | _WH):
                j += 1
            out.append((a, j))
        return out

    def _exclusions(self, words: list[_Word], s: int, e: int, grams: list[tuple[int, int, str]],
                    hits: list[tuple[int, int, Any]]) -> set[int]:
        """Indexes (into `hits`) of the slot-layer hits an exclusion sets aside."""
        out: set[int] = set()
        if not grams and not any(words[i].flags & _NEG for i in range(s, e)):
            return out
        scopes = self._scopes(words, s, e, grams)
        for k, (a, _, _) in enumerate(hits):
            if any(x <= a < y for x, y in scopes):
                out.add(k)
        # "not the price but the area": a negation sets aside the slot right after it, unless it
        # is part of a request ("I'm not sure how long it should be" asks the length).
        requests = [(a, b) for a, b, code in grams if code == _REQUEST]
        for i in range(s, e):
            if words[i].flags & _NEG and not (i > s and words[i - 1].raw == "or") \
                    and not any(a <= i < b for a, b in requests):
                j = i + 1
                while j < e and j - i <= 3 and words[j].flags & _NEG_FILLER and not words[j].single:
                    j += 1
                for k, (a, _, _) in enumerate(hits):
                    if a == j:
                        out.add(k)
        # "the price is fine, which area?": a clause that sets its slots aside after naming them.
        for a, _, code in grams:
            if code != _POST_EXCLUDE:
                continue
            c = a
            while c > s and not words[c - 1].flags & _BOUNDARY:
                c -= 1
            for k, (h, _, _) in enumerate(hits):
                if c <= h < a:
                    out.add(k)
            # "A and B, are already booked", "A (a ballroom, 800 EUR) is booked": a clause naming
            # nothing before the phrase is the predicate of the places of the clause before it,
            # a bracketed aside skipped.
            if c > s and not any(c <= h < a for h, _, _ in hits):
                c -= 1
                if words[c].raw == ")":
                    while c > s and words[c].raw != "(":
                        c -= 1
                while c > s and not words[c - 1].flags & _BOUNDARY:
                    c -= 1
                out.update(k for k, (h, _, p) in enumerate(hits) if c <= h < a and p[0] == "place")
        return out

    def _clauses(self, words: list[_Word], s: int, e: int,
                 grams: list[tuple[int, int, str]]) -> tuple[list[int], list[bool]]:
        """The clauses of a sentence (split at commas, dashes, "but" ...): per token its clause's
        number, and per clause whether it is a statement of the assistant's own ("I found ...",
        "There are ..."), which asks about nothing it names."""
        clause: list[int] = []
        statement: list[bool] = []
        c = s
        while c < e:
            d = c
            while d < e and not words[d].flags & _BOUNDARY and not _new_question(words, d, e):
                d += 1
            first = self._first(words, c, d)
            statement.append(first is not None and bool(words[first].flags & _SUBJECT)
                             and not any(words[i].flags & _WH for i in range(c, d))
                             and not any(c <= a < d and code == _REQUEST for a, _, code in grams))
            clause += [len(statement) - 1] * (min(d + 1, e) - c)
            c = d + 1
        return clause, statement

    @staticmethod
    def _extend_place(words: list[_Word], hit: tuple[int, int, Any]) -> tuple[int, int, Any]:
        """A place name with the number or "ii" written after it ("Garden Apartments 5 II")."""
        a, b, (kind, slots, value) = hit
        while b < len(words) and (words[b].raw == "ii" or (words[b].raw.isdigit() and len(words[b].raw) == 1)):
            value = f"{value} {words[b].raw}"
            b += 1
        return a, b, (kind, slots, value)


_NONE: frozenset[int] = frozenset()


def _roles(words: list[_Word], grams: list[tuple[int, int, str]], hits: list[_Hit], clause: list[int], s: int,
           e: int) -> dict[int, str]:
    """How each place of the sentence words[s:e] is offered, by token: ``alternative`` or
    ``recommend``. The nearest cue before a place in its own clause, or in the clause just
    before when that holds no other word of note, decides ("I'd go with A", "an alternative is
    B", "Top pick: A"); else the first after it in its clause or the next, before the next one
    ("B is also an option", "A - my pick", "A (best match)"). A booking question ("Shall I book
    A?") recommends; a place listed right after another with no cue of its own ("A or B")
    shares its role."""
    cues = sorted((x, code) for x, _, code in grams if code in (_RECOMMEND, _ALTERNATIVE, _CONFIRM))
    roles: dict[int, str] = {}
    if not cues:
        return roles
    prev: tuple[int, int] | None = None
    for a, b, payload in hits:
        if payload[0] != "place":
            continue
        c = clause[a - s]
        others = {clause[x - s] for x, _, p in hits if x != a}
        since = max([end for _, end, _ in hits if end <= a and clause[end - 1 - s] == c] +
                    [next((i for i in range(s, a) if clause[i - s] >= (c if c - 1 in others else c - 1)), a)])
        before = [code for x, code in cues if since <= x < a]
        until = min((start for start, _, _ in hits if start > a), default=e)
        after = [code for x, code in cues if a < x < until and clause[x - s] in (c, c + 1)]
        found = before[-1] if before else (after[0] if after else None)
        if found is not None:
            roles[a] = _ALTERNATIVE if found == _ALTERNATIVE else _RECOMMEND
        elif prev is not None and prev[0] in roles and all(w.raw in _LISTING for w in words[prev[1]:a]):
            roles[a] = roles[prev[0]]  # "Shall I book A or B?": both, so neither alone
        prev = (a, b)
    return roles


def _named_beside(words: list[_Word], hits: list[_Hit], out: set[int], clause: list[int], s: int, k: int) -> bool:
    """Whether the clause of hits[k] names another slot than it does, other than by a value after
    "the", "this" or "that"."""
    c, slots = clause[hits[k][0] - s], set(hits[k][2][1])
    return any(j != k and j not in out and p[0] != "place" and clause[a - s] == c and set(p[1]) - slots
               and not (p[0] == "value" and a > s and words[a - 1].raw in _REFERRING)
               for j, (a, _, p) in enumerate(hits))


#: Words that may stand between the items of a list of slots ("the area, the budget and the day").
_LISTING = frozenset({"and", "or", ",", "&"}) | _DETERMINERS


def _joined(words: list[_Word], hits: list[_Hit], out: set[int]) -> set[int]:
    """Indexes (into `hits`) of the values and hints listed with a slot word: only "and", "or",
    commas and determiners between each item and the next ("the setting and the price range?",
    "cheap and Italian?" where "cheap" asks the price)."""
    listed: set[int] = set()
    for k in range(len(hits) - 1):
        h, nxt = hits[k], hits[k + 1]
        if k in out or k + 1 in out or "place" in (h[2][0], nxt[2][0]):
            continue
        between = [w.raw for w in words[h[1]:nxt[0]]]
        if between and all(b in _LISTING for b in between) and any(b in ("and", "or") for b in between):
            listed.update((k, k + 1))
    # A run of listed hits counts when one of its items is a slot word.
    chosen: set[int] = set()
    run: list[int] = []
    for k in [*sorted(listed), -1]:
        if run and k != run[-1] + 1:
            if any(hits[j][2][0] == "cue" for j in run):
                chosen.update(run)
            run = []
        if k >= 0:
            run.append(k)
    return chosen


#: Words that may stand between the options a question offers ("(rooftop, ballroom or barn)").
_OFFERING = _LISTING | {"(", ")", "/"}


def _offered(words: list[_Word], hits: list[_Hit]) -> set[int]:
    """Indexes (into `hits`) of the values a question offers for one slot, all but the first of
    each list: "which setting (rooftop, ballroom, garden or barn)?" offers one choice, not five
    keywords. A list counts when the message names its slot by a word or a hint, or names at
    most two slots in all; a dump of the values of many slots stays a keyword list."""
    named = {slot for _, _, p in hits if p[0] != "place" for slot in p[1]}
    anchored = named if len(named) <= 2 else {slot for _, _, p in hits if p[0] in ("cue", "hint") for slot in p[1]}
    out: set[int] = set()
    if not anchored:
        return out
    for k in range(1, len(hits)):
        h, prev = hits[k], hits[k - 1]
        if h[2][0] != "value" or prev[2][0] != "value" or not set(h[2][1]) & set(prev[2][1]) & anchored:
            continue
        between = [w.raw for w in words[prev[1]:h[0]]]
        if between and all(b in _OFFERING for b in between):
            out.add(k)
    return out


def _gapped(words: list[_Word], stems: list[str], i: int) -> list[_Hit]:
    """The hints with a gap whose head starts at `i`: the tail one to `GAP_MAX` words after the
    head, in the same clause ("what would you like to book" points at the category)."""
    out: list[_Hit] = []
    n = len(words)
    for head_rest, head_len, tails in words[i].gaps:
        start = i + head_len
        if stems[i + 1:start] != head_rest:
            continue
        for j in range(start + 1, min(start + GAP_MAX, n - 1) + 1):
            if words[j - 1].flags & (_BOUNDARY | _END):
                break
            for rest, length, payload in tails.get(stems[j], ()):
                if stems[j + 1:j + length] == rest:
                    out.append((j, j + length, payload))
    return out


def _drop_qualifiers(words: list[_Word], hits: list[_Hit]) -> list[_Hit]:
    """Slot words that only qualify another give way to it: "what kind of budget?" asks the
    budget ("kind of", "type of" qualify the next slot word); "the email address on the order"
    asks the email (a slot word after "on", "for", "in" ... locates the one before it), and "how
    bad is the outage?" the severity (a slot word after "is" is what the question is about). A
    value after "at the", "for this" ... only says where the thing before it is: "free parking at
    the hotel?" asks about parking, not the kind of stay; a value before "with" carries the one
    after it ("a hotel with wifi?" asks about the wifi)."""
    drop: set[int] = set()
    for k in range(len(hits) - 1):
        h, nxt = hits[k], hits[k + 1]
        if h[2][0] == "place" or set(h[2][1]) & set(nxt[2][1]):
            continue
        between = [w.raw for w in words[h[1]:nxt[0]]]
        if nxt[2][0] == "value":
            if len(between) == 2 and between[0] in _LOCATING and between[1] in _DEFINITE:
                drop.add(k + 1)
            elif between == ["with"] and h[2][0] == "value":
                drop.add(k)  # "a hotel with wifi?" asks about the wifi
            continue
        if h[2][0] != "cue" or nxt[2][0] != "cue":
            continue
        if between == ["of"]:
            drop.add(k)
        elif between and between[0] in _LOCATING_OR_SUBJECT and all(b in _DETERMINERS for b in between[1:]):
            drop.add(k + 1)
    return [h for k, h in enumerate(hits) if k not in drop] if drop else hits


#: Words that make an open question ask for what lies beyond what follows it ("anything else").
_BEYOND = frozenset({"else", "other", "additional", "further"})
_LOCATING_OPEN = _LOCATING | {"about", "regarding"}


def _asks_beyond(words: list[_Word], a: int, b: int) -> bool:
    """Whether the open phrase at words[a:b] asks for more than what follows it ("anything else")."""
    return any(w.raw in _BEYOND for w in words[a:b])


def _locating_open(words: list[_Word], grams: list[tuple[int, int, str]], hits: list[_Hit]) -> set[int]:
    """Indexes (into `hits`) of the slot words that scope an open question asking beyond them:
    "anything else about the order?", "any other details for the invite?"."""
    out: set[int] = set()
    for a, b, code in grams:
        if code != _OPEN or not _asks_beyond(words, a, b):
            continue
        for k, (h, _, payload) in enumerate(hits):
            between = [w.raw for w in words[b:h]]
            if payload[0] in ("cue", "hint") and between and between[0] in _LOCATING_OPEN and all(
                    x in _DETERMINERS for x in between[1:]):
                out.add(k)
    return out


def _new_question(words: list[_Word], i: int, e: int) -> bool:
    """Whether a new question starts at `i` after a conjunction ("... wifi, and what's your
    budget?"): "and", "or", "also" or "plus" followed by a question word or an auxiliary."""
    return (i + 1 < e and words[i].raw in _JOINING and bool(words[i + 1].flags & (_WH | _AUX)))


def _plural(word: str) -> str:
    """The plural of a slot word, so a typo in it is forgiven too ("amenites": "amenities")."""
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "z", "ch", "sh")) else "s")


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` are at most one edit apart (a letter dropped, added, changed, or two
    neighbours swapped)."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    if la > lb:
        a, b = b, a
    for i in range(len(b)):
        if b[:i] + b[i + 1:] == a:
            return True
    return False


def compile_understanding(lexicon: Lexicon, values: Mapping[str, Iterable[str]] | None = None,
                          places: Iterable[str] = ()) -> Understanding:
    """An `Understanding` of `lexicon`, plus a domain's `values` (slot -> phrases that name a value
    of it, e.g. its areas) and the `places` one may propose by name (names and ids). Build it once
    per domain and keep it: compiling costs milliseconds, reading microseconds."""
    return Understanding(lexicon, values or {}, places)


def resolve_place(key: str, names: Mapping[str, Any]) -> Any:
    """The place a proposed `key` names: the longest real name it starts with ("garden apartments
    5" is that place when it exists, else "garden apartments"), or None."""
    while True:
        got = names.get(key)
        if got is not None:
            return got
        head, sep, _ = key.rpartition(" ")
        if not sep:
            return None
        key = head
