"""Words as the engine reads them: tokens (contractions expanded), the light stemmer (the one
stemmer of the package: the agents' reading of key names uses it too), the analysed word the
reading works on, and the one-edit test by which a typo is forgiven."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from agentgym.users.understanding.grammar import _BOUNDARY, _END, _NEG, _grammar

__all__ = ["SENTENCE_BREAK", "singular", "stem", "tokens", "without_abbreviation_stops"]

_TOKEN = re.compile(
    r"[a-z0-9_.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+"  # an e-mail address, whole
    r"|\d+(?:\.\d+)?(?![a-z_])"  # a number, decimals kept ("4.5" is not two sentences)
    r"|[a-z0-9_]+(?:'[a-z]+)*"  # a word, with its contraction ("what's")
    r"|[?!.;:,()]"
    r"|(?<![0-9])(?<![0-9] )/(?! ?[0-9])"  # a slash between words ("morning / afternoon"): a list's
    # separator; one beside a figure ("4.5/5", "24/7") stays part of it
    r"|(?<!\S)-+(?!\S)|[\u2013\u2014]"  # a dash standing alone (not a hyphen inside a word)
    r"|(?<!\S)[*\u2022](?!\S)"  # a list's bullet, read as a dash
)
#: `_TOKEN`, its alternatives put where no token can differ: a word that opens with a letter
#: is tried first (the number alternative before it matches only at a digit), each look-behind
#: comes after the character it guards (one test of that character first rules most places
#: out), and the e-mail address alternative only in a text with an "@" (none matches without
#: one); in such a text it is tried first, as there.
_TOKENS_NO_MAIL = re.compile(
    r"[a-z_][a-z0-9_]*(?:'[a-z]+)*"
    r"|\d+(?:\.\d+)?(?![a-z_])"
    r"|[a-z0-9_]+(?:'[a-z]+)*"
    r"|[?!.;:,()]"
    r"|/(?<![0-9]/)(?<![0-9] /)(?! ?[0-9])"
    r"|-(?<!\S-)-*(?!\S)|[\u2013\u2014]"
    r"|[*\u2022](?<!\S[*\u2022])(?!\S)"
)
_TOKENS_MAIL = re.compile(r"[a-z0-9_.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+|" + _TOKENS_NO_MAIL.pattern)
_DASHES = {"\u2013": "-", "\u2014": "-", "*": "-", "\u2022": "-"}
#: Distinct words (and pieces of text between whitespace) remembered per engine; past it a word is
#: analysed afresh each time, so a stream of garbage cannot grow memory without bound.
WORD_MEMO_SIZE = 50_000


def stem(word: str) -> str:
    """A light stem of a lower-cased word: plural and -ing/-ed endings and a final -e removed, so
    inflections meet ("prices", "priced", "pricing" -> "pric"; "facilities" -> "facility")."""
    return _stem(word, _grammar().unstemmed)


def singular(word: str) -> str:
    """A lower-cased word without its plural ending ("facilities" -> "facility", "boxes" ->
    "box"): the first half of `stem`."""
    return _singular(word, _grammar().unstemmed)


def _singular(w: str, keep: frozenset[str]) -> str:
    if len(w) <= 3 or w in keep or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("es") and (w[-3] in "sxz" or w[-4:-2] in ("ch", "sh")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _stem(w: str, keep: frozenset[str]) -> str:
    if len(w) <= 3 or w in keep or not w.isalpha():
        return w
    w = _singular(w, keep)
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
    text = _normalise(text)
    for raw in (_TOKENS_MAIL if "@" in text else _TOKENS_NO_MAIL).findall(text):  # `_TOKEN`'s tokens
        out += _expand(_DASHES.get(raw, raw), g.contractions)
    return out


#: Abbreviations whose full stops end no sentence ("any amenities (e.g. parking, a pool)?"), and
#: those that end one only before a capitalised word ("a pool, a gym etc. What else?"); never
#: inside an e-mail address or a dotted name ("jane.e.g@example.com" stays as it is). One pass.
_ABBREVIATIONS = re.compile(r"(?<![\w.@])(?:(?:(e)\.(g)\.?|(i)\.(e)\.?|(vs)\.?)(?![\w@.])"
                            r"|(etc|incl|approx|esp)\.(?!\s+[A-Z])(?![\w@]))", re.IGNORECASE)


def _joined(m: re.Match[str]) -> str:
    return "".join(g for g in m.groups() if g)


#: Where a sentence ends and the next begins (after `without_abbreviation_stops`, an
#: abbreviation's full stop ends none): a run of whitespace after ".", "?" or "!",
#: ``(?<=[.?!])\s+``, the look-behind written after the run's first character (the same
#: matches; the search looks for whitespace first rather than trying the look-behind at every
#: place of a text).
SENTENCE_BREAK = re.compile(r"\s(?<=[.?!]\s)\s*")


#: The abbreviations whose full stop `_ABBREVIATIONS` takes out, as written (lower case): one
#: of its matches changes the text only where it holds a stop ("vs" alone is joined back as is).
_STOPPED = ("e.g", "i.e", "vs.", "etc.", "incl.", "approx.", "esp.")


def without_abbreviation_stops(text: str) -> str:
    """`text` with the full stops of abbreviations that end no sentence taken out ("e.g." ->
    "eg"), so a split at full stops finds sentences (`_ABBREVIATIONS`)."""
    if "." not in text:
        return text
    # An ASCII text with none of `_STOPPED` in any case is one the pattern leaves as it is: a
    # few substring tests stand in for its scan, which the look-behind makes slow. (Outside
    # ASCII, case-insensitive matching has more forms than `str.lower` gives: "\u017f" is "s".)
    if text.isascii():
        low = text.lower()
        if not any(a in low for a in _STOPPED):
            return text
    return _ABBREVIATIONS.sub(_joined, text)


#: The end of a line that no mark ends (a list's item, a table's row, a heading): a line break
#: ends its sentence, so a plan laid out in lines is read line by line, as it is written ("1.
#: I'll book it for 45 minutes" over "Shall I go ahead?" states the length, it does not ask it).
#: A line ending in a colon or a comma leads into the next one ("Could you tell me:"), and so
#: does a line the next one continues in lower case (a sentence wrapped: "What's the order\n
#: number?").
_OPEN_LINE_END = re.compile(r"(?<=[^\s.?!;:,])[ \t]*(?=\n(?![ \t]*[a-z]))")
#: A numbered or lettered list's marker at a line's start ("1. the area", "2) your budget", "b)
#: the day"): a bullet, as a dash is, so the items under "Please tell me:" are what it asks (a
#: "1." ends no sentence).
_NUMBERED = re.compile(r"^([ \t]*)(?:\(?\d{1,2}[.)]|\(?[a-z]\))(?=[ \t])", re.M)
#: A line that only says questions follow ("### Questions", "**A few questions:**", "A few quick
#: ones:"): it asks what the list under it names, as "Questions?" does.
_QUESTIONS_LEAD = re.compile(r"^([ \t]*(?:#+[ \t]*)?(?:\*\*)?(?:(?:here|are|a|some|few|quick|open|couple|of|two|three|my)[ \t]+)*"
                             r"(?:questions?|quick ones)(?:[ \t]+(?:for you|first))?)(?:\*\*)?[ \t]*:?(?:\*\*)?[ \t]*$", re.M | re.I)


#: A markdown table's header row and the rule under it ("| Name | Area | Rating |" over
#: "|---|---|---|"): column labels, which name slots without asking or saying anything of them.
_TABLE_HEAD = re.compile(r"^[ \t]*\|[^\n]*\|[ \t]*\n[ \t]*\|[ \t]*:?-{2,}[-:| \t]*\|?[ \t]*$", re.M)


#: An ellipsis that trails off inside a sentence ("the setting (rooftop, garden...), the area?",
#: "maybe... the harbor?"): a pause, as a comma is, where the sentence goes on in lower case or
#: after a bracket or a comma. One before a capital or at the end ends its sentence.
_INNER_ELLIPSIS = re.compile(r"(?:\.{2,}|\u2026)(?=[ \t]*(?:[a-z0-9),;:]))")


#: A request or a question that points back to the list before it ("... I need: area, style and
#: the day. Please list these.", "Open points: area, style. Any of these that matter to you?"):
#: the list is what it asks about, as it would be with a question mark.
_ASKS_FOR_THE_ABOVE = re.compile(r"(?<=[a-z0-9)\]])\.(?=\s+(?:(?:(?:could|can|would) you\s+)?(?:please\s+|kindly\s+)?(?:list|tell me|give me|send me|share|"
                                 r"provide|state|let me know)\s+(?:these|those|them|the above|each of (?:these|them))\b|"
                                 r"(?:do |does |are |is )?(?:any|which|what about any) of (?:these|those|them)\b))")


#: A lead that says the list after its colon is what the assistant still needs from the user ("I
#: need: area, budget, rating.", "To search we need: ...", "Details needed: ...", "Needed to book:
#: ...", "Still missing: ..."): it asks the list, as "tell me:" does. The colon is what makes it a
#: request: "I need to check availability" or "that's all I need" ask nothing, nor do "Details
#: needed: none", a place's lack ("Wild Plate is still missing: a private room") and a bare
#: "Needed:", which as often heads a recap of what the user said.
_PURPOSE = r"(?: (?:to|for) [a-z]+(?: [a-z]+){0,2})"
_NEEDS_LEAD = re.compile(
    r"(?<![a-z'])(?<!is )(?<!are )(?<!was )(?:"
    r"(?:i|we)(?: will| would|'ll|'d)? need(?: from you)?|needed from you"
    # "I need three things:", "we need a few quick answers from you first:"
    r"|(?:i|we)(?: will| would|'ll|'d)? (?:just |still |only )?need (?:a few |a couple of |two |three |four |five |some |"
    r"several )?(?:more |quick |short |small )?(?:things|bits|points|answers|pieces of (?:info|information))"
    r"(?: from you)?(?: first)?"
    # "To narrow it down:", "Questions:", "Three quick questions first:" ("Before I search:" as
    # often heads a recap of what the user said)
    r"|to narrow (?:it|things|this|that|the (?:search|options|list|choice)) down"
    r"|(?:(?:a few|some|two|three|four|five|my|quick|open|short) )*questions?(?: for you)?(?: first)?"
    rf"|(?:info|information|details?) needed{_PURPOSE}?|needed{_PURPOSE}|required{_PURPOSE}"
    r"|(?:required|missing) (?:info|information|details)|still (?:open|missing)"
    r"|(?:open|remaining) (?:points|questions|items|details)"
    r"|(?:info|information|details?|the following)(?: (?:is|are))? (?:kindly )?requested"
    r")[ \t]*:(?![ \t]*(?:none|nothing|n/a)\b)")
#: A request put in the passive ("it is requested that the currency be indicated (EUR, USD)"): it
#: asks what it names, as "tell me" does.
_PASSIVE_REQUEST = re.compile(r"\bit is (?:kindly |politely )?requested that (.{1,120}?) (?:should )?be (?:indicated|provided|"
                              r"specified|confirmed|given|stated|shared|supplied|named)\b")
#: A blank after a label, left for the user to fill in ("Area: __", "Budget: [ ]"): a question
#: mark, as "Area? Budget?" asks. A checkbox that heads a line ("[ ] book Wild Plate") is no blank.
_BLANK = re.compile(r"(?<=:)[ \t]*(?:_{2,}|\[[ \t]?\])")


def _normalise(text: str) -> str:
    if "\n" in text:
        if "|" in text and "--" in text:
            text = _TABLE_HEAD.sub("", text)
        text = _OPEN_LINE_END.sub(".", _QUESTIONS_LEAD.sub(r"\1?", _NUMBERED.sub(r"\1-", text)))
    if ".." in text or "\u2026" in text:
        text = _INNER_ELLIPSIS.sub(",", text)
    text = without_abbreviation_stops(text).lower()
    if "\u2019" in text:
        text = text.replace("\u2019", "'")
    if " these" in text or " them" in text or " those" in text or " the above" in text:
        text = _ASKS_FOR_THE_ABOVE.sub("?", text)
    if "__" in text or "[" in text:
        text = _BLANK.sub(" ?", text)
    if ":" in text and ("need" in text or "open" in text or "required" in text or "missing" in text or "remaining" in text
                        or "requested" in text or "narrow" in text or "question" in text):
        text = _NEEDS_LEAD.sub("tell me:", text)
    if "requested that" in text:
        text = _PASSIVE_REQUEST.sub(r"tell me \1", text)
    return text



#: Words that join a second question to a first ("... wifi, and what's your budget?").
_JOINING = frozenset({"and", "or", "also", "plus"})
#: The flags of a word that marks where a sentence or clause ends, or a negation.
_MARKS = _END | _BOUNDARY | _NEG


#: What a slot-layer phrase says: (kind: cue, hint, value or place; its slots; its value).
_Payload = tuple[str, tuple[str, ...], str]


@dataclass(frozen=True, slots=True)
class _Word:
    raw: str
    stem: str
    flags: int
    #: The slot-layer phrase of this one word, or None: (kind, slots, value).
    single: tuple[str, tuple[str, ...], str] | None
    #: Slot-layer phrases of two words or more starting here, by their second stem, longest first:
    #: second stem -> ((stems after the second, length, payload), ...).
    multi: Mapping[str, tuple[tuple[list[str], int, _Payload], ...]]
    #: Grammar-layer phrases starting here: the classes of the one-word ones, and the longer ones
    #: by their second stem: second stem -> ((stems after the second, length, class), ...).
    gram: tuple[tuple[str, ...], Mapping[str, tuple[tuple[list[str], int, str], ...]]]
    #: Hints with a gap whose head starts here, per head: (rest of the head's stems, head length,
    #: tails by their first stem: first stem -> ((rest of the tail's stems, tail length, payload), ...)).
    gaps: tuple[tuple[list[str], int, Mapping[str, tuple[tuple[list[str], int, _Payload], ...]]], ...] = ()
    #: What a scan of the message has to look at for this word, a bit each (0: nothing, as for
    #: most words): `MARKS` (a sentence end, break or negation, or a word that joins clauses),
    #: `ONE` and `LONGER` (grammar phrases of one word, and of more, open here), `GAPS` (hints
    #: with a gap open here) and `SLOT` (a slot-layer phrase opens here), the last the highest.
    scan: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scan", (MARKS if self.flags & _MARKS or self.raw in _JOINING else 0)
                           | (ONE if self.gram[0] else 0) | (LONGER if self.gram[1] else 0)
                           | (GAPS if self.gaps else 0) | (SLOT if self.multi or self.single is not None else 0))


#: The bits of `_Word.scan`.
MARKS, ONE, LONGER, GAPS, SLOT = 1, 2, 4, 8, 16


def _by_second(phrases: list[tuple[list[str], int, _Payload]]) -> dict[str, tuple[tuple[list[str], int, _Payload], ...]]:
    """Slot-layer phrases of two words or more that start with one word, (rest stems, length,
    payload) in order, as `_Word.multi` holds them: by their second stem, in the same order."""
    out: dict[str, list[tuple[list[str], int, _Payload]]] = {}
    for rest, length, payload in phrases:
        out.setdefault(rest[0], []).append((rest[1:], length, payload))
    return {second: tuple(group) for second, group in out.items()}


#: The slot-layer phrases of a word that opens none of two words or more.
_NO_MULTI: Mapping[str, Any] = {}
#: The grammar-layer phrases of a word that opens none.
_NO_GRAM: tuple[tuple[str, ...], Mapping[str, Any]] = ((), {})

#: A slot-layer phrase found in a message: (first token, end, (kind, slots, value)).
_Hit = tuple[int, int, tuple[str, tuple[str, ...], str]]


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


