"""Consent before writes (the hard tier): a write goes ahead only when the customer said yes, in an
earlier turn, to a plan that described it.

The rule has one reading, the same for the user, the toolkit and the policy text:

* A message is cut into parts. Where the customer asked about several things by name (a bulk
  return's items: the domain's `anchors`), a part starts at each line or sentence that names one
  and runs to the next (a line or sentence that names none belongs to the part before it); a
  heading line (ending in ':', a Markdown heading, or wholly bold: "**Store credit**") belongs
  to every part under it, up to a blank line or the next heading. Elsewhere the whole message is
  one part.
* A part describes a write (`Want`) when it names the write's target, says its outcome (a word of
  the write's kind: "refund", "store credit", "book", "roll back" ...) and names each value the
  write carries (its amount, a time, a version, a variant), in any of its ordinary written forms
  (an ordinal day, "p.m.", a time with ISO's "Z", a currency's symbol, a domain's own forms:
  "SEV-2", a version without its "v").
* The user says yes only to a plan that gives an outcome for everything it asked about that no
  earlier yes covers; otherwise it asks about what is missing (`missing`). A plan that gives the
  outcomes but names none of a kind of value a write of them carries (a version, a severity, an
  amount, a date, a time: `Need`) gets a request for those (`unvalued`). Its yes and its
  questions are the customer's knowledge only: what it asked for, never the gold.
* A change of mind the user says in place of its yes ("Before you go ahead: actually, don't roll
  anything back; just file the incident.") is its word on the rest of the plan, which it records
  as said yes to: what the change drops is no longer wanted (the review says so), and what it
  alters is described by no part of the plan.
* A write is covered when a part of a plan the user said yes to describes it (`Consent.covers`).
  Calls and messages never share a turn, so a yes always comes in an earlier turn than the write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

from agentgym.users.understanding.words import SENTENCE_BREAK, without_abbreviation_stops

__all__ = ["Want", "Need", "Target", "VALUE_KINDS", "unvalued", "given", "Rules", "Consent", "Press", "parts", "describes", "missing", "amounts_in", "time_forms",
           "date_forms", "has"]


@dataclass(frozen=True, slots=True)
class Want:
    """What a plan must say of one write: one of `names` (its target), one of `outcomes` (its kind
    of outcome), every amount in `amounts` (cents), and one of each group of `values`."""

    names: tuple[str, ...]
    outcomes: tuple[str, ...]
    amounts: tuple[int, ...] = ()
    values: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Need:
    """A kind of value that a write carries (`kind`: a key of `VALUE_KINDS`), which a plan that
    gives a target one of `outcomes` (and none of `unless`, the words that refuse it) names for the
    customer to weigh it; `label` is how the customer asks for it ("the version you'll roll back
    to"). The customer knows the kind of value a write of that outcome carries, never its value."""

    outcomes: tuple[str, ...]
    kind: str
    label: str
    unless: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Target:
    """Something the customer asked about, which a plan must give an outcome: `label` is how the
    user names it ("the atlas"), `names` the words that name it in a plan, `outcomes` the words
    of any outcome (a refusal too); empty `outcomes`: naming it says its outcome. `needs`: the
    kinds of value a plan that gives it an outcome names (`unvalued`)."""

    label: str
    names: tuple[str, ...]
    outcomes: tuple[str, ...] = ()
    needs: tuple[Need, ...] = ()


@dataclass(frozen=True)
class Rules:
    """A domain's consent rule: `want(world, name, arguments)` is what a plan must say of a write
    (None for a call that needs no yes), `targets(world, goal)` what the customer asked about,
    `anchors(world, goal)` the names that start a part (see the module docstring), and
    `describe(world, name, arguments)` one plain sentence that describes a write (the oracle's)."""

    want: Callable[[Any, str, dict[str, Any]], Want | None]
    targets: Callable[[Any, Any], list[Target]]
    anchors: Callable[[Any, Any], tuple[str, ...]]
    describe: Callable[[Any, str, dict[str, Any]], str]


@dataclass(frozen=True, slots=True)
class Press:
    """A customer who presses for what a policy forbids (the hard tier's): refused by a plan, it
    says each of `asks` in turn, then accepts the plan. A plan refuses it unless a part that
    names it (one of `names`) says one of `wanted` and no word of refusal; a plan that names none
    of `names` refuses it only where `unnamed` (else the customer has nothing to press about)."""

    names: tuple[str, ...]
    wanted: tuple[str, ...]
    asks: tuple[str, ...]
    unnamed: bool = False

    def granted(self, named: list[str]) -> bool:
        """Whether one of the plan's parts `named` (those naming it) gives what the customer
        presses for: says one of `wanted` and no word of refusal."""
        return any(any(has(p, w, True) for w in self.wanted) and not any(has(p, w, True) for w in _REFUSING)
                   for p in named)


#: Words by which a plan's part refuses an item its money back (a pressing customer reads them).
_REFUSING = ("can't", "cannot", "can not", "not", "no refund", "nothing", "credit", "final sale", "final-sale",
             "unable", "won't", "isn't", "past", "outside", "decline")


class Consent:
    """The plans the customer said yes to in one episode (the hard tier's world holds it)."""

    __slots__ = ("rules", "anchors", "plans")

    def __init__(self, rules: Rules, anchors: tuple[str, ...]) -> None:
        self.rules = rules
        self.anchors = anchors
        #: Each confirmed plan's parts, oldest first (the memoised tuple `_parts` gives).
        self.plans: list[tuple[str, ...]] = []

    def grant(self, message: str) -> None:
        """The customer said yes to `message`."""
        self.plans.append(_parts(message, self.anchors))

    def covers(self, want: Want) -> bool:
        """Whether a plan the customer said yes to describes the write."""
        return any(describes(plan, want) for plan in self.plans)

    def agreed(self, target: Target) -> bool:
        """Whether a plan the customer said yes to gave `target` an outcome."""
        return any(_outcome_in(plan, target) for plan in self.plans)


# --------------------------------------------------------------------------- reading a plan

#: A heading line: a Markdown heading, a line ending in ':', or a line that is wholly bold
#: ("**Store credit**"), as a Markdown reader sees one.
_HEADING = re.compile(r"^\s*(?:#+\s.*|.*:\s*(?:\*\*|__)?\s*|(?:\*\*|__)[^*_]+(?:\*\*|__)\s*)$")
_MARKUP = re.compile(r"[*_`|>#]+")
#: An amount as written: with a decimal point and commas between thousands ("1,234.50"), or with
#: a decimal comma and points between thousands ("1.234,50", "55,20": a comma before one or two
#: last digits is a decimal comma, as "55,20 USD" is 55.20), or plain ("45", "45.5").
#: `_NUMBER`'s plain form alone is all it finds in a text with no comma.
#: Each opens with its first digit and only then looks behind it (``\d(?<![\w.]\d)`` is
#: ``(?<![\w.])\d``): a pattern that opens with a character class is scanned for in C, one that
#: opens with a look-behind is tried at every place of the text, several times slower.
_PLAIN_NUMBER = re.compile(r"\d(?<![\w.]\d)\d*(?:\.\d+)?(?!\d)")
_NUMBER = re.compile(r"\d(?:(?<![\w.,]\d)(?:\d{0,2}(?:,\d{3})+(?:\.\d+)?(?![\d,])"
                     r"|\d{0,2}(?:\.\d{3})+,\d{1,2}(?![\d,])|\d*,\d{1,2}(?![\d,]))"
                     r"|(?<![\w.]\d)\d*(?:\.\d+)?(?!\d))")
#: Written forms of a value that name it as its plain form does (lower case): an ordinal day
#: ("3rd" is 3), "p.m." ("pm"), a time in ISO's "Z" ("09:00z" is 09:00, UTC), a currency's
#: symbol before an amount ("$12.50" names USD 12.50). Each comes with a cheaper test of what it
#: needs to match: a text that fails it is one the form leaves as it is (most lines; the forms'
#: own scans are slow, as a pattern that opens with a word boundary is tried at every place).
_FORMS: tuple[tuple[Callable[[str], object], re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"\d(?:st|nd|rd|th)").search, re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b"), r"\1"),
    (lambda text: ".m." in text, re.compile(r"\b([ap])\.m\.(?!\w)"), r"\1m"),
    (lambda text: "z" in text, re.compile(r"\b(\d{1,2}:\d{2})z\b"), r"\1"),
    (re.compile(r"[$\u20ac\u00a3]").search, re.compile(r"(?:ca?|us)?\$(?=\s?\d)|[\u20ac\u00a3](?=\s?\d)"),
     lambda m: f" {_SYMBOLS[m.group()]} "),
)
_SYMBOLS = {"$": "usd", "us$": "usd", "c$": "cad", "ca$": "cad", "\u20ac": "eur", "\u00a3": "gbp"}


@lru_cache(maxsize=4096)
def _norm(text: str) -> str:
    """Lower case, markup and runs of spaces as one space (tables and bold read as words), and
    values in their plain forms (`_FORMS`). A pure function of the text, memoised: the user, the
    toolkit and a pressing customer cut the same messages into parts."""
    text = _MARKUP.sub(" ", text.lower())
    for needs, pattern, plain in _FORMS:
        if needs(text):
            text = pattern.sub(plain, text)
    # str.split() splits at runs of what `\s` matches (both are str.isspace) and drops the ends.
    return " ".join(text.split())


def has(text: str, phrase: str, prefix: bool = False) -> bool:
    """Whether normalised `text` holds `phrase` as words (`prefix`: the last word may go on,
    "refund" in "refunded")."""
    # A scan, not a regular expression: the phrases are many (products, amounts, versions) and
    # each would be compiled once per process.
    p = phrase.lower()
    i = text.find(p)
    while i >= 0:
        j = i + len(p)
        if (i == 0 or not _word(text[i - 1])) and (prefix or j == len(text) or not _word(text[j])):
            return True
        i = text.find(p, i + 1)
    return False


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def parts(message: str, anchors: Sequence[str]) -> list[str]:
    """A message's parts, normalised (see the module docstring); a new list at each call."""
    return list(_parts(message, tuple(anchors)))


@lru_cache(maxsize=1024)
def _parts(message: str, anchors: tuple[str, ...]) -> tuple[str, ...]:
    """`parts`, memoised: a pure function of its arguments, asked of one message by the user's
    reply, its check of a plan, a pressing customer and the yes it records."""
    if not anchors:
        return (_norm(message),)
    out: list[str] = []
    heading = ""
    for line in message.splitlines():
        if not line.strip():
            heading = ""
            continue
        text = _norm(line)
        named = any(has(text, a) for a in anchors)
        if not named and _HEADING.match(line):
            heading = text
            continue
        for sentence in SENTENCE_BREAK.split(without_abbreviation_stops(line)):
            # A line that is one sentence as written is read already (`text`, `named`).
            whole = sentence == line
            s = text if whole else _norm(sentence)
            if not s:
                continue
            if (named if whole else any(has(s, a) for a in anchors)) or not out:
                out.append(f"{heading} {s}".strip())
            else:
                out[-1] = f"{out[-1]} {s}"
    return tuple(out)


@lru_cache(maxsize=4096)
def amounts_in(text: str) -> frozenset[int]:
    """The amounts a text names, in cents ("1,234.50", "45", "$45.00", "1.234,50", "55,20").
    Memoised: at every write the user reads each part of every plan it said yes to again."""
    if "," not in text:  # most parts: only the plain form can match
        return frozenset(round(float(m) * 100) for m in _PLAIN_NUMBER.findall(text))
    return frozenset(round(float(_plain_number(m)) * 100) for m in _NUMBER.findall(text))


def _plain_number(written: str) -> str:
    """A number of `_NUMBER` as Python reads it: a decimal comma (one or two digits after the last
    comma) becomes the point and the points between thousands go; else the commas go."""
    comma = written.rfind(",")
    if comma >= 0 and len(written) - comma - 1 <= 2:
        return written[:comma].replace(".", "") + "." + written[comma + 1:]
    return written.replace(",", "")


def describes(plan: list[str], want: Want) -> bool:
    """Whether some part of a plan names the write's target, its outcome and each of its values."""
    for part in plan:
        if not any(has(part, n) for n in want.names) or not any(has(part, o, True) for o in want.outcomes):
            continue
        if want.amounts and not set(want.amounts) <= amounts_in(part):
            continue
        if all(any(has(part, v) for v in group) for group in want.values):
            return True
    return False


def _gives_outcome(plan: Sequence[str], target: Target) -> bool:
    return any(any(has(p, n, True) for n in target.names) and (not target.outcomes or any(has(p, o, True)
                                                                                      for o in target.outcomes))
               for p in plan)


def _outcome_in(plan: tuple[str, ...], target: Target) -> bool:
    """`_gives_outcome`, memoised (`_outcome_of`): the user asks it of one message twice (its
    reply and its check of a plan) and of every plan it said yes to at each later message, for
    the same few targets."""
    return _outcome_of(plan, target.names, target.outcomes)


@lru_cache(maxsize=4096)
def _outcome_of(plan: tuple[str, ...], names: tuple[str, ...], outcomes: tuple[str, ...]) -> bool:
    """`_gives_outcome` of a target of these `names` and `outcomes` (its label plays no part): a
    pure function of tuples of strings, keyed without the dataclass's Python hash and equality."""
    return _gives_outcome(plan, Target("", names, outcomes))


def given(message: str, consent: Consent, targets: list[Target]) -> list[Target]:
    """What the customer asked about that `message` gives an outcome (an earlier yes aside)."""
    plan = _parts(message, consent.anchors)
    return [t for t in targets if _outcome_in(plan, t)]


def missing(message: str, consent: Consent, targets: list[Target]) -> list[Target]:
    """What the customer asked about that neither `message` nor an earlier yes gives an outcome."""
    plan = _parts(message, consent.anchors)
    return [t for t in targets if not _outcome_in(plan, t) and not consent.agreed(t)]


#: A value of each kind as a normalised part writes it (`_norm`: lower case, "$" as "usd", "p.m."
#: as "pm"): what the customer looks for before it weighs a plan, whatever the value.
VALUE_KINDS: dict[str, Callable[[str], list[str]]] = {
    "version": re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?!\w|\.\d)|(?<![\w.])v\d+\.\d+(?!\w|\.\d)").findall,
    "severity": re.compile(r"\bsev(?:erity)?[ -]?\d\b").findall,
    "amount": lambda part: sorted(amounts_in(part)),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}\b"
                       r"|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)").findall,
    "time": re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2} ?[ap]m\b").findall,
}
#: Kinds whose values differ between the writes of one plan (a rollback goes to another version
#: than the one that caused the incident): a plan names as many different ones as it needs.
_DISTINCT = frozenset({"version"})


