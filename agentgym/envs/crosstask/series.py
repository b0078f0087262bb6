"""The hard tier's series come-back: the user stays on and wants one booking a day for several
more days, each day's place decided by a rule on the booking as it stands and earlier results.

"Could you also book a stay for each of the next 3 days after it (or: each of the 3 days before
it; every day after it up to and including the day of the meeting you set up for me), in the evening as the booking we have, one booking a
day: the same stay on each of those days it's open then; on a day it isn't, the best-rated stay
of the same type (hotel) in the same area (or: in the same area) that costs no more than the one we
booked and is open then (for those days the rest of what I asked for doesn't matter); and no
booking on a day when none is? Keep the booking we have as it is."

Every day is its own decision (is the booked place open then? else which place in the scope,
no dearer than the booked one, is the best-rated one open then? or is there none?), and the
sub-task succeeds only when the active bookings are exactly the gold's: the one kept and one
per day that has a place. The reference solver (`plan_series`) draws only spans in which every
day has one answer (a unique best rating), preferring those with the most days at another
place, then with the most days with none. It leaves several active bookings, so it is the
session's last come-back.

Its user (`SeriesUser`) delegated the work: it repeats the rule when asked or told it is done
while something is missing, says go ahead to a plan it is asked to approve (it checks no day of
it: a wrong booking is refused when it is made), answers an either/or (keep the booking? yes; cancel? no; do my other
needs hold? for the kept booking) and never names a place or a day. A booking that is not one
of the gold's is refused in the rule's words and costs patience (two end the sub-task); a right
one is acknowledged without saying what is still missing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from agentgym.core.task import Score, UserTurn, WorldEvent
from agentgym.envs.crosstask import clarify
from agentgym.envs.crosstask.comeback import (
    SCOPES,
    ComeBack,
    Upstream,
    at_booked_time,
    candidate_check,
    kept_words,
    scope_words,
)
from agentgym.envs.crosstask.followup import FollowUpUser, checked
from agentgym.envs.dialog.domain import DAYS
from agentgym.envs.dialog.tasks import Booking, Place, World
from agentgym.envs.tooluse.asking import asks_go_ahead, asks_leave, questions
from agentgym.envs.tooluse.replies import listed
from agentgym.users.understanding import Reading

__all__ = ["SERIES", "Series", "SeriesUser", "plan_series", "score_series"]

SERIES = "series"
#: How many days before or after the booked one a span of "N days" covers.
SPAN = (2, 5)

Stay = tuple[str, str, str]  # (place id, day, slot)
_KEEP = "Keep the booking we have as it is."


@dataclass(frozen=True)
class Series(ComeBack):
    """Keep the booking and add `stays` (place, day, slot), one per day of the span that has a
    place; `skipped` are the span's days with none."""

    stays: tuple[Stay, ...] = ()
    skipped: tuple[str, ...] = ()

    @property
    def wanted_set(self) -> Counter[Stay]:
        """Every booking the user wants active at the end: the kept one and `stays`."""
        return Counter(((self.place, *self.old),) + self.stays)

    def plan(self) -> list[dict[str, Any]]:
        # The user asks to check each one is free before it is booked (`SeriesUser.opening`), and
        # the rule's first question on each day is whether the booked place is open then: a day
        # at another place, or with none, is found by checking the booked place.
        at = {d: (p, s) for p, d, s in self.stays}
        steps = []
        for day in sorted({*at, *self.skipped}, key=DAYS.index):
            place, slot = at.get(day, ("", self.old[1]))
            if place != self.place:
                steps.append(checked(self.place, day, slot))
            if place:
                steps += [checked(place, day, slot), {"name": "book", "arguments": {"item_id": place, "day": day,
                                                                                      "slot": slot}}]
        return steps

    def to_dict(self) -> dict[str, Any]:
        return self._with_useful({"kind": "series", "booking": self.booking, "place": self.place,
                                  "from": list(self.old), "ask": self.ask, "wanted": self.wanted,
                                  "stays": [list(s) for s in self.stays], "skipped": list(self.skipped),
                                  "calls": self.plan()})




