"""The roles of a sentence's words: which slot words are listed together, which values a
question offers, which words only qualify or locate another, and how each place is offered."""

from __future__ import annotations

from bisect import bisect_left

from agentgym.users.understanding.grammar import (
    _ALTERNATIVE,
    _AUX,
    _BOUNDARY,
    _CONFIRM,
    _END,
    _FILLER,
    _IDIOM,
    _NEG,
    _OPEN,
    _RECOMMEND,
    _REQUEST,
    _SUBJECT,
    _WH,
    GAP_MAX,
)
from agentgym.users.understanding.words import _JOINING, _Hit, _Word

#: Prepositions after which a slot word only locates the one before it.
_LOCATING = frozenset({"on", "for", "in", "from", "with", "at", "under", "of"})
_DETERMINERS = frozenset({"the", "a", "an", "your", "this", "that", "my", "our"})
_LOCATING_OR_SUBJECT = _LOCATING | {"is", "are", "was", "were"}
#: Determiners that refer to a thing already in view ("at the hotel"), not to a kind of it.
_DEFINITE = frozenset({"the", "this", "that", "your", "my", "our"})
#: Determiners that point at the thing in view: "the hotel" beside another slot's word is the
#: place being discussed, not a question about its kind.
_REFERRING = frozenset({"the", "this", "that"})
#: Subject pronouns: an auxiliary before one opens a question ("may I ask"), whatever else it names.
_PRONOUNS = frozenset({"i", "we", "you", "he", "she", "it", "they"})
#: Words before an auxiliary that is also a value's word ("may") that make it the auxiliary ("if
#: I may", "there may be"), and words after it that do ("may I", "may be", "may not").
_MODAL_BEFORE = _PRONOUNS | {"there", "this", "that", "these", "those", "which", "who", "what", "one"}
_MODAL_AFTER = _PRONOUNS | {"be", "have", "not", "also", "well", "still", "only", "just", "need", "want", "take",
                            "ask", "help", "change", "differ", "vary", "apply", "cost", "require", "prefer"}


def _modal(words: list[_Word], i: int) -> bool:
    """Whether the auxiliary at `i` ("may") is used as one, by the words around it."""
    return (i > 0 and words[i - 1].raw in _MODAL_BEFORE) or (i + 1 < len(words) and words[i + 1].raw in _MODAL_AFTER)



