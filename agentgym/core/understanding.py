"""One language-understanding engine for every simulated user: what an assistant's message asks,
proposes, confirms or claims.

Rule-based and deterministic. A message is tokenised once (lower-cased words, numbers, e-mail
addresses, punctuation; contractions expanded, so "what's" reads as "what is"), every word is
reduced by a light stemmer (plurals and -ing/-ed forms, a final -e), and one pass over the tokens
finds, with dict look-ups only, two layers of phrases:

* the family's lexicon (``data/lexicon.json`` of each family, parsed strictly by `parse_lexicon`):
  per slot the words that ask about it ("budget", "how much", "part of town"), the domain's
  values that name it ("Riverside", "Friday"), the names and ids of bookable places, the phrases
  of an open question ("anything else") and of statements the family reacts to ("done"). Where
  phrases overlap, the longest wins ("Garden Apartments 5" over "Garden Apartments", "max price"
  over "price"); matching is by whole words only, so "need" is not inside "needle", "eat" not
  inside "seating", "where" not inside "somewhere";
* English grammar shared by every family (``agentgym/core/grammar.json``): question words,
  auxiliaries that open a yes/no question, request phrases ("tell me", "I'd love to know",
  "mind sharing"), imperatives ("share your budget"), exclusions ("no need to tell me",
  "besides", "other than", "not X but Y", "X is fine"), confirmations ("shall I book it?").

The message is then read sentence by sentence. A sentence asks when it ends with a question mark,
opens with a question word, an auxiliary or an imperative, holds a request phrase, or is a short
one with "please". Within an asking sentence every slot named is asked, except where an
exclusion covers it (up to the next comma, dash, "but" or question word) and in a clause that is
a statement of the assistant's own ("I found cafes in Riverside, which one do you like?" does not
ask about the area). A sentence that asks nothing asks about no slot. A place named outside an
exclusion and not said to be closed or unsuitable is proposed. A message that is mostly slot
words, naming slots several times over, is a keyword list, not a question (`Reading.salad`).
Only when an asking message names no slot at all is one typo per longer word forgiven (one
edit: a letter dropped, added, changed or two swapped), so the common path pays nothing for it.

`Understanding.read` returns an immutable `Reading`; readings are memoised per text in a small
bounded table (the same text always reads the same), and `Understanding.read_uncached` is the
plain computation the memo must equal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
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
_JOINING = frozenset({"and", "or", "also", "plus"})


@dataclass(frozen=True)
class Lexicon:
    """A family's vocabulary: per slot the words that ask about it ("budget") and the words that
    name one of its values in any domain ("wifi", "sushi"), the phrases of an open question, and
    per statement concept the phrases that make it (e.g. a claim the work is done)."""

    slots: Mapping[str, tuple[str, ...]]
    values: Mapping[str, tuple[str, ...]]
    open: tuple[str, ...]
    statements: Mapping[str, tuple[str, ...]]


def _phrases(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where}: expected a list of non-empty strings")
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: duplicate entries")
    return tuple(value)


def parse_lexicon(raw: Any, where: str = "lexicon.json") -> Lexicon:
    """A family lexicon from its JSON object, strictly (unknown or missing fields are errors)."""
    d = strict(raw, {"slots", "values", "open", "statements"}, where)
    for key in ("slots", "values", "statements"):
        if not isinstance(d[key], dict):
            raise ValueError(f"{where}.{key}: expected an object")
    unknown = set(d["values"]) - set(d["slots"])
    if unknown:
        raise ValueError(f"{where}.values: values of unknown slots {sorted(unknown)}")
    return Lexicon(
        slots={k: _phrases(v, f"{where}.slots.{k}") for k, v in d["slots"].items()},
        values={k: _phrases(v, f"{where}.values.{k}") for k, v in d["values"].items()},
        open=_phrases(d["open"], f"{where}.open"),
        statements={k: _phrases(v, f"{where}.statements.{k}") for k, v in d["statements"].items()},
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
                    "confirmations": _CONFIRM}


@lru_cache(maxsize=None)
def _grammar() -> _Grammar:
    """The shared English grammar, ``agentgym/core/grammar.json``, parsed strictly."""
    raw = json.loads(resources.files(__package__).joinpath("grammar.json").read_text("utf-8"))
    d = strict(raw, {*_GRAMMAR_FLAGS, *_GRAMMAR_PHRASES, "unstemmed", "contractions"}, "grammar.json")
    flags: dict[str, int] = {}
    for key, bit in _GRAMMAR_FLAGS.items():
        for w in _phrases(d[key], f"grammar.json.{key}"):
            flags[w] = flags.get(w, 0) | bit
    flags["please"] = flags.get("please", 0) | _PLEASE
    if not isinstance(d["contractions"], dict) or not all(isinstance(v, str) for v in d["contractions"].values()):
        raise ValueError("grammar.json.contractions: expected an object of strings")
    return _Grammar(flags, {code: _phrases(d[key], f"grammar.json.{key}") for key, code in _GRAMMAR_PHRASES.items()},
                    frozenset(_phrases(d["unstemmed"], "grammar.json.unstemmed")), dict(d["contractions"]))


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
    #: An open question ("anything else I should know?") and no slot named.
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
    #: Statement concepts the message makes outside questions (e.g. ``done``).
    said: frozenset[str] = frozenset()
    #: A keyword list rather than a question: many slot words, the same slots over and over.
    salad: bool = False
    #: Whether the user recognises anything in the message at all (False: garbage).
    placed: bool = False
    #: Whether a typo had to be forgiven to read it.
    corrected: bool = False


@dataclass(frozen=True, slots=True)
class _Word:
    raw: str
    stem: str
    flags: int
    #: The slot-layer phrase of this one word, or None: (kind, slots, value).
    single: tuple[str, tuple[str, ...], str] | None
    #: Slot-layer phrases starting here, longest first: (rest stems, length, payload).
    multi: tuple[tuple[list[str], int, tuple[str, tuple[str, ...], str]], ...]
    #: Grammar-layer phrases starting here (every length): (rest stems, length, class).
    gram: tuple[tuple[list[str], int, str], ...]


#: A slot-layer phrase found in a message: (first token, end, (kind, slots, value)).
_Hit = tuple[int, int, tuple[str, tuple[str, ...], str]]


class Understanding:
    """A compiled lexicon: reads messages into `Reading`s. Build with `compile_understanding`."""

    def __init__(self, lexicon: Lexicon, values: Mapping[str, Iterable[str]], places: Iterable[str]) -> None:
        g = _grammar()
        self._g = g
        slot_phrases = self._slot_phrases(lexicon, values, places)
        self._single: dict[str, tuple[str, tuple[str, ...], str]] = {}
        multi: dict[str, list[tuple[list[str], int, tuple[str, tuple[str, ...], str]]]] = {}
        for key, payload in slot_phrases.items():
            if len(key) == 1:
                self._single[key[0]] = payload
            else:
                multi.setdefault(key[0], []).append((list(key[1:]), len(key), payload))
        self._multi = {k: tuple(sorted(v, key=lambda c: -c[1])) for k, v in multi.items()}
        gram: dict[str, list[tuple[list[str], int, str]]] = {}
        for phrase, code in [*((p, code) for code, ps in g.phrases.items() for p in ps),
                             *((p, _OPEN) for p in lexicon.open),
                             *((p, f"said:{c}") for c, ps in lexicon.statements.items() for p in ps)]:
            key = self._stems(phrase)
            if key:
                gram.setdefault(key[0], []).append((key[1:], len(key), code))
        self._gram = {k: tuple(v) for k, v in gram.items()}
        self._words: dict[str, tuple[_Word, ...]] = {}
        self._memo: dict[str, Reading] = {}
        # Typo repair: every slot word of five letters or more, under itself and each one-letter
        # deletion of it (a message word matches when it, or one of its deletions, is a key).
        self._fuzzy: dict[str, list[str]] = {}
        slot_words = {w for ps in (*lexicon.slots.values(), *lexicon.values.values(), *values.values())
                      for p in ps for w in tokens(p)}
        for raw in sorted(slot_words):
            if len(raw) >= TYPO_MIN_LEN and raw.isalpha():
                for k in {raw, *(raw[:i] + raw[i + 1:] for i in range(len(raw)))}:
                    self._fuzzy.setdefault(k, []).append(raw)
        self._known_stems = frozenset({s for key in slot_phrases for s in key} | set(gram)
                                      | {self._stem1(w) for w in g.flags})

    def _slot_phrases(self, lexicon: Lexicon, values: Mapping[str, Iterable[str]],
                      places: Iterable[str]) -> dict[tuple[str, ...], tuple[str, tuple[str, ...], str]]:
        """The slot layer: each phrase's stems -> (kind: cue, value or place, its slots, its value)."""
        table: dict[tuple[str, ...], tuple[str, tuple[str, ...], str]] = {}

        def add(phrase: str, kind: str, slot: str | None, value: str, generic: bool = False) -> None:
            key = tuple(self._stems(phrase))
            if not key:
                return
            old = table.get(key)
            if generic and old is not None and old[0] != "cue":
                return  # the domain's own word for it says what it is
            if kind == "place" or old is None or (kind == "value" and old[0] == "cue"):
                # A place's name is a name whatever else its words mean, and a domain's own value
                # overrides the family's generic word ("outdoor" is a setting of event venues).
                table[key] = (kind, (slot,) if slot else (), value)
            elif old[0] == kind and slot not in old[1]:
                # A phrase several slots share asks about each of them ("when": a date, a month).
                table[key] = (kind, (*old[1], slot), old[2] or value)

        for slot, phrases in lexicon.slots.items():
            for p in phrases:
                add(p, "cue", slot, "")
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
        return [self._stem1(t) for t in tokens(phrase)]

    def _word(self, raw: str) -> tuple[_Word, ...]:
        got = self._words.get(raw)
        if got is not None:
            return got
        out = []
        for sub in _expand(_DASHES.get(raw, raw), self._g.contractions):
            s = self._stem1(sub)
            flags = self._g.flags.get(sub, 0)
            out.append(_Word(sub, s, flags, self._single.get(s), self._multi.get(s, ()), self._gram.get(s, ())))
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
        if reading.question and not reading.asked and not reading.open and not reading.places and not reading.salad:
            repaired = self._repair(words)
            if repaired is not None:
                again = self._analyse(repaired)
                if again.asked or again.open:
                    return replace(again, corrected=True)
        return reading

    def _repair(self, words: list[_Word]) -> list[_Word] | None:
        """`words` with each unknown longer word replaced by the one slot word within one edit of
        it, or None when nothing could be repaired."""
        changed = False
        out = list(words)
        for i, w in enumerate(words):
            if w.flags or w.single or w.multi or w.gram or len(w.raw) < TYPO_MIN_LEN or not w.raw.isalpha():
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
        overlapping) and the grammar layer's (every one that matches)."""
        stems = [w.stem for w in words]
        slot_hits: list[_Hit] = []
        gram_hits: list[tuple[int, int, str]] = []
        covered = 0
        for i, w in enumerate(words):
            for rest, length, code in w.gram:
                if length == 1 or stems[i + 1:i + length] == rest:
                    gram_hits.append((i, i + length, code))
            if i < covered:
                continue
            hit = None
            for rest, length, payload in w.multi:
                if stems[i + 1:i + length] == rest:
                    hit = (i, i + length, payload)
                    break
            if hit is None and w.single is not None:
                hit = (i, i + 1, w.single)
            if hit is not None:
                if hit[2][0] == "place":
                    hit = self._extend_place(words, hit)
                slot_hits.append(hit)
                covered = hit[1]
        return _drop_qualifiers(words, slot_hits), gram_hits

    def _analyse(self, words: list[_Word]) -> Reading:
        n = len(words)
        slot_hits, gram_hits = self._scan(words)
        # ---- keyword lists are not questions
        n_words = sum(1 for w in words if not w.flags & (_END | _BOUNDARY))
        slots_named = {s for _, _, p in slot_hits if p[0] != "place" for s in p[1]}
        hit_words = sum(b - a for a, b, p in slot_hits if p[0] != "place")
        n_hits = sum(1 for *_, p in slot_hits if p[0] != "place")
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
        asked: list[str] = []
        excluded: set[str] = set()
        places: list[str] = []
        details: list[tuple[str, str]] = []
        said: set[str] = set()
        is_open = confirm = question = False
        for s, e, end in sentences:
            grams = [h for h in gram_hits if s <= h[0] < e]
            hits = [h for h in slot_hits if s <= h[0] < e]
            asks = self._asks(words, s, e, end, grams)
            question = question or asks
            out = self._exclusions(words, s, e, grams, hits)
            has_place = any(h[2][0] == "place" for k, h in enumerate(hits) if k not in out)
            clause, statement = self._clauses(words, s, e, grams)
            # A value asks about its slot only in a clause that names no slot word: "would Friday
            # work?" asks the time, "which area would you like the Italian place in?" only the area.
            cued = {clause[a - s] for k, (a, _, p) in enumerate(hits) if p[0] == "cue" and k not in out}
            for k, (a, b, (kind, slots, value)) in enumerate(hits):
                if k in out:
                    if kind != "place":
                        excluded.update(slots)
                    continue
                if kind == "place":
                    places.append(value)
                elif kind == "value" and has_place:
                    details += [(slot, value) for slot in slots]
                elif asks and not statement[clause[a - s]] and (kind == "cue" or clause[a - s] not in cued):
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
            asked=tuple(asked), excluded=frozenset(excluded - set(asked)), open=is_open and not asked,
            question=question, confirm=confirm, places=tuple(dict.fromkeys(places)), details=tuple(details),
            said=frozenset(said), placed=placed)

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
        if first is not None and words[first].flags & (_WH | _AUX | _IMPERATIVE):
            return True
        if any(code == _REQUEST for _, _, code in grams):
            return True
        # "Your budget, please." A short sentence with a please is a request.
        return e - s <= 5 and any(words[i].flags & _PLEASE for i in range(s, e))

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
        # "not the price but the area": a negation sets aside the slot right after it.
        for i in range(s, e):
            if words[i].flags & _NEG and not (i > s and words[i - 1].raw == "or"):
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


