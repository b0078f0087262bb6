"""Calendar: find a common slot for people in several time zones, book it, send the invitation.

The chain: look up each attendee, get the common free start times (within the organiser's own
working hours), pick the earliest one inside every attendee's working hours in their own time
zone, book it, invite. Trap: the first free start lies outside someone's working hours, and
booking it breaks the working-hours policy. `list_meetings` reads back what the writes did, and
`cancel_meeting` takes a booking back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Annotated, Any, Callable, Literal

from agentgym.core.task import WorldEvent
from agentgym.core.tools import READ, WRITE, MaxLen, ToolError, tool
from agentgym.envs.tooluse._fast import all_work
from agentgym.envs.tooluse.base import (
    DAY_ISO,
    DAY_WEEKDAY,
    POINTED_READS,
    READ_ROUTES,
    YEAR,
    Detail,
    Draws,
    Effect,
    Goal,
    Gold,
    Step,
    ToolUseToolkit,
    World,
    WorldRecord,
    compose_brief,
    hhmm,
    parse_day,
)
from agentgym.envs.tooluse.data import domain_split, read_json, str_list, strict
from agentgym.envs.tooluse.domains import DomainSpec, Generated, Shift, solved
from agentgym.envs.tooluse.policies import policy_lines
from agentgym.envs.tooluse.review import ReviewWords, parse_review

__all__ = ["CalendarToolkit", "CalendarWorld", "Person", "DOMAIN", "organiser_read", "vocab"]

GRID = 30  # minutes between possible starts
DAY_MIN = 1440
WORK_MIN = 480  # everyone works 8 hours
DURATIONS = (30, 45, 60, 90)


@dataclass(frozen=True)
class CalendarVocab:
    split: str
    role: str
    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    cities: tuple[tuple[str, int], ...]
    topics: tuple[str, ...]
    templates: dict[str, Any]
    review: ReviewWords


@lru_cache(maxsize=None)
def vocab() -> CalendarVocab:
    """The calendar vocabulary, parsed strictly from ``data/calendar.json``."""
    d = strict(read_json("calendar.json"), {"name", "split", "role", "first_names", "last_names", "cities", "topics",
                                            "templates", "review"}, "calendar.json")
    t = strict(d["templates"], {"meeting", "duration_inline", "duration_answer"}, "calendar.json.templates")
    cities = d["cities"]
    if not isinstance(cities, list) or not all(
            isinstance(c, list) and len(c) == 2 and isinstance(c[0], str) and isinstance(c[1], int)
            and -12 <= c[1] <= 14 for c in cities):
        raise ValueError("calendar.json.cities: expected [[name, whole-hour UTC offset], ...]")
    return CalendarVocab(
        split=domain_split(d, "calendar"), role=d["role"], first_names=str_list(d["first_names"], "first_names", 8),
        last_names=str_list(d["last_names"], "last_names", 8), cities=tuple((c[0], c[1]) for c in cities),
        topics=str_list(d["topics"], "topics"),
        templates={k: (tuple(v) if isinstance(v, list) else v) for k, v in t.items()},
        review=parse_review(d["review"], "calendar.json.review"),
    )


_V = vocab()
Id = Annotated[str, MaxLen(32)]
DateStr = Annotated[str, MaxLen(16)]
Duration = Literal[DURATIONS]  # type: ignore[valid-type]


def offset_text(off: int) -> str:
    """A whole-hour UTC offset as ``+09:00``."""
    return f"{'+' if off >= 0 else '-'}{abs(off):02d}:00"


@dataclass(slots=True)
class Person:
    id: str
    name: str
    city: str
    offset: int  # hours east of UTC
    start_h: int  # working day start, local hour
    #: What sets the address apart from a namesake's (the hard tier's, in another city): "" for none.
    tag: str = ""

    @property
    def email(self) -> str:
        """Made from the name (and tag) when a result shows it, not kept: a world holds up to 9
        people. Two people never share one: an address reaches one person."""
        local = self.name.lower().replace(" ", ".")
        return f"{local}.{self.tag}@example.org" if self.tag else f"{local}@example.org"

    def row(self) -> dict[str, Any]:
        return {"person_id": self.id, "name": self.name, "email": self.email, "city": self.city,
                "utc_offset": offset_text(self.offset),
                "working_hours": f"{hhmm(self.start_h * 60)}-{hhmm(self.start_h * 60 + WORK_MIN)}"}

    def works(self, start: int, duration: int) -> bool:
        """Whether [start, start + duration) minutes UTC lies in this person's working hours."""
        local = (start + self.offset * 60) % DAY_MIN
        return self.start_h * 60 <= local and local + duration <= self.start_h * 60 + WORK_MIN

    def window_utc(self) -> tuple[int, int]:
        lo = (self.start_h - self.offset) * 60
        return lo, lo + WORK_MIN