def _roles(words: list[_Word], grams: list[tuple[int, int, str]], hits: list[_Hit], clause: list[int], s: int,
           e: int) -> dict[int, str]:
    """How each place of the sentence words[s:e] is offered, by token: ``alternative`` or
    ``recommend``. The nearest cue before a place in its own clause, or in the clause just
    before when that holds no other word of note, decides ("I'd go with A", "an alternative is
    B", "Top pick: A"); else the first after it in its clause or the next, before the next one
    ("B is also an option", "A - my pick", "A (best match)"). A booking question ("Shall I book
    A?") recommends; a place listed right after another with no cue of its own ("A or B")
    shares its role."""
    said = [(x, y, code) for x, y, code in grams if code in (_RECOMMEND, _ALTERNATIVE, _CONFIRM)
            and not _negated(words, s, x)]
    cues = sorted((x, code) for x, _, code in said)
    roles: dict[int, str] = {}
    if not cues:
        return roles
    # A slot word inside a cue ("book" in "what I would book: A") is the cue's, and no word of
    # note between the cue and the place.
    spans = [(x, y) for x, y, code in grams if code in (_RECOMMEND, _ALTERNATIVE, _CONFIRM)]
    noted = [h for h in hits if not any(x <= h[0] and h[1] <= y for x, y in spans)]
    prev: tuple[int, int] | None = None
    for a, b, payload in hits:
        if payload[0] != "place":
            continue
        c = clause[a - s]
        others = {clause[x - s] for x, _, p in noted if x != a}
        since = max([end for _, end, _ in noted if end <= a and clause[end - 1 - s] == c] +
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
    # "A is cheaper, so I'd recommend it", "A is better rated, so it is the one I'd suggest": a
    # recommendation of "it" is of the place named last before it, where that one has no role.
    for x, y, code in said:
        if code != _RECOMMEND or not _of_it(words, clause, s, x, y, e):
            continue
        before = [a for a, _, p in hits if p[0] == "place" and a < x]
        if before and before[-1] not in roles:
            roles[before[-1]] = _RECOMMEND
    return roles


#: Words that stand for a place named before them ("I'd recommend it", "that's my pick").
_IT = frozenset({"it", "that", "this"})


def _of_it(words: list[_Word], clause: list[int], s: int, x: int, y: int, e: int) -> bool:
    """Whether the cue at words[x:y] is said of "it": "recommend it", or in a clause opened by
    "it is", "that's" ("it is the one I would suggest", "that's my top pick")."""
    if y < e and words[y].raw == "it" and (y + 1 == e or words[y + 1].raw not in ("is", "was", "would", "will")):
        return True
    c = clause[x - s]
    start = next(i for i in range(s, x + 1) if clause[i - s] == c)
    for i in range(start, x):
        if words[i].raw in _IT and i + 1 < x and words[i + 1].raw in ("is", "was", "would", "will", "seems"):
            return True
        if not words[i].flags & (_FILLER | _BOUNDARY) and words[i].raw not in ("so", "and", "which", "then"):
            return False
    return False


def _negated(words: list[_Word], s: int, x: int) -> bool:
    """Whether the cue at words[x] is negated by one of the two words before it in its sentence
    ("I would not recommend B", "not my top pick")."""
    return any(words[i].flags & _NEG for i in range(max(s, x - 2), x))


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
        kind, next_kind = h[2][0], nxt[2][0]
        # Only a value after a slot word, or two cues, can give way; neither when they share a slot.
        if kind == "place" or (next_kind != "value" and (kind != "cue" or next_kind != "cue")) \
                or any(slot in nxt[2][1] for slot in h[2][1]):
            continue
        if next_kind == "value":
            gap = nxt[0] - h[1]  # the words between them, read only when one or two
            if gap == 2 and words[h[1]].raw in _LOCATING and words[h[1] + 1].raw in _DEFINITE:
                drop.add(k + 1)
            elif gap == 1 and words[h[1]].raw == "with" and kind == "value":
                drop.add(k)  # "a hotel with wifi?" asks about the wifi
            continue
        between = [w.raw for w in words[h[1]:nxt[0]]]
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


def _marks(words: list[_Word]) -> tuple[list[int], list[int]]:
    """Where a message's clauses break, and where its negations are, in order (a sentence's own
    are those within it). A clause breaks at a break word (a comma, "but" ...) and where a new
    question starts after a conjunction ("... wifi, and what's your budget?"): "and", "or",
    "also" or "plus" before a question word or an auxiliary of the same sentence."""
    breaks: list[int] = []
    negs: list[int] = []
    n = len(words)
    for i, w in enumerate(words):
        if w.flags & _BOUNDARY or (w.raw in _JOINING and i + 1 < n and not words[i + 1].flags & _END
                                   and words[i + 1].flags & (_WH | _AUX)):
            breaks.append(i)
        if w.flags & _NEG:
            negs.append(i)
    return breaks, negs


def _first(words: list[_Word], s: int, e: int) -> int | None:
    """The first word of words[s:e] that is neither a filler nor a break, or None."""
    for i in range(s, e):
        if not words[i].flags & (_FILLER | _BOUNDARY):
            return i
    return None


#: What may follow an opening "will" that asks: its subject ("Will you ...?", "Will the refund ...").
_WILL_SUBJECTS = _PRONOUNS | {"there", "the", "this", "that", "these", "those", "my", "your", "our", "their", "its"}


def _in_idiom(grams: list[tuple[int, int, str]], a: int) -> bool:
    """Whether the grammar phrase starting at `a` lies inside an idiom ("in order to proceed": a
    purpose, not the confirmation "proceed?")."""
    return any(x <= a < y for x, y, code in grams if code == _IDIOM)


def _clipped_intent(words: list[_Word], first: int, e: int) -> bool:
    """Whether a sentence opening with "will" (at `first`, ending before `e`) is a clipped note of
    what the assistant will do ("Will file the incident for payments."): no subject follows it."""
    return words[first].raw == "will" and first + 1 < e and words[first + 1].raw not in _WILL_SUBJECTS


#: Determiners: a question word they follow opens a clause of a statement, not a question ("where
#: the window has passed, ...", "what our policy allows is ...", "what a find"); a question word
#: asking without a question mark is followed by an auxiliary or the thing asked about ("which
#: area;", "what time works for you.").
_CLAUSE_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "its", "my", "our", "their"})
#: Subjects that follow "where", "when", "how" or "why" opening a clause ("when I tried to submit,
#: the room was taken", "how we'll go about it:"); after "what" or "which" a subject still asks
#: ("What I have so far: Sunday." asks the customer to check it; "what you need" asks).
_CLAUSE_SUBJECTS = (_PRONOUNS - {"you"}) | {"i've", "i'm", "i'll", "i'd", "we've", "we're", "we'll", "it's", "they're"}
#: The question words that may open such a clause, as written (a contraction, "what's", opens a
#: question: "What's the budget.").
_CLAUSE_WH = {"what": _CLAUSE_DETERMINERS, "which": _CLAUSE_DETERMINERS, "whatever": _CLAUSE_DETERMINERS,
              "where": _CLAUSE_DETERMINERS | _CLAUSE_SUBJECTS, "when": _CLAUSE_DETERMINERS | _CLAUSE_SUBJECTS,
              "how": _CLAUSE_DETERMINERS | _CLAUSE_SUBJECTS, "why": _CLAUSE_DETERMINERS | _CLAUSE_SUBJECTS}