def _day_of(world: World, booked: Place, day: str, slot: str, inside: Any) -> tuple[Stay | None, bool]:
    """(the booking the rule gives on `day`, or None for no booking; whether it is unique)."""
    if booked.is_open(day, slot):
        return (booked.id, day, slot), True
    fits = sorted((p for p in world.places if p.id != booked.id and inside(p, booked) and p.price <= booked.price
                   and p.is_open(day, slot)), key=lambda p: -p.rating)
    if not fits:
        return None, True
    return (fits[0].id, day, slot), len(fits) == 1 or fits[0].rating > fits[1].rating


def _spans(b: Booking, up: Upstream) -> list[tuple[str, list[str]]]:
    """The spans a series may ask for: (the user's words, the days), the meeting's first."""
    start = DAYS.index(b.day)
    out = []
    if up.meeting_day is not None and 2 <= DAYS.index(up.meeting_day) - start <= SPAN[1] + 1:
        out.append(("every day after it up to and including the day of the meeting you set up for me",
                    list(DAYS[start + 1:DAYS.index(up.meeting_day) + 1])))
    out += [(f"each of the next {n} days after it", list(DAYS[start + 1:start + 1 + n]))
            for n in range(SPAN[0], SPAN[1] + 1) if start + n < len(DAYS)]
    out += [(f"each of the {n} days before it", list(DAYS[start - n:start]))
            for n in range(SPAN[0], SPAN[1] + 1) if start - n >= 0]
    return out


def _options(world: World, b: Booking, up: Upstream) -> list[tuple[str, str, list[Stay], list[str]]]:
    """Every (span words, scope words, stays, days skipped) whose every day has one answer and
    that has a booking to make."""
    booked = world.by_id[b.item_id]
    out = []
    for words, days in _spans(b, up):
        # Where it looks on a day the booked place is closed (`comeback.SCOPES`), each with no
        # more than the booked place's price.
        for scope, inside in SCOPES:
            answers = [_day_of(world, booked, d, b.slot, inside) for d in days]
            stays = [s for s, _ in answers if s is not None]
            if stays and all(unique for _, unique in answers):
                out.append((words, scope_words(scope, world, booked), stays, [d for d, (s, _) in zip(days, answers) if s is None]))
    return out


def plan_series(world: World, b: Booking, rng: Any, up: Upstream) -> Series | None:
    """A series come-back on booking `b`, or None when no span has a unique answer every day
    and a booking to make. Spans where another place takes a day come first, then those that
    skip a day; the meeting's span is taken when it is among them (the link to an earlier result)."""
    booked = world.by_id[b.item_id]
    options = _options(world, b, up)
    if not options:
        return None
    # The most days at another place, then the most days with none: each is a day the assistant
    # works out with a search, not only with the booked place's hours.
    rank = [(sum(p != booked.id for p, _, _ in o[2]), len(o[3])) for o in options]
    pool = [o for o, r in zip(options, rank) if r == max(rank)]
    meeting = [o for o in pool if "meeting" in o[0]]
    words, scope, stays, skipped = meeting[0] if meeting else pool[int(rng.integers(len(pool)))]
    noun = world.domain.noun
    article = "an" if noun[0] in "aeiou" else "a"
    wanted = (f"{article} {noun} for {words}, {at_booked_time(b.slot)}, one booking a day: the same {noun} on each of those "
              f"days it's open then; on a day it isn't, the best-rated {noun} {scope} that costs no more than the one "
              f"we booked and is open then (for those days the rest of what I asked for doesn't matter); and no "
              f"booking on a day when none is")
    # A stay is what one arrives for; the other places are what one does while in town.
    earlier = "I'm arriving a few days earlier. " if world.domain.name == "stays" else "I'll be in town a few days earlier. "
    why = earlier if "before it" in words else "I'm staying on for a few more days. "
    # A day the booked place is closed is settled by finding the best place open then, or none:
    # the search in its area and each candidate's check that day count.
    elsewhere = sorted({d for p, d, _ in stays if p != booked.id} | set(skipped), key=DAYS.index)
    useful = ({"name": "search", "arguments": {"area": {"if_given": booked.area}}},) if elsewhere else ()
    useful += tuple(candidate_check(d, b.slot) for d in elsewhere)
    return Series(b.id, booked.id, (b.day, b.slot), b.day, b.slot, SERIES, wanted, why,
                  kept=kept_words(world, up), useful=useful, stays=tuple(stays), skipped=tuple(skipped))


