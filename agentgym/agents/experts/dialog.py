"""The expert's dialog strategy: a careful booking assistant that reads only what it is shown.

It plays as a careful assistant would, from the top on every turn against what it has learned
(the user's needs, the bookings, a `CaseFile` of every tool result):

* it asks at once for every need it does not know, then an open question until the user says
  that is everything; it never asks the same thing twice;
* it searches with every need it knows (every page), checks the availability of the places
  found at the wanted time (twice, in one turn: a place it proposes must really be free, and
  no other tool shows it), and proposes one that meets every known need;
* it books a place once the user has agreed to it or asked for any that fits (or, where
  reads of its availability disagree, books it to find out: a booking of a taken place is
  refused at no cost, a proposal of one costs the user's patience); when the user comes back
  about what was agreed ("my friend says ...: does X still work?") it checks X against the new
  need (a search with every need, which X is among or not) and says it still works, or
  proposes another (a booking that no longer fits is cancelled first);
* where no place meets every need it knows, it says so, and once the user gives one up it
  searches again (a place rejected before may fit now: one rejected for a need still held is
  not among the places a search with every need finds);
* it keeps exactly one booking: one the user rejects, asks to change (a new time) or that no
  longer fits what it now knows is cancelled before another is made;
* faults: a read that failed for a passing reason is sent again; a write whose result it could
  not see is read back (`list_bookings`) before anything else; a place whose id does not
  resolve sends it back to the search that listed it; it calls only the brief's tools.

Every value it uses comes from what it was shown: the brief, the user's words, tool results.
"""

from __future__ import annotations

from typing import Any

from agentgym.agents.experts.booking_words import Needs, days_named, hear, today_of
from agentgym.agents.experts.briefs import section
from agentgym.agents.experts.casefile import Blocked, CaseFile, Move, Read, key_of
from agentgym.agents.experts.dialog_plan import PlanExpert, read_form
from agentgym.agents.transcript import BriefVocabulary, brief_of
from agentgym.agents.turns import Call, action_of, decoded, is_transient, results_of

__all__ = ["DialogExpert", "ask_for"]

#: The slots a need can be about, in the order it asks for them.
_ORDER = ("category", "area", "price", "rating", "amenity", "time")
_QUESTIONS = {
    "category": "which {label} would you like",
    "area": "which area",
    "price": "what's your budget",
    "rating": "what minimum rating should it have",
    "amenity": "does it need any particular amenities",
    "time": "which day and time of day should I book",
}
_WRITES = ("book", "cancel_booking")
#: Availability reads it makes in one turn (two per place): enough to settle a page of results.
_BATCH = 10
#: Open questions it asks at most (each answered with a new need earns another).
_OPEN = 3


def ask_for(slots: list[str], vocab: BriefVocabulary) -> str:
    """One question about every slot of `slots`, in the domain's words."""
    parts = [_QUESTIONS[s].format(label=vocab.label or "category") for s in slots]
    if len(parts) == 1:
        return parts[0][0].upper() + parts[0][1:] + "?"
    return f"Happy to help! So I can find the right {vocab.noun}: {', '.join(parts[:-1])}, and {parts[-1]}?"


