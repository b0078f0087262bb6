"""Follow-up sub-tasks: the user comes back to an earlier booking ("the cafe we booked").

A follow-up works on the world of an earlier dialog sub-task and never names the place: the
agent must remember which booking it made. It returns to the booking that sub-task agreed on
(`agreed_booking`), so it is offered only when that sub-task succeeded. Its user is a rule-based
user (`agentgym.users.rule_based`) that reads messages as every dialog user does (the new time
when asked, yes or no to a place proposed, the stock request to rephrase what it cannot place),
makes typos as they do, and answers an empty message with its request. A place it hears named
is read as a proposal to move the booking there (`FollowUpUser.proposed_call`), which goal
consistency judges: right only for the booked place.

The user sees its own bookings, as a person sees the confirmations, and nothing else: a write
that goes wrong (a booking of the wrong place or time, the new booking cancelled, the new one
booked twice) it answers at once; a right step of the move it leaves to the assistant to report,
and what is still missing it says when the assistant next speaks. So the move can be made in
either order (book the new time, then cancel the old booking, or the other way round). It ends
the sub-task when, and only when, `score_move` holds: accepted once the move is done and the
assistant next speaks, or given up after `FollowUpUser.PATIENCE` bookings of the wrong place or
time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym.core.task import Score, UserTurn, WorldEvent
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.envs.dialog.proposals import places_named
from agentgym.envs.dialog.tasks import Booking, Place, World
from agentgym.envs.dialog.typos import slip
from agentgym.envs.dialog.user import place_names, understanding
from agentgym.envs.dialog.wording import GO_CHECK
from agentgym.envs.tooluse.asking import asks_go_ahead
from agentgym.users.rule_based import RuleBasedUser
from agentgym.users.stock import CONFIRMED, REPHRASE
from agentgym.users.understanding import Reading
from agentgym.users.understanding.look_up import asks_leave_to_look

__all__ = ["MoveBooking", "FollowUpUser", "agreed_booking", "checked", "plan_move", "score_move"]


@dataclass(frozen=True)
class MoveBooking:
    """Move the accepted booking `booking` of `place` from `old` to (day, slot)."""

    booking: str
    place: str
    old: tuple[str, str]
    day: str
    slot: str

    def plan(self) -> list[dict[str, Any]]:
        # The session's brief asks to check a new time or place with the tools before booking it.
        return [checked(self.place, self.day, self.slot),
                {"name": "cancel_booking", "arguments": {"booking_id": self.booking}},
                {"name": "book", "arguments": {"item_id": self.place, "day": self.day, "slot": self.slot}}]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "move_booking", "booking": self.booking, "place": self.place, "from": list(self.old),
                "day": self.day, "slot": self.slot, "calls": self.plan()}


def checked(place: str, day: str, slot: str) -> dict[str, Any]:
    """The gold step that checks `place` is free on `day` in `slot` before it is booked, as the
    session's brief asks of a new time or place (and a come-back's user too)."""
    return {"name": "check_availability", "arguments": {"item_id": place, "day": day, "slot": slot}}


def agreed_booking(world: World) -> Booking | None:
    """The booking a dialog sub-task ended on: its world's one active booking, or None."""
    active = world.active_bookings()
    return active[0] if len(active) == 1 else None


def plan_move(world: World, booking: Booking, rng: Any) -> MoveBooking | None:
    """A move of `booking` to another time its place is open (drawn from `rng`), or None when
    the place is open at no other time."""
    place: Place = world.by_id[booking.item_id]
    options = [(d, s) for d in DAYS for s in SLOTS if (d, s) != (booking.day, booking.slot) and place.is_open(d, s)]
    if not options:
        return None
    day, slot = options[int(rng.integers(len(options)))]
    return MoveBooking(booking.id, place.id, (booking.day, booking.slot), day, slot)


