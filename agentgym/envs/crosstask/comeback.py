"""The hard tier's come-backs: the user returns to the booking and asks for a change it states
in terms of that booking and of earlier results, never in absolute values.

Each come-back is a `MoveBooking` whose target is computed by the reference solver from the
booking as it stands when the come-back starts (the dialog sub-task's, or the previous
come-back's) and from the earlier sub-tasks' gold (`agentgym.envs.crosstask.upstream`), so a
chain of them depends link by link on the earlier outcomes:

* ``same_day``: "the evening of the same day" (the booked day, another time of day it is open);
* ``next_open``: "the next day it's open, same time of day" (the first later day of the week
  the place is open at the booked time: `check_availability` tells);
* ``budget``: a new budget below the booked place's price, and "the best-rated place of the
  same setting (rooftop) in the same area that fits it and is open at the same time" (one such place is
  rated strictly above the others, so the gold is unique). After a finance request the budget
  is what is left of a trip allowance once that request's amount (its reference solver's) is
  taken out, at a rate the user states when the amount is not in EUR: the remainder lies
  strictly between two place prices, so one reading of "at most" holds. After a calendar
  request too, the place must be open on the meeting's day (when one fits then): the link
  that needs the booking, the finance amount and the meeting's date at once;
* ``meeting_day``: "the day of the meeting you set up for me, in the morning as the booking we have": the
  weekday of the date the user gave in an earlier calendar request of the session (its
  reference solver's date), so a tool-use sub-task's outcome decides the booking;
* ``needs``: a late need the booked place lacks and the user never stated (an amenity): "the
  best-rated place of the same setting (rooftop) in the same area that has it and is open at the same time,
  or cancel if there is none" (a unique best, or none at all: then the gold is the
  cancellation alone). It is the session's last come-back, since a cancelled booking leaves
  nothing to come back to. A series (`agentgym.envs.crosstask.series`, several bookings, one a
  day) takes its place in most sessions, for the same reason.

A new place (``budget``, ``needs``) "still has everything else I asked for": every need the
user stated for the booking (`Upstream.needs`) and a budget an earlier come-back set (named:
"(including the budget: at most 200 EUR per event)"), but what
the come-back itself changes, as a person expects of what they did not change. When no place
would, the come-back gives up as few needs as it must (one, else two) and names them ("except
"wifi" and the minimum rating of 4.0"); a need given up stays given up for later come-backs,
which name it among those they do without.

A come-back never returns the booking to a place and time it stood at before (`visited`): a
kind whose target would is not drawn. The user (`ComeBackUser`) says what it wants in those
words only: asked again, it repeats them; a booking of the wrong place or time is refused with
them. An either/or it is asked (`agentgym.envs.crosstask.clarify`: cancel instead, keep it as
it is, do the other needs still hold), and whether to cancel the old booking once the new one is
in place (yes), it answers from its rule, never naming a place. It sees its bookings as the follow-up user does and ends the sub-task under the same rule
(`score_move`; for a cancellation, nothing left booked). A message that names the booked place
at no time but the booking's own ("which booking: the one at X on Tuesday evening?") says which
booking it means: the user says so and repeats its change, where a move there is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from agentgym.core.task import UserTurn, WorldEvent
from agentgym.envs.crosstask import clarify
from agentgym.envs.crosstask.followup import FollowUpUser, MoveBooking, checked
from agentgym.envs.crosstask.upstream import Spent
from agentgym.envs.dialog.aside import led_in
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.envs.dialog.options import place_mentions
from agentgym.envs.dialog.tasks import Booking, Constraint, Place, World
from agentgym.users.understanding import Reading

__all__ = ["ComeBack", "ComeBackUser", "Upstream", "ASKS", "MEETING_DAY", "NEEDS", "plan_comeback", "at_booked_time",
           "candidate_check"]

#: The kinds of come-back a session draws from, in their fallback order; ``meeting_day`` is
#: drawn in place of one of them when a calendar request comes before it.
ASKS = ("same_day", "next_open", "budget", "needs")
MEETING_DAY = "meeting_day"
NEEDS = "needs"
#: EUR per unit of each currency, as the user states it for an allowance held in another one.
RATES = {"USD": 0.92, "GBP": 1.17, "CHF": 1.04, "SEK": 0.088, "CAD": 0.68}


#: What every come-back that picks another place says of the needs it does not change.
KEEPS = "still has everything else I asked for"
#: What follows `KEEPS` where the come-back gives needs up: "..., though it no longer needs to have
#: a pool or be rated at least 4.0, and is open ...".
GIVES_UP = ", though it no longer needs to "


def at_booked_time(slot: str) -> str:
    """The time of day of a request that also names the meeting's day: the booking's, named
    (the meeting has a time of its own, so "the same time of day" would have two readings)."""
    return f"in the {slot} as the booking we have"


@dataclass(frozen=True)
class Upstream:
    """What a come-back reads of the session before it (`agentgym.envs.crosstask.upstream`):
    besides the earlier results, the needs the user holds for the booking (`needs`, the booking
    sub-task's constraints but its time) and a budget an earlier come-back set (`budget`: its
    limit and words), which every come-back keeps unless it changes them itself."""

    meeting_day: str | None = None
    spent: Spent | None = None
    visited: frozenset[tuple[str, str, str]] = field(default_factory=frozenset)
    needs: tuple[Constraint, ...] = ()
    budget: tuple[float, str] | None = None
    #: Needs an earlier come-back gave up: no longer kept, yet never drawn as a late need.
    given_up: tuple[Constraint, ...] = ()

    def keeps(self, place: Place, changed: str = "", dropped: tuple[Constraint, ...] = ()) -> bool:
        """Whether `place` meets every need the user holds but those of kind `changed` (what the
        come-back itself changes: ``price`` for a new budget) and the one it gives up
        (`dropped`), an earlier come-back's budget too."""
        if changed != "price" and self.budget is not None and place.price > self.budget[0]:
            return False
        return all(c.holds(place, "", "") for c in self.needs
                   if c.kind != changed and c not in dropped and c not in self.given_up)


