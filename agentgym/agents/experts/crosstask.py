"""The expert's cross-task strategy: each request of a session played by its family's expert.

A session moves from one request to the next ("Next thing: ...") and may come back to the
booking made earlier ("One more thing: could you move the cafe we booked earlier to Thursday
evening?"). The public segment boundaries (`info["segment"]`, `info["segment_switch"]`) say
when a new request starts and of which family; the expert starts that family's expert strategy
on it (`agentgym.agents.expert.make_expert_strategy`) with the session's brief (each expert
reads its own task area's section) and the request, and hands it every step until the next
switch. Across the session it keeps what a careful assistant remembers: the bookings it made
(from the tools' results), so a follow-up moves the right one, the date of the meeting it set
up and the amount a finance request came to (what it answered or transferred), which a
come-back of the hard tier may build on. It reads only what any agent sees.
"""

from __future__ import annotations

import datetime
import math
import re
from typing import Any

from agentgym.agents.experts.booking_words import Needs, hear
from agentgym.agents.experts.briefs import section
from agentgym.agents.experts.casefile import CaseFile, Move, Read
from agentgym.agents.strategies.crosstask import CrossTaskStrategy
from agentgym.agents.strategies.dialog import DAYS
from agentgym.agents.transcript import BriefVocabulary, brief_of
from agentgym.agents.turns import Call, action_of, decoded, is_transient, results_of

__all__ = ["ComeBackExpert", "CrossTaskExpert", "FollowUpExpert", "Ledger", "SeriesExpert"]

#: Times it reads the bookings back because the user still misses something after "done".
_RECHECKS = 2
#: Wordings only a series' request holds.
_SERIES = ("one booking a day", "staying on for a few more days", "arriving a few days earlier",
           "in town a few days earlier", "on each of those days", "a day it isn't", "no booking on a day")
#: Places whose availability a series reads in one turn (two reads each).
_BATCH = 8
#: A come-back's or series' narrower scope, the booked place's kind named: "of the same setting
#: (rooftop) in the same area" (else only "in the same area").
_SAME_KIND = re.compile(r"of the same [a-z]+ \([^)]*\) in the same area")
#: A late need, as a come-back states it: the amenity the place must list.
_NEEDS = re.compile(r'lists "([^"]+)" among its amenities')
#: The needs a come-back gives up: "still has everything else I asked for (including the budget:
#: at most 200 EUR), though it no longer needs to A or B, and is open".
_GIVEN_UP = re.compile(r"everything else i asked for(?: \([^)]*\))?, though it no longer needs to (.+?), and is open")
#: How each need given up is said: a category, a rating floor, a price limit; else an amenity's
#: phrase, which holds the amenity ("have a pool").
_GIVEN_UP_PART = re.compile(r"be of the .+|be rated at least [\d.]+|cost at most \d+ .+|(?:have|be|get|offer|include) .+")


class Ledger:
    """The bookings of a session as the tools showed them: booking id -> {"item_id", "name",
    "day", "slot", "active"}, from every `book`, `cancel_booking` and `list_bookings` result."""

    def __init__(self) -> None:
        self.bookings: dict[str, dict[str, Any]] = {}
        #: The date (YYYY-MM-DD) of the latest meeting booked, as `book_meeting` returned it.
        self.meeting: str | None = None
        #: The amount of the latest finance answer or transfer that went through.
        self.spent: float | None = None
        #: What the booking's user said it needs (the dialog expert's), and the budget a
        #: come-back set: a later come-back keeps both unless it changes them.
        self.needs: Needs | None = None
        self.budget: int | None = None

    def take(self, info: dict[str, Any]) -> None:
        """Take in one step's results (each call's record paired with its tool message)."""
        results = {m.get("tool_call_id"): m for m in results_of(info)}
        for rec in info.get("calls", ()):
            msg = results.get(rec.get("id"))
            if msg is None or str(msg.get("content", "")).startswith("[error"):
                continue
            value = decoded(msg)
            if not isinstance(value, dict):
                continue
            if rec.get("name") == "book" and "booking_id" in value:
                self.bookings[str(value["booking_id"])] = {**value, "active": True}
            elif rec.get("name") == "cancel_booking" and "booking_id" in value:
                self.bookings.setdefault(str(value["booking_id"]), {})["active"] = False
            elif rec.get("name") == "book_meeting" and "date" in value:
                self.meeting = str(value["date"])
            elif rec.get("name") in ("submit_answer", "create_transfer"):
                amount = (rec.get("arguments") or {}).get("amount")
                self.spent = float(amount) if isinstance(amount, (int, float)) else self.spent
            elif rec.get("name") == "list_bookings":
                self.bookings = {str(b.get("booking_id")): {**b, "active": b.get("status") == "active"}
                                 for b in value.get("bookings", ())}

    def active(self) -> list[tuple[str, dict[str, Any]]]:
        """The active bookings, oldest first."""
        return [(k, b) for k, b in self.bookings.items() if b.get("active")]


