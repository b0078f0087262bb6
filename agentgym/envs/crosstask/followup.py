"""Follow-up sub-tasks: the user comes back to an earlier booking ("the cafe we booked").

A follow-up works on the world of an earlier dialog sub-task and never names the place: the
agent must remember which booking it made. It is built when it starts, from the booking the
user accepted then. Its user reads messages as every dialog user does (the new time when asked,
yes or no to a place proposed, a request to rephrase what it cannot place). A place it hears
named is read as a proposal to move the booking there (`FollowUpUser.proposed_call`), which goal
consistency judges: right only for the booked place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym.core.task import Score, SimulatedUser, UserTurn, WorldEvent
from agentgym.core.understanding import Reading
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.envs.dialog.tasks import Booking, Place, World
from agentgym.envs.dialog.user import KEYWORDS, REPHRASE, place_names, places_named, understanding

__all__ = ["MoveBooking", "FollowUpUser", "plan_move", "score_move"]


@dataclass(frozen=True)
class MoveBooking:
    """Move the accepted booking `booking` of `place` to (day, slot)."""

    booking: str
    place: str
    old: tuple[str, str]
    day: str
    slot: str

    def plan(self) -> list[dict[str, Any]]:
        return [{"name": "cancel_booking", "arguments": {"booking_id": self.booking}},
                {"name": "book", "arguments": {"item_id": self.place, "day": self.day, "slot": self.slot}}]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "move_booking", "booking": self.booking, "place": self.place, "from": list(self.old),
                "day": self.day, "slot": self.slot, "calls": self.plan()}


def plan_move(world: World, rng: Any) -> MoveBooking | None:
    """A move of the world's one active booking to another time its place is open, or None
    when there is no single active booking (the earlier sub-task failed)."""
    active = world.active_bookings()
    if len(active) != 1:
        return None
    b: Booking = active[0]
    place: Place = world.by_id[b.item_id]
    options = [(d, s) for d in DAYS for s in SLOTS if (d, s) != (b.day, b.slot) and place.is_open(d, s)]
    if not options:
        return None
    day, slot = options[int(rng.integers(len(options)))]
    return MoveBooking(b.id, place.id, (b.day, b.slot), day, slot)


def score_move(world: World, move: MoveBooking) -> Score:
    """Half for cancelling the old booking, half for the place booked at the new time; success
    when both hold and nothing else is booked."""
    active = world.active_bookings()
    old_gone = not any(b.id == move.booking for b in active)
    moved = [b for b in active if b.item_id == move.place and (b.day, b.slot) == (move.day, move.slot)]
    score = (0.5 if old_gone else 0.0) + (0.5 if moved else 0.0)
    success = old_gone and len(moved) == 1 and len(active) == 1
    return Score(score, success, {"old_cancelled": old_gone, "moved": bool(moved), "active": len(active)})


class FollowUpUser(SimulatedUser):
    """The user asking to move their booking; accepts once it is moved, not elsewhere."""

    PATIENCE = 2

    def __init__(self, world: World, move: MoveBooking) -> None:
        self._world, self._move = world, move
        self._rejections = 0
        noun = world.domain.noun
        self._noun = noun
        self._when = f"{move.day.capitalize()} {move.slot}"
        self._names: dict[str, Place] | None = None

    def _read(self, message: str) -> Reading | None:
        """The reading of a message the user can place, or None (blank, garbage, a keyword list)."""
        if not message.strip():
            return None
        r = understanding(self._world.domain).read(message)
        return r if r.placed and not r.salad else None

    def _meant(self, r: Reading) -> Place | None:
        """The place a reading proposes: the booked one when it is named (each name read as its
        longest real name), else the only other one named; None when it names none or several."""
        if not r.places:
            return None
        if self._names is None:
            self._names = place_names(self._world)
        named = places_named(r, self._names)
        booked = [p for p in named if p.id == self._move.place]
        return booked[0] if booked else (named[0] if len(named) == 1 else None)

    def proposed_call(self, message: str) -> tuple[str, dict[str, Any]] | None:
        """The move a message proposes as this user reads it: the place it names, at the new time."""
        r = self._read(message)
        place = self._meant(r) if r is not None else None
        if place is None:
            return None
        return "book", {"item_id": place.id, "day": self._move.day, "slot": self._move.slot}

    def opening(self) -> str:
        return (f"Oh, and about the {self._noun} we booked earlier: could you move that booking to "
                f"{self._when}?")

    def reply(self, message: str, turn: int) -> UserTurn:
        # Read like every dialog user's message (`agentgym.envs.dialog.user.understanding`); the
        # user never names the place: the assistant must remember which booking it made.
        again = f"Please move the {self._noun} we booked before to {self._when}, same place."
        if not message.strip():
            return UserTurn(again)
        r = understanding(self._world.domain).read(message)
        if r.salad:
            return UserTurn(KEYWORDS)
        if not r.placed:
            return UserTurn(REPHRASE)
        if r.places:
            meant = self._meant(r)
            if meant is not None and meant.id == self._move.place:
                return UserTurn(f"Yes, that one. Please move it to {self._when}.")
            return UserTurn(f"No, I mean the same {self._noun} as before. {again}")
        if r.asked == ("time",):
            return UserTurn(f"To {self._when}, please.")
        if r.asked or r.open:
            return UserTurn(f"Nothing else changes: same {self._noun} as before, just at {self._when}.")
        if r.confirm:
            return UserTurn("Yes, please go ahead.")
        if r.chatter:
            return UserTurn(f"All good here, thanks! {again}")
        if r.question:
            return UserTurn(REPHRASE)
        return UserTurn(again)

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        if not any(e.kind == "booked" for e in events):
            return None
        verdict = score_move(self._world, self._move)
        if verdict.success:
            return UserTurn("Perfect, thanks for moving it!", end="accepted")
        if verdict.details["moved"] and not verdict.details["old_cancelled"]:
            return UserTurn("Thanks, but please cancel the old booking too.")
        self._rejections += 1
        name = self._world.by_id[self._move.place].name
        text = f"No, I meant the same {self._noun} as before, {name}, on {self._when}."
        if self._rejections >= self.PATIENCE:
            return UserTurn(text + " Never mind, I'll sort it out myself.", end="gave_up")
        return UserTurn(text)

    def known_constraints(self) -> list[str]:
        return ["place", "time"]

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        out = []
        if name == "book":
            if arguments.get("item_id") != self._move.place:
                out.append("place")
            if (arguments.get("day"), arguments.get("slot")) != (self._move.day, self._move.slot):
                out.append("time")
        return out