#: The look-up of the meeting a come-back's words name ("the day of the meeting you set up for me").
_MEETING_LOOKUP = {"name": "list_meetings", "arguments": {}}
#: How the user, agreeing to the place, asks for the move's second step.
_AND_CANCEL = " and cancel the old booking"


@dataclass(frozen=True)
class ComeBack(MoveBooking):
    """A move stated relative to the booking: `ask` is its kind, `wanted` the words for it. An
    empty `place` means the booking is to be cancelled, not moved."""

    ask: str = ""
    wanted: str = ""
    #: Why the user asks (said before the request).
    why: str = "Plans changed on my side. "
    #: The budget it sets (a ``budget`` come-back) and the user's words for it: later ones keep it.
    limit: float | None = None
    limit_words: str = ""
    #: The needs it keeps, in the user's words (what the user answers when asked whether they
    #: still hold), and those it gives up: later come-backs no longer keep them.
    kept: tuple[str, ...] = ()
    dropped: tuple[Constraint, ...] = ()
    #: The reads the request's words point to beyond the plan (`useful_calls`): what finds another
    #: place within its scope (`_scope_search`; a cancel rests on there being none), or the checks
    #: of the days before the next one open.
    useful: tuple[dict[str, Any], ...] = field(default=(), compare=False)

    @property
    def cancel(self) -> bool:
        return not self.place

    def plan(self) -> list[dict[str, Any]]:
        if self.cancel:
            return [{"name": "cancel_booking", "arguments": {"booking_id": self.booking}}]
        return super().plan()

    def to_dict(self) -> dict[str, Any]:
        return self._with_useful({**super().to_dict(), "ask": self.ask, "wanted": self.wanted})

    def _with_useful(self, out: dict[str, Any]) -> dict[str, Any]:
        """`out`, a gold dict of this come-back, with its `useful_calls` when it has any."""
        if self.useful:
            out["useful_calls"] = [dict(c) for c in self.useful]
        return out