class FollowUpExpert:
    """Moves the booking made earlier in the session to the time the user asks for: books the
    same place then, and cancels every other booking (the user sees them all and says what is
    still missing). A write whose result it could not see is read back first (`list_bookings`),
    and so are the bookings when the user still sees something missing after it said the move
    was done.

    Args:
        ledger: the session's bookings; the latest active one is the one to move.
    """

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.case = CaseFile()
        self.when: tuple[str, str] | None = None
        #: The place to move (its id and name).
        self.place: tuple[str, str] | None = None
        self.unsure: int | None = None
        self.claims = 0
        self._sent: list[Call] = []
        self._first = True

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        brief = brief_of(info.get("messages", ()))
        vocab = BriefVocabulary.of(section(brief, "dialog", info.get("task", {}).get("domain", "")))
        for m in info.get("messages", ()):
            if m.get("role") == "user":
                for kind, value in hear(str(m.get("content", "")), vocab, []).events:
                    if kind == "time":
                        self.when = value
        active = self.ledger.active()
        if active:
            self.place = (str(active[-1][1].get("item_id")), str(active[-1][1].get("name")))

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._first:
            self._first = False
        else:
            for call, msg in zip(self._sent, results_of(info)):
                content = str(msg.get("content", ""))
                self.case.record(call, content, is_transient(msg), call.name != "list_bookings")
                if content.startswith("[error") and call.name != "list_bookings":
                    self.unsure = self.case.seq  # its effect is not known: read the bookings back
                elif call.name == "list_bookings" and not content.startswith("[error"):
                    self.unsure = None
            if self.claims and any(m.get("role") == "user" for m in info.get("messages", ())) \
                    and self.claims <= _RECHECKS:
                self.unsure = self.case.seq  # the user still misses something: look again
        try:
            return self._plan()
        except Move as move:
            self._sent = move.calls
            return action_of(move.calls) if move.calls else move.say

    def _plan(self) -> str:
        if self.unsure is not None:
            self.case.get(Read("list_bookings", since=self.unsure))
        if self.place is None:
            self.case.read("list_bookings")
            active = self.ledger.active()
            if not active:
                return "I can't find the booking we made earlier. Which one do you mean?"
            self.place = (str(active[-1][1].get("item_id")), str(active[-1][1].get("name")))
        if self.when is None:
            raise Move(say="Which day and time of day should I move it to?")
        item, name = self.place
        day, slot = self.when
        active = self.ledger.active()
        moved = [k for k, b in active if b.get("item_id") == item and (b.get("day"), b.get("slot")) == (day, slot)]
        if not moved:
            # The session's brief asks to check a new time with the tools before booking it.
            self.case.read("check_availability", copies=2, item_id=item, day=day, slot=slot)
            raise Move([Call("book", {"item_id": item, "day": day, "slot": slot})])
        for k, _ in active:
            if k != moved[0]:
                raise Move([Call("cancel_booking", {"booking_id": k})])
        self.claims += 1
        return f"Done: {name} is moved to {day.capitalize()} {slot}."