def unvalued(message: str, consent: Consent, targets: list[Target]) -> list[str]:
    """The labels of the values a plan leaves out (`Need`): of each target that `message` gives
    an outcome and no earlier yes covers, those of the kind its outcome carries that the parts
    giving it name none of (of a `_DISTINCT` kind, fewer different ones than the needs: then
    every one of that kind). What the
    customer asks for before it says yes: its own request's kinds of value, never the gold's."""
    plan = _parts(message, consent.anchors)
    out: list[str] = []
    distinct: dict[str, tuple[list[str], set[str]]] = {}
    for t in targets:
        if not t.needs or consent.agreed(t):
            continue
        mine = [p for p in plan if _outcome_in((p,), t)]
        for need in t.needs:
            if not any(any(has(p, o, True) for o in need.outcomes) and not any(has(p, w, True) for w in need.unless)
                       for p in mine):
                continue
            values = {v for p in mine for v in VALUE_KINDS[need.kind](p)}
            if need.kind in _DISTINCT:
                labels, seen = distinct.setdefault(need.kind, ([], set()))
                labels.append(need.label)
                seen |= values
            elif not values:
                out.append(need.label)
    for labels, seen in distinct.values():
        if len(seen) < len(labels):  # which one is left out is not the customer's to tell: it asks for each
            out += labels
    return out


# --------------------------------------------------------------------------- value forms

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


def date_forms(iso: str) -> tuple[str, ...]:
    """How a plan may name a date: ``2025-07-22``, "July 22", "22 July", "Jul 22", "22 Jul"."""
    _, m, d = iso.split("-")
    month, day = _MONTHS[int(m) - 1], str(int(d))
    return (iso, f"{month} {day}", f"{day} {month}", f"{month[:3]} {day}", f"{day} {month[:3]}")


def time_forms(hhmm: str) -> tuple[str, ...]:
    """How a plan may name a time of day: ``09:30``, "9:30", "9:30 am" ("21:30", "9:30 pm")."""
    h, m = (int(x) for x in hhmm.split(":"))
    half = "am" if h < 12 else "pm"
    h12 = h % 12 or 12
    forms = [hhmm, f"{h}:{m:02d}", f"{h12}:{m:02d} {half}", f"{h12}:{m:02d}{half}"]
    if m == 0:
        forms += [f"{h12} {half}", f"{h12}{half}"]
    return tuple(dict.fromkeys(forms))
