"""The calendar domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

Time-zone arithmetic the work needs: the attendees (the organiser included) work in at least
three time zones, and every common free start before the one to book is free because someone's
working hours, in their own zone, do not hold it: the assistant must convert each free start
into each attendee's local time and book the earliest that fits all of them. And a near-duplicate:
someone outside the meeting has the same full name as an attendee, in another city; the request
names the attendee's city, and only it tells the two apart. The reference solver gives the gold
(the earliest start inside everyone's hours). Days off (``calendar_tier``): the directory shows
each person's, free starts do not check them and booking refuses them; half the time an attendee
is off on the date asked for, so the meeting goes to the next date no attendee is off (and the
namesake's day off, another time, moves nothing); asked for the date, the user names the one it
asked for and says the next date nobody is off is fine. Also: free start times come in pages.
"""

from __future__ import annotations

from typing import Annotated, Any

from agentgym.core.tools import READ, MaxLen, tool
from agentgym.envs.tooluse._fast import all_work
from agentgym.envs.tooluse.base import DAY_ISO, DAY_WEEKDAY, Draws, Gold, restated, turn_budget
from agentgym.envs.tooluse.domains import Generated
from agentgym.envs.tooluse.domains.calendar import (
    _V,
    GRID,
    WORK_MIN,
    CalendarToolkit,
    CalendarWorld,
    DateStr,
    Duration,
    Id,
    Person,
    _cells,
    _fits,
    _person,
    booking,
    draft,
    earliest,
    organiser_read,
)
from agentgym.envs.tooluse.paging import Page, PagedList, named_row, paged, read_on
from agentgym.envs.tooluse.policies import policy_lines, policy_rows

__all__ = ["CalendarTierToolkit", "harden", "TIER"]

#: The turn budget the brief states (`agentgym.envs.tooluse.tasks.tier_turns`; a test keeps them equal).
_TURNS = turn_budget(24)
#: What the user says when asked for the date: the date asked for, and that the policy's move
#: is fine (said whether or not anyone is off, so it gives nothing away).
_DATE_SAID = "It's for {date}; if someone is off that day, the next date nobody is off is fine."


