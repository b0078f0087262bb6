"""The rule-based simulated user of the dialog family.

How it understands: every message is read by the shared engine (`agentgym.core.understanding`)
with the family lexicon (``data/lexicon.json``) and the domain's own words (its category label,
values and synonyms, areas, amenities, days and times of day, and the names and ids of its
places). It answers every slot a message asks about, in any form (a question, a yes/no question,
"tell me", "I'd love to know", an imperative, a statement of need), several per message; never a
slot the message sets aside ("no need to tell me the price", "besides the area") or only mentions
in a statement ("I found cafes in Riverside."). An open question ("anything else I should
know?") gets one requirement it has not stated yet, if any (one about what it names, when it
names something: "anything else the venue should offer?"). Small talk ("how's your day going?",
"is it sunny where you are?") asks about nothing it names: the user answers in kind and steers
back to the task. A message it cannot place gets a reply that says so and asks for a rephrasing;
so does a list of keywords.

How it judges: a proposal ("How about Harbor Grill?", the longest exact name or id written)
is judged exactly like a booking: against every constraint of the goal and against the place's
availability at the wanted time (or at the day and time the proposal names). A rejected proposal
costs patience like a wrong booking; out of patience, the user gives up. A rejection names the
broken constraint it can: one already stated, or one it would answer when asked. What the user
takes as a proposal (one place named, not booked already, in a message it can place) is
`DialogUser.proposed_call`, which goal consistency judges too: one reading for both.

Late constraints (one rule): a late constraint is revealed only when its turn comes, when the
user volunteers it. Before that, neither a question about its slot nor a proposal or booking that
breaks it reveals it: such a rejection says only that the place will not work, without why.
After it has been volunteered, a rejection names it like any other.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from agentgym.core.task import NoiseEvent, SimulatedUser, Task, UserTurn, WorldEvent
from agentgym.core.understanding import Reading, Understanding, compile_understanding, resolve_place
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain, load_lexicon
from agentgym.envs.dialog.tasks import Constraint, Gold, Place, World, place_phrases, satisfying_places

__all__ = ["DialogUser", "make_user", "statement", "understanding", "place_names", "places_named", "SLOT_ORDER",
           "REPHRASE", "KEYWORDS", "SMALL_TALK"]

SLOT_ORDER = ("category", "area", "price", "rating", "amenity", "time")

_STATEMENTS: dict[str, tuple[str, ...]] = {
    "category": ("The {label} should be {value}.", "I'd like the {label} to be {value}.",
                 "I'm looking for {value} as the {label}."),
    "area": ("It should be in {value}.", "Somewhere in {value}, please.", "I'd like it to be in the {value} area."),
    "price": ("My budget is at most {value} {unit}.", "Nothing above {value} {unit}, please.",
              "I can spend up to {value} {unit}."),
    "rating": ("It should be rated at least {value}.", "I want a rating of {value} or more.",
               "Nothing rated below {value}, please."),
    "amenity": ("It needs to have {value}.", "I need {value}.", "It must have {value}."),
    "time": ("I'd like to go on {day} {slot}.", "It's for {day} {slot}.", "I'm thinking {day}, in the {slot}."),
}
_NO_PREFERENCE = {
    "category": "No preference on the {label}.",
    "area": "I don't mind which area.",
    "price": "Price doesn't matter much to me.",
    "rating": "The rating doesn't matter much.",
    "amenity": "No special amenities needed.",
    "time": "Any time works.",
}
#: What a slot is called when the user has nothing to say about it yet.
_SLOT_NOUN = {"category": "{label}", "area": "area", "price": "price", "rating": "rating",
              "amenity": "amenities", "time": "time"}
_GREETINGS = ("Hi! I'm looking for a {noun}.", "Hello, can you help me book a {noun}?", "Hey, I need to find a {noun}.")
_LATE = ("Oh, one more thing: ", "Actually, I just remembered: ", "My friend just told me something, so: ")
_ACCEPT = ("Perfect, that's exactly what I wanted. Thank you!", "Great, that works for me. Thanks a lot!",
           "Wonderful, that's booked then. Thank you!")
_GIVE_UP = "I think I'll look elsewhere. Goodbye."
#: The reply to a message the user cannot place (its words stay stable for agents and tests).
REPHRASE = "I'm not sure what you mean. Could you rephrase that?"
#: The reply to small talk ("How's your day going?"): friendly, and back to the task.
SMALL_TALK = "All good here, thanks! Can we get back to finding a {noun}?"
#: The reply to a list of slot words with no question around them.
KEYWORDS = "That's just a list of words to me. Could you ask me in a full sentence?"
_UNSAID = "I can't say exactly why yet, it just doesn't feel right."
#: How an ambiguous user blurs a detail it states up front (the `ambiguity` noise).
_VAGUE = {
    "time": "Sometime this week would be good, at my usual time.",
    "area": "Somewhere near the usual place.",
    "category": "The kind of place I usually like.",
    "price": "Nothing too expensive.",
}
_QUESTION_FOR = {
    "time": "Which day and what time of day would you like?",
    "area": "Which area would you like?",
    "category": "Which {label} would you like?",
    "price": "What is your budget?",
}


def statement(c: Constraint, domain: Domain, variant: int = 0) -> str:
    """How the user states constraint `c` (variant picks one of the phrasings)."""
    forms = _STATEMENTS[c.kind]
    form = forms[variant % len(forms)]
    if c.kind == "time":
        return form.format(day=c.value[0].capitalize(), slot=c.value[1])
    return form.format(label=domain.category_label, value=c.value, unit=domain.price_unit)


@lru_cache(maxsize=None)
def understanding(domain: Domain) -> Understanding:
    """How the users of `domain` read messages: the family lexicon plus the domain's own words
    and every name and id a place of the domain can have (compiled once per domain)."""
    values = {
        "category": [domain.category_label, *domain.category_synonyms, *domain.categories],
        "area": list(domain.areas),
        "amenity": list(domain.amenities),
        "time": [*DAYS, *SLOTS],
    }
    return compile_understanding(load_lexicon(), values, place_phrases(domain))


def place_names(world: World) -> dict[str, Place]:
    """Every way a message can name a place of `world`: its lower-cased name and its id."""
    names = {p.name.lower(): p for p in world.places}
    names.update({p.id: p for p in world.places})
    return names


def places_named(reading: Reading, names: dict[str, Place]) -> list[Place]:
    """The distinct places a reading names, in order of mention: each the longest real name (or
    id) that what was written starts with (`resolve_place`)."""
    found: dict[str, Place] = {}
    for key in reading.places:
        place = resolve_place(key, names)
        if place is not None and place.id not in found:
            found[place.id] = place
    return list(found.values())


class DialogUser(SimulatedUser):
    """The simulated user of one dialog episode; see the module docstring."""

    __slots__ = ("_task", "_rng", "_blurred", "_shift", "_shift_turn", "_shift_fire", "_world", "_gold", "_domain",
                 "_revealed", "_late", "_rejections", "_read", "_names", "_accepted", "_last")

    def __init__(self, task: Task, rng: np.random.Generator) -> None:
        self._task = task
        self._rng = rng
        self._blurred: list[str] = []
        self._shift: tuple[str, str] | None = None
        self._shift_turn = 0
        self._shift_fire: Callable[[NoiseEvent], None] | None = None
        self._world: World = task.world
        self._gold: Gold = task.gold
        self._domain: Domain = self._world.domain
        self._revealed: list[str] = []
        self._late = [c for c in self._gold.constraints if c.reveal == "late"]
        self._rejections = 0
        self._read = understanding(self._domain).read
        self._names: dict[str, Place] | None = None
        #: The place the user last accepted as a proposal (a confirmation question books it).
        self._accepted: Place | None = None
        #: The last message read and its reading: the commitment judge and `reply` read each
        #: message in turn, and share this one reading (also past the engine's memo).
        self._last: tuple[str, Reading] | None = None

    # -------------------------------------------------------------- helpers
    def _pick(self, options: tuple[str, ...]) -> str:
        return options[int(self._rng.integers(len(options)))]

    def _say(self, c: Constraint) -> str:
        if c.id not in self._revealed:
            self._revealed.append(c.id)
        return statement(c, self._domain, int(self._rng.integers(3)))

    def _sayable(self, c: Constraint) -> bool:
        """Whether the user would state `c` now: any constraint but a late one not yet volunteered."""
        return c.reveal != "late" or c.id in self._revealed

    def _verdict(self, place: Place, day: str, slot: str) -> str | None:
        """Why `place` at (day, slot) will not do, as the user says it; None when it will.

        Shared by proposals and bookings: every constraint of the goal, then the place's
        availability. A broken constraint already stated is named first (a person repeats what
        they said), then one the user would answer when asked; a late constraint not yet
        volunteered is never named (`_UNSAID`).
        """
        broken = [c for c in self._gold.constraints if not c.holds(place, day, slot)]
        sayable = [c for c in broken if self._sayable(c)]
        if sayable:
            stated = [c for c in sayable if c.id in self._revealed]
            return self._say((stated or sayable)[0])
        if broken:
            return _UNSAID
        if not place.is_open(day, slot):
            time = next(c for c in self._gold.constraints if c.kind == "time")
            return f"It isn't available when I need it. {self._say(time)}"
        return None

    def _volunteer(self, turn: int) -> list[str]:
        out = []
        for c, due in zip(self._late, self._gold.late_turns):
            if turn >= due and c.id not in self._revealed:
                out.append(self._pick(_LATE) + self._say(c))
        return out

    def _place_names(self) -> dict[str, Place]:
        if self._names is None:
            # Built on the first proposal: most episodes name no place in free text.
            self._names = place_names(self._world)
        return self._names

    def _place(self, key: str) -> Place | None:
        return resolve_place(key, self._place_names())

    def _reading(self, message: str) -> Reading:
        last = self._last
        if last is not None and last[0] == message:
            return last[1]
        r = self._read(message)
        self._last = (message, r)
        return r

    def _proposed(self, r: Reading) -> list[Place]:
        """The places a reading names (none without a place word: no table built)."""
        return places_named(r, self._place_names()) if r.places else []

    def _proposal(self, r: Reading, proposed: list[Place]) -> tuple[Place, str, str] | None:
        """The one place proposed and the day and slot it is judged at (those the message names,
        else the wanted ones); None when it names several or none, or the place is booked already."""
        if len(proposed) != 1:
            return None
        place = proposed[0]
        if any(b.item_id == place.id for b in self._world.active_bookings()):
            return None
        g = self._gold
        day = next((v for s, v in r.details if s == "time" and v in DAYS), g.day)
        slot = next((v for s, v in r.details if s == "time" and v in SLOTS), g.slot)
        return place, day, slot

    def proposed_call(self, message: str) -> tuple[str, dict[str, Any]] | None:
        """The booking a message proposes as this user reads it (see the module docstring)."""
        if not message.strip():
            return None
        r = self._reading(message)
        if r.salad or not r.placed:
            return None
        got = self._proposal(r, self._proposed(r))
        if got is None:
            return None
        place, day, slot = got
        return "book", {"item_id": place.id, "day": day, "slot": slot}

    # -------------------------------------------------------------- SimulatedUser
    def opening(self) -> str:
        parts = [self._pick(_GREETINGS).format(noun=self._domain.noun)]
        for c in self._gold.constraints:
            if c.reveal == "upfront":
                parts.append(_VAGUE[c.kind] if c.id in self._blurred else self._say(c))
        return " ".join(parts)

    # -------------------------------------------------------------- noise support
    def blur(self, rng: np.random.Generator) -> NoiseEvent | None:
        options = [c for c in self._gold.constraints if c.reveal == "upfront" and c.kind in _VAGUE]
        if not options:
            return None
        c = options[int(rng.integers(len(options)))]
        self._blurred.append(c.id)
        return NoiseEvent(target=c.id, detail=_VAGUE[c.kind])

    def unclarified(self) -> list[str]:
        """Blurred constraints the assistant has not yet asked about."""
        return [cid for cid in self._blurred if cid not in self._revealed]

    def clarifying_question(self, constraint_id: str) -> str:
        """A question that makes this user state `constraint_id` (used by the oracle)."""
        kind = next(c.kind for c in self._gold.constraints if c.id == constraint_id)
        return _QUESTION_FOR[kind].format(label=self._domain.category_label)

    def plan_goal_shift(self, rng: np.random.Generator, fire: Callable[[NoiseEvent], None]) -> bool:
        # Move the wanted time to another one at which some place meets every other constraint,
        # so the task stays solvable and its gold is enumerated anew.
        current = (self._gold.day, self._gold.slot)
        others = [c for c in self._gold.constraints if c.kind != "time"]
        options = [(d, s) for d in DAYS for s in SLOTS
                   if (d, s) != current and satisfying_places(self._world, others, d, s)]
        if not options:
            return False
        self._shift = options[int(rng.integers(len(options)))]
        self._shift_turn = int(rng.integers(2, 5))
        self._shift_fire = fire
        return True

    def _fire_shift(self, turn: int) -> str:
        assert self._shift is not None and self._shift_fire is not None
        day, slot = self._shift
        old = self._gold
        constraints = tuple(replace(c, value=(day, slot), reveal="upfront") if c.kind == "time" else c
                            for c in old.constraints)
        # The old plan's booking, and cancelling it, were right when made: keep them for metrics.
        superseded = (*old.superseded, *old.plan(), {"name": "cancel_booking", "arguments": {}})
        new = replace(old, constraints=constraints, day=day, slot=slot, superseded=superseded,
                      items=satisfying_places(self._world, constraints, day, slot))
        self._gold = self._task.gold = self._task.goal = new
        self._shift = None
        self._accepted = None
        if "time" not in self._revealed:
            self._revealed.append("time")
        # Cancel (if something is booked) and rebook: two turns are needed to recover.
        recoverable = turn + 2 <= self._task.max_turns
        self._shift_fire(NoiseEvent(target="time", detail={"from": list((old.day, old.slot)), "to": [day, slot],
                                                           "recoverable": recoverable}, recoverable=recoverable))
        return f"Actually, can we make it {day.capitalize()} {slot} instead?"

    def reply(self, message: str, turn: int) -> UserTurn:
        parts: list[str] = []
        if not message.strip():
            parts.append(f"Sorry, I didn't get that. Can you help me find a {self._domain.noun}?")
        else:
            r = self._reading(message)
            if r.salad:
                parts.append(KEYWORDS)
            elif not r.placed:
                parts.append(REPHRASE)
            else:
                proposed = self._proposed(r)
                if len(proposed) == 1:
                    got = self._proposal(r, proposed)
                    said = (UserTurn(f"You've already booked {proposed[0].name}.") if got is None
                            else self._judge_proposal(*got, turn))
                    if said.end is not None:
                        return said
                    parts.append(said.text)
                elif len(proposed) > 1:
                    parts.append("That's a lot of options. Which one would you recommend?")
                if r.asked and r.open and self._unsaid(r.asked):
                    # "Anything else the venue should offer?": one requirement, about what it names.
                    parts.append(self._say(next(c for c in self._gold.constraints if c.kind in r.asked
                                                and c.id not in self._revealed and self._sayable(c))))
                elif r.asked and not r.open:
                    parts += self._answer(r.asked)
                elif r.open:
                    parts.append(self._open_answer(r.excluded))
                elif r.confirm and not proposed:
                    parts.append(self._confirm_answer())
                elif r.chatter and not proposed:
                    parts.append(SMALL_TALK.format(noun=self._domain.noun))
                elif not proposed:
                    parts.append(REPHRASE if r.question else
                                 self._pick(("Okay. Please find something that fits and book it.",
                                             "Sounds good, go ahead and book something that fits.")))
        if self._shift is not None and turn >= self._shift_turn:
            parts.append(self._fire_shift(turn))
        parts += self._volunteer(turn)
        return UserTurn(" ".join(parts))

    def _judge_proposal(self, place: Place, day: str, slot: str, turn: int) -> UserTurn:
        """Judge a proposal as a booking would be judged, at the time `_proposal` read."""
        why = self._verdict(place, day, slot)
        if why is None:
            self._accepted = place
            return UserTurn(f"{place.name} sounds great. Please book it.")
        self._accepted = None
        return self._reject(f"Hmm, {place.name} won't work for me. {why}", turn)

    def _answer(self, asked: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        label = self._domain.category_label
        for s in asked:
            # Looked up in the current goal (at most six constraints) rather than kept per slot,
            # so a goal shift needs no bookkeeping here.
            of_slot = [c for c in self._gold.constraints if c.kind == s]
            sayable = [c for c in of_slot if self._sayable(c)]
            if sayable:
                out += [self._say(c) for c in sayable]
            elif of_slot:
                out.append(f"Nothing comes to mind about the {_SLOT_NOUN[s].format(label=label)} right now.")
            else:
                out.append(_NO_PREFERENCE[s].format(label=label))
        return out

    def _unsaid(self, slots: tuple[str, ...]) -> bool:
        """Whether the user holds something about `slots` it would say and has not said yet."""
        return any(c.kind in slots and c.id not in self._revealed and self._sayable(c) for c in self._gold.constraints)

    def _open_answer(self, excluded: frozenset[str]) -> str:
        # One requirement not stated yet: one held back until asked, else one the opening only
        # blurred ("somewhere near the usual place"); a late one waits for its turn.
        revealed = self._revealed
        for c in self._gold.constraints:
            if c.reveal == "ask" and c.id not in revealed and c.kind not in excluded:
                return self._say(c)
        for c in self._gold.constraints:
            if c.id in self._blurred and c.id not in revealed and c.kind not in excluded:
                return self._say(c)
        return "That's everything I can think of for now."

    def _confirm_answer(self) -> str:
        if self._accepted is not None:
            return f"Yes, please go ahead and book {self._accepted.name}."
        return "Which place do you mean? Please tell me its name first."

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        if not any(e.kind == "booked" for e in events):
            return None
        if self._shift is not None:
            # The user changes their mind on seeing the booking; not the assistant's fault.
            return UserTurn(self._fire_shift(turn) + " Please change the booking.")
        active = self._world.active_bookings()
        if len(active) > 1:
            return self._reject(f"You've made {len(active)} bookings, but I only need one. "
                                "Please cancel the extra ones.", turn)
        b = active[0]
        place = self._world.by_id[b.item_id]
        why = self._verdict(place, b.day, b.slot)
        if why is None:
            return UserTurn(self._pick(_ACCEPT), end="accepted")
        return self._reject(f"That won't work for me. {why}", turn)

    def _reject(self, text: str, turn: int) -> UserTurn:
        self._rejections += 1
        if self._rejections >= self._gold.patience:
            return UserTurn(f"{text} {_GIVE_UP}", end="gave_up")
        return UserTurn(" ".join([text, *self._volunteer(turn)]))

    def known_constraints(self) -> list[str]:
        return self._revealed

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        stated = [c for c in self._gold.constraints if c.id in self._revealed]
        if not stated:
            return []
        out: list[str] = []
        day, slot = arguments.get("day"), arguments.get("slot")
        place = self._world.by_id.get(arguments.get("item_id", ""))
        for c in stated:
            if c.kind == "time" and day is not None and slot is not None and (day, slot) != tuple(c.value):
                out.append(c.id)
            elif name == "book" and place is not None and c.kind != "time" and not c.holds(place, "", ""):
                out.append(c.id)
            elif name == "search" and c.kind in ("category", "area") and arguments.get(c.kind) not in (None, c.value):
                out.append(c.id)
        return out


def make_user(task: Task, rng: np.random.Generator) -> DialogUser:
    """The default user factory of the dialog family."""
    return DialogUser(task, rng)
