"""The heuristic's dialog strategy: a sensible rule-based booking agent, no privileged information.

It reads only what any agent sees (the brief, the user's messages, tool results): asks about what
it does not know, searches with what it knows, checks availability, books, and after a rejection
cancels, learns the constraint the user names and tries again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from agentgym.agents.base import call, tool_results
from agentgym.agents.transcript import SENTENCE_BREAK, BriefVocabulary

__all__ = ["DAYS", "SLOTS", "DialogStrategy", "DialogBeliefs", "heard_facts", "update_beliefs", "search_arguments"]

#: The booking days and times of day, in the briefs' words (shared by the booking strategies).
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SLOTS = ("morning", "afternoon", "evening")
_PRICE = re.compile(r"(?:at most|above|up to|budget of)\s+(\d+)")
_RATING = re.compile(r"(?:at least|rating of|below)\s+(\d+(?:\.\d+)?)")


@dataclass
class DialogBeliefs:
    """What the agent has learnt of the user's needs from the user's own words."""

    category: str | None = None
    area: str | None = None
    max_price: int | None = None
    min_rating: float | None = None
    amenities: list[str] = field(default_factory=list)
    day: str | None = None
    slot: str | None = None


def _longest_match(text: str, values: list[str]) -> str | None:
    hits = [v for v in values if v.lower() in text]
    return max(hits, key=len) if hits else None


def heard_facts(user_text: str, vocab: dict[str, list[str]]) -> Iterator[tuple[str, Any]]:
    """What one user message states, sentence by sentence, as ``(field, value)`` in the order it applies.

    Fields are `DialogBeliefs`' (``amenities`` one amenity at a time); a later value of a field
    replaces an earlier one. `ActionCandidates`' dialog builder reads the user with it too, so
    the heuristic and the candidates it would be offered understand the same words.
    """
    for sentence in SENTENCE_BREAK.split(user_text.lower()):
        if "won't work" in sentence or "not sure what you mean" in sentence:
            continue
        if (v := _longest_match(sentence, vocab["category"])) is not None:
            yield "category", v
        if (v := _longest_match(sentence, vocab["area"])) is not None:
            yield "area", v
        if "no special" not in sentence:
            for a in vocab["amenity"]:
                if a.lower() in sentence:
                    yield "amenities", a
        if (m := _PRICE.search(sentence)) is not None:
            yield "max_price", int(m.group(1))
        if (m := _RATING.search(sentence)) is not None:
            yield "min_rating", float(m.group(1))
        for d in DAYS:
            if d in sentence:
                yield "day", d
        for s in SLOTS:
            if s in sentence:
                yield "slot", s


def search_arguments(b: DialogBeliefs) -> dict[str, Any]:
    """The `search` filters that what the agent believes of the user's needs amounts to."""
    args: dict[str, Any] = {}
    if b.category:
        args["category"] = b.category
    if b.area:
        args["area"] = b.area
    if b.max_price is not None:
        args["max_price"] = b.max_price
    if b.min_rating is not None:
        args["min_rating"] = b.min_rating
    if b.amenities:
        args["amenities"] = list(b.amenities)
    return args


def update_beliefs(b: DialogBeliefs, user_text: str, vocab: dict[str, list[str]]) -> None:
    """Fold one user message into the beliefs, sentence by sentence."""
    for name, value in heard_facts(user_text, vocab):
        if name != "amenities":
            setattr(b, name, value)
        elif value not in b.amenities:
            b.amenities.append(value)


def _fits(place: dict[str, Any], b: DialogBeliefs) -> bool | None:
    """Whether a place (a search result, or its details) meets every need believed; None when
    an amenity is needed and the place's amenities are not known yet."""
    if (b.category and place.get("category") != b.category) or (b.area and place.get("area") != b.area):
        return False
    if b.max_price is not None and place.get("price", 0) > b.max_price:
        return False
    if b.min_rating is not None and place.get("rating", 0.0) < b.min_rating:
        return False
    if b.amenities:
        if "amenities" not in place:
            return None
        return all(a in place["amenities"] for a in b.amenities)
    return True


