"""The speed kernel of the engine: `words` and `analyse`, through which `Understanding.read`
reads every message, equal to the plain tokens and `Understanding._analyse` that
`Understanding.read_uncached` (the definition, in `reading`) goes through.

They compute what the plain code computes, in fewer passes, and skip only work whose result
the reading cannot use:

* the tokens are found by a pattern equal to the plain one, its alternatives in a quicker order;
* one pass finds the phrases (as `Understanding._scan` does) and, with them, where sentences end,
  where clauses break and where the negations are (`clauses._marks`); a word that opens no phrase
  and marks nothing costs one test, and each other word only the tests its bits call for
  (`_Word.scan`);
* the keyword-list test (`clauses._keyword_list`) runs only where enough slot words are named for
  it to hold: it needs six counted hits, or eight slots named;
* a sentence takes its hits by an index that moves on with the sentences, and one that names
  nothing of the slot layer asks, sets aside, proposes and names nothing: only whether it asks,
  its small talk, its open and confirmation questions and its statements count there, so its
  clauses, exclusions and roles are not worked out;
* an imperative after a break is looked for at the message's breaks only.

`tests/users/test_understanding_fast.py` checks the two against the plain code on the check-users
corpus, every message of the kept playtests and random strings, with every domain's engine.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import fields
from operator import attrgetter
from typing import Any

from agentgym.users.understanding.clauses import (
    _JOINING,
    _REFERRING,
    SALAD_SLOTS,
    _asks_after_colon,
    _asks_beyond,
    _clauses,
    _drop_qualifiers,
    _first,
    _gapped,
    _in_idiom,
    _joined,
    _keyword_list,
    _locating_open,
    _modal,
    _named_beside,
    _opens_statement,
    _roles,
)
from agentgym.users.understanding.grammar import (
    _ALTERNATIVE,
    _AUX,
    _BOUNDARY,
    _CONFIRM,
    _END,
    _EXCLUDE,
    _IDIOM,
    _IMPERATIVE,
    _NEG,
    _OPEN,
    _PLEASE,
    _POST_EXCLUDE,
    _RECOMMEND,
    _REQUEST,
    _SMALL_TALK,
    _WH,
)
from agentgym.users.understanding.understood import Reading
from agentgym.users.understanding.words import (
    _TOKENS_MAIL,
    _TOKENS_NO_MAIL,
    GAPS,
    LONGER,
    MARKS,
    ONE,
    SLOT,
    WORD_MEMO_SIZE,
    _Hit,
    _normalise,
    _Word,
)

__all__ = ["analyse", "repair", "words"]

_NONE: frozenset[int] = frozenset()
_STEM = attrgetter("stem")
#: The phrase classes by which `Understanding._exclusions` sets hits aside (with negations).
_SETS_ASIDE = frozenset({_EXCLUDE, _POST_EXCLUDE})


def words(u: Any, text: str) -> list[_Word]:
    """The words of `text`, as `Understanding.read_uncached` looks them up in `u`'s word table,
    read piece by piece: no token spans whitespace, and where the text has no "/" none depends
    on anything beyond its own piece (a dash or bullet standing alone is one between whitespace
    or the text's ends, a number's look-ahead meets whitespace where it meets a piece's end), so
    the words of a text are those of its pieces in turn, each piece's kept in `u._pieces`. A
    slash's look-behind reads across a space ("4 / 5"): a text with one is read whole."""
    text = _normalise(text)
    out: list[_Word] = []
    if "/" in text:
        known, word = u._words.get, u._word
        for raw in (_TOKENS_MAIL if "@" in text else _TOKENS_NO_MAIL).findall(text):
            out += known(raw) or word(raw)
        return out
    pieces = u._pieces
    for piece in text.split():
        got = pieces.get(piece)
        if got is None:
            got = _piece(u, piece)
        out += got
    return out


def _piece(u: Any, piece: str) -> tuple[_Word, ...]:
    """The words of one piece of a text between whitespace (`words`), kept while `u._pieces`
    has room."""
    known, word = u._words.get, u._word
    got = tuple(w for raw in (_TOKENS_MAIL if "@" in piece else _TOKENS_NO_MAIL).findall(piece)
                for w in (known(raw) or word(raw)))
    if len(u._pieces) < WORD_MEMO_SIZE:
        u._pieces[piece] = got
    return got


def _scan(u: Any, words: list[_Word]) -> tuple[list[_Hit], list[tuple[int, int, str]], list[int],
                                                           list[int], list[int]]:
    """`u._scan(words)`, with where the sentences end and `clauses._marks(words)` found in the
    same pass: (slot hits, grammar hits, ends, breaks, negations). Each word is looked at only for
    what its `scan` bits say it has; a word with none adds nothing and moves no phrase's cover."""
    stems = list(map(_STEM, words))
    slot_hits: list[_Hit] = []
    gap_hits: list[_Hit] = []
    gram_hits: list[tuple[int, int, str]] = []
    ends: list[int] = []
    breaks: list[int] = []
    negs: list[int] = []
    covered = 0
    n = len(words)
    owned = u._owned
    for i, w in enumerate(words):
        scan = w.scan
        if not scan:
            continue
        if scan & MARKS:
            flags = w.flags
            if flags & _END:
                ends.append(i)
            if flags & _BOUNDARY or (w.raw in _JOINING and i + 1 < n and not words[i + 1].flags & _END
                                     and words[i + 1].flags & (_WH | _AUX)):
                breaks.append(i)
            if flags & _NEG:
                negs.append(i)
        if scan & ONE:
            for code in w.gram[0]:
                gram_hits.append((i, i + 1, code))
        if scan & LONGER and i + 1 < n:
            for rest, length, code in w.gram[1].get(stems[i + 1], ()):
                if stems[i + 2:i + length] == rest:
                    gram_hits.append((i, i + length, code))
                    if code == _IDIOM:
                        covered = max(covered, i + length)
        if scan & GAPS:
            gap_hits += _gapped(words, stems, i)
        if scan < SLOT or i < covered:
            continue
        multi, single = w.multi, w.single
        hit = None
        if multi and i + 1 < n:
            for rest, length, payload in multi.get(stems[i + 1], ()):
                if stems[i + 2:i + length] == rest:
                    hit = (i, i + length, payload)
                    break
        if hit is None and single is not None:
            hit = (i, i + 1, single)
            if hit[2][0] == "value" and w.flags & _AUX and _modal(words, i):
                hit = None
        if hit is not None and owned and i > 0 and (words[i - 1].raw == "your" or words[i - 1].flags & _WH):
            mine = owned.get(tuple(stems[i:hit[1]]))
            if mine is not None:
                hit = (i, hit[1], mine)
        if hit is not None:
            if hit[2][0] == "place":
                hit = u._extend_place(words, hit)
            slot_hits.append(hit)
            covered = hit[1]
    if gap_hits:
        slot_hits = sorted(slot_hits + gap_hits, key=lambda h: h[0])
    return _drop_qualifiers(words, slot_hits) if len(slot_hits) > 1 else slot_hits, gram_hits, ends, breaks, negs


def analyse(u: Any, words: list[_Word]) -> Reading:
    """`u._analyse(words)` (see the module docstring for what it skips)."""
    n = len(words)
    slot_hits, gram_hits, ends, breaks, negs = _scan(u, words)
    if (len(slot_hits) >= 6 or sum(len(h[2][1]) for h in slot_hits) >= SALAD_SLOTS) \
            and _keyword_list(words, slot_hits):
        return Reading(salad=True, placed=True, question=True)
    placed = bool(slot_hits or gram_hits) or any(w.flags for w in words)
    sentences: list[tuple[int, int, str]] = []
    start = 0
    for i in ends:
        if i > start:
            sentences.append((start, i, words[i].raw))
        start = i + 1
    if start < n:
        sentences.append((start, n, ""))
    closing = ""
    for part in range(len(sentences) - 1, -1, -1):
        s, e, end = sentences[part]
        if end != ";":
            closing = end
        else:
            sentences[part] = (s, e, closing)
    joined_on = {part for part in range(1, len(sentences))
                 if words[sentences[part][0] - 1].raw == ";" or words[sentences[part][0]].raw == "-"}
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
    g = h = 0  # the hits, in order of their first word, of the sentences before this one
    for part, (s, e, end) in enumerate(sentences):
        while g < len(gram_hits) and gram_hits[g][0] < s:
            g += 1
        g_end = g
        while g_end < len(gram_hits) and gram_hits[g_end][0] < e:
            g_end += 1
        while h < len(slot_hits) and slot_hits[h][0] < s:
            h += 1
        h_end = h
        while h_end < len(slot_hits) and slot_hits[h_end][0] < e:
            h_end += 1
        grams, hits = gram_hits[g:g_end], slot_hits[h:h_end]
        g, h = g_end, h_end
        asks = _asks(words, s, e, end, grams, breaks) or (asked_before and part in joined_on)
        asked_before = asks
        question = question or asks
        if not hits:
            # Nothing of the slot layer: nothing asked, set aside or proposed, and small talk
            # covers no thing's name.
            if any(code == _SMALL_TALK for _, _, code in grams):
                chatter = True
        else:
            # Only an exclusion phrase, a phrase that sets aside what comes before it, or a
            # negation sets a hit aside (`Understanding._exclusions`).
            out = u._exclusions(words, s, e, grams, hits, negs) \
                if any(code in _SETS_ASIDE for _, _, code in grams) or bisect_left(negs, s) < bisect_left(negs, e) \
                else _NONE
            has_place = any(h[2][0] == "place" for k, h in enumerate(hits) if k not in out)
            clause, statement = _clauses(words, s, e, grams, breaks)
            for a, _, code in grams:
                if code == _SMALL_TALK and not any(h[0] <= a < h[1] and h[2][0] in ("value", "place") for h in hits):
                    statement[clause[a - s]] = chatter = True
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
                offered = {i for a, b in opens if a > 0 and words[a - 1].raw == "or" for i in range(a, b)}
                opens = [(a, b) for a, b in opens if a not in offered]
                beyond = {clause[a - s] for a, b in opens if _asks_beyond(words, a, b)}
                if hinted:
                    located.update(k for k, (a, _, p) in enumerate(hits) if p[0] == "hint" and clause[a - s] not in cued
                                   and (clause[a - s] in beyond or any(x <= a < y for x, y in opens)))
                scoped.update(slot for k in located for slot in hits[k][2][1])
                opened = beyond | {clause[a - s] for a, b in opens if b - a > 1}
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
                        continue
                    asked += [slot for slot in slots if slot not in asked]
        if asks:
            scopes = u._scopes(words, s, e, grams) if any(code == _EXCLUDE for _, _, code in grams) else ()
            for a, b, code in grams:
                if code == _OPEN and not any(x <= a < y for x, y in scopes):
                    is_open = True
                elif code == _CONFIRM and not _in_idiom(grams, a):
                    confirm = True
        else:
            said.update(code[5:] for _, _, code in grams if code.startswith("said:"))
    return _reading(tuple(asked), frozenset(excluded - set(asked)), is_open and scoped >= set(asked), question, confirm,
                    tuple(dict.fromkeys(places)), tuple(details), tuple(values), tuple(dict.fromkeys(recommended)),
                    tuple(dict.fromkeys(alternatives)), frozenset(said), False, placed, False, chatter)


def _asks(words: list[_Word], s: int, e: int, end: str, grams: list[tuple[int, int, str]], breaks: list[int]) -> bool:
    """`Understanding._asks(words, s, e, end, grams)`: an imperative after a break is looked for
    at the message's breaks (`breaks`, `clauses._marks`), which hold every break word."""
    if end == "?":
        return True
    first = _first(words, s, e)
    if first is not None and words[first].flags & (_AUX | _IMPERATIVE | (_WH if end != "!" else 0)) \
            and not _opens_statement(words, first, e):
        return True
    inner = breaks[bisect_left(breaks, s):bisect_left(breaks, e - 1)]
    if any(words[i].flags & _BOUNDARY and words[i + 1].flags & _IMPERATIVE for i in inner):
        return True
    if end != "!" and any(_asks_after_colon(words, i, e) for i in inner):
        return True
    if any(code == _REQUEST for _, _, code in grams):
        return True
    return bool(words[e - 1].flags & _PLEASE) or (e - s <= 5 and any(words[i].flags & _PLEASE for i in range(s, e)))


_new = object.__new__
(_set_asked, _set_excluded, _set_open, _set_question, _set_confirm, _set_places, _set_details, _set_values,
 _set_recommended, _set_alternatives, _set_said, _set_salad, _set_placed, _set_corrected, _set_chatter) = (
    getattr(Reading, f.name).__set__ for f in fields(Reading))


def _reading(asked: Any, excluded: Any, is_open: bool, question: bool, confirm: bool, places: Any, details: Any,
             values: Any, recommended: Any, alternatives: Any, said: Any, salad: bool, placed: bool, corrected: bool,
             chatter: bool) -> Reading:
    """``Reading(...)`` of every field, in the order `Reading` declares them, each stored in its
    slot: the frozen dataclass's own `__init__` stores each through `object.__setattr__`."""
    r = _new(Reading)
    _set_asked(r, asked)
    _set_excluded(r, excluded)
    _set_open(r, is_open)
    _set_question(r, question)
    _set_confirm(r, confirm)
    _set_places(r, places)
    _set_details(r, details)
    _set_values(r, values)
    _set_recommended(r, recommended)
    _set_alternatives(r, alternatives)
    _set_said(r, said)
    _set_salad(r, salad)
    _set_placed(r, placed)
    _set_corrected(r, corrected)
    _set_chatter(r, chatter)
    return r


#: A word `repair` has not met yet (its fix may be None).
_UNSEEN = object()


def repair(u: Any, words: list[_Word]) -> list[_Word] | None:
    """`u._repair(words)`: a word with a grammar flag, or one that opens a grammar or slot-layer
    phrase, has no fix (`Understanding._fix` says None first), so only the others are looked up
    (and kept in `u._fixes`, as there)."""
    out = None
    fixes = u._fixes
    for i, w in enumerate(words):
        if w.flags or w.scan & (ONE | LONGER | SLOT):
            continue
        fix = fixes.get(w.raw, _UNSEEN)
        if fix is _UNSEEN:
            fix = u._fix(w)
            if len(fixes) < WORD_MEMO_SIZE:
                fixes[w.raw] = fix
        if fix is not None:
            if out is None:
                out = list(words)
            out[i] = u._word(fix)[0]
    return out