def candidate_check(day: str, slot: str) -> dict[str, Any]:
    """The useful read that checks any candidate place on `day` in `slot`."""
    return {"name": "check_availability", "arguments": {"item_id": {"any": True}, "day": day, "slot": slot}}


def _scope_search(world: World, b: Booking, up: Upstream, day: str, target: Place | None, amenity: str = "",
                  candidates: tuple[Place, ...] = ()) -> tuple[dict[str, Any], ...]:
    """The reads that find another place a come-back's words scope (`target`, or None when
    none qualifies): a search in the booked place's area, of its kind, the target's or a
    candidate's when given, with amenities among those the user stated (and `amenity`, a late
    need); the checks of
    candidates on `day` at the booked time (the best one may be taken then); the details of the
    target and of the other `candidates` (the places in the scope that meet everything the
    come-back asks but the time, open or not, as a Dialog task's candidates are: of two tied
    for best, the one taken then is read too)."""
    booked = world.by_id[b.item_id]
    stated = [c.value for c in up.needs if c.kind == "amenity"] + ([amenity] if amenity else [])
    # A candidate's kind too: where the user gave up the kind, a search for the one place that
    # qualifies is of that place's kind (a playtest, CrossTask 9424, last come-back).
    kinds = list(dict.fromkeys([booked.category] + ([target.category] if target is not None else [])
                               + [p.category for p in candidates]))
    filters: dict[str, Any] = {"area": {"if_given": booked.area}, "category": {"if_given": {"any_of": kinds}}}
    if stated:
        filters["amenities"] = {"if_given": {"subset_of": stated}}
    reads = ({"name": "search", "arguments": filters}, candidate_check(day, b.slot))
    if target is None:
        return reads
    reads += ({"name": "get_details", "arguments": {"item_id": target.id}},)
    others = [p.id for p in candidates if p.id != target.id]
    return reads + (({"name": "get_details", "arguments": {"item_id": {"any_of": others}}},) if others else ())


def _same_day(world: World, b: Booking, rng: Any, up: Upstream) -> ComeBack | None:
    place = world.by_id[b.item_id]
    slots = [s for s in SLOTS if s != b.slot and place.is_open(b.day, s) and (place.id, b.day, s) not in up.visited]
    if not slots:
        return None
    slot = slots[int(rng.integers(len(slots)))]
    return ComeBack(b.id, place.id, (b.day, b.slot), b.day, slot, "same_day", f"the {slot} of the same day")


def _next_open(world: World, b: Booking, rng: Any, up: Upstream) -> ComeBack | None:
    place = world.by_id[b.item_id]
    later = [d for d in DAYS[DAYS.index(b.day) + 1:] if place.is_open(d, b.slot)]
    if not later:
        return None
    # "The next day it is open" rests on the days before it being closed: their checks count.
    # So do the checks of the days after it sent before the answer's own came back (in the same
    # turn as it: the agent could not know yet; CrossTask 9465, 9525, 9533, 9540).
    closed = DAYS[DAYS.index(b.day) + 1:DAYS.index(later[0])]
    answer = checked(place.id, later[0], b.slot)
    beyond = ({**checked(place.id, d, b.slot), "until_seen": answer} for d in DAYS[DAYS.index(later[0]) + 1:])
    return ComeBack(b.id, place.id, (b.day, b.slot), later[0], b.slot, "next_open",
                    "the next day after it on which the place is open at that same time of day",
                    useful=(*(checked(place.id, d, b.slot) for d in closed), *beyond))


#: Where a come-back looks for another place, narrowest first: (its words, whether a place is
#: in it). The first with an answer is the one the user names; the words name the kind
#: (`scope_words`), which "of the same kind" alone would leave to be guessed.
SCOPES = (("of the same {label} ({value}) in the same area", lambda p, q: p.category == q.category and p.area == q.area),
          ("in the same area", lambda p, q: p.area == q.area))


#: How the words of the scope that names the booked place's kind begin ("of the same setting").
_KIND_SCOPE = SCOPES[0][0].split("{", 1)[0]