def _active(world: World) -> Counter[Stay]:
    return Counter((b.item_id, b.day, b.slot) for b in world.active_bookings())


def score_series(world: World, move: Series) -> Score:
    """The share of the wanted bookings active, less one share per booking not wanted; success
    when the active bookings are exactly the wanted ones (the kept booking and every stay)."""
    want, have = move.wanted_set, _active(world)
    matched = sum((want & have).values())
    extra = sum((have - want).values())
    total = sum(want.values())
    return Score(round(max(0.0, matched - extra) / total, 6), want == have,
                 {"wanted": total, "matched": matched, "extra": extra})


class SeriesUser(FollowUpUser):
    """The user of a series come-back: says what it wants only in the rule's words, judges each
    booking against the gold and ends the sub-task when the bookings are exactly the gold's."""

    __slots__ = ("_series",)

    def __init__(self, world: World, move: Series) -> None:
        super().__init__(world, move)
        self._series = move

    def opening(self) -> str:
        return (f"{self._series.why}Could you also book {self._series.wanted}? {_KEEP} Please check each one is free "
                "before you book.")

    def _request(self) -> str:
        have = self._series.wanted_set & _active(self._world)
        if sum(have.values()) > 1:
            # What it sees, by day: a write that failed on some days leaves them out.
            days = sorted({day for _, day, _ in have}, key=DAYS.index)
            seen = f"I see the bookings for {listed([d.capitalize() for d in days])} so far, "
            return f"That isn't everything I asked for yet: {seen}and I'd like {self._series.wanted}. {_KEEP}"
        return f"I'd like {self._series.wanted}. {_KEEP}"

    def _missing(self) -> str:
        return ""

    def proposed_call(self, message: str) -> tuple[str, dict[str, Any]] | None:
        return None  # it names no place: each day is the assistant's to work out

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        return []

    def _respond(self, r: Reading, message: str, turn: int) -> str:
        topics = clarify.asked(message)
        parts = [self._clarified(t) for t in (clarify.NEEDS, clarify.KEEP, clarify.CANCEL, clarify.REPLACE) if t in topics]
        # "OK to do what I described?" asks leave too, though "what" opens its clause (a question
        # that asks leave, not a report that speaks of an approval).
        if r.confirm or asks_go_ahead(message) or any(map(asks_leave, questions(message))):
            # Asked to approve a plan of days: the work is the assistant's, judged as it is booked.
            return " ".join(parts + [f"Yes, go ahead, as long as each day follows what I asked for. {_KEEP}"])
        return " ".join(parts + [self._request()])

    def _clarified(self, topic: str) -> str:
        if topic == clarify.NEEDS:
            kept = f" ({', '.join(self._series.kept)})" if self._series.kept else ""
            return (f"For the booking we have, yes{kept}; on a day the same {self._noun} is closed, only what I "
                    "just said counts.")
        if topic in (clarify.KEEP, clarify.REPLACE):  # the new days come on top: nothing is replaced
            return "Yes, keep the booking we have as it is; the new ones come on top."
        return "No, please don't cancel anything."

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        if not events:
            return None
        if score_series(self._world, self._series).success:
            # Days with no place get no booking: the thanks says no more than what was done.
            done = "every day that has a place booked" if self._series.skipped else "every day booked"
            return UserTurn(f"Perfect, that's {done}, thanks!", end="accepted")
        want, have = self._series.wanted_set, _active(self._world)
        booked = {e.data.get("booking_id") for e in events if e.kind == "booked"}
        wrong = [b for b in self._world.bookings.values() if b.id in booked and b.active
                 and have[(b.item_id, b.day, b.slot)] > want[(b.item_id, b.day, b.slot)]]
        parts = []
        if wrong:
            self._rejections += 1
            parts.append(f"No, that's not what I asked for: I wanted {self._series.wanted}.")
            if self._rejections >= self.PATIENCE:
                return UserTurn(parts[0] + " Never mind, I'll sort it out myself.", end="gave_up")
        cancelled = {e.data.get("booking_id") for e in events if e.kind == "cancelled"}
        lost = want - have
        if any((b.item_id, b.day, b.slot) in lost for b in self._world.bookings.values() if b.id in cancelled):
            parts.append("Please keep every booking I asked for: I still need it.")
        if not parts:
            return None  # right so far: the user hears the rest from the assistant
        return UserTurn(" ".join(parts))