class ComeBackExpert(FollowUpExpert):
    """A come-back of the hard tier: the user asks for a change in terms of the booking as it
    stands ("the evening of the same day", "the next day it's open, at the same time of day",
    "the best-rated place of the same setting (rooftop) in the same area within a new budget", a budget that
    is what's left of an allowance after the finance amount, "the best-rated one that lists X
    among its amenities, or cancel"). It works the target out from that booking (the ledger's
    latest) with the tools, reading each value that picks the target twice, then moves the
    booking as the follow-up expert does; when a late need finds no place, read after read, it
    cancels the booking.

    Args:
        ledger: the session's bookings; the latest active one is the one the request is about.
        request: the user's words for the change.
    """

    def __init__(self, ledger: Ledger, request: str) -> None:
        super().__init__(ledger)
        self.request = request.lower()
        self.old: dict[str, Any] | None = None
        #: Whether the request was read as a change it knows, and how often it read afresh.
        self.understood = False
        self.rereads = 0
        #: Whether the booking is to be cancelled (a late need nothing meets).
        self.cancel = False
        #: Times it asked for the change again because a typo blurred what it gives up.
        self.asked_again = 0

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        active = self.ledger.active()
        self.old = active[-1][1] if active else None

    def act(self, obs: str, info: dict[str, Any]) -> str:
        # A typo may blur the request; asked again, the user says it anew: read every reply.
        said = " ".join(" " + str(m.get("content", "")).lower()
                        for m in info.get("messages", ()) if m.get("role") == "user")
        self.request += said
        if "not what i asked for" in said:
            # The reads that picked the target misled it: read them afresh and work it out again.
            self.case.doubt()
            self.place = self.when = None
        return super().act(obs, info)

    def _free(self, item: str, day: str, slot: str) -> bool:
        """Whether the booked place reads as free then (`check_availability`, read twice) and the
        tools have not refused a booking of it then."""
        seen = self.case.read("check_availability", copies=2, item_id=item, day=day, slot=slot)
        return isinstance(seen, dict) and bool(seen.get("available")) and not self._refused(item, day, slot)

    def _refused(self, item: str, day: str, slot: str) -> bool:
        """Whether the tools refused a booking of `item` then (a read said free, the book did not)."""
        return self.case.refused("book", item_id=item, day=day, slot=slot)

    def _plan(self) -> str:
        if self.place is not None and self.when is not None and self._refused(self.place[0], *self.when):
            self.place = self.when = None  # what the reads showed was wrong: the next candidate
        if self.place is None and self.old is not None and not self.cancel:
            self._resolve(self.old)
            if self.place is None and self.understood and self.rereads < _RECHECKS:
                # Understood, yet nothing fits: the reads may have misled it, so read afresh.
                self.rereads += 1
                self.case.doubt()
                self._resolve(self.old)
            if self.place is None and self.understood and _NEEDS.search(self.request):
                self.cancel = True  # nothing has the new need, read after read: cancel, as asked
            elif self.place is None:
                raise Move(say="Sorry, which change would you like to the booking?")
        if self.cancel:
            return self._cancel()
        return super()._plan()

    def _cancel(self) -> str:
        """Cancel every active booking (the late need rules the booked place out, and nothing fits)."""
        if self.unsure is not None:
            self.case.get(Read("list_bookings", since=self.unsure))
        for k, _ in self.ledger.active():
            raise Move([Call("cancel_booking", {"booking_id": k})])
        self.claims += 1
        return "No other place has what you now need and is free then, so I've cancelled the booking."

    def _budget(self) -> int | None:
        """The budget the request states: a number, or what is left of an allowance once the
        session's finance amount (the ledger's) is taken out, at the rate it states."""
        stated = re.search(r"costs at most (\d+)", self.request)
        if stated:
            return int(stated.group(1))
        allowance = re.search(r"what's left of the team's ([\d.]+) ([a-z]{3}) trip allowance", self.request)
        if allowance is None or self.ledger.spent is None:
            return None
        rate = re.search(r"counting 1 [a-z]{3} as ([\d.]+) eur", self.request)
        left = (float(allowance.group(1)) - self.ledger.spent) * (float(rate.group(1)) if rate else 1.0)
        return math.floor(left + 1e-9) if left >= 0 else None

    def _resolve(self, old: dict[str, Any]) -> None:
        item, day, slot = str(old.get("item_id")), str(old.get("day")), str(old.get("slot"))
        same_day = re.search(r"the (morning|afternoon|evening) of the same day", self.request)
        budget = self._budget()
        needs = _NEEDS.search(self.request)
        meeting = "day of the meeting" in self.request and self.ledger.meeting is not None
        self.understood = bool(same_day or budget is not None or needs or meeting or "next day after it" in self.request)
        weekday = DAYS[datetime.date.fromisoformat(str(self.ledger.meeting)).weekday()] if meeting else day
        if budget is not None or needs:
            details = self.case.read("get_details", copies=2, item_id=item)
            query = self._kept(details, budget, needs.group(1) if needs else None)
            # A budget that closes the session may also name the meeting's day.
            self._best_free(item, weekday if "open on the day of the meeting" in self.request else day, slot, query)
        elif meeting:
            if self._free(item, weekday, slot):
                self.place, self.when = (item, str(old.get("name"))), (weekday, slot)
        elif same_day:
            # The user asks to check the new time is free before it is booked.
            if self._free(item, day, same_day.group(1)):
                self.place, self.when = (item, str(old.get("name"))), (day, same_day.group(1))
        elif "next day after it" in self.request:
            later = DAYS[DAYS.index(day) + 1:] if day in DAYS else ()
            reads = [Read("check_availability", {"item_id": item, "day": d, "slot": slot}, copies=2) for d in later]
            for d, seen in zip(later, self.case.get(*reads)):
                if isinstance(seen, dict) and seen.get("available") and not self._refused(item, d, slot):
                    self.place, self.when = (item, str(old.get("name"))), (d, slot)
                    return

    def _given_up(self) -> list[str]:
        """The needs the request gives up, from its first wording read whole (a typo may blur
        one); asks for the change again while none is, a few times."""
        if "everything else i asked for and is open" in self.request:
            return []
        for said in _GIVEN_UP.finditer(self.request):
            parts = said.group(1).split(" or ")
            if all(_GIVEN_UP_PART.fullmatch(p) for p in parts):
                return parts
        if self.asked_again < _RECHECKS + 1:
            self.asked_again += 1
            raise Move(say="Sorry, which change would you like to the booking?")
        return []

    def _kept(self, details: dict[str, Any], budget: int | None, need: str | None) -> dict[str, Any]:
        """The search for a come-back's new place: the booked one's area (and kind, when asked),
        the new budget or need, and every need the user stated that the come-back does not change."""
        held = Needs(**vars(self.ledger.needs)) if self.ledger.needs is not None else Needs()
        held.amenities = list(held.amenities)
        for part in self._given_up():
            if part.startswith("be of the "):
                held.category = None
            elif part.startswith("be rated at least"):
                held.min_rating = None
            elif part.startswith("cost at most"):
                held.max_price = None
            else:  # the amenity the phrase holds (the longest, where one holds another: "fast wifi")
                for amenity in sorted(held.amenities, key=len, reverse=True):
                    if amenity in part:
                        held.drop("amenity", amenity)
                        break
        self.ledger.needs = held  # what it gives up stays given up for the come-backs after it
        query: dict[str, Any] = {"area": details.get("area")}
        category = details.get("category") if _SAME_KIND.search(self.request) else held.category
        if category is not None:
            query["category"] = category
        if held.min_rating is not None:
            query["min_rating"] = held.min_rating
        amenities = list(held.amenities) + ([need] if need else [])
        if amenities:
            query["amenities"] = amenities
        if need is None:
            query["max_price"] = budget
            self.ledger.budget = budget
        else:
            limits = [v for v in (held.max_price, self.ledger.budget) if v is not None]
            if limits:
                query["max_price"] = min(limits)
        return query

    def _best_free(self, item: str, day: str, slot: str, query: dict[str, Any]) -> None:
        """Take the best-rated place `query` finds (all its pages) that is free then, but `item`."""
        first = self.case.read("search", copies=2, **query)
        pages = range(2, int(first.get("pages", 1)) + 1)
        found = list(first.get("results", ()))
        for page in self.case.get(*(Read("search", {**query, "page": n}, copies=2) for n in pages)):
            found += page.get("results", ())
        alike = sorted((p for p in found if p.get("item_id", p.get("id")) != item),
                       key=lambda p: -float(p.get("rating", 0)))
        reads = [Read("check_availability", {"item_id": p.get("id"), "day": day, "slot": slot}, copies=2)
                 for p in alike]
        for p, seen in zip(alike, self.case.get(*reads)):
            if isinstance(seen, dict) and seen.get("available") and not self._refused(str(p.get("id")), day, slot):
                self.place, self.when = (str(p.get("id")), str(p.get("name"))), (day, slot)
                return