def _opens_statement(words: list[_Word], first: int, e: int) -> bool:
    """Whether a sentence opening with an auxiliary or question word (at `first`, ending before
    `e`, with no question mark) opens a statement: a clipped note of intent (`_clipped_intent`)
    or a clause a question word opens (`_CLAUSE_WH`: "Where the window has passed, store credit
    is the most I can give.")."""
    after = _CLAUSE_WH.get(words[first].raw)
    if after is not None:
        return first + 1 < e and words[first + 1].raw in after
    return _clipped_intent(words, first, e)


#: What follows a question word after a colon when the clause is a statement's, not a question
#: ("The plan: when you confirm, I'll book it."): a determiner or any subject.
_AFTER_COLON_CLAUSE = _CLAUSE_DETERMINERS | _CLAUSE_SUBJECTS | _PRONOUNS | {"you'd", "you'll", "you're", "you've"}


def _asks_after_colon(words: list[_Word], i: int, e: int) -> bool:
    """Whether the colon at `i` (in a sentence ending before `e`) opens a question: a question
    word the thing asked about follows ("A few things first: which plan you are after, how much
    you'd spend ..."), as written (not "what's")."""
    return (words[i].raw == ":" and i + 2 < e and words[i + 1].flags & _WH and words[i + 1].raw in _CLAUSE_WH
            and words[i + 2].raw not in _AFTER_COLON_CLAUSE)


def _clauses(words: list[_Word], s: int, e: int, grams: list[tuple[int, int, str]],
             breaks: list[int]) -> tuple[list[int], list[bool]]:
    """The clauses of the sentence words[s:e] (split where the message's clauses break,
    `_marks`): per token its clause's number, and per clause whether it is a statement of the
    assistant's own ("I found ...", "There are ..."), which asks about nothing it names."""
    clause: list[int] = []
    statement: list[bool] = []
    c = s
    k = bisect_left(breaks, s)
    while c < e:
        while k < len(breaks) and breaks[k] < c:
            k += 1
        d = breaks[k] if k < len(breaks) and breaks[k] < e else e
        first = _first(words, c, d)
        statement.append(first is not None and bool(words[first].flags & _SUBJECT)
                         and not any(words[i].flags & _WH for i in range(c, d))
                         and not any(c <= a < d and code == _REQUEST for a, _, code in grams))
        clause += [len(statement) - 1] * (min(d + 1, e) - c)
        c = d + 1
    return clause, statement


#: A message that is mostly slot words is a keyword list when it names its slots twice over on
#: average, or names this many slots: no question asks about so many things at once.
SALAD_SLOTS = 8