def scope_words(words: str, world: World, booked: Place) -> str:
    """A scope's words for a move from `booked`: "of the same setting (rooftop) in the same area"."""
    return words.format(label=world.domain.category_label, value=booked.category)


def _others(world: World, b: Booking, up: Upstream, changed: str = "",
            dropped: tuple[Constraint, ...] = ()) -> list[tuple[str, list[Place]]]:
    """Each scope's words and the other places in it that keep the user's needs but those of
    kind `changed` and the one it gives up (`dropped`; `Upstream.keeps`), narrowest first. A
    scope that already keeps what is given up (the same kind, when the kind is) is left out."""
    booked = world.by_id[b.item_id]
    return [(scope_words(words, world, booked), [p for p in world.places if p.id != booked.id and inside(p, booked)
                                                 and up.keeps(p, changed, dropped)])
            for words, inside in SCOPES
            if not any(all(c.holds(p, "", "") for p in world.places if inside(p, booked)) for c in dropped)]


def _relaxed(up: Upstream, changed: str = "") -> list[list[tuple[Constraint, ...]]]:
    """What a come-back may give up so that a place qualifies, in rounds: nothing, then any one
    stated need it does not change itself, then any two (never the area: the scope keeps it)."""
    free = [c for c in up.needs if c.kind not in ("area", changed) and c not in up.given_up]
    return [[()], [(c,) for c in free], [(c, d) for i, c in enumerate(free) for d in free[i + 1:]]]


def _keeps_words(world: World, up: Upstream, dropped: tuple[Constraint, ...], changed: str = "",
                 scope: str = "") -> str:
    """What a come-back says of the needs it keeps: all of them, or all but those `dropped` and
    those an earlier come-back gave up (named again: "everything else I asked for" would else
    read as the needs first stated), but a need of the kind it changes (`changed`), a price
    limit a budget of an earlier come-back stands in for, and a kind its `scope` names ("of the
    same plan (private office)" after a come-back that gave the hot desk plan up)."""
    replaced = ("price", changed) if up.budget is not None else (changed,)
    if scope.startswith(_KIND_SCOPE):
        replaced += ("category",)
    dropped = dropped + tuple(c for c in up.given_up if c not in dropped and c.kind not in replaced)
    # A budget an earlier come-back set is named among what is kept: "everything else" would
    # else read as the needs first stated, whose own price limit it replaced.
    keeps = KEEPS if up.budget is None or changed == "price" else f"{KEEPS} (including the budget: {up.budget[1]})"
    if not dropped:
        return keeps
    dom = world.domain
    # What the place no longer needs to do, in the words the user stated each need in ("have a
    # pool"); "be of the french cuisine", as a cuisine is no "a french".
    words = {"category": f"be of the {{}} {dom.category_label}", "rating": "be rated at least {}",
             "price": f"cost at most {{}} {dom.price_unit}"}
    needs = [dom.amenity_phrases[c.value] if c.kind == "amenity" else words[c.kind].format(c.value) for c in dropped]
    return f"{keeps}{GIVES_UP}{' or '.join(needs)},"


def kept_words(world: World, up: Upstream, changed: str = "", dropped: tuple[Constraint, ...] = ()) -> tuple[str, ...]:
    """The needs a come-back keeps (all but those of kind `changed` and `dropped`), as the user says them."""
    unit = world.domain.price_unit
    said = {"category": "{}", "area": "in {}", "price": f"at most {{}} {unit}", "rating": "rated {} or more",
            "amenity": 'with "{}"'}
    # A budget an earlier come-back set stands in for the user's own price limit.
    replaced = "price" if up.budget is not None else changed
    out = [said[c.kind].format(c.value) for c in up.needs
           if c.kind not in (changed, replaced) and c not in dropped and c not in up.given_up]
    if up.budget is not None and changed != "price":
        out.append(up.budget[1])
    return tuple(out)