class DialogStrategy:
    """A rule-based booking strategy; see the module docstring."""

    def __init__(self) -> None:
        self._reset_state()

    def _reset_state(self) -> None:
        self.beliefs = DialogBeliefs()
        self._vocab: dict[str, list[str]] = {"category": [], "area": [], "amenity": []}
        self._asked = 0
        self._candidates: list[str] = []
        self._page = 1
        self._searched = False
        self._rejected: set[str] = set()
        #: Places found closed, per (day, slot).
        self._closed: dict[tuple[str | None, str | None], set[str]] = {}
        self._booking: str | None = None
        self._booked_item: str | None = None
        self._pending: list[str] = []
        self._exhausted = False
        self._retried = False
        self._stuck = False
        #: What the tools said of each place seen (search summaries, details).
        self._places: dict[str, dict[str, Any]] = {}
        #: The user came back about the booking ("does it still work?"), and awaits an answer.
        self._check = False

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._reset_state()
        for m in info.get("messages", ()):
            if m["role"] == "system":
                self._vocab = BriefVocabulary.of(m["content"]).lists()
            elif m["role"] == "user":
                update_beliefs(self.beliefs, m["content"], self._vocab)

    def _when(self) -> tuple[str | None, str | None]:
        return self.beliefs.day, self.beliefs.slot

    def _observe(self, info: dict[str, Any]) -> bool:
        """Fold a step's messages in; True when the user rejected the current booking."""
        rejected = False
        before = (self.beliefs.category, self.beliefs.area, self.beliefs.max_price, self.beliefs.min_rating,
                  tuple(self.beliefs.amenities), self.beliefs.day, self.beliefs.slot)
        for name, result in tool_results(info):
            if not isinstance(result, dict):
                if name == "book" and self._candidates:
                    self._rejected.add(self._candidates.pop(0))
                continue
            if name == "search":
                for r in result.get("results", []):
                    self._places.setdefault(r["id"], {}).update(r)
                self._candidates += [r["id"] for r in result.get("results", []) if r["id"] not in self._rejected]
                self._exhausted = result.get("page", 1) >= result.get("pages", 1)
            elif name == "get_details" and "id" in result:
                self._places.setdefault(result["id"], {}).update(result)
            elif name == "check_availability" and not result.get("available", False):
                self._closed.setdefault((result.get("day"), result.get("slot")), set()).add(result["item_id"])
                self._candidates = [c for c in self._candidates if c != result["item_id"]]
            elif name == "book":
                self._booking, self._booked_item = result.get("booking_id"), result.get("item_id")
            elif name == "cancel_booking":
                self._booking = None
        for m in info.get("messages", ()):
            if m["role"] == "user" and not m["content"].startswith("[error"):
                update_beliefs(self.beliefs, m["content"], self._vocab)
                text = m["content"]
                if self._booking is not None and ("won't work" in text or "change the booking" in text
                                                  or "cancel it" in text):
                    rejected = True
                elif self._booking is not None and "still work" in text:
                    self._check = True
        after = (self.beliefs.category, self.beliefs.area, self.beliefs.max_price, self.beliefs.min_rating,
                 tuple(self.beliefs.amenities), self.beliefs.day, self.beliefs.slot)
        if after != before:
            # New needs: earlier search results no longer fit them, so search again.
            self._candidates, self._page, self._searched, self._exhausted = [], 1, False, False
            self._retried = self._stuck = False
        return rejected

    def _answer_check(self) -> str:
        """The answer to "does the booking still work?": checked against what the tools said of
        the place (its details first when an amenity is needed), then kept or replaced."""
        assert self._booking is not None and self._booked_item is not None
        place = self._places.get(self._booked_item, {})
        fits = _fits(place, self.beliefs)
        if fits is None:
            return call("get_details", item_id=self._booked_item)
        self._check = False
        if fits:
            return f"Yes, {place.get('name', 'it')} still meets everything you need, including that."
        self._rejected.add(self._booked_item)
        return call("cancel_booking", booking_id=self._booking)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._observe(info) and self._booking is not None:
            self._check = False
            if self._booked_item is not None:
                self._rejected.add(self._booked_item)
            return call("cancel_booking", booking_id=self._booking)
        b = self.beliefs
        if self._asked == 0:
            self._asked = 1
            return ("Happy to help! To find the right place: which type or style do you want, which area, "
                    "what is your budget, what minimum rating, do you need any amenities, "
                    "and which day and time should I book?")
        if (b.day is None or b.slot is None) and self._asked < 2:
            self._asked = 2
            return "Which day and what time of day should I book it for?"
        if self._booking is not None:
            if self._check:
                return self._answer_check()
            return "Your booking is confirmed. Is there anything else you need?"
        closed = self._closed.get(self._when(), set())
        self._candidates = [c for c in self._candidates if c not in closed]
        if not self._candidates:
            if self._searched and self._exhausted:
                return self._exhausted_move()
            self._searched = True
            args = search_arguments(b)
            if self._page > 1:
                args["page"] = self._page
            self._page += 1
            return call("search", **args)
        target = self._candidates[0]
        day, slot = b.day or "saturday", b.slot or "evening"
        if target not in self._pending:
            self._pending.append(target)
            return call("check_availability", item_id=target, day=day, slot=slot)
        self._candidates.pop(0)
        return call("book", item_id=target, day=day, slot=slot)

    def _exhausted_move(self) -> str:
        """Every result tried: look once more from the first page, checking availability anew (a
        result may have been misreported), then ask once whether there is more to know."""
        if not self._retried:
            self._retried = True
            self._closed.pop(self._when(), None)
            self._pending = []
            self._candidates, self._page, self._searched, self._exhausted = [], 1, False, False
            return call("search", **search_arguments(self.beliefs))
        if not self._stuck:
            self._stuck = True
            return "I couldn't find a place that fits everything. Is there anything else I should know?"
        return "I'm still looking for a place that fits everything."