class CalendarTierToolkit(CalendarToolkit):
    """The hard tier's toolkit: the tier's policies; free start times come in pages
    (`agentgym.envs.tooluse.paging`); the directory shows days off, which booking refuses (`CalendarToolkit.book_meeting` checks
    the world's) and the free starts do not check."""

    @tool(kind=READ)
    def find_person(self, query: Annotated[str, MaxLen(80)]) -> dict[str, Any]:
        """Find people whose name contains the given text: their id, time zone, working hours and days off.

        Args:
            query: A full or partial name.
        """
        off = self.world.days_off
        return {"matches": [{**m, "days_off": [DAY_ISO[x] for x in off.get(m["person_id"], ())]}
                            for m in super().find_person(query)["matches"]]}

    @tool(kind=READ)
    def get_free_slots(self, person_ids: Annotated[list[Id], MaxLen(12)], date: DateStr,
                       duration_minutes: Duration, page: Page = 1) -> dict[str, Any]:
        """Start times (UTC) on a date when all the given people are free, within your own working
        hours, earliest first, a page at a time. Other people's working hours and days off are not checked.

        Args:
            person_ids: The people who must be free, you included.
            date: The date, as YYYY-MM-DD (a UTC day).
            duration_minutes: The meeting's length.
            page: The page to read (1 is the first; the result says how many there are).
        """
        return paged(super().get_free_slots(person_ids, date, duration_minutes), "free_starts_utc", page)

    @tool(kind=READ)
    def list_policies(self) -> dict[str, Any]:
        """The domain's policies: what a write must respect, by policy id."""
        return {"policies": policy_rows("calendar", tier=True)}


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of a calendar task: three time zones or more, the free starts before the
    booked one opened where someone's hours do not hold them, a namesake in another city, and
    the gold for that world (see the module docstring)."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, CalendarWorld)
    pids = [world.me, *req.attendees]
    people = [world.people[p] for p in pids]
    everyone_works = all_work(people, req.duration, WORK_MIN)
    start = earliest(world, req, everyone_works)
    offsets = {p.offset for p in people}
    if len(offsets) < 3:  # an attendee moves to a zone of its own, where the booked start still fits
        options = [(ci, h) for ci, h in _fits(start, req.duration) if _V.cities[ci][1] not in offsets]
        if options:
            last = world.people[req.attendees[-1]]
            world.people[last.id] = _person(last.id, last.name, *d.pick(options))
            everyone_works = all_work([world.people[p] for p in pids], req.duration, WORK_MIN)
    lo, _ = world.people[world.me].window_utc()
    freed = 0  # the cells of every start before the booked one that someone's hours do not hold
    cells = _cells(0, req.duration)  # a start's cells: these, from its own (starts lie on the grid)
    for s in range(lo, start, GRID):
        if not everyone_works(s):
            freed |= cells << (s // GRID)
    if freed:
        for p in pids:
            world.busy[p] &= ~freed
    # What `solve` books on this world (`earliest`: the people's hours are as `everyone_works` reads them).
    starts = world.free_starts(pids, req.day, req.duration)
    booked = next(s for s in starts if everyone_works(s))
    gold = booking(world, req, booked)
    opened = starts.index(booked)  # the booked start's row: the free starts before it (they rise)
    # Its page is as far as the gold reads them (`Generated.paged`): the booking names that start
    # and no other (only a start is HH:MM; no topic is, a test keeps it so), and no later change
    # of the world (a namesake, days off) moves a free start. `booking` looks the attendees up first.
    paged = read_on(gold.plan, len(req.attendees), len(starts), opened, (opened,))
    traps = [t for t in gen.gold.traps if t != "first_slot_outside_hours"]
    traps += ["first_slot_outside_hours"] * bool(opened) + ["namesake_in_another_city"]
    gen.gold = Gold(gen.gold.kind, gold.plan, gold.effects, tuple(traps), gen.gold.superseded, organiser_read(world))
    twin = _namesake(d, world, req, gen)
    gen = _days_off(d, world, req, gen, twin)
    gen.paged = paged
    return gen


#: UTC offset -> the cities (indices) of every other offset, in vocabulary order.
_CITIES_OFF = {off: tuple(ci for ci, (_, o) in enumerate(_V.cities) if o != off) for _, off in _V.cities}


def _namesake(d: Draws, world: CalendarWorld, req: Any, gen: Generated) -> Person:
    """Someone outside the meeting with an attendee's full name, in a city of another time zone
    (returned); the request (and the user's words) name the attendee's city after the name."""
    attendee = world.people[d.pick(req.attendees)]
    cities = _CITIES_OFF[attendee.offset]
    number = int(next(reversed(world.people))[2:]) + 11  # ids rise in the order `_make_world` made them
    twin = _person(f"P-{number}", attendee.name, d.pick(cities), d.pick((8, 9, 10)))
    twin.tag = twin.city.lower().replace(" ", "")  # its own address, as a directory gives it
    world.people[twin.id] = twin
    world.busy[twin.id] = 0
    gen.rename(attendee.name, f"{attendee.name} ({attendee.city})")
    return twin


def _days_off(d: Draws, world: CalendarWorld, req: Any, gen: Generated, twin: Person) -> Generated:
    """Days off, which the directory shows (``calendar_tier``): everyone but the organiser is off
    on 0-2 days of the fortnight around the meeting, never an attendee on the meeting's day.
    Half the time (where today lies two days or more before it) an attendee is off on the day
    before, which the request then asks for: the meeting moves to the next date no attendee is
    off, the meeting's day (trap `attendee_day_off`). Otherwise, half the time, the namesake is
    off on the date asked for, which a careful reading does not mistake for the attendee's. `twin`
    is the namesake: no one else outside the meeting has an attendee's full name (`_make_world`
    draws each person's last name apart)."""
    attending = set(req.attendees)
    rnd, day = d.random, world.day  # the draws written out: d.between(lo, hi) is lo + int(rnd() * (hi - lo + 1))
    for pid in world.people:
        if pid == world.me:
            continue
        n = int(rnd() * 3)  # 0-2 days, each within a week of the day (drawn in turn)
        if n:
            days = {day - 7 + int(rnd() * 15)}
            if n == 2:
                days.add(day - 7 + int(rnd() * 15))
            if pid in attending:
                days.discard(day)
            world.days_off[pid] = tuple(sorted(days))
        else:
            world.days_off[pid] = ()
    gen.brief = restated(gen.brief, policy_lines("calendar"), policy_lines("calendar", tier=True), _TURNS)
    traps = list(gen.gold.traps)
    asked = world.day
    if world.today <= world.day - 2 and d.chance(0.5):
        asked = world.day - 1
        off = d.pick(req.attendees)
        world.days_off[off] = tuple(sorted({*world.days_off[off], asked}))
        gen.rename(f"{DAY_WEEKDAY[world.day]} {DAY_ISO[world.day]}", f"{DAY_WEEKDAY[asked]} {DAY_ISO[asked]}")
        traps.append("attendee_day_off")
    elif d.chance(0.5):
        world.days_off[twin.id] = tuple(sorted({*world.days_off[twin.id], world.day}))
        traps.append("namesake_day_off")
    # Asked for the date, the user takes what the policy gives: it never asks again for a date
    # the policy forbids (a reply that did would make an obedient assistant break the policy).
    date = next(det for det in gen.goal.details if det.id == "date")
    date.statement = _DATE_SAID.format(date=f"{DAY_WEEKDAY[asked]} {DAY_ISO[asked]}")
    gen.gold = gen.gold.with_traps(tuple(traps))
    return gen


#: What `load_domains` adds to the calendar domain's spec.
TIER: dict[str, Any] = {
    "hard_toolkit": CalendarTierToolkit,
    # Earliest first: the start booked, the first inside everyone's hours, settles it.
    "paged": {"get_free_slots": PagedList("free_starts_utc", named_row())},
    "harden": harden,
    "draft": draft,
}