def _best(places: list[Place]) -> Place | None:
    """The best-rated of `places` when one is rated strictly above the others, else None."""
    ranked = sorted(places, key=lambda p: -p.rating)
    return ranked[0] if ranked and (len(ranked) == 1 or ranked[0].rating > ranked[1].rating) else None


def _budget(world: World, b: Booking, rng: Any, up: Upstream) -> ComeBack | None:
    spent = up.spent
    allowance = spent is not None and world.domain.price_unit.startswith("EUR") and (
        spent.currency == "EUR" or spent.currency in RATES)
    # After a finance and a calendar request, the last link needs both: the allowance and the
    # meeting's day; failing that, the booked day.
    days = [(up.meeting_day, True), (b.day, False)] if allowance and up.meeting_day is not None else [(b.day, False)]
    for day, meeting in days:
        move = _budget_on(world, b, rng, up if allowance else replace(up, spent=None), day, meeting)
        if move is not None:
            return move
    return None


def _budgets(world: World, b: Booking, up: Upstream, day: str, dropped: tuple[Constraint, ...]) -> Any:
    """The narrowest scope's budgets below the booked price whose best place (unique, not
    visited) is open on `day` at the booked time, giving up the needs `dropped`: (dropped,
    scope, the cheaper places, [(budget, best place)]), or None when no scope has one."""
    booked: Place = world.by_id[b.item_id]
    for scope, others in _others(world, b, up, "price", dropped):
        cheaper = [p for p in others if p.price < booked.price]
        budgets = []
        for limit in sorted({p.price for p in cheaper}):
            best = _best([p for p in cheaper if p.price <= limit and p.is_open(day, b.slot)])
            if best is not None and (best.id, day, b.slot) not in up.visited:
                budgets.append((limit, best))
        if budgets:
            return dropped, scope, cheaper, budgets
    return None


def _budget_on(world: World, b: Booking, rng: Any, up: Upstream, day: str, meeting: bool) -> ComeBack | None:
    """A budget come-back to the best place under a drawn budget open on `day` (the meeting's,
    when `meeting`) at the booked time, giving up as few of the user's needs as it can."""
    for rounds in _relaxed(up, "price"):
        options = [o for o in (_budgets(world, b, up, day, dropped) for dropped in rounds) if o is not None]
        if options:
            dropped, scope, cheaper, budgets = options[int(rng.integers(len(options)))]
            limit, best = budgets[int(rng.integers(len(budgets)))]
            above = min([p.price for p in cheaper if p.price > limit] + [world.by_id[b.item_id].price])
            return _budget_move(world, b, rng, up, (scope, dropped), (limit, above), best, (day, meeting), cheaper)
    return None