def _drop_qualifiers(words: list[_Word], hits: list[_Hit]) -> list[_Hit]:
    """Slot words that only qualify another give way to it: "what kind of budget?" asks the
    budget ("kind of", "type of" qualify the next slot word); "the email address on the order"
    asks the email (a slot word after "on", "for", "in" ... locates the one before it)."""
    drop: set[int] = set()
    for k in range(len(hits) - 1):
        h, nxt = hits[k], hits[k + 1]
        if h[2][0] != "cue" or nxt[2][0] != "cue" or set(h[2][1]) & set(nxt[2][1]):
            continue
        between = [w.raw for w in words[h[1]:nxt[0]]]
        if between == ["of"]:
            drop.add(k)
        elif between and between[0] in _LOCATING and all(b in _DETERMINERS for b in between[1:]):
            drop.add(k + 1)
    return [h for k, h in enumerate(hits) if k not in drop] if drop else hits


def _new_question(words: list[_Word], i: int, e: int) -> bool:
    """Whether a new question starts at `i` after a conjunction ("... wifi, and what's your
    budget?"): "and", "or", "also" or "plus" followed by a question word or an auxiliary."""
    return (i + 1 < e and words[i].raw in _JOINING and bool(words[i + 1].flags & (_WH | _AUX)))


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
