"""The hard tier's come-backs: the user returns to the booking and asks for a change it states
in terms of that booking, never in absolute values.

Each come-back is a `MoveBooking` whose target is computed by the reference solver from the
booking as it stands when the come-back starts (the dialog sub-task's, or the previous
come-back's), so a chain of them depends link by link on the earlier outcomes:

* ``same_day``: "the evening of the same day" (the booked day, another time of day it is open);
* ``next_open``: "the next day it's open, same time of day" (the first later day of the week
  the place is open at the booked time: `check_availability` tells);
* ``budget``: a new budget below the booked place's price, and "the best-rated place of the
  same kind in the same area that fits it and is open at the same time" (one such place is
  rated strictly above the others, so the gold is unique);
* ``meeting_day``: "the day of the meeting you set up for me, at the same time of day": the
  weekday of the date the user gave in an earlier calendar request of the session (its
  reference solver's date), so a tool-use sub-task's outcome decides the booking.

The user (`ComeBackUser`) says what it wants in those words only: asked again, it repeats them;
a booking of the wrong place or time is refused with them. It sees its bookings as the
follow-up user does and ends the sub-task under the same rule (`score_move`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym.envs.crosstask.followup import FollowUpUser, MoveBooking, plan_move
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.envs.dialog.tasks import Booking, Place, World
from agentgym.users.understanding import Reading

__all__ = ["ComeBack", "ComeBackUser", "ASKS", "MEETING_DAY", "plan_comeback"]

#: The kinds of come-back a session draws from, in their fallback order; ``meeting_day`` is
#: drawn in place of one of them when a calendar request comes before it.
ASKS = ("same_day", "next_open", "budget")
MEETING_DAY = "meeting_day"


@dataclass(frozen=True)
class ComeBack(MoveBooking):
    """A move stated relative to the booking: `ask` is its kind, `wanted` the words for it."""

    ask: str = ""
    wanted: str = ""
    #: For a ``budget`` come-back: the new budget.
    limit: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "ask": self.ask, "wanted": self.wanted}


def _same_day(world: World, b: Booking, rng: Any) -> ComeBack | None:
    place = world.by_id[b.item_id]
    slots = [s for s in SLOTS if s != b.slot and place.is_open(b.day, s)]
    if not slots:
        return None
    slot = slots[int(rng.integers(len(slots)))]
    return ComeBack(b.id, place.id, (b.day, b.slot), b.day, slot, "same_day", f"the {slot} of the same day")


def _next_open(world: World, b: Booking, rng: Any) -> ComeBack | None:
    place = world.by_id[b.item_id]
    later = [d for d in DAYS[DAYS.index(b.day) + 1:] if place.is_open(d, b.slot)]
    if not later:
        return None
    return ComeBack(b.id, place.id, (b.day, b.slot), later[0], b.slot, "next_open",
                    "the next day after it that the place is open, at the same time of day")


def _budget(world: World, b: Booking, rng: Any) -> ComeBack | None:
    booked: Place = world.by_id[b.item_id]
    alike = [p for p in world.places if p.id != booked.id and p.category == booked.category
             and p.area == booked.area and p.price < booked.price]
    budgets = []
    for limit in sorted({p.price for p in alike}):
        fits = sorted((p for p in alike if p.price <= limit and p.is_open(b.day, b.slot)),
                      key=lambda p: -p.rating)
        if fits and (len(fits) == 1 or fits[0].rating > fits[1].rating):
            budgets.append((limit, fits[0]))
    if not budgets:
        return None
    limit, best = budgets[int(rng.integers(len(budgets)))]
    unit = world.domain.price_unit
    wanted = (f"the best-rated {world.domain.noun} of the same kind in the same area that costs at most "
              f"{limit} {unit} and is open at the same time")
    return ComeBack(b.id, best.id, (b.day, b.slot), b.day, b.slot, "budget", wanted, limit)


def _meeting_day(world: World, b: Booking, day: str | None) -> ComeBack | None:
    place = world.by_id[b.item_id]
    if day is None or day == b.day or not place.is_open(day, b.slot):
        return None
    return ComeBack(b.id, place.id, (b.day, b.slot), day, b.slot, MEETING_DAY,
                    "the day of the meeting you set up for me, at the same time of day")


_PLANS = {"same_day": _same_day, "next_open": _next_open, "budget": _budget}


def plan_comeback(world: World, booking: Booking, ask: str, rng: Any,
                  meeting_day: str | None = None) -> MoveBooking | None:
    """The come-back `ask` on `booking` (the first kind after it in `ASKS` that this booking
    allows, when it does not), or a plain move to a drawn time when none does. A
    ``meeting_day`` come-back moves to `meeting_day` (the weekday of the session's meeting)."""
    if ask == MEETING_DAY:
        move = _meeting_day(world, booking, meeting_day)
        if move is not None:
            return move
        ask = ASKS[0]
    start = ASKS.index(ask)
    for kind in ASKS[start:] + ASKS[:start]:
        move = _PLANS[kind](world, booking, rng)
        if move is not None:
            return move
    return plan_move(world, booking, rng)


class ComeBackUser(FollowUpUser):
    """The user of a come-back: the follow-up user, who says what it wants only in the words
    of the come-back (`ComeBack.wanted`), and says why it asks (a new budget) where it does."""

    __slots__ = ("_wanted", "_why")

    def __init__(self, world: World, move: ComeBack) -> None:
        super().__init__(world, move)
        self._wanted = move.wanted
        if move.limit is not None:
            self._why = (f"Finance approved at most {move.limit} {world.domain.price_unit} for it, so the one "
                         "we booked is over budget. ")
        else:
            self._why = "Plans changed on my side. "

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

    def _answer(self, r: Reading) -> str | None:
        if r.places:
            meant = self._meant(r)
            if meant is not None and meant.id == self._move.place:
                return f"Yes, that one. {self._missing() or f'Please book it for {self._when}.'}"
            return f"That isn't what I asked for. {self._request()}"
        if r.asked or r.open:
            return f"I'd like {self._wanted}. Nothing else changes."
        return None