class DialogExpert:
    """See the module docstring."""

    def __init__(self) -> None:
        self._fresh()

    def _fresh(self) -> None:
        """Forget everything: a new task."""
        self.vocab = BriefVocabulary()
        #: The day the brief says today is, when the user counts days from it.
        self.today: str | None = None
        self.plan: PlanExpert | None = None
        self.case = CaseFile()
        self.needs = Needs()
        #: Place id -> name, for every place a tool named.
        self.names: dict[str, str] = {}
        #: Booking id -> {"item_id", "day", "slot", "active"}, as the tools last showed them.
        self.bookings: dict[str, dict[str, Any]] = {}
        #: The point of the `CaseFile` after which the bookings must be read back (None: known).
        self.unsure: int | None = None
        #: (item, day, slot) the user liked, rejected; and found not available.
        self.liked: set[tuple[str, str, str]] = set()
        self.refused: set[tuple[str, str, str]] = set()
        self.closed: set[tuple[str, str, str]] = set()
        #: The place the user came back about and awaits an answer on.
        self.asks_about: str | None = None
        #: Bookings the user asked to cancel or change.
        self.to_cancel: set[str] = set()
        #: The place last proposed, and when.
        self.proposed: tuple[str, str, str] | None = None
        self.asked: set[str] = set()
        self.everything = False
        #: Open questions asked, and how many user messages had come when the last was asked.
        self.opened = 0
        self.opened_at = -1
        self.heard = 0
        self.said_sorry = False
        #: The user asked for any place that fits to be booked, and none has been since.
        self.book_any = False
        #: Why the place the user came back about no longer works, to say with the next message.
        self.explain = ""
        #: Times at which every place's availability was read afresh.
        self.rechecked: set[tuple[str, str]] = set()
        self._sent: list[Call] = []
        self._first = True

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._fresh()
        messages = info.get("messages", ())
        brief = brief_of(messages)
        self.vocab = BriefVocabulary.of(section(brief, "dialog", info.get("task", {}).get("domain", "")))
        self.today = today_of(brief)
        form = read_form(brief)
        #: The play of an itinerary, when the brief holds a request form.
        self.plan = PlanExpert(form) if form is not None else None
        for m in messages:
            if m.get("role") == "user":
                self._hear(str(m.get("content", "")))

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self.plan is not None:
            return self.plan.act(info)
        if self._first:
            self._first = False  # the step that started the task: read at reset
        else:
            self._absorb(info)
        try:
            return self._plan()
        except Move as move:
            if move.calls:
                self._sent = move.calls
                return action_of(move.calls)
            self._sent = []
            return move.say

    # ------------------------------------------------------------------ taking a step in
    def _absorb(self, info: dict[str, Any]) -> None:
        for call, msg in zip(self._sent, results_of(info)):
            content = str(msg.get("content", ""))
            # A refusal that quotes the call's own argument is about that value, whatever digits
            # the value holds ("no stay with id 'stay_5038'" is no 503).
            quoted = [v for v in (call.arguments or {}).values() if isinstance(v, str) and f"'{v}'" in content]
            transient = is_transient(msg) and not quoted
            self.case.record(call, content, transient, call.name in _WRITES)
            if not content.startswith("[error"):
                self._result(call, decoded(msg))
                continue
            if call.name in _WRITES and (transient or call.name == "cancel_booking"):
                self.unsure = self.case.seq  # its effect is not known: read the bookings back
            elif call.name == "book":
                args = call.arguments or {}  # refused: taken then (or an id that does not resolve)
                self.closed.add((str(args.get("item_id")), str(args.get("day")), str(args.get("slot"))))
            for value in quoted:
                # An id that does not resolve came from a read that may have been wrong.
                self.case.forget_quoting(value, frozenset({"search", "list_bookings"}))
                self.names.pop(value, None)
        self._sent = []
        for m in info.get("messages", ()):
            text = str(m.get("content", ""))
            if m.get("role") == "user" and not text.startswith("[error"):
                self._hear(text)

    def _result(self, call: Call, value: Any) -> None:
        if not isinstance(value, dict):
            return
        if call.name == "search":
            for r in value.get("results", ()):
                self.names.setdefault(str(r.get("id")), str(r.get("name")))
        elif call.name == "book" and "booking_id" in value:
            self.book_any = False
            self.names.setdefault(str(value.get("item_id")), str(value.get("name")))
            self.bookings[str(value["booking_id"])] = {**value, "active": True}
        elif call.name == "cancel_booking" and "booking_id" in value:
            self.bookings.setdefault(str(value["booking_id"]), {})["active"] = False
            self.to_cancel.discard(str(value["booking_id"]))
        elif call.name == "list_bookings":
            self.bookings = {str(b.get("booking_id")): {**b, "active": b.get("status") == "active"}
                             for b in value.get("bookings", ())}
            for b in value.get("bookings", ()):
                self.names.setdefault(str(b.get("item_id")), str(b.get("name")))
            self.to_cancel &= {k for k, b in self.bookings.items() if b["active"]}
            self.unsure = None

    def _hear(self, text: str) -> None:
        self.heard += 1
        self.case.hear(text)
        by_name: dict[str, str] = {}
        for item, name in self.names.items():
            by_name.setdefault(name, item)  # names are unique: the first id seen is the real one
        heard = hear(days_named(text, self.today), self.vocab, list(by_name))
        for kind, value in heard.events:
            when = (self.needs.day or "", self.needs.slot or "")
            if kind in ("liked", "rejected", "asks_about"):
                key = (by_name[value], *when)
                if kind == "liked":
                    self.liked.add(key)
                elif kind == "rejected":
                    self.refused.add(key)
                    self.liked.discard(key)
                else:
                    self.asks_about = key[0]
                    self.liked.discard(key)
                if kind != "asks_about" and self.asks_about == key[0]:
                    self.asks_about = None
            elif kind == "given_up":
                # Needs that no place meets all at once: the user gave this one up.
                self.needs.drop(*value)
                self.said_sorry = False
                # A place rejected for the need given up may fit now; one rejected for a need
                # still held is not among the places a search with every need finds.
                self.refused.clear()
            elif kind == "time" and self.needs.take(kind, value):
                # A new time for a place the user liked ("Please book it. Actually, can we make
                # it Friday instead?"): the place stays agreed, if it is free then.
                self.liked |= {(item, *value) for item, d, s in self.liked if (d, s) == when}
            else:
                self.needs.take(kind, value)
        if heard.unavailable and self.proposed is not None:
            self.closed.add(self.proposed)
        if heard.cancel:
            active = [k for k, b in self.bookings.items() if b.get("active")]
            named = [k for k in active if self.names.get(self.bookings[k].get("item_id", "")) in heard.cancel_names]
            for k in named or active:
                self.to_cancel.add(k)
                b = self.bookings[k]
                self.refused.add((b["item_id"], b["day"], b["slot"]))
        if heard.everything:
            self.everything = True
        if heard.book_any:
            self.book_any = True

    # ------------------------------------------------------------------ the plan
    def _plan(self) -> str:
        if self.unsure is not None:
            self.case.get(Read("list_bookings", since=self.unsure))
        self._cancel_what_must_go()
        self._elicit()
        fits = self._candidates()
        if self.asks_about is not None:
            answer = self._come_back(fits)
            if answer:
                return answer
        kept = [k for k, b in self.bookings.items() if b.get("active")]
        if kept:
            b = self.bookings[kept[0]]
            return f"{self.names.get(b['item_id'], b['item_id'])} is booked for {b['day'].capitalize()} {b['slot']}."
        day, slot = self.needs.day or "", self.needs.slot or ""
        pick, book = self._choose(fits)
        prefix, self.explain = self.explain, ""
        if pick is None:
            if self.said_sorry:
                return "I'm still looking, but no place I can find meets everything you need at that time."
            self.said_sorry = True
            return f"{prefix}I'm sorry, I couldn't find any {self.vocab.noun} that meets everything you need " \
                   f"on {day.capitalize()} {slot}."
        if book:
            self.explain = prefix
            raise Move([Call("book", {"item_id": pick, "day": day, "slot": slot})])
        self.proposed = (pick, day, slot)
        return f"{prefix}I'd suggest {self.names.get(pick, pick)}: it meets everything you've told me, and " \
               f"it's available on {day.capitalize()} {slot}. Shall I book it?"

    def _elicit(self) -> None:
        """Ask for every need not known yet, at once, then an open question until the user says
        that is everything (raises `Move` with the question)."""
        n = self.needs
        missing = [s for s in _ORDER if not n.known(s) and s not in self.asked]
        if missing:
            self.asked.update(missing)
            raise Move(say=ask_for(missing, self.vocab))
        if not n.known("time") and "time again" not in self.asked:
            self.asked.add("time again")  # the one need every booking has: worth asking once more
            raise Move(say=ask_for(["time"], self.vocab))
        if not self.everything and self.opened < _OPEN and self.heard > self.opened_at:
            self.opened += 1
            self.opened_at = self.heard
            raise Move(say="Thanks! Is there anything else I should know?")

    def _come_back(self, fits: list[str]) -> str:
        """The answer to the user coming back about a place ("does X still work?"): that it does,
        or (kept in `explain`, said with the next proposal) why it no longer does."""
        item = self.asks_about
        assert item is not None
        booked = self._booking_of(item) is not None
        works = item in fits and (booked or self._available(item) is True)
        self.asks_about = None
        name = self.names.get(item, item)
        if works:
            ask = "" if booked else " Shall I book it?"
            return f"Yes, {name} still works: it meets everything you've told me, that included.{ask}"
        n = self.needs
        why = "doesn't meet everything you need now" if item not in fits else \
            f"isn't available on {(n.day or '').capitalize()} {n.slot}"
        self.explain = f"I'm afraid {name} {why}, so it won't do. "
        return ""

    def _choose(self, fits: list[str]) -> tuple[str | None, bool]:
        """The place to go for, and whether to book it rather than propose it: book one the user
        agreed to, any once the user asked for one that fits to be booked, or one whose
        availability reads disagreed (the booking itself tells, refused at no cost when the
        place is taken, where a proposal of a taken place costs the user's patience)."""
        day, slot = self.needs.day or "", self.needs.slot or ""
        pick = self._pick(fits)
        if pick is None and (day, slot) not in self.rechecked:
            # A task the user set has an answer: every place looking taken means a read was
            # wrong, so each is read afresh, once per time.
            self.rechecked.add((day, slot))
            for item in fits:
                self.case.doubt("check_availability", item_id=item, day=day, slot=slot)
            pick = self._pick(fits)
        if pick is None:
            # Every read says taken, twice over: only a booking can still tell.
            return next((c for c in fits if (c, day, slot) not in self.closed | self.refused), None), True
        return pick, self.book_any or (pick, day, slot) in self.liked or self._doubtful(pick)

    def _booking_of(self, item: str) -> str | None:
        n = self.needs
        return next((k for k, b in self.bookings.items() if b.get("active") and b.get("item_id") == item
                     and (b.get("day"), b.get("slot")) == (n.day, n.slot)), None)

    def _cancel_what_must_go(self) -> None:
        """Cancel a booking the user asked to cancel or change, or that no longer fits what the
        user needs (another time, a need it breaks), or one too many."""
        active = [k for k, b in self.bookings.items() if b.get("active")]
        if not active:
            return
        n = self.needs
        fits = self._candidates() if n.known("time") else []
        keep = None
        for k in reversed(active):  # the newest that still fits is kept
            b = self.bookings[k]
            if k not in self.to_cancel and (b.get("day"), b.get("slot")) == (n.day, n.slot) \
                    and b.get("item_id") in fits and keep is None:
                keep = k
        for k in active:
            if k != keep:
                if self.asks_about == self.bookings[k].get("item_id"):
                    self.asks_about = None  # cancelling it answers the user's question
                raise Move([Call("cancel_booking", {"booking_id": k})])

    def _candidates(self) -> list[str]:
        """Ids of the places meeting every need known, best rated first (every page read)."""
        args = self.needs.filters()
        first = self.case.read("search", **args)
        pages = int(first.get("pages", 1)) if isinstance(first, dict) else 1
        rest = self.case.get(*(Read("search", {**args, "page": p}) for p in range(2, pages + 1)))
        out: list[str] = []
        for result in (first, *rest):
            for r in result.get("results", ()) if isinstance(result, dict) else ():
                if str(r.get("id")) not in out:
                    out.append(str(r.get("id")))
        return out

    def _available(self, item: str) -> bool | None:
        """Whether `item` is free at the wanted time, by two agreeing reads (a proposal of a
        place that is taken costs the user's patience, and no other tool shows it); raises
        `Move` for the reads still needed; None when its id does not resolve."""
        n = self.needs
        if (item, n.day, n.slot) in self.closed:
            return False
        try:
            result = self.case.get(Read("check_availability", {"item_id": item, "day": n.day, "slot": n.slot},
                                        copies=2))[0]
        except Blocked:
            return None
        return bool(result.get("available")) if isinstance(result, dict) else None

    def _doubtful(self, item: str) -> bool:
        """Whether reads of `item`'s availability at the wanted time ever disagreed."""
        n = self.needs
        key = key_of(Call("check_availability", {"item_id": item, "day": n.day, "slot": n.slot}))
        return len({o.text for o in self.case.outcomes.get(key, ()) if o.ok}) > 1

    def _pick(self, fits: list[str]) -> str | None:
        """The best-ranked place that meets every known need, that the user has not refused at
        the wanted time, and that is free then; raises `Move` for the checks still needed (a
        batch per turn)."""
        n = self.needs
        open_ = [c for c in fits if (c, n.day, n.slot) not in self.refused and (c, n.day, n.slot) not in self.closed]
        calls: list[Call] = []
        for item in open_:
            try:
                if self._available(item):
                    return item
            except Move as move:
                calls += move.calls
                if len(calls) >= _BATCH:
                    break
        if calls:
            raise Move(calls)
        return None
