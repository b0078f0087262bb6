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
* English grammar shared by every family (``agentgym/users/understanding/grammar.json``): question words,
  auxiliaries that open a yes/no question, request phrases ("tell me", "I'd love to know",
  "mind sharing", "if you could share", "I meant"), imperatives ("share your budget"), exclusions
  ("no need to tell me", "besides", "other than", "not X but Y", "X is fine"), confirmations
  ("shall I book it?"), small talk ("how are you today?", "is it sunny where you are?", "have a
  good weekend") and idioms whose words name no slot ("for the time being", "so kind as to"). A
  grammar phrase may hold a placeholder, ``<periods>``, standing for each word of that list.

The message is then read sentence by sentence. A sentence asks when it ends with a question mark,
opens with a question word (not one opening a clause: "where the window has passed, ..."), an
auxiliary or an imperative, holds a request phrase, ends with
"please" or is a short one with it; a list under an asking sentence (items opened by a dash or a
bullet, "What should I look for? - the area - a price cap") asks as that sentence does. Within an asking sentence the slots named are asked, except
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

`Understanding.read` returns an immutable `Reading` (`understood`); readings are memoised per text
in a small bounded table (the same text always reads the same) and computed by the speed kernel
(`_fast`), and `Understanding.read_uncached` is the plain computation both must equal.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

from agentgym.users.understanding import _fast
from agentgym.users.understanding.clauses import (
    _JOINING,
    _REFERRING,
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
    _marks,
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
    _NEG_FILLER,
    _OPEN,
    _PLEASE,
    _POST_EXCLUDE,
    _RECOMMEND,
    _REQUEST,
    _SMALL_TALK,
    _WH,
    Lexicon,
    _grammar,
)
from agentgym.users.understanding.understood import Reading
from agentgym.users.understanding.words import (
    _DASHES,
    _NO_GRAM,
    _NO_MULTI,
    _TOKEN,
    WORD_MEMO_SIZE,
    _by_second,
    _expand,
    _Hit,
    _normalise,
    _one_edit,
    _phrase_stems,
    _plural,
    _stem,
    _Word,
    tokens,
)

__all__ = ["Reading", "Understanding", "compile_understanding", "resolve_place"]

#: Readings memoised per Understanding; the table is emptied when full (readings are immutable).
MEMO_SIZE = 4096
#: Texts longer than this are read without the memo (an agent rarely repeats a long message).
MEMO_MAX_CHARS = 2000
#: Typos are forgiven only in words at least this long (shorter ones are too easy to confuse).
TYPO_MIN_LEN = 5
#: A word `_repair` has not met yet (its fix may be None).
_UNSEEN = object()
#: Compound questions ("... and ...") of at most this many tokens that ask something are still
#: checked for a typo (one slot word misspelt); other messages only when they ask nothing.
TYPO_COMPOUND_WORDS = 10


class Understanding:
    """A compiled lexicon: reads messages into `Reading`s. Build with `compile_understanding`."""

    def __init__(self, lexicon: Lexicon, values: Mapping[str, Iterable[str]], places: Iterable[str],
                 aliases: Mapping[str, str] | None = None) -> None:
        g = _grammar()
        self._g = g
        #: Phrases where a domain's value overrode the family's word for a slot, with that word's
        #: reading: after "your" it is the person's own, and after a question word it is asked
        #: about ("your email", "which email" in a domain with an email service ask the address).
        self._owned: dict[tuple[str, ...], tuple[str, tuple[str, ...], str]] = {}
        slot_phrases = self._slot_phrases(lexicon, values, places, aliases or {})
        self._single: dict[str, tuple[str, tuple[str, ...], str]] = {}
        multi: dict[str, list[tuple[list[str], int, tuple[str, tuple[str, ...], str]]]] = {}
        for key, payload in slot_phrases.items():
            if len(key) == 1:
                self._single[key[0]] = payload
            else:
                multi.setdefault(key[0], []).append((list(key[1:]), len(key), payload))
        # By the second stem too: a word that opens many phrases costs one look-up, not one
        # comparison per phrase.
        self._multi = {k: _by_second(sorted(v, key=lambda c: -c[1])) for k, v in multi.items()}
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
        #: The words of each piece of a message between whitespace, as the speed kernel reads
        #: them (`_fast.words`; bounded as `_words` is).
        self._pieces: dict[str, tuple[_Word, ...]] = {}
        self._memo: dict[str, Reading] = {}
        #: `_fix` of each word met by a repair, by its text (bounded as `_words` is).
        self._fixes: dict[str, str | None] = {}
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

    def _slot_phrases(self, lexicon: Lexicon, values: Mapping[str, Iterable[str]], places: Iterable[str],
                      aliases: Mapping[str, str]) -> dict[tuple[str, ...], tuple[str, tuple[str, ...], str]]:
        """The slot layer: each phrase's stems -> (kind: cue, hint, value or place, its slots, its value)."""
        table: dict[tuple[str, ...], tuple[str, tuple[str, ...], str]] = {}

        def add(phrase: str, kind: str, slot: str | None, value: str, generic: bool = False) -> None:
            key = tuple(self._stems(phrase))
            if not key:
                return
            old = table.get(key)
            if generic and old is not None and old[0] not in ("cue", "hint"):
                return  # the domain's own word for it says what it is
            if kind == "value" and not phrase[:1].isupper() and any(
                    table.get(key[:j], ("",))[0] == "cue" and slot in table[key[:j]][1] for j in range(1, len(key) + 1)):
                # A domain listing its own slot's word ("cuisine", "kind of") still asks about it;
                # a value spelt as a name ("City Center") names it.
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
        slot_of = {p.lower(): slot for slot, phrases in values.items() for p in phrases}
        for alias, value in aliases.items():
            add(alias, "value", slot_of[value], value)
        for slot, phrases in lexicon.values.items():
            own = [(set(self._stems(v)), v.lower()) for v in values.get(slot, ())]
            for p in phrases:
                add(p, "value", slot, _domain_value(set(self._stems(p)), own) or p.lower(), generic=True)
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
            out.append(_Word(sub, s, flags, self._single.get(s), self._multi.get(s, _NO_MULTI), self._gram.get(s, _NO_GRAM),
                             self._gaps.get(s, ())))
        got = tuple(out)
        if len(self._words) < WORD_MEMO_SIZE:
            self._words[raw] = got
        return got

    # -------------------------------------------------------------- reading
    def read(self, text: str) -> Reading:
        """What `text` says (memoised per text; equal to `read_uncached`, through the speed kernel
        `_fast`)."""
        got = self._memo.get(text)
        if got is None:
            got = self._read(_fast.words(self, text), _fast.analyse, _fast.repair)
            if len(text) <= MEMO_MAX_CHARS:
                if len(self._memo) >= MEMO_SIZE:
                    self._memo.clear()
                self._memo[text] = got
        return got

    def read_uncached(self, text: str) -> Reading:
        """What `text` says, computed afresh by the plain code: the definition `read` equals."""
        words: list[_Word] = []
        known, word = self._words.get, self._word
        for raw in _TOKEN.findall(_normalise(text)):
            words += known(raw) or word(raw)
        return self._read(words, Understanding._analyse, Understanding._repair)

    def _read(self, words: list[_Word], analyse: Callable[[Understanding, list[_Word]], Reading],
              repair: Callable[[Understanding, list[_Word]], list[_Word] | None]) -> Reading:
        """The reading of a message's `words`, each analysis by `analyse` and the repair by `repair`
        (`_analyse` and `_repair`, or their kernels)."""
        if not words:
            return Reading()
        reading = analyse(self, words)
        if not reading.question or reading.places or reading.salad:
            return reading
        if not reading.asked:
            # A question about nothing it names, or only an open one ("any budegt in mind?" is
            # open until the slot word is read right): a repair that finds what it asks counts.
            repaired = repair(self, words)
            if repaired is not None:
                again = analyse(self, repaired)
                if again.asked or (again.open and not reading.open):
                    return replace(again, corrected=True)
        elif len(words) <= TYPO_COMPOUND_WORDS and any(w.raw in _JOINING for w in words):
            # A short compound question may hold a typo beside a word read right ("wich service
            # and what severty?"): the repair counts when it only adds to what was asked.
            repaired = repair(self, words)
            if repaired is not None:
                again = analyse(self, repaired)
                if set(again.asked) > set(reading.asked) and again.open == reading.open:
                    return replace(again, corrected=True)
        return reading

    def _repair(self, words: list[_Word]) -> list[_Word] | None:
        """`words` with each unknown longer word replaced by the one slot word within one edit of
        it, or None when nothing could be repaired."""
        changed = False
        out = list(words)
        fixes = self._fixes
        for i, w in enumerate(words):
            fix = fixes.get(w.raw, _UNSEEN)
            if fix is _UNSEEN:
                fix = self._fix(w)
                if len(fixes) < WORD_MEMO_SIZE:
                    fixes[w.raw] = fix
            if fix is not None:
                out[i:i + 1] = [self._word(fix)[0]]
                changed = True
        return out if changed else None

    def _fix(self, w: _Word) -> str | None:
        """The slot word a message word is a typo of (the first within one edit of it), or None
        for a word that is known, short or not a word. A word's fields all follow from its text
        (`_word`), and the typo tables never change, so `_repair` keeps the answer per text."""
        if w.flags or w.single or w.multi or w.gram is not _NO_GRAM or len(w.raw) < TYPO_MIN_LEN - 1 \
                or not w.raw.isalpha():
            return None
        if w.stem in self._known_stems:
            return None
        hits = sorted({c for k in (w.raw, *(w.raw[:j] + w.raw[j + 1:] for j in range(len(w.raw))))
                       for c in self._fuzzy.get(k, ()) if _one_edit(w.raw, c)})
        return hits[0] if hits else None

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
            if w.multi and i + 1 < n:
                for rest, length, payload in w.multi.get(stems[i + 1], ()):
                    if stems[i + 2:i + length] == rest:
                        hit = (i, i + length, payload)
                        break
            if hit is None and w.single is not None:
                hit = (i, i + 1, w.single)
                if hit[2][0] == "value" and w.flags & _AUX and _modal(words, i):
                    hit = None  # "May I ask ...", "if I may ask", "it may be": the auxiliary, not the month
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
        if _keyword_list(words, slot_hits):  # a keyword list is no question
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
        breaks, negs = _marks(words)
        # Parts joined by semicolons are one list ("Could you tell me: the area; your budget;
        # any minimum rating?"): each part asks as the list's closing mark says, and a part after
        # one that asks asks too. So does a list of items under a question, each opened by a dash
        # or bullet ("What should I look for? - the area - a price cap"): its items are what the
        # question asks.
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
        for part, (s, e, end) in enumerate(sentences):
            grams = [h for h in gram_hits if s <= h[0] < e]
            hits = [h for h in slot_hits if s <= h[0] < e]
            asks = self._asks(words, s, e, end, grams) or (asked_before and part in joined_on)
            asked_before = asks
            question = question or asks
            out = self._exclusions(words, s, e, grams, hits, negs)
            has_place = any(h[2][0] == "place" for k, h in enumerate(hits) if k not in out)
            clause, statement = _clauses(words, s, e, grams, breaks)
            for a, _, code in grams:
                if code == _SMALL_TALK and not any(h[0] <= a < h[1] and h[2][0] in ("value", "place") for h in hits):
                    # "How are you today?", "Is it sunny where you are?": the clause is about the
                    # person, and asks about nothing it names (a thing's name is none: "the rain jacket").
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
                    elif code == _CONFIRM and not _in_idiom(grams, a):
                        confirm = True
            else:
                said.update(code[5:] for _, _, code in grams if code.startswith("said:"))
        return Reading(
            asked=tuple(asked), excluded=frozenset(excluded - set(asked)), open=is_open and scoped >= set(asked),
            question=question, confirm=confirm, places=tuple(dict.fromkeys(places)), details=tuple(details),
            values=tuple(values), recommended=tuple(dict.fromkeys(recommended)),
            alternatives=tuple(dict.fromkeys(alternatives)), said=frozenset(said), placed=placed, chatter=chatter)

    # -------------------------------------------------------------- sentence helpers
    def _asks(self, words: list[_Word], s: int, e: int, end: str, grams: list[tuple[int, int, str]]) -> bool:
        if end == "?":
            return True
        first = _first(words, s, e)
        # "What a week it has been!": a question word opening an exclamation asks nothing.
        if first is not None and words[first].flags & (_AUX | _IMPERATIVE | (_WH if end != "!" else 0)) \
                and not _opens_statement(words, first, e):
            return True
        # An imperative opening a later clause asks as well ("To narrow it down, please share:").
        if any(words[i].flags & _BOUNDARY and words[i + 1].flags & _IMPERATIVE for i in range(s, e - 1)):
            return True
        # So does a question word opening the list after a colon ("It would help to know a few
        # things: which plan you are after, how much you'd spend ...").
        if end != "!" and any(_asks_after_colon(words, i, e) for i in range(s, e - 1)):
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
                    hits: list[tuple[int, int, Any]], negs: list[int]) -> set[int]:
        """Indexes (into `hits`) of the slot-layer hits an exclusion sets aside (`negs`: where the
        message's negations are, `_marks`)."""
        out: set[int] = set()
        negs = negs[bisect_left(negs, s):bisect_left(negs, e)]
        if not grams and not negs:
            return out
        scopes = self._scopes(words, s, e, grams)
        for k, (a, _, _) in enumerate(hits):
            if any(x <= a < y for x, y in scopes):
                out.add(k)
        # "not the price but the area": a negation sets aside the slot right after it, unless it
        # is part of a request ("I'm not sure how long it should be" asks the length).
        requests = [(a, b) for a, b, code in grams if code == _REQUEST]
        for i in negs:
            if not (i > s and words[i - 1].raw == "or") and not any(a <= i < b for a, b in requests):
                j = i + 1
                while j < e and j - i <= 3 and words[j].flags & _NEG_FILLER and not words[j].single:
                    j += 1
                # The run of values of one slot it opens goes with it ("..., not Monday morning":
                # the day and the slot of the day alike).
                end, slots = -1, None
                for k, (a, b, p) in enumerate(hits):
                    if a == j or (a == end and p[0] == "value" and p[1] == slots):
                        out.add(k)
                        end, slots = b, p[1] if p[0] == "value" else None
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
                # "A would be my pick, but it is booked": a run of breaks between the clauses.
                while c > s and words[c].flags & _BOUNDARY and words[c - 1].flags & _BOUNDARY \
                        and words[c - 1].raw != ")":
                    c -= 1
                # "A (a cabin, 100 EUR), and it is not available": the comma after the aside.
                if c > s and words[c].flags & _BOUNDARY and words[c - 1].raw == ")":
                    c -= 1
                if words[c].raw == ")":
                    while c > s and words[c].raw != "(":
                        c -= 1
                while c > s and not words[c - 1].flags & _BOUNDARY:
                    c -= 1
                out.update(k for k, (h, _, p) in enumerate(hits) if c <= h < a and p[0] == "place")
        return out

    @staticmethod
    def _extend_place(words: list[_Word], hit: tuple[int, int, Any]) -> tuple[int, int, Any]:
        """A place name with the number or "ii" written after it ("Garden Apartments 5 II")."""
        a, b, (kind, slots, value) = hit
        while b < len(words) and (words[b].raw == "ii" or (words[b].raw.isdigit() and len(words[b].raw) == 1)):
            value = f"{value} {words[b].raw}"
            b += 1
        return a, b, (kind, slots, value)



_NONE: frozenset[int] = frozenset()


def _domain_value(stems: set[str], own: list[tuple[set[str], str]]) -> str | None:
    """The one domain value of a slot whose words hold a generic value word's and more, if
    exactly one does: there the family's shorter word can only mean it ("parking" where the
    stays have "free parking", "outlets" where the cafes have "power outlets")."""
    longer = [value for words, value in own if stems < words]
    return longer[0] if len(longer) == 1 else None


def compile_understanding(lexicon: Lexicon, values: Mapping[str, Iterable[str]] | None = None,
                          places: Iterable[str] = (), aliases: Mapping[str, str] | None = None) -> Understanding:
    """An `Understanding` of `lexicon`, plus a domain's `values` (slot -> phrases that name a value
    of it, e.g. its areas), the `places` one may propose by name (names and ids) and `aliases`
    (a shorter phrase -> the value of `values` it names: "sat" -> "saturday"). Build it once per
    domain and keep it: compiling costs far more than reading a message."""
    return Understanding(lexicon, values or {}, places, aliases)


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