def _budget_move(world: World, b: Booking, rng: Any, up: Upstream, where: tuple[str, tuple[Constraint, ...]],
                 prices: tuple[int, int], best: Place, when: tuple[str, bool], pool: list[Place]) -> ComeBack:
    """The budget come-back to `best` on `when[0]` (the meeting's day when `when[1]`) in the
    scope `where[0]`, giving up the need `where[1]` (if any): a budget of `prices[0]`, or after
    a finance request (`up.spent`) what is left of an allowance, strictly between the two `prices`.
    `pool`: the scope's places that keep every other need, cheaper than the booked one."""
    unit = world.domain.price_unit
    scope, dropped = where
    what = f"the best-rated {world.domain.noun} {scope} that costs at most"
    kept = kept_words(world, up, "price", dropped)
    keeps = _keeps_words(world, up, dropped, "price", scope)
    day, meeting = when
    at_same_time = (f"and is open on the day of the meeting you set up for me, {at_booked_time(b.slot)}"
                    if meeting else "and is open at the same time")
    spent = up.spent
    limit, above = prices
    if spent is None:
        return ComeBack(b.id, best.id, (b.day, b.slot), b.day, b.slot, "budget",
                        f"{what} {limit} {unit}, {keeps} {at_same_time}",
                        f"Finance approved at most {limit} {unit} for the {world.domain.noun}, so the one we booked is "
                        "over budget. ",
                        limit, f"at most {limit} {unit}", kept, dropped,
                        _scope_search(world, b, up, b.day, best, candidates=tuple(p for p in pool if p.price <= limit)))
    # What is left lies well inside (limit, above), so "at most" reads one way after any rounding.
    left_eur = limit + (above - limit) * (0.15 + 0.7 * float(rng.random()))
    cur = spent.currency
    rate = 1.0 if cur == "EUR" else RATES[cur]
    allowance = spent.cents + round(left_eur / rate * 100)
    source = "reimbursement you paid" if spent.paid else "expense total you worked out"
    counted = "" if cur == "EUR" else f", counting 1 {cur} as {rate} EUR"
    left = f"what's left of the team's {allowance // 100}.{allowance % 100:02d} {cur} trip allowance"
    wanted = f"{what} {left} once the {source} earlier is taken out{counted}, {keeps} {at_same_time}"
    why = f"The {world.domain.noun} comes out of the team's trip allowance too, so the one we booked is over budget. "
    # The words point back to the session: the subtraction they ask for, by the finance tool for
    # exact sums (the conversion at the stated rate is the user's own arithmetic), and the look-ups
    # of the reimbursement paid and of the meeting's day.
    back = ({"name": "sum_amounts", "arguments": {"amounts": {"any_order": [allowance / 100, -spent.cents / 100]}}},)
    back += ({"name": "list_transfers", "arguments": {}},) if spent.paid else ()
    back += (_MEETING_LOOKUP,) if meeting else ()
    return ComeBack(b.id, best.id, (b.day, b.slot), day, b.slot, "budget", wanted, why, left_eur, f"within {left}", kept,
                    dropped, _scope_search(world, b, up, day, best, candidates=tuple(p for p in pool if p.price <= left_eur))
                    + back)


def _meeting_day(world: World, b: Booking, rng: Any, up: Upstream) -> ComeBack | None:
    place, day = world.by_id[b.item_id], up.meeting_day
    if day is None or day == b.day or not place.is_open(day, b.slot) or (place.id, day, b.slot) in up.visited:
        return None
    return ComeBack(b.id, place.id, (b.day, b.slot), day, b.slot, MEETING_DAY,
                    f"the day of the meeting you set up for me, {at_booked_time(b.slot)}", useful=(_MEETING_LOOKUP,))


def _late_needs(world: World, b: Booking, up: Upstream, dropped: tuple[Constraint, ...]) -> tuple[list[Any], list[Any]]:
    """The late needs that move the booking (scope, amenity, best place, `dropped`, the scope's
    places that have the amenity and keep the other needs) and those nothing meets, which cancel
    it (best place None), keeping every stated need but `dropped`."""
    booked: Place = world.by_id[b.item_id]
    moves, cancels = [], []
    # A late need is one the user did not have: never one it stated for the booking (given up since or not).
    stated = {c.value for c in up.needs if c.kind == "amenity"}
    for scope, others in _others(world, b, up, "", dropped):
        for amenity in world.domain.amenities:
            if amenity in booked.amenities or amenity in stated:
                continue
            having = tuple(p for p in others if amenity in p.amenities)
            fits = [p for p in having if p.is_open(b.day, b.slot)]
            best = _best(fits)
            if not fits:
                cancels.append((scope, amenity, None, dropped, having))
            elif best is not None and (best.id, b.day, b.slot) not in up.visited:
                moves.append((scope, amenity, best, dropped, having))
    return moves, cancels