def _keyword_list(words: list[_Word], hits: list[_Hit]) -> bool:
    """Whether a message is a keyword list, not a question: mostly slot words (`hits`), naming its
    slots twice over on average or `SALAD_SLOTS` of them. Values beside a place named are its
    description ("- match: X\n- apartment, Beachfront, 200 EUR\n- ok to book it?"), not keywords:
    only the slot words of such a message count, and so do the values a question offers or a
    statement tells (`_offered`, `_told_values`) not."""
    plain = "value" if any(p[0] == "place" for _, _, p in hits) else "place"
    slots_named = {s for _, _, p in hits if p[0] != "place" for s in p[1]}
    if len(slots_named) < SALAD_SLOTS and sum(1 for *_, p in hits if p[0] not in ("place", plain)) < max(
            6, 2 * len(slots_named)):
        return False  # too few hits counted even before the values offered are set apart
    offered = _offered(words, hits) | _glosses(words, hits) | _labels(words, hits)
    n_hits = sum(1 for k, (*_, p) in enumerate(hits) if p[0] not in ("place", plain) and k not in offered)
    if n_hits >= max(6, 2 * len(slots_named)) or len(slots_named) >= SALAD_SLOTS:
        n_words = sum(1 for w in words if not w.flags & (_END | _BOUNDARY))
        told = _told_values(words, hits)
        hit_words = sum(b - a for k, (a, b, p) in enumerate(hits)
                        if p[0] not in ("place", plain) and k not in offered and k not in told)
        return 2 * hit_words >= n_words
    return False


def _glosses(words: list[_Word], hits: list[_Hit]) -> set[int]:
    """Indexes (into `hits`) of the words that only gloss the slot named just before them, so
    the slot is named once: a slot word after its own qualifier ("max budget", "must-have
    amenities"), and the unit or first example in brackets after it ("budget (EUR)", "time
    (morning/afternoon/evening)", whose other examples `_offered` sets apart). A dump of
    synonyms side by side ("price budget cost") glosses nothing."""
    out: set[int] = set()
    for k in range(1, len(hits)):
        (a, _, p), (_, prev_end, prev) = hits[k], hits[k - 1]
        if not set(p[1]) & set(prev[1]) or p[0] == "place" or prev[0] == "place":
            continue
        between = [w.raw for w in words[prev_end:a]]
        if (prev[0] == "hint" and p[0] == "cue" and not between) or (between == ["("] and prev[0] == "cue"):
            out.add(k)
    return out


def _labels(words: list[_Word], hits: list[_Hit]) -> set[int]:
    """Indexes (into `hits`) of the slot words that label the question after them: the first
    slot word of its sentence, opening its clause and closed by a colon or a dash, whose question
    goes on to ask the same slot by a slot word or a hint ("**Cuisine:** what kind of food?",
    "Budget - max price per person?"). A terse assistant's form, not a keyword list: the slot is
    named once. A label over a value ("Area: Riverside?") labels nothing asked and counts, and so
    does one of a dash in a line that asks nothing, or over a word that is a label itself (dashes
    and colons also join the items of a list)."""
    out: set[int] = set()
    for k, (a, b, p) in enumerate(hits):
        if p[0] not in ("cue", "hint") or b >= len(words) or words[b].raw not in (":", "-"):
            continue
        if a > 0 and not words[a - 1].flags & (_END | _BOUNDARY):
            continue
        start = next((i + 1 for i in range(a - 1, -1, -1) if words[i].flags & _END), 0)
        if k > 0 and hits[k - 1][0] >= start:
            continue  # a label opens its question: "time - day?" closing a list of slot words labels nothing
        end = next((i for i in range(b, len(words)) if words[i].flags & _END), len(words))
        if words[b].raw == "-" and (end == len(words) or words[end].raw != "?"):
            continue
        # The question names the slot in a word that labels nothing itself: in "area - location -
        # price - budget?" each synonym opens the next item of a keyword list.
        if any(q[0] in ("cue", "hint") and set(q[1]) & set(p[1]) and not (d < len(words) and words[d].raw in (":", "-"))
               for c, d, q in hits[k + 1:] if c < end):
            out.add(k)
    return out


def _told_values(words: list[_Word], hits: list[_Hit]) -> set[int]:
    """The hits of `hits` that are values said in a statement ("1) Denim jeans, swap to size
    36."), in a message that also asks: what the assistant tells, not keywords. A message that
    recaps the items it found and then asks one thing ("... Email?") is read as a person would;
    a slot word counts wherever it stands, so a list of slot words stays a keyword list."""
    ends = [(i, w.raw) for i, w in enumerate(words) if w.flags & _END]
    if not any(raw == "?" for _, raw in ends):
        return set()
    out = set()
    for k, (a, _, payload) in enumerate(hits):
        if payload[0] != "value":
            continue
        end = next((raw for i, raw in ends if i >= a), "")
        if end in (".", "!"):
            out.add(k)
    return out