def score_move(world: World, move: MoveBooking) -> Score:
    """Half for cancelling the old booking, half for the place booked at the new time; success
    when both hold and nothing else is booked. A move to no place (`place` empty: a come-back
    that cancels) succeeds when nothing is left booked."""
    active = world.active_bookings()
    old_gone = not any(b.id == move.booking for b in active)
    if not move.place:
        return Score(1.0 if not active else 0.5 if old_gone else 0.0, not active,
                     {"old_cancelled": old_gone, "moved": False, "active": len(active)})
    moved = [b for b in active if b.item_id == move.place and (b.day, b.slot) == (move.day, move.slot)]
    score = (0.5 if old_gone else 0.0) + (0.5 if moved else 0.0)
    success = old_gone and len(moved) == 1 and len(active) == 1
    return Score(score, success, {"old_cancelled": old_gone, "moved": bool(moved), "active": len(active)})


def _when(day: str, slot: str) -> str:
    return f"{day.capitalize()} {slot}"


class FollowUpUser(RuleBasedUser):
    """The user asking to move their booking; accepts once it is moved, not elsewhere. It picks
    no phrasing (it draws nothing) and plans no goal shift; what it holds against a booking is
    the place and the time, from the start."""

    __slots__ = ("_world", "_move", "_rejections", "_noun", "_when", "_old", "_names")

    #: Bookings of the wrong place or time after which the user gives up.
    PATIENCE = 2

    def __init__(self, world: World, move: MoveBooking) -> None:
        self._world, self._move = world, move
        super().__init__(understanding(world.domain).read, ("place", "time"))
        self._rejections = 0
        self._noun = world.domain.noun
        self._when = _when(move.day, move.slot)
        self._old = _when(*move.old)
        self._names: dict[str, Place] | None = None

    # ------------------------------------------------------------------ reading
    def _placed(self, message: str) -> Reading | None:
        """The reading of a message the user can place, or None (blank, garbage, a keyword list)."""
        if not message.strip():
            return None
        r = self._reading(message)
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
        r = self._placed(message)
        place = self._meant(r) if r is not None else None
        if place is None:
            return None
        return "book", {"item_id": place.id, "day": self._move.day, "slot": self._move.slot}

    # ------------------------------------------------------------------ what the user sees
    def _is_new(self, b: Booking) -> bool:
        m = self._move
        return b.item_id == m.place and (b.day, b.slot) == (m.day, m.slot)

    def _missing(self, agreeing: bool = False) -> str:
        """What the user still needs, from the bookings it sees now ("" when nothing is). The
        time it wants is the last one it names, as a person ends on what they are asking for.
        Saying yes to a move (`agreeing`), it asks for no part of the move again; only bookings
        it never wanted."""
        active = self._world.active_bookings()
        old = any(b.id == self._move.booking for b in active)
        new = [b for b in active if self._is_new(b)]
        extra = [b for b in active if b.id != self._move.booking and not self._is_new(b)]
        out = [f"Please cancel the booking of {self._world.by_id[b.item_id].name} on {_when(b.day, b.slot)}: "
               "I don't need it." for b in extra]
        if len(new) > 1:
            out.append(f"I see {len(new)} bookings for {self._when}; I only need one, please cancel the others.")
        if agreeing:  # the move it says yes to is what it would ask for
            return " ".join(out)
        if not new and old:
            out.append(f"I still see our booking on {self._old}: {self._still_wanted(old=True)}")
        elif not new:
            out.append(f"The {self._old} booking is cancelled; now {self._still_wanted(old=False)}")
        elif old:
            out.append(f"I see the new booking for {self._when}; please cancel the old one too.")
        return " ".join(out)

    def _still_wanted(self, old: bool) -> str:
        """What the user asks for while the new booking is missing (`old`: the old one stands)."""
        if old:
            return f"please move it to {self._when}, same place."
        return f"please book the same {self._noun} for {self._when}."

    def _not_meant(self) -> str:
        """What the user says of a booking of the wrong place or time."""
        return f"No, I meant the same {self._noun} as before, {self._world.by_id[self._move.place].name}, on {self._when}."

    def _request(self) -> str:
        """The request again, as things stand: what is still missing."""
        return self._missing() or f"Please move the {self._noun} we booked before to {self._when}, same place."

    # ------------------------------------------------------------------ SimulatedUser
    def opening(self) -> str:
        # It follows the session's switch phrase ("One more thing: ..."), so it starts the request.
        return f"Could you move the {self._noun} we booked earlier to {self._when}? Same place, just the new time."

    def _empty(self) -> str:
        return self._request()

    def _respond(self, r: Reading, message: str, turn: int) -> str:
        if asks_leave_to_look(message):
            # "May I check the days after it, e.g. Sunday first?": a look-up, no day proposed.
            return GO_CHECK
        said = self._answer(r, message)
        if said is not None:
            return said
        if r.confirm or (r.question and asks_go_ahead(message)):
            # "... I'll book Saturday afternoon and cancel B2. OK?" asks for a yes as "shall I?" does.
            return " ".join((CONFIRMED, self._missing(agreeing=True))).strip()
        if r.chatter:
            return f"All good here, thanks! {self._request()}"
        if r.question:
            return REPHRASE
        return self._request()

    def _answer(self, r: Reading, message: str = "") -> str | None:
        """The answer to a place named or a question asked (None for other messages)."""
        # The user never names the place: the assistant must remember which booking it made.
        if r.places:
            meant = self._meant(r)
            if meant is not None and meant.id == self._move.place:
                active = self._world.active_bookings()
                if not any(self._is_new(b) for b in active) and any(b.id == self._move.booking for b in active):
                    # Nothing done yet: the yes says what to do, not what it "still sees".
                    return f"Yes, that one: please book it for {self._when} and cancel the old booking."
                return f"Yes, that one. {self._missing() or f'Please move it to {self._when}.'}"
            return f"No, I mean the same {self._noun} as before. {self._request()}"
        if r.asked == ("time",):
            return f"To {self._when}, please."
        if r.asked or r.open:
            return f"Nothing else changes: same {self._noun} as before, just at {self._when}."
        return None

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        # A write to the booking's world that goes wrong gets an answer at once: the move is judged
        # as a whole (in whichever order its parts came), and a booking of the wrong place or time
        # costs patience.
        if not events:
            return None
        if score_move(self._world, self._move).success:
            return UserTurn("Perfect, thanks for moving it!", end="accepted")
        parts = []
        booked = {e.data.get("booking_id") for e in events if e.kind == "booked"}
        wrong = [b for b in self._world.bookings.values() if b.id in booked and b.active and not self._is_new(b)]
        if wrong:
            self._rejections += 1
            parts.append(self._not_meant())
            if self._rejections >= self.PATIENCE:
                return UserTurn(parts[0] + " Never mind, I'll sort it out myself.", end="gave_up")
        cancelled = {e.data.get("booking_id") for e in events if e.kind == "cancelled"}
        if any(self._is_new(b) for b in self._world.bookings.values() if b.id in cancelled):
            parts.append(f"Wait, that was the new booking for {self._when}: I still need it.")
        if not parts and sum(self._is_new(b) for b in self._world.active_bookings()) <= 1:
            # A right step of the move (the new booking made, or the old one cancelled): what is
            # still to do the user says when the assistant next speaks, not on the tool's word.
            return None
        parts.append(self._missing())
        return UserTurn(" ".join(p for p in parts if p))

    def perturb_text(self, text: str, rng: Any) -> tuple[str, list[str]]:
        """Typos as the booking's user makes them: never in a stock reply, a place's name, a day
        or a time of day (`agentgym.envs.dialog.typos`)."""
        return slip(text, self._world.domain, rng)

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        out = []
        if name == "book":
            if arguments.get("item_id") != self._move.place:
                out.append("place")
            if (arguments.get("day"), arguments.get("slot")) != (self._move.day, self._move.slot):
                out.append("time")
        return out