def _needs(world: World, b: Booking, rng: Any, up: Upstream) -> ComeBack | None:
    moves, cancels = _late_needs(world, b, up, ())
    for rounds in _relaxed(up)[1:]:
        # No place keeps every need and meets the new one: the user may give one or two up for it.
        moves = moves or [m for dropped in rounds for m in _late_needs(world, b, up, dropped)[0]]
    # A move whenever one qualifies: the rule cancels only when none does.
    outcomes = moves or cancels
    if not outcomes:
        return None
    scope, amenity, best, dropped, having = outcomes[int(rng.integers(len(outcomes)))]
    noun = world.domain.noun
    wanted = (f'the best-rated {noun} {scope} that lists "{amenity}" among its amenities, '
              f"{_keeps_words(world, up, dropped, scope=scope)} and is open at the same time, "
              "or cancel it if there is none")
    why = f'I\'ve just found out I need "{amenity}", and the {noun} we booked doesn\'t have it. '
    return ComeBack(b.id, best.id if best is not None else "", (b.day, b.slot), b.day, b.slot, NEEDS, wanted, why,
                    kept=kept_words(world, up, "", dropped), dropped=dropped, useful=_scope_search(world, b, up, b.day, best, amenity, having))


_PLANS = {"same_day": _same_day, "next_open": _next_open, "budget": _budget, NEEDS: _needs,
          MEETING_DAY: _meeting_day}


def _fallback(world: World, b: Booking, rng: Any, up: Upstream) -> MoveBooking | None:
    """A plain move to a drawn time the booking has not stood at, or None."""
    place: Place = world.by_id[b.item_id]
    options = [(d, s) for d in DAYS for s in SLOTS
               if (place.id, d, s) not in up.visited and (d, s) != (b.day, b.slot) and place.is_open(d, s)]
    if not options:
        return None
    day, slot = options[int(rng.integers(len(options)))]
    return MoveBooking(b.id, place.id, (b.day, b.slot), day, slot)


def plan_comeback(world: World, booking: Booking, ask: str, rng: Any, up: Upstream | None = None) -> MoveBooking | None:
    """The come-back `ask` on `booking` (the first kind after it in `ASKS` that this booking
    allows, when it does not; never a late need but when asked for one, since it must come
    last), or a plain move to a drawn time when none does; never back to a place and time in
    `up.visited`. A ``meeting_day`` come-back moves to `up.meeting_day`."""
    up = up or Upstream()
    kinds = [MEETING_DAY] if ask == MEETING_DAY else []
    start = ASKS.index(ask) if ask in ASKS else 0
    kinds += [k for k in ASKS[start:] + ASKS[:start] if k != NEEDS or ask == NEEDS]
    for kind in kinds:
        move = _PLANS[kind](world, booking, rng, up)
        if move is not None:
            return move
    return _fallback(world, booking, rng, up)


