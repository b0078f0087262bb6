"""The expert's play of a dialog itinerary: a request form of several bookings, one plan.

It reads the form in the brief (each booking's needs and time, counted from today or from an
earlier booking; the rules: no place twice, maybe one area each, a combined budget, the
priorities), then plays as a careful assistant would:

* it searches for each booking with its needs as filters, every page;
* it checks every place found at its booking's time;
* it reads each of those twice in one turn and trusts a value once it leads every other answer
  by two reads (now and then a tool answers wrongly); a read that failed is sent again;
* it works out the plan the rules pick (of every plan that keeps the rules, the best rated in
  priority order, or the one whose ratings add up to the most), books what is missing in one turn (cancelling anything else first, alone),
  reads the bookings back, reads the plan to the user (each booking's place and time) and asks
  whether to submit it, and submits once the user said yes to that plan;
* a user who restates a booking's line instead of saying yes has changed its mind: the line
  replaces the form's, and the work starts again from that booking's search;
* a `submit_plan` that submitted nothing names the place just taken: it is closed at that time
  from then on, and the plan is worked out, booked and agreed again.

Every value it uses comes from the brief and tool results.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from agentgym.agents.experts.booking_words import AHEAD, DAYS, today_of
from agentgym.agents.experts.casefile import key_of
from agentgym.agents.turns import Call, action_of, decoded, is_transient, results_of

__all__ = ["PlanExpert", "read_form"]

_LEG = re.compile(r"^- Booking ([A-E]): (.+?); (.+), in the (morning|afternoon|evening)\.$", re.MULTILINE)
_AFTER = re.compile(r"^(the same day as|the day after|two days after) booking ([A-E])$")
_GAPS = {"the same day as": 0, "the day after": 1, "two days after": 2}
_BUDGET = re.compile(r"may be at most (\d+) \(in ")
#: How the user states a changed mind, and says yes to the plan it heard.
_REVISED = re.compile(r"line for it is now: (Booking [A-E]: .+?\.) Everything else")
_YES = "Yes, that plan works for me"
_TAKEN = re.compile(r"\(([^()\s]+)\) was just taken on (\w+) (morning|afternoon|evening)")
#: Times the plan is read to the user at most, for one plan.
_ASKS = 2
_PRIORITY = re.compile(r"whose booking ([A-E]) is rated highest")
#: The rule that picks the plan whose ratings add up to the most.
_TOTAL = "whose bookings' ratings add up to the most"
#: Calls per turn at most (the protocol allows 32).
_BATCH = 32


def read_form(brief: str) -> dict[str, Any] | None:
    """The request form of an itinerary brief: legs (label, filters, day, slot), the budget,
    whether areas must differ, the priority order; None when the brief holds no form."""
    today = today_of(brief)
    budget = _BUDGET.search(brief)
    if today is None or budget is None or "submit_plan" not in brief:
        return None
    start = DAYS.index(today)
    ahead: dict[str, int] = {}
    legs: list[dict[str, Any]] = []
    for label, needs, when, slot in _LEG.findall(brief):
        if when in AHEAD:
            ahead[label] = AHEAD[when]
        else:
            m = _AFTER.match(when)
            if m is None or m.group(2) not in ahead:
                return None
            ahead[label] = ahead[m.group(2)] + _GAPS[m.group(1)]
        legs.append({"label": label, "filters": _filters(needs), "day": DAYS[(start + ahead[label]) % 7],
                     "slot": slot})
    labels = [leg["label"] for leg in legs]
    total = _TOTAL in brief
    order = list(range(len(legs))) if total else [labels.index(x) for x in _PRIORITY.findall(brief) if x in labels]
    if not legs or sorted(order) != list(range(len(legs))):
        return None
    return {"legs": legs, "budget": int(budget.group(1)), "order": order, "total": total,
            "distinct": "No two bookings may be in the same area." in brief}


def _filters(needs: str) -> dict[str, Any]:
    """Search filters of a booking's needs ("style: tea house, in Old Town, with wifi, rated 4.0 or more")."""
    out: dict[str, Any] = {}
    for part in needs.split(", "):
        if part.startswith("in "):
            out["area"] = part[3:]
        elif part.startswith("with "):
            out.setdefault("amenities", []).append(part[5:])
        elif part.startswith("rated ") and part.endswith(" or more"):
            out["min_rating"] = float(part[6:-8])
        elif ": " in part:
            out["category"] = part.split(": ", 1)[1]
    return out


