"""Reading a booking dialog as a careful assistant does: the user's words as needs, verdicts and
requests, in the brief's vocabulary (`agentgym.agents.transcript.BriefVocabulary`).

The brief lists the domain's categories, areas and amenities, and the ranges of prices and
ratings; the user states a need in a sentence that names one of those values (a price with its
unit, a rating as a decimal, a time as a day and a time of day). Beside its needs the user says
what it makes of the places the assistant names: it likes one ("X sounds great"), rejects one
("X won't work for me"), comes back about one ("Does X still work?"), or asks for a booking to be
cancelled or changed. Values are matched as the brief writes them (a typo never lands in one);
the words around them are read through typos (`agentgym.agents.experts.words`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agentgym.agents.experts.words import has_phrase, has_word, sentences, words_of
from agentgym.agents.strategies.dialog import DAYS, SLOTS, DialogBeliefs, search_arguments
from agentgym.agents.transcript import BriefVocabulary

__all__ = ["Needs", "Heard", "hear", "today_of", "days_named", "DAYS", "SLOTS", "AHEAD"]

# A sentence's full stop may follow a number ("rated at least 3.5.").
_DECIMAL = re.compile(r"(?<![\d.])(\d\.\d)(?!\.?\d)")
_INTEGER = re.compile(r"(?<![\d.])(\d+)(?!\.?\d)")
#: A value is read through a slip only when one of its words is at least this long.
_SLIPPED = 5


#: The day a brief says today is, and a day a user counts from it ("the day after tomorrow", with
#: how many days ahead it is).
_TODAY = re.compile(r"\btoday is (" + "|".join(DAYS) + r")\b", re.IGNORECASE)
AHEAD = {"today": 0, "tomorrow": 1, "the day after tomorrow": 2, "three days from today": 3,
          "four days from today": 4, "five days from today": 5, "six days from today": 6}
_COUNTED = re.compile(r"(?<!\w)(" + "|".join(sorted(map(re.escape, AHEAD), key=len, reverse=True)) + r")(?!\w)",
                      re.IGNORECASE)


def today_of(brief: str) -> str | None:
    """The day of the week the brief says today is (lower case), if it says."""
    m = _TODAY.search(brief)
    return m.group(1).lower() if m else None


def days_named(text: str, today: str | None) -> str:
    """`text` with each day counted from `today` ("tomorrow") written as the day it is."""
    if today is None:
        return text
    start = DAYS.index(today)
    return _COUNTED.sub(lambda m: DAYS[(start + AHEAD[m.group(1).lower()]) % len(DAYS)], text)


class Needs(DialogBeliefs):
    """What the user needs, as far as the assistant has heard."""

    def take(self, kind: str, value: Any) -> bool:
        """Take in one stated need (`kind` as in `Heard.needs`); True when it changed anything."""
        if kind == "amenity":
            if value in self.amenities:
                return False
            self.amenities.append(value)
            return True
        if kind == "time":
            if (self.day, self.slot) == value:
                return False
            self.day, self.slot = value
            return True
        name = {"price": "max_price", "rating": "min_rating"}.get(kind, kind)
        if getattr(self, name) == value:
            return False
        setattr(self, name, value)
        return True

    def drop(self, kind: str, value: Any) -> None:
        """Give up one need (`kind` as in `Heard.needs`): the user agreed to do without it."""
        if kind == "amenity":
            if value in self.amenities:
                self.amenities.remove(value)
        elif kind != "time":
            setattr(self, {"price": "max_price", "rating": "min_rating"}.get(kind, kind), None)

    def known(self, slot: str) -> bool:
        """Whether a need about `slot` (category, area, price, rating, amenity or time) is known."""
        if slot == "amenity":
            return bool(self.amenities)
        if slot == "time":
            return self.day is not None and self.slot is not None
        return getattr(self, {"price": "max_price", "rating": "min_rating"}.get(slot, slot)) is not None

    def filters(self) -> dict[str, Any]:
        """The `search` arguments these needs amount to."""
        return search_arguments(self)


@dataclass
class Heard:
    """What one user message says, in the order it says it: needs as ``(kind, value)`` (kind
    category, area, price, rating, amenity or time, whose value is ``(day, slot)``) and verdicts
    as ``("liked" | "rejected" | "asks_about", place name)`` and needs it gives up as
    ``("given_up", (kind, value))`` ("If something has to give, it doesn't need to have a
    projector."), each in `events`; and whether it
    asks for a booking to be cancelled or changed (with the names it lists, if any), says a place
    is not available then, asks for any place that fits to be booked ("Please book one that
    fits."), or says there is nothing more to tell."""

    events: list[tuple[str, Any]] = field(default_factory=list)
    book_any: bool = False
    cancel: bool = False
    cancel_names: list[str] = field(default_factory=list)
    unavailable: bool = False
    everything: bool = False


def _value(sentence: str, values: tuple[str, ...]) -> list[str]:
    """The values of `values` that `sentence` (lower case) names, longest first, each counted
    once where it overlaps a longer one ("boutique hotel" is not also "hotel"); with none
    written as the brief writes it, the one written with a slip ("Rivreside")."""
    found: list[str] = []
    taken: list[tuple[int, int]] = []
    for v in sorted(values, key=len, reverse=True):
        for m in re.finditer(r"(?<![\w])" + re.escape(v.lower()) + r"(?![\w])", sentence):
            if not any(a < m.end() and m.start() < b for a, b in taken):
                taken.append(m.span())
                if v not in found:
                    found.append(v)
    if not found:
        slipped = [v for v in values if any(len(w) >= _SLIPPED for w in words_of(v)) and has_phrase(sentence, v)]
        found = slipped if len(slipped) == 1 else []  # two values one slip apart ("hotel", "hostel"): neither
    return found


def _needs(sentence: str, vocab: BriefVocabulary) -> list[tuple[str, Any]]:
    """The needs one sentence (place names removed, lower case) states."""
    out: list[tuple[str, Any]] = []
    out += [("category", v) for v in _value(sentence, vocab.categories)]
    out += [("area", v) for v in _value(sentence, vocab.areas)]
    out += [("amenity", v) for v in _value(sentence, vocab.amenities)]
    lo, hi = vocab.ratings
    for m in _DECIMAL.finditer(sentence):
        if lo <= float(m.group(1)) <= hi:
            out.append(("rating", float(m.group(1))))
    unit = vocab.unit.split(" ")[0].lower() if vocab.unit else ""
    for m in _INTEGER.finditer(sentence):
        after = sentence[m.end():].lstrip()
        if (unit and after.startswith(unit)) or has_word(sentence, "budget", "spend"):
            out.append(("price", int(m.group(1))))
    days = [d for d in DAYS if has_word(sentence, d)]
    slots = [s for s in SLOTS if has_word(sentence, s)]
    if len(days) == 1 and len(slots) == 1:
        out.append(("time", (days[0], slots[0])))
    return out


def hear(text: str, vocab: BriefVocabulary, names: list[str]) -> Heard:
    """Read one user message (see `Heard`); `names` are the names of the places the assistant
    knows, which the user may mention (they are verdicts' subjects, never needs)."""
    heard = Heard()
    holds: list[str] = []
    lowered = text.lower()
    for name in sorted(names, key=len, reverse=True):
        low = name.lower()
        if low in lowered:
            lowered = re.sub(r"(?<![\w])" + re.escape(low) + r"(?![\w])", f" \x00{len(holds)}\x00 ", lowered)
            holds.append(name)
    for s in sentences(lowered):
        named = [holds[int(i)] for i in re.findall(r"\x00(\d+)\x00", s)]
        plain = re.sub(r"\x00\d+\x00", " ", s)
        if has_phrase(plain, "everything i can think of") or has_phrase(plain, "that's everything"):
            heard.everything = True
        if has_word(plain, "cancel") or has_phrase(plain, "change the booking"):
            heard.cancel = True
            heard.cancel_names += named
        if has_word(plain, "book") and has_phrase(plain, "that fits"):
            heard.book_any = True
        if has_word(plain, "available") and ("isn't" in plain or "not" in plain.split()):
            heard.unavailable = True
        for name in named:
            if has_phrase(plain, "still work") and has_word(plain, "does", "would", "will"):
                heard.events.append(("asks_about", name))
            elif "won't" in plain or "wont" in plain or has_phrase(plain, "not work"):
                heard.events.append(("rejected", name))
            elif has_word(plain, "sounds") or has_phrase(plain, "still works"):
                heard.events.append(("liked", name))
        if has_phrase(plain, "has to give"):
            heard.events += [("given_up", need) for need in _needs(plain, vocab)]
        else:
            heard.events += _needs(plain, vocab)
    return heard