class ComeBackUser(FollowUpUser):
    """The user of a come-back: the follow-up user, who says what it wants only in the words
    of the come-back (`ComeBack.wanted`), and says why it asks (a new budget, a late need)."""

    __slots__ = ("_wanted", "_why")

    def __init__(self, world: World, move: ComeBack) -> None:
        super().__init__(world, move)
        self._wanted = move.wanted
        self._why = move.why

    def _target(self) -> str:
        return f"please move it to {self._wanted}"

    def _still_wanted(self, old: bool) -> str:
        return f"{self._target()}."

    def _not_meant(self) -> str:
        return f"No, that's not what I asked for: I wanted {self._wanted}."

    def _request(self) -> str:
        return self._missing() or f"The {self._noun} we booked: {self._target()}."

    def opening(self) -> str:
        return (f"{self._why}Could you move the {self._noun} we booked earlier to {self._wanted}? "
                "Please check it's free before you book.")

    def _respond(self, r: Reading, message: str, turn: int) -> str:
        topics = clarify.asked(message)
        if not topics:
            return super()._respond(r, message, turn)
        # An either/or gets its answer first, from the come-back's own rule; then the place named, if any.
        # Asked whether to cancel, the places the message names are its reasons ("none fits: X
        # lacks wifi, Y is full; shall I cancel?"), no proposal to answer.
        said = self._answer(r, message) if r.places and clarify.CANCEL not in topics else None
        if said is not None and _AND_CANCEL in said:
            topics -= {clarify.REPLACE}  # "book it ... and cancel the old booking" answers that too
        parts = [self._clarified(topic) for topic in (clarify.NEEDS, clarify.KEEP, clarify.CANCEL, clarify.REPLACE)
                 if topic in topics]
        return " ".join(parts + ([said] if said else []))

    def _clarified(self, topic: str) -> str:
        """The answer to a question about `topic` (`agentgym.envs.crosstask.clarify`)."""
        move: ComeBack = self._move  # type: ignore[assignment]
        kept = f" ({', '.join(move.kept)})" if move.kept else ""
        if topic == clarify.NEEDS:
            if move.ask not in ("budget", NEEDS):
                return f"Yes, nothing else changes: the same {self._noun}, just at another time."
            given_up = move.wanted.split(GIVES_UP)[1].split(", and is open")[0] if GIVES_UP in move.wanted else ""
            but = f", though it no longer needs to {given_up}" if given_up else ""
            new = "only the budget is new" if move.ask == "budget" else "the new need comes on top"
            return f"Yes, everything else I asked for still holds{kept}{but}; {new}."
        if topic == clarify.KEEP:
            return f"No, I can't keep it as it is. {move.why.strip()}"
        if topic == clarify.REPLACE:
            return "Yes, please: once the new booking is in place, cancel the old one."
        if move.ask == NEEDS:
            # What it described, said again: "is X at 55 ok after all?" beside the either/or asks
            # whether a need still holds (a playtest, seed 6859, turn 25).
            return (f"Cancel it only if no place fits what I described: the new need and everything else I asked "
                    f"for{kept}. If one does, I'd rather move it there.")
        return f"No, please don't just cancel it: I still want the {self._noun}, just changed as I said."

    def _answer(self, r: Reading, message: str = "") -> str | None:
        if r.places:
            meant = self._meant(r)
            if meant is not None and meant.id == self._move.place:
                # The new time is the assistant's to find: the yes names it only where the
                # message did, or where it is the booking's own time; else the come-back's words.
                move = self._move
                named = ("time", move.day) in r.values and ("time", move.slot) in r.values
                what = f"please book it for {self._when}" if named or (move.day, move.slot) == move.old else self._target()
                if not any(self._is_new(b) for b in self._world.active_bookings()):
                    return f"Yes, that one: {what}{_AND_CANCEL}."
                return f"Yes, that one. {self._missing() or f'{what[0].upper()}{what[1:]}.'}"
            if meant is not None and self._names_booking(meant, r):
                return f"Yes, that's the booking. {self._request()}"
            if meant is not None and self._gives_up_booked(meant, message):
                # "... cancel Blue Mug (B1, Monday morning) and book the new cafe. Is that right?":
                # the booked place named as the one to give up is no proposal of it.
                return None
            return f"That isn't what I asked for. {self._request()}"
        if r.asked or r.open:
            return f"I'd like {self._wanted}. Nothing else changes."
        return None

    def _gives_up_booked(self, place: Place, message: str) -> bool:
        """Whether `message` names the booked place only as the one to give up: each mention of
        it right after words that set it aside (`led_in`: "cancel Blue Mug (B1)", "replace Blue
        Mug with", "move it away from Blue Mug"). A report that names it ("Blue Mug is now booked ... B1
        is cancelled") names the booking as it stands."""
        old = self._world.bookings.get(self._move.booking)
        if old is None or place.id != old.item_id:
            return False
        text = message.lower()
        mine = [start for p, start, _ in place_mentions(text, self._world.places) if p.id == place.id]
        return bool(mine) and all(led_in(text[:start]) for start in mine)

    def _names_booking(self, place: Place, r: Reading) -> bool:
        """Whether a message that names the booked place speaks of the booking as it stands
        ("the one at X on Wednesday afternoon?", "your booking at X"): it names no time but the
        booking's own, so it says which booking, and proposes no move to that place."""
        old = self._world.bookings.get(self._move.booking)
        return old is not None and place.id == old.item_id and \
            all(value in (old.day, old.slot) for slot, value in r.values if slot == "time")

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        said = super().react(events, turn)
        if said is not None and said.end == "accepted" and not self._move.place:
            return UserTurn("Thanks for cancelling it, then.", end="accepted")
        return said
