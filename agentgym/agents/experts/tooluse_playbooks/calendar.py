"""Calendar: book the earliest start on the date that works for everyone, then invite.

As the brief says: the common free starts (`get_free_slots`) lie within the organiser's own
working hours only, so each attendee's hours are checked in their own time zone (`find_person`
gives both); the earliest start inside all of them is booked, and the invitation sent. A
meeting booked before the user changed its length is cancelled before the new one is booked.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from agentgym.agents.experts.casefile import CaseFile, Read
from agentgym.agents.experts.tooluse_playbooks.base import Playbook, allowed, find_named, standing
from agentgym.agents.experts.words import near
from agentgym.agents.transcript import DATE, NAME
from agentgym.agents.turns import Call

__all__ = ["CalendarPlaybook", "works"]

_MINUTES = re.compile(r"\b(\d{2,3})[ -]?([A-Za-z]+)")
_WEEKDAYS = frozenset({"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"})


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _offset(text: str) -> int:
    """A UTC offset ``+09:00`` in minutes."""
    sign = -1 if text.startswith("-") else 1
    return sign * _minutes(text.lstrip("+-"))


def works(person: dict[str, Any], start_utc: str, duration: int) -> bool:
    """Whether a meeting from `start_utc` lasting `duration` minutes lies inside a person's working
    hours, in their own time zone (a `find_person` match)."""
    local = (_minutes(start_utc) + _offset(person["utc_offset"])) % 1440
    begin, end = (_minutes(t) for t in person["working_hours"].split("-"))
    return begin <= local and local + duration <= end


class CalendarPlaybook(Playbook):
    """See the module docstring."""

    domain = "calendar"
    reads = frozenset({"find_person", "get_calendar", "get_free_slots", "list_meetings", "list_policies"})
    writes = frozenset({"book_meeting", "send_invitation", "cancel_meeting"})

    def __init__(self, brief: str, request: str, tools: list[dict[str, Any]]) -> None:
        super().__init__(brief, request, tools)
        me = re.search(r"person id (P-\d+)", self.brief)
        self.me = me.group(1) if me else ""
        title = re.search(r'"([^"]+)"', request)
        self.title = title.group(1) if title else "Meeting"
        outside = re.sub(r'"[^"]*"', "", request)
        # A city after a name, "Grace Meyer (Berlin)", tells that person from a namesake elsewhere.
        self.cities = dict(re.findall(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+)+) \(([A-Z][a-z]+(?: [A-Z][a-z]+)*)\)", outside))
        outside = re.sub(r" \([A-Z][a-z]+(?: [A-Z][a-z]+)*\)", "", outside)
        self.names = [n for n in dict.fromkeys(NAME.findall(outside)) if n.split()[0] not in _WEEKDAYS]
        date = DATE.search(request)
        self.date = date.group(0) if date else ""
        self.durations = [int(d) for d in allowed(tools, "book_meeting", "duration_minutes")] or [30, 45, 60, 90]
        self.duration = self._length(request)

    def _length(self, text: str, other_than: int | None = None) -> int | None:
        """The first meeting length `text` names (in minutes) other than `other_than`."""
        for m in _MINUTES.finditer(text):
            value, unit = int(m.group(1)), m.group(2).lower()
            if not (unit in ("min", "mins") or near(unit, "minutes") or near(unit, "minute")):
                continue
            if value in self.durations and value != other_than:
                return value
        return None

    def hear(self, text: str) -> bool:
        length = self._length(text, self.duration)
        if length is None:
            return False
        self.duration = length
        return True

    def plan(self, case: CaseFile) -> None:
        if self.duration is None:
            case.ask("duration", "How long should the meeting be?")
            if self.duration is None:
                case.ask("duration again", "Sorry, how many minutes should I block: 30, 45, 60 or 90?")
                self.stop(case, "I still don't know how long the meeting should be.")
        # Everyone is looked up in one turn; a name that finds nobody is then searched by its words.
        case.get(*(Read("find_person", {"query": n}) for n in self.names if not case.refused("find_person", query=n)))
        people = []
        for name in self.names:
            city = self.cities.get(name)
            person = find_named(case, "find_person", name, ("city", city) if city else None)
            if person is None:
                self.stop(case, f"I can't find {name} in the directory.")
            people.append(person)
        pids = [self.me, *(p["person_id"] for p in people if p["person_id"] != self.me)]
        # Nobody is booked on a day off, where the directory shows them: the meeting goes to the
        # next date on which no attendee is off. The days off are read twice (a write rests on
        # them), by each attendee's full name.
        if "days_off" in self.brief:
            again = case.get(*(Read("find_person", {"query": q}, copies=2) for q in dict.fromkeys(p["name"] for p in people)))
            off = {m["person_id"]: m.get("days_off", []) for res in again for m in res.get("matches", [])}
            people = [{**p, "days_off": off.get(p["person_id"], p.get("days_off", []))} for p in people]
        date = self.date
        while date and any(date in p.get("days_off", []) for p in people):
            date = (_dt.date.fromisoformat(date) + _dt.timedelta(days=1)).isoformat()
        # A meeting that is not the one wanted (booked before a change of length, or one the user
        # says is wrong) is cancelled; so is any meeting of its own when the free times must be
        # read afresh, as it takes up time it would otherwise show.
        wanted = {"title": self.title, "attendee_ids": pids, "date": date, "duration_minutes": self.duration}
        slots = Read("get_free_slots", {"person_ids": pids, "date": date, "duration_minutes": self.duration},
                     since=case.last_write("cancel_meeting"))
        booked = standing(case, "book_meeting", "cancel_meeting", "meeting_id")
        fresh = not case.has(slots)
        for args, res in booked:
            if fresh or not _same_meeting(args, {**wanted, "start_utc": args.get("start_utc")}):
                self._cancel(case, res["meeting_id"])
        free = case.get(slots)[0]
        start = next((s for s in free.get("free_starts_utc", []) if all(works(p, s, self.duration) for p in people)),
                     None)
        if start is None:
            self.stop(case, f"There is no {self.duration}-minute slot on {date} inside everyone's working hours.")
        want = {**wanted, "start_utc": start}
        keep = next((res for args, res in booked if _same_meeting(args, want)), None)
        for args, res in booked:
            if res is not keep:  # at another start, or a second booking
                self._cancel(case, res["meeting_id"])
        readback = Call("list_meetings", {"date": date})
        if keep is None:
            moved = "" if date == self.date else (
                f"{', '.join(p['name'] for p in people if self.date in p.get('days_off', []))} is off on {self.date}, "
                f"so the meeting moves to {date}, the next date nobody is off. ")
            self.confirm(case, f"{moved}I'll book \"{self.title}\" on {date} at {start} UTC for {self.duration} minutes "
                               f"with {', '.join(p['name'] for p in people)}, the earliest start inside everyone's "
                               "working hours, and send the invitation.")
            keep = case.write("book_meeting", want, readback, lambda back: _landed_meeting(back, want))
        mid = keep["meeting_id"]
        if not any(args.get("meeting_id") == mid for args, _ in case.made("send_invitation")):
            case.write("send_invitation", {"meeting_id": mid}, readback, lambda back: _invited(back, mid))

    def _cancel(self, case: CaseFile, meeting_id: str) -> None:
        """Cancel a booking that is not the one wanted (once the user says yes, where the brief
        asks for one)."""
        self.agree(case, f"cancel meeting {meeting_id}, which is not the one wanted.")
        case.write("cancel_meeting", {"meeting_id": meeting_id})

    def summary(self) -> str:
        return "The meeting is booked and the invitation is sent."


def _same_meeting(args: dict[str, Any], want: dict[str, Any]) -> bool:
    return (sorted(args.get("attendee_ids", [])), args.get("date"), args.get("start_utc"),
            args.get("duration_minutes")) == (sorted(want["attendee_ids"]), want["date"], want["start_utc"],
                                              want["duration_minutes"])


def _landed_meeting(back: Any, want: dict[str, Any]) -> Any:
    """The booking a read-back shows that a failed booking call would have made, or None."""
    for m in back.get("meetings", []):
        if m.get("status") == "booked" and _same_meeting({**m, "date": want["date"]}, want):
            return {"meeting_id": m["meeting_id"], "status": "booked"}
    return None


def _invited(back: Any, meeting_id: str) -> Any:
    """The invitation a read-back shows as sent, or None."""
    for m in back.get("meetings", []):
        if m.get("meeting_id") == meeting_id and m.get("invitation_sent"):
            return {"meeting_id": meeting_id, "status": "sent"}
    return None