def _cells(start: int, duration: int) -> int:
    """The bitmask of the 30-minute cells [start, start + duration) touches."""
    first, last = start // GRID, (start + duration - 1) // GRID
    return ((1 << (last - first + 1)) - 1) << first


def _intervals(mask: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i = 0
    while mask >> i:
        if mask >> i & 1:
            j = i
            while mask >> j & 1:
                j += 1
            out.append((i * GRID, j * GRID))
            i = j
        else:
            i += 1
    return out


class CalendarWorld(World):
    """People with time zones and working hours, and their busy time on the meeting date."""

    __slots__ = ("me", "people", "day", "busy", "today", "days_off")

    def __init__(self, id_base: int, me: str, people: dict[str, Person], day: int, busy: dict[str, int],
                 today: int) -> None:
        super().__init__(id_base)
        self.me = me
        self.people = people
        self.day = day
        self.busy = busy  # person id -> busy cells (bitmask) on `day`, UTC
        self.today = today  # a few days before `day`: the whole meeting day lies ahead
        #: Person id -> the days they are off: the hard tier's (`calendar_tier`); empty elsewhere.
        self.days_off: dict[str, tuple[int, ...]] = {}

    def busy_mask(self, pid: str, day: int) -> int:
        mask = self.busy.get(pid, 0) if day == self.day else 0
        for r in self.records:
            if r.kind == "meeting" and r.active and r.data["day"] == day and pid in r.data["attendees"]:
                mask |= _cells(r.data["start_min"], r.data["duration"])
        return mask

    def free_starts(self, pids: list[str], day: int, duration: int) -> list[int]:
        """Starts within the organiser's working hours (UTC) when everyone in `pids` is free."""
        lo, hi = self.people[self.me].window_utc()
        busy = 0
        for pid in pids:
            busy |= self.busy_mask(pid, day)
        # Windows start on the hour (whole-hour offsets and start hours), so every start s is on
        # the grid and its cells are those of a start at 0 shifted by s // GRID.
        cells = _cells(0, duration)
        return [s for s in range(lo, hi - duration + 1, GRID) if not (busy >> (s // GRID)) & cells]


def _start(text: str) -> int:
    if len(text) != 5 or text[2] != ":" or not (text[:2].isdigit() and text[3:].isdigit()):
        raise ToolError(f"start_utc must be HH:MM, got {text!r}")
    h, m = int(text[:2]), int(text[3:])
    if h > 23 or m % GRID:
        raise ToolError("meetings start on the hour or the half hour (HH:00 or HH:30)")
    return h * 60 + m


class CalendarToolkit(ToolUseToolkit):
    """Directory, calendar and booking tools over a `CalendarWorld`."""

    world: CalendarWorld
    domain = "calendar"

    def _ids(self, ids: list[str]) -> list[str]:
        if not ids:
            raise ToolError("give at least one person id")
        if len(set(ids)) != len(ids):
            raise ToolError("a person id is listed twice")
        for pid in ids:
            if pid not in self.world.people:
                raise ToolError(f"no person with id '{pid}'")
        return ids

    @tool(kind=READ)
    def find_person(self, query: Annotated[str, MaxLen(80)]) -> dict[str, Any]:
        """Find people whose name contains the given text: their id, time zone and working hours.

        Args:
            query: A full or partial name.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("query must not be empty")
        hits = [p.row() for p in self.world.people.values() if q in p.name.lower()]
        if not hits:
            raise ToolError(f"nobody matches '{query}'")
        return {"matches": hits}

    @tool(kind=READ)
    def get_calendar(self, person_id: Id, date: DateStr) -> dict[str, Any]:
        """A person's busy times on a date, in UTC.

        Args:
            person_id: The person's id.
            date: The date, as YYYY-MM-DD (a UTC day).
        """
        self._ids([person_id])
        day = parse_day(date)
        busy = [{"start_utc": hhmm(a), "end_utc": hhmm(b)} for a, b in _intervals(self.world.busy_mask(person_id, day))]
        return {"person_id": person_id, "date": date, "busy_utc": busy}

    @tool(kind=READ)
    def get_free_slots(self, person_ids: Annotated[list[Id], MaxLen(12)], date: DateStr,
                       duration_minutes: Duration) -> dict[str, Any]:
        """Start times (UTC) on a date when all the given people are free, within your own working
        hours. Other people's working hours are not checked.

        Args:
            person_ids: The people who must be free, you included.
            date: The date, as YYYY-MM-DD (a UTC day).
            duration_minutes: The meeting's length.
        """
        pids = self._ids(person_ids)
        day = parse_day(date)
        starts = self.world.free_starts(pids, day, duration_minutes)
        return {"date": date, "duration_minutes": duration_minutes, "free_starts_utc": [hhmm(s) for s in starts]}

    @tool(kind=WRITE)
    def book_meeting(self, title: Annotated[str, MaxLen(120)], attendee_ids: Annotated[list[Id], MaxLen(12)],
                     date: DateStr, start_utc: Annotated[str, MaxLen(8)], duration_minutes: Duration) -> dict[str, Any]:
        """Book a meeting in everyone's calendar; you organise it, so list your own id among the attendees.

        Args:
            title: The meeting's title.
            attendee_ids: The attendees' ids, you included.
            date: The date, as YYYY-MM-DD (a UTC day).
            start_utc: The start time in UTC, as HH:MM.
            duration_minutes: The meeting's length.
        """
        w = self.world
        pids = self._ids(attendee_ids)
        if w.me not in pids:
            raise ToolError(f"you ({w.me}) organise the meeting and must be among the attendees")
        day, start = parse_day(date), _start(start_utc)
        off = [w.people[pid].name for pid in pids if day in w.days_off.get(pid, ())]  # the hard tier's only
        if off:
            raise self.violation("day_off", f"{', '.join(off)} {'is' if len(off) == 1 else 'are'} off on {date}")
        if start + duration_minutes > DAY_MIN:
            raise ToolError("the meeting must end by 24:00 UTC on its date")
        cells = _cells(start, duration_minutes)
        for pid in pids:
            if w.busy_mask(pid, day) & cells:
                raise ToolError(f"{w.people[pid].name} is busy then")
        outside = [w.people[pid].name for pid in pids if not w.people[pid].works(start, duration_minutes)]
        if outside:
            raise self.violation("working_hours", f"{start_utc} UTC is outside the working hours of "
                                                  f"{', '.join(outside)}")
        mid = w.new_id("M")
        w.add("meeting", {"meeting_id": mid, "title": title, "attendees": tuple(sorted(pids)), "date": date,
                          "day": day, "start": start_utc, "start_min": start, "duration": duration_minutes})
        return {"meeting_id": mid, "status": "booked", "date": date, "start_utc": start_utc}

    @tool(kind=READ)
    def list_meetings(self, date: DateStr) -> dict[str, Any]:
        """The meetings you booked in this session on a date, with whether each was invited.

        Args:
            date: The date, as YYYY-MM-DD (a UTC day).
        """
        day = parse_day(date)
        records = self.world.records
        invited = {r.data["meeting_id"] for r in records if r.kind == "invitation" and r.active}
        return {"date": date, "meetings": [
            {"meeting_id": r.data["meeting_id"], "title": r.data["title"], "attendee_ids": list(r.data["attendees"]),
             "start_utc": r.data["start"], "duration_minutes": r.data["duration"],
             "status": "booked" if r.active else "cancelled", "invitation_sent": r.data["meeting_id"] in invited}
            for r in records if r.kind == "meeting" and r.data["day"] == day]}

    def _meeting(self, meeting_id: str) -> WorldRecord:
        for r in self.world.records:
            if r.kind == "meeting" and r.data["meeting_id"] == meeting_id and r.active:
                return r
        raise ToolError(f"no booked meeting with id '{meeting_id}'")

    @tool(kind=WRITE)
    def send_invitation(self, meeting_id: Id) -> dict[str, Any]:
        """Send the invitation of a booked meeting to its attendees.

        Args:
            meeting_id: The meeting's id, from book_meeting.
        """
        m = self._meeting(meeting_id)
        if any(r.kind == "invitation" and r.active and r.data["meeting_id"] == meeting_id for r in self.world.records):
            raise ToolError(f"the invitation of {meeting_id} was already sent")
        data = m.data
        self.world.add("invitation", {"meeting_id": meeting_id, "attendees": data["attendees"], "date": data["date"],
                                      "start": data["start"], "duration": data["duration"]})
        return {"meeting_id": meeting_id, "status": "sent", "to": list(data["attendees"])}

    @tool(kind=WRITE)
    def cancel_meeting(self, meeting_id: Id) -> dict[str, Any]:
        """Cancel a booked meeting; attendees already invited get a cancellation notice.

        Args:
            meeting_id: The meeting's id.
        """
        self._meeting(meeting_id).active = False
        for r in self.world.records:
            if r.kind == "invitation" and r.data["meeting_id"] == meeting_id:
                r.active = False
        self.world.events.append(WorldEvent("cancelled", {"meeting_id": meeting_id}))
        return {"meeting_id": meeting_id, "status": "cancelled"}


# ------------------------------------------------------------------------------- generation

_N_ATTENDEES = {"easy": (1, 1), "medium": (2, 3), "hard": (4, 5)}
_KNOBS = {
    "easy": {"trap": 0.1, "durations": (30, 60), "ask": 0.0, "namesake": 0.0},
    "medium": {"trap": 0.45, "durations": (30, 45, 60), "ask": 0.25, "namesake": 0.3},
    "hard": {"trap": 0.75, "durations": (30, 45, 60, 90), "ask": 0.5, "namesake": 0.6},
}
#: Days a meeting can fall on: Tuesdays to Thursdays from February to November.
_DAYS = tuple(d for d in range(31, 334) if DAY_WEEKDAY[d] in ("Tuesday", "Wednesday", "Thursday"))
#: Organiser cities and start hours whose working day lies inside one UTC day.
_ORGANISERS = tuple((ci, h) for ci, (_, off) in enumerate(_V.cities) for h in (8, 9, 10)
                    if 0 <= (h - off) * 60 and (h - off) * 60 + WORK_MIN <= DAY_MIN)


@lru_cache(maxsize=None)
def _fits(start: int, duration: int) -> tuple[tuple[int, int], ...]:
    """(city index, start hour) pairs whose working hours hold [start, start + duration) UTC."""
    hit = _fit_table(duration).get(start)
    return _fits_plain(start, duration) if hit is None else hit


@lru_cache(maxsize=None)
def _fit_table(duration: int) -> dict[int, tuple[tuple[int, int], ...]]:
    """`_fits_plain` of every start on the grid of a UTC day (where every start the tasks use
    lies), for one duration: the table `_fits` would fill entry by entry, built once."""
    return {start: _fits_plain(start, duration) for start in range(0, DAY_MIN, GRID)}


def _fits_plain(start: int, duration: int) -> tuple[tuple[int, int], ...]:
    """`_fits`, computed."""
    out = []
    for ci, (_, off) in enumerate(_V.cities):
        for h in (8, 9, 10):
            local = (start + off * 60) % DAY_MIN
            if h * 60 <= local and local + duration <= h * 60 + WORK_MIN:
                out.append((ci, h))
    return tuple(out)


@lru_cache(maxsize=None)
def _fits_set(start: int, duration: int) -> frozenset[tuple[int, int]]:
    return frozenset(_fits(start, duration))


@dataclass(slots=True)
class Request:
    attendees: tuple[str, ...]  # ids, request order, organiser excluded
    day: int
    duration: int
    title: str


def _person(pid: str, name: str, ci: int, h: int) -> Person:
    city, off = _V.cities[ci]
    return Person(pid, name, city, off, h)


def _make_world(d: Draws, difficulty: str) -> tuple[CalendarWorld, Request, bool]:
    knobs = _KNOBS[difficulty]
    n = d.between(*_N_ATTENDEES[difficulty])
    duration = d.pick(knobs["durations"])
    n_people = n + 1 + d.between(2, 3)
    firsts = d.sample(_V.first_names, n_people)
    lasts = d.sample(_V.last_names, n_people)
    if d.chance(knobs["namesake"]):
        firsts[n + 1] = firsts[1]  # a non-attendee shares an attendee's first name
    names = [f"{firsts[i]} {lasts[i]}" for i in range(n_people)]
    base = d.between(100, 899)
    ids = [f"P-{base + 11 * i}" for i in range(n_people)]
    me_ci, me_h = d.pick(_ORGANISERS)
    me = _person(ids[0], names[0], me_ci, me_h)
    lo, hi = me.window_utc()
    want_trap = d.chance(knobs["trap"])
    people = {me.id: me}
    # Pick a start and attendees who all work then; for the trap, the first attendee's day must
    # begin after an earlier start of the organiser's window (that start then breaks the policy).
    trap = False
    # Room for one more start after the meeting: a later free slot always exists, so booking
    # every free start never leaves only the right meeting standing.
    span = -(-duration // GRID) * GRID
    for _attempt in range(8):
        t = lo + GRID * d.below((hi - duration - span - lo) // GRID + 1)
        fits = _fits(t, duration)
        if not fits:
            continue
        chosen = [d.pick(fits) for _ in range(n)]
        s0 = -1
        if want_trap and t > lo:
            s0 = lo + GRID * d.below((t - lo) // GRID)
            at_s0 = _fits_set(s0, duration)
            bad = [x for x in fits if x not in at_s0]
            if bad:
                chosen[0] = d.pick(bad)
                trap = True
            else:
                s0 = -1
        if want_trap and not trap and _attempt < 7:
            continue
        break
    for i in range(n):
        people[ids[i + 1]] = _person(ids[i + 1], names[i + 1], *chosen[i])
    for i in range(n + 1, n_people):
        people[ids[i]] = _person(ids[i], names[i], *d.pick(_fits(t, duration) or ((0, 9),)))
    attendees = [me.id, *ids[1:n + 1]]
    busy: dict[str, int] = {pid: 0 for pid in ids}
    keep = _cells(t, duration) | _cells(t + span, duration) | (_cells(s0, duration) if trap else 0)
    # Every start before t (except the trap's s0) gets a busy cell of some attendee.
    for s in range(lo, t, GRID):
        cell = 1 << (s // GRID)
        if not cell & keep:
            busy[d.pick(attendees)] |= cell
    # Busy time after the meeting and in the other people's days: the calendar around the task.
    for pid in ids:
        if d.chance(0.7):
            a = d.between(0, 46)
            busy[pid] |= _cells(a * GRID, GRID * d.between(1, 4)) & ~keep & ((1 << 48) - 1)
    day = d.pick(_DAYS)
    world = CalendarWorld(d.between(100, 899), me.id, people, day, busy, day - d.between(1, 6))
    title = d.pick(_V.topics)
    return world, Request(tuple(ids[1:n + 1]), world.day, duration, title), trap


def earliest(world: CalendarWorld, req: Request, everyone_works: Callable[[int], bool] | None = None) -> int:
    """The start (minutes UTC) the solver books: the earliest common free start inside everyone's
    working hours (`everyone_works`, where the caller has it: `all_work` of the organiser and the
    attendees)."""
    pids = [world.me, *req.attendees]
    if everyone_works is None:
        everyone_works = all_work([world.people[p] for p in pids], req.duration, WORK_MIN)
    return next(s for s in world.free_starts(pids, req.day, req.duration) if everyone_works(s))


def solve(world: CalendarWorld, req: Request) -> Gold:
    """The reference solver: the earliest common free start inside everyone's working hours."""
    return booking(world, req, earliest(world, req))


def booking(world: CalendarWorld, req: Request, start: int) -> Gold:
    """The gold that books the meeting at `start` (minutes UTC) and invites its attendees."""
    date = DAY_ISO[req.day]
    plan = [Step("find_person", {"query": world.people[pid].name}) for pid in req.attendees]
    pids = [world.me, *req.attendees]
    plan.append(Step("get_free_slots", {"person_ids": pids, "date": date, "duration_minutes": req.duration}))
    mid = world.predict_id("M")
    plan.append(Step("book_meeting", {"title": req.title, "attendee_ids": pids, "date": date,
                                      "start_utc": hhmm(start), "duration_minutes": req.duration},
                     {"meeting_id": mid}))
    plan.append(Step("send_invitation", {"meeting_id": mid}))
    fields = {"attendees": tuple(sorted(pids)), "date": date, "start": hhmm(start), "duration": req.duration}
    text = f"{req.duration}-minute meeting of {', '.join(sorted(pids))} on {date} at {hhmm(start)} UTC"
    effects = (Effect("meeting", "meeting", "meeting", fields, f"booked: {text}"),
               Effect("invitation", "invitation", "invitation", dict(fields), f"invited: {text}"))
    return Gold("meeting", tuple(plan), effects, useful=organiser_read(world))


def organiser_read(world: CalendarWorld) -> tuple[dict[str, Any], ...]:
    """The organiser's `find_person`, a useful read: the working-hours policy covers every
    attendee, the organiser too, and the brief gives the organiser's id and zone but not the
    hours (`get_free_slots` applies them, which a careful agent may check; CrossTask 8927 T25,
    8932 T7, 8942 T20, 8948 T1), nor, on the hard tier, the days off, which only the directory
    shows (ToolUse 7257 T1, 8709 T1)."""
    return ({"name": "find_person", "arguments": {"query": {"words_of": world.people[world.me].name}}},)


def _pointed_reads(plan: tuple[Step, ...]) -> list[dict[str, Any]]:
    """The reads the brief points to beyond the plan (`POINTED_READS`): the briefs ask to check
    again a value a write rests on, and the booking rests on the common free starts; each
    attendee's calendar on the meeting's date is the check of them read another way (their busy
    times), as useful as the same `get_free_slots` made again."""
    # The tier reads the free starts a page at a time: one check per attendee and date.
    checks = dict.fromkeys((pid, s.arguments["date"]) for s in plan if s.name == "get_free_slots"
                           for pid in s.arguments["person_ids"])
    return [{"name": "get_calendar", "arguments": {"person_id": pid, "date": date}} for pid, date in checks]


POINTED_READS["meeting"] = _pointed_reads


def _read_route(step: Step) -> list[dict[str, Any]]:
    """Another way to the common free starts a `get_free_slots` step reads (`READ_ROUTES`): each
    attendee's calendar on the date (their busy times), beside the working hours the directory
    shows; an agent that reads those has what a page of the free starts would tell it (ToolUse
    9404 T2, 9488 T2, 9493 T3)."""
    if step.name != "get_free_slots":
        return []
    date = step.arguments["date"]
    return [{"name": "get_calendar", "arguments": {"person_id": pid, "date": date}} for pid in step.arguments["person_ids"]]


READ_ROUTES["meeting"] = _read_route


def _people_text(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def generate(d: Draws, difficulty: str) -> Generated:
    """A calendar task: the world, the user's request, and the reference solver's gold."""
    return solved(draft(d, difficulty), solve)


def draft(d: Draws, difficulty: str) -> Generated:
    """`generate`'s task but for its gold's plan and effects (left empty): what the hard tier
    starts from, which solves its own world. The solver makes no draw and changes nothing in
    the world, so every draw and everything else is generate's."""
    world, req, trap = _make_world(d, difficulty)
    ask = d.chance(_KNOBS[difficulty]["ask"])
    t = _V.templates
    people = _people_text([world.people[p].name for p in req.attendees])
    date = f"{DAY_WEEKDAY[req.day]} {DAY_ISO[req.day]}"
    duration = "" if ask else t["duration_inline"].format(minutes=req.duration)
    template = d.pick(t["meeting"])
    text = template.format(duration=duration, title=req.title, people=people, date=date)
    blurred = {} if ask else {"duration": template.format(duration="", title=req.title, people=people, date=date)}
    details = (
        Detail("attendees", "attendees", f"The meeting is with {people}.", "upfront"),
        Detail("date", "date", f"It's for {date}.", "upfront"),
        Detail("duration", "duration", d.pick(t["duration_answer"]).format(minutes=req.duration),
               "ask" if ask else "upfront"),
        Detail("title", "title", f"Call it \"{req.title}\".", "upfront"),
    )
    me = world.people[world.me]
    brief = compose_brief(
        _V.role.format(me=f"{me.name} ({me.id}, {me.city}, UTC{offset_text(me.offset)})"),
        "Schedule the meetings the user asks for with the tools, step by step.",
        [f"You act for {me.name}, person id {me.id}, who organises and attends every meeting. Today is "
         f"{DAY_WEEKDAY[world.today]} {DAY_ISO[world.today]}. Times in the tools are UTC; each person's working hours "
         f"are in their own time zone. Dates are YYYY-MM-DD in {YEAR}, and a date is a UTC day (your own working "
         "day lies within one)."],
        policy_lines("calendar"),
    )
    gold = Gold("meeting", (), (), ("first_slot_outside_hours",) if trap else ())
    return Generated(world, Goal("meeting", text, details, blurred, job=req), gold, brief)


def _bookable(world: CalendarWorld, req: Request) -> bool:
    """Whether some common free start of `req` lies inside every attendee's working hours."""
    pids = [world.me, *req.attendees]
    return any(all(world.people[p].works(s, req.duration) for p in pids)
               for s in world.free_starts(pids, req.day, req.duration))


def shifts(world: CalendarWorld, req: Request) -> list[Shift]:
    """Goal shifts the task offers: the meeting longer or shorter, where a slot for it exists."""
    return [Shift("duration", "duration", req.duration, m, f"Actually, can we make it {m} minutes instead of {req.duration}?",
                  _V.templates["duration_answer"][0].format(minutes=m), solve(world, replace(req, duration=m)))
            for m in _KNOBS["hard"]["durations"] if m != req.duration and _bookable(world, replace(req, duration=m))]


DOMAIN = DomainSpec(
    name="calendar",
    split=_V.split,
    toolkit=CalendarToolkit,
    generate=generate,
    description="book a meeting across time zones and invite the attendees",
    shifts=shifts,
    undo={"meeting": ("cancel_meeting", "meeting_id"), "invitation": ("cancel_meeting", "meeting_id")},
    review=_V.review,
    # The hard tier's parts live in `calendar_tier`, which `load_domains` adds to this spec.
)