class PlanExpert:
    """See the module docstring."""

    def __init__(self, form: dict[str, Any]) -> None:
        self.form = form
        #: Each read's results so far, by its call's key; a value is trusted when it leads by two.
        self.reads: dict[str, list[str]] = {}
        self.values: dict[str, Any] = {}
        #: Booking id -> (item, day, slot, active), as the tools last showed them.
        self.bookings: dict[str, tuple[str, str, str, bool]] = {}
        self.unsure = False
        self.verified = False
        #: Times every closed place was read again because no plan kept the rules.
        self.rechecks = 0
        #: The plan (place ids) the user said yes to, the one last read to it, and how often.
        self.agreed: tuple[str, ...] | None = None
        self.asked: tuple[str, ...] | None = None
        self.asks = 0
        self._sent: list[Call] = []

    def act(self, info: dict[str, Any]) -> str:
        self._absorb(info)
        calls = self._plan()
        if isinstance(calls, str):
            self._sent = []
            return calls
        self._sent = calls
        return action_of(calls)

    # ------------------------------------------------------------------ taking results in
    def _absorb(self, info: dict[str, Any]) -> None:
        for call, msg in zip(self._sent, results_of(info)):
            content = str(msg.get("content", ""))
            if call.name == "submit_plan" and not content.startswith("[error"):
                self._refused(decoded(msg))
                continue
            if call.name in ("book", "cancel_booking", "submit_plan"):
                self.verified = False
                if content.startswith("[error"):
                    if is_transient(msg) or call.name == "cancel_booking":
                        self.unsure = True
                    else:  # refused: taken then
                        args = call.arguments or {}
                        self.values[key_of(Call("check_availability", args))] = {"available": False}
                    continue
                value = decoded(msg)
                if call.name == "book" and isinstance(value, dict) and "booking_id" in value:
                    self.bookings[str(value["booking_id"])] = (str(value["item_id"]), str(value["day"]),
                                                               str(value["slot"]), True)
                elif call.name == "cancel_booking" and isinstance(value, dict):
                    item = self.bookings.get(str(value.get("booking_id")))
                    if item is not None:
                        self.bookings[str(value["booking_id"])] = (*item[:3], False)
                continue
            if content.startswith("[error"):
                continue
            if call.name == "list_bookings":
                value = decoded(msg)
                if isinstance(value, dict):
                    self.bookings = {str(b["booking_id"]): (str(b["item_id"]), str(b["day"]), str(b["slot"]),
                                                            b.get("status") == "active")
                                     for b in value.get("bookings", ())}
                    self.unsure = False
                    self.verified = True
                continue
            key = key_of(call)
            seen = self.reads.setdefault(key, [])
            seen.append(content)
            # Trusted once it leads every other answer by two: two wrong answers alike (a flipped
            # availability, twice) must not outvote the right one read as often.
            rivals = [seen.count(other) for other in set(seen) if other != content]
            if key not in self.values and seen.count(content) >= 2 + max(rivals, default=0):
                self.values[key] = decoded(msg)
        self._sent = []
        for m in info.get("messages", ()):
            if m.get("role") == "user":
                self._hear(str(m.get("content", "")))

    def _hear(self, text: str) -> None:
        """Take in the user's words: a yes to the plan last read, or a booking's revised line."""
        if text.startswith(_YES):
            self.agreed = self.asked
            return
        revised = _REVISED.search(text)
        if revised is None:
            return
        got = _LEG.match("- " + revised.group(1))
        legs = self.form["legs"]
        for leg in legs:
            if got is not None and leg["label"] == got.group(1):
                leg["filters"] = _filters(got.group(2))
        self.agreed = self.asked = None
        self.asks = 0

    def _refused(self, value: Any) -> None:
        """A submission that submitted nothing: the place it names is taken from now on, its
        booking cancelled, and the plan needs a new yes."""
        self.verified = False
        if not isinstance(value, dict) or value.get("status") != "not submitted":
            return
        for booking in value.get("cancelled_bookings", ()):
            item = self.bookings.get(str(booking))
            if item is not None:
                self.bookings[str(booking)] = (*item[:3], False)
        taken = _TAKEN.search(str(value.get("changed", "")))
        if taken is not None:
            item, day, slot = taken.groups()
            key = key_of(Call("check_availability", {"item_id": item, "day": day, "slot": slot}))
            self.values[key] = {"available": False}
        self.agreed = self.asked = None
        self.asks = 0

    # ------------------------------------------------------------------ the plan
    def _plan(self) -> list[Call] | str:
        if self.unsure:
            return [Call("list_bookings", {})]
        found = self._found()
        need = [c for c in found if not isinstance(c, list)]
        if need:
            return _twice(need)
        options = [[p for p in leg_places if self._open(p["id"], leg)] for leg, leg_places in
                   zip(self.form["legs"], found)]
        checks = [Call("check_availability", {"item_id": p["id"], "day": leg["day"], "slot": leg["slot"]})
                  for leg, leg_places in zip(self.form["legs"], found) for p in leg_places
                  if self._open(p["id"], leg) is None]
        if checks:
            return _twice(checks)
        plan = self._best([[p for p in opts if self._open(p["id"], leg)] for leg, opts in
                           zip(self.form["legs"], options)])
        if plan is None and self.rechecks < 2:
            # The form always has a plan: some place read closed was misread (a flip, twice).
            self.rechecks += 1
            for key in [k for k, v in self.values.items() if _is_check(k)
                        and isinstance(v, dict) and not v.get("available")]:
                del self.values[key]
                self.reads.pop(key, None)
            return self._plan()
        want = {(p["id"], leg["day"], leg["slot"]) for p, leg in zip(plan or (), self.form["legs"])}
        active = {k: b[:3] for k, b in self.bookings.items() if b[3]}
        wrong = [k for k, b in active.items() if b not in want]
        if wrong:
            return [Call("cancel_booking", {"booking_id": k}) for k in wrong]
        missing = sorted(want - set(active.values()))
        if missing:
            return [Call("book", {"item_id": i, "day": d, "slot": s}) for i, d, s in missing]
        if not self.verified:
            return [Call("list_bookings", {})]
        ids = tuple(p["id"] for p in plan or ())
        if self.agreed != ids and self.asks < _ASKS:
            if self.asked != ids:
                self.asked, self.asks = ids, 0
            self.asks += 1
            return _read_back(plan or (), self.form["legs"])
        return [Call("submit_plan", {})]

    def _found(self) -> list[Any]:
        """Per leg, the places its searches found (every page), or the search calls still needed."""
        out: list[Any] = []
        for leg in self.form["legs"]:
            first = Call("search", dict(leg["filters"]))
            head = self.values.get(key_of(first))
            if not isinstance(head, dict):
                out.append(first)
                continue
            places = list(head.get("results", ()))
            missing = None
            for page in range(2, int(head.get("pages", 1)) + 1):
                call = Call("search", {**leg["filters"], "page": page})
                got = self.values.get(key_of(call))
                if not isinstance(got, dict):
                    missing = call
                    break
                places += got.get("results", ())
            out.append(missing if missing is not None else places)
        return out

    def _open(self, item: str, leg: dict[str, Any]) -> bool | None:
        got = self.values.get(key_of(Call("check_availability", {"item_id": item, "day": leg["day"],
                                                               "slot": leg["slot"]})))
        return bool(got.get("available")) if isinstance(got, dict) else None

    def _best(self, options: list[list[dict[str, Any]]]) -> tuple[dict[str, Any], ...] | None:
        """The plan the rules pick: of every plan that keeps them, the one rated highest booking
        by booking in priority order, or the one whose ratings add up to the most (sums in tenths,
        as ratings are; some thousands of plans at most: all are compared)."""
        order, budget, distinct = self.form["order"], self.form["budget"], self.form["distinct"]
        total = self.form.get("total", False)
        best: tuple[dict[str, Any], ...] | None = None
        best_key: tuple[float, ...] = ()
        for plan in itertools.product(*options):
            if len({p["id"] for p in plan}) < len(plan) or sum(float(p["price"]) for p in plan) > budget:
                continue
            if distinct and len({p["area"] for p in plan}) < len(plan):
                continue
            key = ((sum(round(float(p["rating"]) * 10) for p in plan),) if total
                   else tuple(float(plan[i]["rating"]) for i in order))
            if best is None or key > best_key:
                best, best_key = plan, key
        return best


def _read_back(plan: tuple[dict[str, Any], ...], legs: list[dict[str, Any]]) -> str:
    """The plan read to the user, each booking's place and time, and the question whether to submit."""
    lines = [f"- Booking {leg['label']}: {p['name']} ({p['id']}), {leg['day'].capitalize()} {leg['slot']}"
             for p, leg in zip(plan, legs)]
    return "Here is the plan I have booked:\n" + "\n".join(lines) + "\nShall I submit this plan?"


def _is_check(key: str) -> bool:
    """Whether a read's key (`key_of`) is an availability check's."""
    return json.loads(key)[0] == "check_availability"


def _twice(calls: list[Call]) -> list[Call]:
    """Each read twice, as many as fit in one turn."""
    calls = calls[: _BATCH // 2]
    return [c for c in calls for _ in range(2)]
