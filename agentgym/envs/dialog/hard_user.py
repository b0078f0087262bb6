"""The hard tier's user (`agentgym.envs.dialog.hard_tier`): the dialog user, with priorities.

It wants more than any one place offers, and knows which of its needs matters least. When the
agent says that no place meets everything, or asks which need could give way, in whatever words
(`gives_way`: `agentgym.users.understanding.compromise`), the user first thinks of what it has not said yet: a late need arrives then (as
at a commitment), and a need it holds back until asked it now states ("Before I give anything
up, you should know: ..."), giving nothing up, since an agent that has not heard every need
cannot know that nothing fits. Once it has said every need it has, it checks the claim as a
person would: when no place meets all of them at the wanted time it gives up its flexible need
("If something has to give, it doesn't need to have a projector."), and from then on the goal
(and so the scorer, the gold and every verdict) no longer holds it; when some place does, it
asks the agent to look again. Either way it costs no patience. Before it has agreed, a place
that breaks the flexible need is rejected for it like any other broken need.

Places named beside a question of which need can give way are options, not proposals
(`_offered`): none is judged before the user gives way; then the one the message ties to the
need given up ("if the area can go, X": `agentgym.envs.dialog.options`) is the agent's
proposal, judged as any, and places tied to other needs are set aside. A message that ties no
place is read as any other ("I'd go with X").

A question about particular needs is answered as a person would: about a need the user keeps
("Would you be open to another area?"), "No, the area matters to me." before the rest of the
answer; about the flexible one ("Is the budget firm?"), the answer above. Once the user has given
way, a question about it again gets "As I said: ...", while a statement that restates it ("since
you can do without a projector, I'll book X") is no question: the rest is answered as usual.

After a booking: the need the tier keeps for after a booking (`hard_tier`) is held back from
every question, proposal and turn, and arrives with the first booking the user would otherwise
approve (`react`), as the user coming back to it ("Oh, one more thing: ... Does X still work?").
It rules X out, and no place meets every need the user now has: told so, or asked, it gives up
a second need (`flexible_after`) as it gave up the first; asked about the remembered one, it
says that one matters.

It states the wanted time with the day counted from the day the brief says today is
(`agentgym.envs.dialog.wording.relative_time`: "I need it the day after tomorrow, in the
evening."), wherever it states it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np

from agentgym.core.task import Task, UserTurn, WorldEvent
from agentgym.envs.dialog.aside import set_aside
from agentgym.envs.dialog.domain import DAYS
from agentgym.envs.dialog.hard_tier import flexible_of
from agentgym.envs.dialog.itinerary_user import PlanUser
from agentgym.envs.dialog.options import KEPT_MARK, option_ties
from agentgym.envs.dialog.proposals import places_named
from agentgym.envs.dialog.tasks import Booking, Constraint, Place, satisfying_places
from agentgym.envs.dialog.user import DialogUser
from agentgym.envs.dialog.wording import NO_PREFERENCE, RELATIVE_DAYS, WISH_FORM, clause, relative_time
from agentgym.users.understanding import Reading
from agentgym.users.understanding.compromise import Compromise, read_compromise

__all__ = ["HardDialogUser", "make_user", "gives_way", "LOOK_AGAIN", "GIVE_WAY"]

#: Said to a claim that nothing fits while something fits every need the user has told.
LOOK_AGAIN = "Really? I'd have thought something fits everything I've told you. Could you look again?"
#: How the user gives up its flexible need, by kind ({phrase}: the amenity's own words).
GIVE_WAY = {
    "category": "If something has to give, the {label} doesn't need to be {value}.",
    "area": "If something has to give, it doesn't need to be in {value}.",
    "amenity": "If something has to give, it doesn't need to {phrase}.",
    "price": "If something has to give, I can spend more than {value} {unit}.",
    "rating": "If something has to give, it doesn't need to be rated {value} or more.",
}
_BEFORE = "Before I give anything up, you should know: "
#: The answer to a question about giving up one need the user keeps ("Is the budget firm?" when
#: the rating is what could give), by kind; several at once: `_KEEP_ALL`.
_KEEP = {
    "category": "No, the {label} matters to me.",
    "area": "No, the area matters to me.",
    "price": "No, my budget is firm.",
    "rating": "No, the rating matters to me.",
    "amenity": "No, it really needs to {phrase}.",
    "time": "No, the time is fixed for me.",
}
_KEEP_ALL = "No, those all matter to me."
#: The assistant speaking of its own choice ("I'd let the area go: X"): words the engine reads as
#: a statement, whose needs named are then no question; dropped where only the needs named count.
_OWN_CHOICE = re.compile(r"\b(?:i'd|i would|i'll|i will|we'd|we could|you could)\b", re.IGNORECASE)


def gives_way(message: str) -> bool:
    """Whether `message` asks the user which need may give way, or says that no place meets
    them all, in whatever words (`agentgym.users.understanding.compromise`)."""
    return bool(read_compromise(message))


class HardDialogUser(DialogUser):
    """See the module docstring."""

    __slots__ = ("_flexible", "_gave", "_dropped", "_after", "_next", "_today", "_wishes")

    def __init__(self, task: Task, rng: np.random.Generator) -> None:
        #: The day the brief says today is: the user counts the wanted day from it.
        self._today: str | None = task.extra.get("today")
        #: The needs it would give up (now, or after the booking): said as wishes (`_phrasing`).
        self._wishes = frozenset(i for i in (flexible_of(task), task.extra.get("flexible_after")) if i)
        super().__init__(task, rng)
        fid = flexible_of(task)
        #: The need the user would give up, until it does; then what it said giving it up.
        self._flexible: Constraint | None = self._need(fid)
        self._gave = ""
        #: The need given up, once it is.
        self._dropped: Constraint | None = None
        #: The need remembered only after a booking, until it is, and the need then given up.
        self._after = self._need(task.extra.get("after_booking"))
        self._next = self._need(task.extra.get("flexible_after"))
        # Never due by a turn, and no proposal or question brings it: only a booking (`react`).
        self._pending = [(c, due) for c, due in self._pending if c is not self._after]

    def _say(self, c: Constraint) -> str:
        said = super()._say(c)
        if c.kind != "time" or self._today is None:
            return said
        return relative_time(*c.value, self._today)

    def _fire_shift(self, turn: int) -> str:
        said = super()._fire_shift(turn)
        if self._today is None:
            return said
        # A change of time in the words the brief says this user uses: days counted from today.
        ahead = (DAYS.index(self._gold.day) - DAYS.index(self._today)) % len(DAYS)
        return f"Actually, can we make it {RELATIVE_DAYS[ahead]}, in the {self._gold.slot}, instead?"

    def _phrasing(self, c: Constraint, drawn: int) -> int:
        """A need it would give up in the words of a wish ("I'd like it to have wifi"), and the
        others never in them, where its kind has such words: a person's words say what matters
        most. The draw is made all the same, so the rest of the episode draws as before."""
        wish = WISH_FORM.get(c.kind)
        if wish is None:
            return drawn
        if c.id in self._wishes:
            return wish
        return drawn if drawn % 3 != wish else (wish + 1) % 3

    def _need(self, cid: str | None) -> Constraint | None:
        return next((c for c in self._gold.constraints if c.id == cid), None)

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        b = self._settling(events) if self._after is not None else None
        if b is not None:
            # The booking the user would accept brings the remembered need, which rules it
            # out (no place the user agreed to has it); the next need to give way comes with it.
            self._pending.insert(0, (self._after, turn))
            self._task.extra["remembered"] = True
            self._task.extra["flexible"] = self._next.id if self._next is not None else None
            self._flexible, self._after = self._next, None
            # That booking, and cancelling it, were right when made: kept for metrics, as a goal
            # shift keeps the plan it replaced (the gold is the last one, which it is not of).
            book = {"name": "book", "arguments": {"item_id": b.item_id, "day": b.day, "slot": b.slot}}
            cancel = {"name": "cancel_booking", "arguments": {"booking_id": b.id}}
            gold = replace(self._gold, superseded=(*self._gold.superseded, book, cancel))
            self._gold = self._task.gold = self._task.goal = gold
        return super().react(events, turn)

    def _settling(self, events: list[WorldEvent]) -> Booking | None:
        """The booking `events` make that the user would approve as it stands, once it has given
        up its first flexible need: one new active booking, meeting every need it has, free
        then, with no goal shift due; else None. (Before, a booking can meet every need it has
        only while a late one is still to come, which arrives with it and rules it out.)"""
        booked = [e.data["booking_id"] for e in events if e.kind == "booked"]
        b = self._world.bookings.get(booked[0]) if len(booked) == 1 else None
        if b is None or not b.active or self._flexible is not None or self._shift is not None:
            return None
        place = self._world.by_id[b.item_id]
        return b if self._broken(place, b.day, b.slot) is None and place.is_open(b.day, b.slot) else None

    def reply(self, message: str, turn: int) -> UserTurn:
        if self._flexible is None and not self._gave:
            return super().reply(message, turn)
        ask = read_compromise(message)
        if not ask or (self._flexible is None and not ask.question):
            # Once the user has given way, a statement that restates it ("since you can do
            # without a projector, I'll book X") asks nothing: the rest is answered as usual.
            return super().reply(message, turn)
        if all(q for _, q in ask.sentences) and self._asks_unsaid(message):
            # Questions that ask for needs not told yet ("Which plan? ... Which amenities, if any,
            # are essential?") ask what the needs are, not which could give way: a person answers
            # them (a playtest, seed 7036, turn 1, got the late budget and one need).
            return super().reply(message, turn)
        checking = self._checking is not None
        said = self._give_way(turn, ask)
        r = self._reading(message)
        if r.placed and not r.salad and (r.places or checking):
            # A proposal, or the answer about the place the user came back about, said beside
            # the claim: judged by the needs the user has now. The claim's words are no question.
            if ask.question or self._flexible is None:
                r = self._offered(message, r)
                if not r.places and not checking:
                    # Every place named was an option of a need kept (or asked before any gave
                    # way): the answer about which need gives way is the whole reply.
                    return self._close(said, turn, False)
            rest = self._respond(replace(r, asked=(), open=False), message, turn)
            if isinstance(rest, UserTurn):
                if rest.end is not None:
                    return UserTurn(f"{said} {rest.text}", rest.end)
                rest = rest.text
            said = f"{said} {rest}"
        return self._close(said, turn, False)

    def _judge_proposal(self, place: Place, day: str, slot: str, turn: int) -> UserTurn:
        """As the base user judges it, but a need that arrived earlier in this very reply is said once."""
        # Read before judging: the judgement's own cost may bring late needs, which it then says.
        c = self._broken(place, day, slot)
        said_now = c is not None and self._arrived.get(c.id) == turn and not self._knowable_miss(place, day, slot, turn)
        said = super()._judge_proposal(place, day, slot, turn)
        if said_now:
            # The need arrived earlier in this very reply (`_give_way` said it): not said again.
            return replace(said, text=f"Hmm, {place.name} won't work for me, then.")
        return said

    def _asks_unsaid(self, message: str) -> bool:
        """Whether `message` asks about a kind of need the user holds until asked and has not said."""
        asked = self._reading(message).asked
        return any(c.kind in asked and c.reveal == "ask" and c.id not in self._revealed for c in self._gold.constraints)

    def _offered(self, message: str, r: Reading) -> Reading:
        """`r` with only the places the user takes up, beside a question of which need can give
        way: those are options, not proposals. Until the user has said which need gives way it
        takes up none; then the one the message tied to that need (`option_ties`: "if the area
        can go, X") is the agent's proposal, and places tied to other needs are set aside; a
        message that ties none is read as it stands ("I'd go with X")."""
        names = self._place_names()
        booked = self._checking[0] if self._checking is not None else None
        heard = places_named(r, names)
        named = [p for p in heard if p is not booked and not self._booked(p)]
        if self._flexible is not None or self._dropped is None:
            return replace(r, places=(), recommended=(), alternatives=())
        ties = option_ties(message, named, self._needs_in)
        # A place tied to no need that the message rules out is no option either ("X ... lacks a
        # projector; X is also 2000 EUR": a playtest, seed 6913, turn 13).
        # One place named only to say why it will not do is no option either ("... : Canvas Base.
        # It is not available Sunday evening": a playtest, seed 8726, turn 5).
        aside = set_aside(message, heard) if heard else set()
        if not ties:
            # Places listed as what there is ("cabins with breakfast: X; with parking: Y and Z")
            # are no proposal; one place, or one recommended ("I'd go with X"), is.
            if len(named) == 1 and not r.recommended and named[0].id not in aside:
                # The one place offered, beside the booked one the message says no longer fits.
                keys = (named[0].name.lower(),)
                return replace(r, places=keys, recommended=keys, alternatives=())
            return r if r.recommended else replace(r, places=(), recommended=(), alternatives=())
        dropped = self._dropped.id
        # The option for that choice: the place tied to giving it up, or to keeping another need.
        given = [p for p in named if (tie := ties.get(p.id)) == dropped
                 or (tie is not None and tie.startswith(KEPT_MARK) and tie != KEPT_MARK + dropped)]
        left = given or [p for p in named if p.id not in ties and p.id not in aside]
        keys = tuple(p.name.lower() for p in left)
        return replace(r, places=keys, recommended=keys if len(keys) == 1 else (), alternatives=())

    def _amenities(self, r: Reading) -> set[str]:
        """The amenities a reading names (the family's shorter word for one of the domain's reads
        as it: "no outlets" names the cafés' "power outlets", `compile_understanding`)."""
        return {value.lower() for slot, value in r.values if slot == "amenity"}

    def _needs_in(self, text: str) -> set[str]:
        """The ids of the needs the user has, or has just given up, that `text` names."""
        r = self._read(f"{_OWN_CHOICE.sub(' ', text)} ?")
        amenities = self._amenities(r)
        kinds = {*r.asked, *(s for s, _ in r.values)}
        needs = [*self._gold.constraints, *((self._dropped,) if self._dropped is not None else ())]
        return {c.id for c in needs if (str(c.value).lower() in amenities if c.kind == "amenity" else c.kind in kinds)}

    def _give_way(self, turn: int, ask: Compromise) -> str:
        """The answer to "which need could give way?" (see the module docstring), after what the
        user says to a question about needs it keeps (`_targeted`)."""
        parts = self._targeted(ask)
        if self._flexible is None:
            return " ".join([*parts, f"As I said: {clause(self._gave)}"])
        arrived = self._arrivals(turn, commit=True)
        if arrived:
            parts.append(self._announce(arrived))
        g = self._gold
        unsaid = [c for c in g.constraints if self._has(c) and c.id not in self._revealed]
        if unsaid:
            parts.append(_BEFORE + clause(self._say(unsaid[0])))
        elif satisfying_places(self._world, [c for c in g.constraints if self._has(c)], g.day, g.slot):
            parts.append(LOOK_AGAIN)
        else:
            parts.append(self._relax(self._flexible))
        return " ".join(parts)

    def _targeted(self, ask: Compromise) -> list[str]:
        """What a person says first when asked about giving up particular needs, none of them
        the one it would give up: that those matter ("Is the budget firm?" "No, my budget is
        firm."), or that it has no such need; nothing when the question names the flexible (or
        given-up) need, or none. A statement of what fails ("nothing has both wifi and lockers")
        asks nothing about them."""
        if not ask.question:
            return []
        r = self._reading(ask.asked)
        amenities = self._amenities(r)
        kinds = list(dict.fromkeys((*r.asked, *(s for s, _ in r.values))))
        given = [c for c in (self._flexible, self._dropped) if c is not None]
        held: list[Constraint] = []
        unheld: list[str] = []
        for kind in kinds:
            has = [c for c in self._gold.constraints if c.kind == kind and self._has(c)]
            mine = [*has, *(c for c in given if c.kind == kind)]
            if kind == "amenity" and amenities:
                mine = [c for c in mine if str(c.value).lower() in amenities]
                has = [c for c in has if c in mine]
            if any(c in given for c in mine):
                return []
            held += has
            # A need of the kind still to come arrives with the answer: no "I don't mind" first.
            if kind != "amenity" and not any(c.kind == kind for c in (*self._gold.constraints, *given)):
                unheld.append(NO_PREFERENCE[kind].format(label=self._domain.category_label))
        if len(held) > 1:
            return [_KEEP_ALL, *unheld]
        if held:
            c = held[0]
            return [_KEEP[c.kind].format(label=self._domain.category_label,
                                         phrase=self._domain.amenity_phrases.get(c.value, "")), *unheld]
        return unheld

    def _relax(self, c: Constraint) -> str:
        """Give up need `c`: the goal drops it, and the gold is enumerated anew."""
        g = self._gold
        kept = tuple(k for k in g.constraints if k.id != c.id)
        # A search with the need given up was right while the user held it, as a goal shift
        # keeps the plan it replaced: the old goal's search stays a step of a plan.
        self._gold = self._task.gold = self._task.goal = replace(
            g, constraints=kept, items=satisfying_places(self._world, kept, g.day, g.slot),
            superseded=(*g.superseded, g.plan()[0]))
        self._task.extra["relaxed"] = c.id
        self._flexible, self._dropped = None, c
        dom = self._domain
        self._gave = GIVE_WAY[c.kind].format(phrase=dom.amenity_phrases.get(c.value, ""), value=c.value,
                                             unit=dom.price_unit, label=dom.category_label)
        return self._gave

    # A goal shift keeps the tier's conflict: at the new time no place meets every need, and
    # some meet all the user keeps once it gives up its flexible one; the need remembered after a
    # booking still rules out every one of those, and some place meets it once the next need
    # gives way.
    def _shift_kept(self) -> list[Constraint]:
        skip = {c.id for c in (self._flexible, self._after) if c is not None}
        return [c for c in super()._shift_kept() if c.id not in skip]

    def _shift_keeps_task(self, kept: list[Constraint], day: str, slot: str) -> bool:
        world = self._world
        if self._flexible is not None and satisfying_places(world, [*kept, self._flexible], day, slot):
            return False
        if self._after is None or self._next is None:
            return True
        rest = [c for c in kept if c.id != self._next.id]
        return not satisfying_places(world, [*kept, self._after], day, slot) and \
            bool(satisfying_places(world, [*rest, self._after], day, slot))


def make_user(task: Task, rng: np.random.Generator) -> Any:
    """The dialog family's user factory: the hard tier's user on a task of the tier."""
    if task.extra.get("kind") == "itinerary":
        return PlanUser(task, rng)
    if task.extra.get("tier") == "hard":
        return HardDialogUser(task, rng)
    return DialogUser(task, rng)