class SeriesExpert(ComeBackExpert):
    """A series come-back of the hard tier: one booking a day for the next N days after the
    booked one (or up to the meeting's day), each day the booked place when it is open then,
    else the best-rated place of the same kind (named) in the same area that keeps every need the user
    holds and is open then, else none; the booking made stays. It works every day out with the
    tools (each read twice), books what is missing in one turn, and says it is done; told it
    is not what was asked, it reads everything afresh.

    Args:
        ledger: the session's bookings; the latest active one is the one the request is about.
        request: the user's words for the series.
    """

    def __init__(self, ledger: Ledger, request: str) -> None:
        super().__init__(ledger, request)
        #: (place id, day, slot) of every booking the series adds, once worked out.
        self.stays: list[tuple[str, str, str]] | None = None
        #: Bookings the user said it did not ask for, and (place, day, slot) the tools refused.
        self.wrong: set[str] = set()
        self.closed: set[tuple[str, str, str]] = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        said = [str(m.get("content", "")).lower() for m in info.get("messages", ()) if m.get("role") == "user"]
        if any("not what i asked for" in m for m in said):
            # The user saw a booking of this step it did not ask for: it goes, whichever it was.
            results = {m.get("tool_call_id"): decoded(m) for m in results_of(info)}
            self.wrong |= {str(v["booking_id"]) for rec in info.get("calls", ()) if rec.get("name") == "book"
                           for v in [results.get(rec.get("id"))] if isinstance(v, dict) and "booking_id" in v}
        if any("not what i asked for" in m for m in said) or (said and self.claims and self.claims <= _RECHECKS):
            # Refused, or "done" was not all it asked: work every day out afresh.
            self.stays = None
            self.case.doubt()
        return super().act(obs, info)

    def _scope(self) -> dict[str, Any] | None:
        """Whether another place must be of the booked one's kind too ({"category": True}) or
        only in its area ({}); None while a typo blurs both wordings."""
        if _SAME_KIND.search(self.request):
            return {"category": True}
        return {} if re.search(r"best-rated \w+(?: \w+)? in the same area", self.request) else None

    def _days(self, day: str) -> list[str]:
        """The span's days: the N after the booked `day` or before it, or up to the meeting's day."""
        start = DAYS.index(day) if day in DAYS else len(DAYS)
        if "up to and including the day of the meeting" in self.request and self.ledger.meeting is not None:
            end = DAYS.index(DAYS[datetime.date.fromisoformat(self.ledger.meeting).weekday()])
            return list(DAYS[start + 1:end + 1])
        n = re.search(r"each of the next (\d) days after it", self.request)
        if n:
            return list(DAYS[start + 1:start + 1 + int(n.group(1))])
        n = re.search(r"each of the (\d) days before it", self.request)
        return list(DAYS[max(0, start - int(n.group(1))):start]) if n and start < len(DAYS) else []

    def _resolve_stays(self, old: dict[str, Any]) -> list[tuple[str, str, str]]:
        item, day, slot = str(old.get("item_id")), str(old.get("day")), str(old.get("slot"))
        days, scope = self._days(day), self._scope()
        if not days or scope is None:
            raise Move(say="Sorry, could you say again which days you'd like booked, and where?")
        opened = self.case.get(*(Read("check_availability", {"item_id": item, "day": d, "slot": slot}, copies=2)
                                 for d in days))
        open_days = [d for d, seen in zip(days, opened)
                     if isinstance(seen, dict) and seen.get("available") and (item, d, slot) not in self.closed]
        stays = [(item, d, slot) for d in open_days]
        closed = [d for d in days if d not in open_days]
        if not closed:
            return stays
        details = self.case.read("get_details", copies=2, item_id=item)
        # Another place on a closed day: in the booked one's area (and kind, when asked), no dearer.
        query: dict[str, Any] = {"area": details.get("area"), "max_price": details.get("price")}
        if scope:
            query["category"] = details.get("category")
        first = self.case.read("search", copies=2, **query)
        found = list(first.get("results", ()))
        for page in self.case.get(*(Read("search", {**query, "page": n}, copies=2)
                                    for n in range(2, int(first.get("pages", 1)) + 1))):
            found += page.get("results", ())
        alike = sorted((p for p in found if p.get("id") != item), key=lambda p: -float(p.get("rating", 0)))
        # Down the ratings, every closed day at once, a few places a day (a turn holds at most
        # 32 calls): a day takes the first place free then, or none when the list runs out.
        step = max(1, _BATCH // len(closed))
        undecided, start = list(closed), 0
        while undecided and start < len(alike):
            chunk = alike[start:start + step]
            seen = iter(self.case.get(*(Read("check_availability", {"item_id": p.get("id"), "day": d, "slot": slot},
                                             copies=2) for d in undecided for p in chunk)))
            for d in list(undecided):
                free = [p for p, r in zip(chunk, seen) if isinstance(r, dict) and r.get("available")
                        and (str(p.get("id")), d, slot) not in self.closed]
                if free:
                    stays.append((str(free[0].get("id")), d, slot))
                    undecided.remove(d)
            start += step
        return sorted(stays, key=lambda s: DAYS.index(s[1]))

    def _plan(self) -> str:
        if self.unsure is not None:
            self.case.get(Read("list_bookings", since=self.unsure))
        if self.old is None:
            raise Move(say="Sorry, which booking do you mean?")
        if self.stays is None:
            self.stays = self._resolve_stays(self.old)
        refused = {stay for stay in self.stays if self._refused(*stay)}
        if refused:
            # A read said free and the booking was refused: that one is out, and the reads
            # misled it, so it works every day out afresh.
            self.closed |= refused
            self.case.doubt()
            self.stays = None
            self.stays = self._resolve_stays(self.old)
        # A booking the user said it did not ask for is cancelled; what is missing is booked.
        active = self.ledger.active()
        wrong = [k for k, _ in active if k in self.wrong]
        if wrong:
            raise Move([Call("cancel_booking", {"booking_id": k}) for k in wrong])
        have = [(str(b.get("item_id")), str(b.get("day")), str(b.get("slot"))) for _, b in active]
        wanted = [s for s in self.stays if s not in have]
        if wanted:
            raise Move([Call("book", {"item_id": p, "day": d, "slot": sl}) for p, d, sl in wanted])
        self.claims += 1
        return "Done: every day you asked for is booked, and the booking we had stays."


class CrossTaskExpert(CrossTaskStrategy):
    """See the module docstring: the heuristic's switching between requests, with the experts."""

    def __init__(self) -> None:
        super().__init__()
        self._ledger = Ledger()

    def _start(self, segment: dict[str, Any], request: str, obs: str) -> None:
        from agentgym.agents.expert import make_expert_strategy  # the family table, read when used

        family = segment["family"]
        if isinstance(getattr(self._sub, "needs", None), Needs):
            self._ledger.needs = self._sub.needs  # the booking's needs, which come-backs keep
        if family == "followup":
            # A plain move names the new day (typos never touch one); a come-back of the hard
            # tier names none: it speaks of the booking ("the same day", "the next day it's open").
            plain = any(day in request.lower() for day in DAYS)
            # A typo may touch any one wording of a series, never all of them.
            series = any(w in request.lower() for w in _SERIES)
            self._sub = (FollowUpExpert(self._ledger) if plain else SeriesExpert(self._ledger, request) if series
                         else ComeBackExpert(self._ledger, request))
        else:
            self._sub = make_expert_strategy(family)
        self._sub.reset(obs, {
            "messages": [{"role": "system", "content": self._brief}, {"role": "user", "content": request}],
            "tools": self._tools,
            "task": {"family": family, "domain": segment["domain"]},
        })

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._ledger = Ledger()
        super().reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._ledger.take(info)
        return super().act(obs, info)
