"""The calendar domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

Time-zone arithmetic the work needs: the attendees (the organiser included) work in at least
three time zones, and every common free start before the one to book is free because someone's
working hours, in their own zone, do not hold it: the assistant must convert each free start
into each attendee's local time and book the earliest that fits all of them. And a near-duplicate:
someone outside the meeting has the same full name as an attendee, in another city; the request
names the attendee's city, and only it tells the two apart. The reference solver gives the gold
(the earliest start inside everyone's hours). Also: free start times come in pages.
"""

from __future__ import annotations

from typing import Annotated, Any

from agentgym.core.tools import READ, MaxLen, tool
from agentgym.envs.tooluse.base import Draws, Gold
from agentgym.envs.tooluse.domains import Generated
from agentgym.envs.tooluse.domains.calendar import (
    _V,
    GRID,
    CalendarToolkit,
    CalendarWorld,
    DateStr,
    Duration,
    Id,
    _cells,
    _fits,
    _person,
    solve,
)
from agentgym.envs.tooluse.paging import Page, PagedList, named_row, paged

__all__ = ["CalendarTierToolkit", "harden", "TIER"]


class CalendarTierToolkit(CalendarToolkit):
    """The hard tier's toolkit: free start times come in pages (`agentgym.envs.tooluse.paging`)."""

    @tool(kind=READ)
    def get_free_slots(self, person_ids: Annotated[list[Id], MaxLen(12)], date: DateStr,
                       duration_minutes: Duration, page: Page = 1) -> dict[str, Any]:
        """Start times (UTC) on a date when all the given people are free, within your own working
        hours, earliest first, a page at a time. Other people's working hours are not checked.

        Args:
            person_ids: The people who must be free, you included.
            date: The date, as YYYY-MM-DD (a UTC day).
            duration_minutes: The meeting's length.
            page: The page to read (1 is the first; the result says how many there are).
        """
        return paged(super().get_free_slots(person_ids, date, duration_minutes), "free_starts_utc", page)


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of a calendar task: three time zones or more, the free starts before the
    booked one opened where someone's hours do not hold them, a namesake in another city, and
    the gold for that world (see the module docstring)."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, CalendarWorld)
    pids = [world.me, *req.attendees]
    start = _booked(gen.gold)
    offsets = {world.people[p].offset for p in pids}
    if len(offsets) < 3:  # an attendee moves to a zone of its own, where the booked start still fits
        options = [(ci, h) for ci, h in _fits(start, req.duration) if _V.cities[ci][1] not in offsets]
        if options:
            last = world.people[req.attendees[-1]]
            world.people[last.id] = _person(last.id, last.name, *d.pick(options))
    lo, _ = world.people[world.me].window_utc()
    for s in range(lo, start, GRID):
        if not all(world.people[p].works(s, req.duration) for p in pids):
            cells = _cells(s, req.duration)
            for p in pids:
                world.busy[p] &= ~cells
    gold = solve(world, req)
    booked = _booked(gold)
    opened = sum(s < booked for s in world.free_starts(pids, req.day, req.duration))
    traps = [t for t in gen.gold.traps if t != "first_slot_outside_hours"]
    traps += ["first_slot_outside_hours"] * bool(opened) + ["namesake_in_another_city"]
    gen.gold = Gold(gen.gold.kind, gold.plan, gold.effects, tuple(traps), gen.gold.superseded)
    return _namesake(d, world, req, gen)


def _booked(gold: Gold) -> int:
    """The start (minutes UTC) the gold books."""
    start = next(s for s in gold.plan if s.name == "book_meeting").arguments["start_utc"]
    return int(start[:2]) * 60 + int(start[3:])


def _namesake(d: Draws, world: CalendarWorld, req: Any, gen: Generated) -> Generated:
    """Someone outside the meeting with an attendee's full name, in a city of another time zone;
    the request (and the user's words) name the attendee's city after the name."""
    attendee = world.people[d.pick(req.attendees)]
    cities = [ci for ci, (_, off) in enumerate(_V.cities) if off != attendee.offset]
    number = max(int(p[2:]) for p in world.people) + 11
    twin = _person(f"P-{number}", attendee.name, d.pick(cities), d.pick((8, 9, 10)))
    world.people[twin.id] = twin
    world.busy[twin.id] = 0
    gen.rename(attendee.name, f"{attendee.name} ({attendee.city})")
    return gen


#: What `load_domains` adds to the calendar domain's spec.
TIER: dict[str, Any] = {
    "hard_toolkit": CalendarTierToolkit,
    # Earliest first: the start booked, the first inside everyone's hours, settles it.
    "paged": {"get_free_slots": PagedList("free_starts_utc", named_row())},
    "harden": harden,
}
