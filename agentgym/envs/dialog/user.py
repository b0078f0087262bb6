"""The rule-based simulated user of the dialog family: a user who knows what it knows.

How it understands: every message is read by the shared engine (`agentgym.users.understanding`)
with the family lexicon (``data/lexicon.json``) and the domain's own words (docs/USERS.md, "How it
reads messages"). It answers every slot a message asks about, in any form, several per message;
never a slot the message sets aside ("no need to tell me the price") or only mentions. An open
question ("anything else I should know?") gets one need it has not stated yet, or "that's
everything I can think of for now"; a message it cannot place gets a request to rephrase.

What it knows, and when (docs/USERS.md): it HAS every need it states up front, every need it
holds back until asked, and each late need once that has arrived. A late need arrives at the
earlier of its due turn and the agent's first commitment (a proposal the user can judge, or a
booking); at that commitment every pending late need arrives in the same reply, as the user
coming back to what was agreed ("Oh, one more thing: ... Does X still work?"). Its next reply to
a message tells the truth about X, at no cost to the agent: it works (a booking: the dialog ends
accepted; a proposal: "please book it"), or it names the need X breaks and asks for a change.

How it judges: a proposal (one place named, or the one recommended among several: "My
recommendation is A; an alternative is B") is judged exactly like a booking, by the needs the
user has at that moment and the place's availability at the wanted time (or the time the
proposal names). A rejection always names its reason: a broken need (those stated first) or that
the place is not available then, with the time. What the user takes as a proposal is
`DialogUser.proposed_call`, which goal consistency judges too: one reading for both.

Patience: a rejected proposal or booking that breaks a need the user had costs one; so does
asking again for what it already said, after the first such repeat (answered "As I said, ...",
free); a message that names values to confirm them ("So, Tuesday morning in Riverside?") is a
confirmation, never a repeat. With one miss left it warns; at the task's patience it gives up.
The dialog ends accepted only when the one active booking meets every need the user has and no
late need is pending, so the user and the scorer never disagree.

Typos (`perturb_text`, the `typos` noise) land only on messages that carry something, never on a
stock reply and never inside a value the agent must copy or look up (`agentgym.envs.dialog.typos`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from agentgym.core.task import Task, UserTurn, WorldEvent
from agentgym.envs.dialog.aside import aside_mentions
from agentgym.envs.dialog.domain import DAY_SHORT, DAYS, SLOTS, Domain, load_lexicon
from agentgym.envs.dialog.proposals import places_named, proposal_of, unexampled
from agentgym.envs.dialog.tasks import (
    Booking,
    Constraint,
    Gold,
    Place,
    World,
    place_phrases,
)
from agentgym.envs.dialog.user_noise import DialogNoiseSupport
from agentgym.envs.dialog.wording import (
    ACCEPT,
    CANCELLED,
    CANCELLED_BOOK,
    CANCELLED_NONE,
    EMPTY,
    EVERYTHING,
    GIVE_UP,
    GO_CHECK,
    GREETINGS,
    NO_PREFERENCE,
    PROCEED,
    RIGHT,
    SLOT_NOUN,
    SMALL_TALK,
    VAGUE,
    WARNING,
    WHICH_ONE,
    WHICH_PLACE,
    also_need,
    clause,
    come_back,
    statement,
)
from agentgym.users.picks import LivePicks
from agentgym.users.rule_based import RuleBasedUser, asks_if_right
from agentgym.users.stock import KEYWORDS, REPHRASE
from agentgym.users.understanding import Reading, Understanding, compile_understanding, resolve_place
from agentgym.users.understanding.look_up import asks_leave_to_look

__all__ = ["DialogUser", "make_user", "statement", "understanding", "place_names", "places_named", "proposal_of",
           "SLOT_ORDER", "REPHRASE", "KEYWORDS", "SMALL_TALK", "WHICH_ONE"]

SLOT_ORDER = ("category", "area", "price", "rating", "amenity", "time")
_NUMBER = re.compile(r"\d")
#: A go-ahead asked for a booking ("Shall I book Monday?"): with no place named, which place?
_BOOKING = re.compile(r"\b(?:book|reserv)", re.I)

#: A question word: a question that asks one ("Which do you prefer, Saturday or Sunday?") is no check.
_QUESTION_WORD = re.compile(r"\b(?:which|what|how|where|when|who|whom|whose|why)\b", re.I)


def _without_values(r: Reading, message: str) -> str:
    """`message` lower-cased without the values `r` read in it (a "book cafe" books nothing)."""
    text = message.lower()
    for _, value in r.values:
        text = text.replace(value, " ")
    return text


@lru_cache(maxsize=None)
def understanding(domain: Domain) -> Understanding:
    """How the users of `domain` read messages: the family lexicon plus the domain's own words
    and every name and id a place of the domain can have (compiled once per domain)."""
    values = {
        "category": [*domain.category_synonyms, *domain.categories],
        "area": list(domain.areas),
        "amenity": list(domain.amenities),
        "time": [*DAYS, *SLOTS],
    }
    # The domain's word for its category ("setting", "plan") asks about it as "category" does.
    lexicon = load_lexicon()
    if domain.category_label not in lexicon.slots["category"]:
        lexicon = replace(lexicon, slots={**lexicon.slots, "category": (*lexicon.slots["category"],
                                                                        domain.category_label)})
    return compile_understanding(lexicon, values, place_phrases(domain), DAY_SHORT)


def place_names(world: World) -> dict[str, Place]:
    """Every way a message can name a place of `world`: its lower-cased name and its id."""
    names = {p.name.lower(): p for p in world.places}
    names.update({p.id: p for p in world.places})
    return names


class DialogUser(DialogNoiseSupport, RuleBasedUser):
    """The simulated user of one dialog episode; see the module docstring.

    On the rule-based user (`agentgym.users.rule_based`) it keeps its own ways: it draws from its
    stream at each pick (`LivePicks`), states its up-front needs in the opening rather than
    before it, announces a goal shift at a reply only from the shift's turn on (a confirmation
    question does not bring it forward) and on seeing a booking, and ends a reply with the late
    needs that have come due.
    """

    __slots__ = ("_task", "_blurred", "_world", "_gold", "_domain", "_arrived", "_pending", "_said", "_costs",
                 "_repeats", "_everything", "_accepted", "_checking", "_to_change", "_approved", "_names")

    def __init__(self, task: Task, rng: np.random.Generator) -> None:
        self._task = task
        self._blurred: list[str] = []
        self._world: World = task.world
        self._gold: Gold = task.gold
        self._domain: Domain = self._world.domain
        # The needs stated so far (`_revealed`) start empty: the opening states the up-front ones.
        super().__init__(understanding(self._domain).read, (), LivePicks(rng))
        #: The late needs that have arrived (the user has them), by id with the turn each came,
        #: and those still to come with their due turns, soonest first.
        self._arrived: dict[str, int] = {}
        self._pending = list(zip((c for c in self._gold.constraints if c.reveal == "late"), self._gold.late_turns))
        #: Slots the user has answered (stated a need of, or said it has none).
        self._said: set[str] = set()
        #: Patience spent, and repeated questions so far.
        self._costs = 0
        self._repeats = 0
        #: The user said "that's everything" and nothing new has come up since.
        self._everything = False
        #: The place the user last accepted as a proposal (a confirmation question books it).
        self._accepted: Place | None = None
        #: What the user came back about and awaits an answer on: (place, booking id or None).
        self._checking: tuple[Place, str | None] | None = None
        #: Bookings the user rejected or asked to change: they should be cancelled.
        self._to_change: set[str] = set()
        #: A booking the user approved that waits for the others to be cancelled.
        self._approved: str | None = None
        self._names: dict[str, Place] | None = None

    # -------------------------------------------------------------- what the user has
    def _has(self, c: Constraint) -> bool:
        """Whether the user has need `c` now: any need but a late one that has not arrived."""
        return c.reveal != "late" or c.id in self._arrived

    def _say(self, c: Constraint) -> str:
        if self._reveal(c.id):
            self._everything = False
        self._said.add(c.kind)
        return statement(c, self._domain, self._phrasing(c, self._draw(3)))

    def _phrasing(self, c: Constraint, drawn: int) -> int:
        """Which of the phrasings of need `c` the user says: the one drawn."""
        return drawn

    def _broken(self, place: Place, day: str, slot: str) -> Constraint | None:
        """The need the user names first of those `place` at (day, slot) breaks: one it has
        stated, else one it has (goal order); None when it breaks none."""
        broken = [c for c in self._gold.constraints if self._has(c) and not c.holds(place, day, slot)]
        stated = [c for c in broken if c.id in self._revealed]
        return (stated or broken or [None])[0]

    def _knowable_miss(self, place: Place, day: str, slot: str, turn: int) -> bool:
        """Whether `place` at (day, slot) fails the user in a way the agent could have known
        before this turn: a need it breaks that did not arrive at this turn, or its time."""
        return not place.is_open(day, slot) or any(
            self._has(c) and not c.holds(place, day, slot) and self._arrived.get(c.id) != turn
            for c in self._gold.constraints)

    def _verdict(self, place: Place, day: str, slot: str) -> str | None:
        """Why `place` at (day, slot) will not do, as the user says it; None when it will. Shared
        by proposals, bookings and the answers to "does it still work?": the needs the user has
        now, then the place's availability."""
        c = self._broken(place, day, slot)
        if c is not None:
            return self._say(c)
        if not place.is_open(day, slot):
            time = next(c for c in self._gold.constraints if c.kind == "time")
            return f"It isn't available when I need it. {self._say(time)}"
        return None

    def _arrivals(self, turn: int, commit: bool) -> list[str]:
        """The statements of the late needs that arrive now (all pending ones at a commitment,
        else those due by `turn`), each marked as arrived."""
        pending = self._pending
        if not pending or not (commit or turn >= pending[0][1]):
            return []  # the common case, on every reply: nothing due
        out = []
        for c, due in pending:
            if commit or turn >= due:
                self._arrived[c.id] = turn
                out.append(self._say(c))
        self._pending = [(c, due) for c, due in pending if c.id not in self._arrived]
        return out

    def _agreed(self) -> tuple[Place, str | None] | None:
        """What the user and the agent have agreed on: an active booking the user has not
        rejected, else a proposal it accepted."""
        for b in self._world.active_bookings():
            if b.id not in self._to_change:
                return self._world.by_id[b.item_id], b.id
        return (self._accepted, None) if self._accepted is not None else None

    def _announce(self, said: list[str]) -> str:
        """New needs, as the user coming back to what was agreed when there is something."""
        lead = self._draw(3)
        agreed = self._agreed()
        if agreed is None:
            return also_need(said, lead)
        self._checking = agreed
        self._approved = None
        return come_back(said, lead, agreed[0].name)

    # -------------------------------------------------------------- reading
    def _place_names(self) -> dict[str, Place]:
        if self._names is None:
            # Built on the first proposal: most episodes name no place in free text.
            self._names = place_names(self._world)
        return self._names

    def _place(self, key: str) -> Place | None:
        return resolve_place(key, self._place_names())

    def _booked(self, place: Place) -> bool:
        return any(b.item_id == place.id for b in self._world.active_bookings())

    def _proposed(self, r: Reading, message: str) -> Place | None:
        """The place a message proposes (`proposal_of`), read once per message."""
        return proposal_of(r, self._place_names(), message) if r.places else None

    def _proposal(self, r: Reading, place: Place | None) -> tuple[Place, str, str] | None:
        """The place proposed (`_proposed`) and the day and slot it is judged at (those the
        message names, else the wanted ones); None when it proposes none, names a place booked
        already, or names the place the user asked about ("does X still work?": naming it
        answers)."""
        if place is None or self._booked(place) or (self._checking is not None and self._checking[0] is place):
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
        got = self._proposal(r, self._proposed(r, message))
        if got is None:
            return None
        place, day, slot = got
        return "book", {"item_id": place.id, "day": day, "slot": slot}

    # -------------------------------------------------------------- SimulatedUser
    def opening(self) -> str:
        parts = [self._pick(GREETINGS).format(a_noun=self._domain.a_noun)]
        for c in self._gold.constraints:
            if c.reveal == "upfront":
                parts.append(VAGUE[c.kind] if c.id in self._blurred else self._say(c))
        return " ".join(parts)

    def _empty(self) -> str:
        return EMPTY.format(a_noun=self._domain.a_noun)

    def _close(self, text: str, turn: int, confirm: bool) -> UserTurn:
        """A reply's end: a goal shift due by this turn (asked to confirm or not), and the late
        needs due by this turn."""
        if self._shift is None and not self._pending:
            return UserTurn(text)  # the common case: nothing comes due at a reply's end
        shift = self._shift is not None and turn >= self._shift_turn
        if not shift and (not self._pending or turn < self._pending[0][1]):
            return UserTurn(text)  # nothing due yet (`_arrivals` would say none)
        parts = [text]
        if shift:
            parts.append(self._fire_shift(turn))
        arrived = self._arrivals(turn, commit=False)
        if arrived:
            parts.append(self._announce(arrived))
        return UserTurn(" ".join(p for p in parts if p))

    def _respond(self, r: Reading, message: str, turn: int) -> str | UserTurn:
        """The reply to a message the user can place: its text, or the turn that ends the dialog."""
        # "X looks best. May I check whether it is free on Tuesday?": a look-up, no proposal nor a
        # choice to make; one that asks about a need the user holds unsaid gets that need.
        look = self._checking is None and asks_leave_to_look(message)
        if look and not self._unsaid(r.asked):
            return GO_CHECK
        parts: list[str] = []
        proposed = self._proposed(r, message)
        got = self._proposal(r, proposed)  # before the truth: naming the place asked about answers
        if self._checking is not None:
            said = self._truth(proposing=got is not None, message=message)
            if said.end is not None:
                return said
            parts.append(said.text)
        if got is not None:
            said = self._judge_proposal(*got, turn)
            if said.end is not None:
                return said
            parts.append(said.text)
        elif r.places:
            names = self._place_names()
            named = places_named(r, names)
            if len(named) > 1 and proposed is None and not look and len(unexampled(named, r, names, message)) > 1:
                parts.append(WHICH_ONE)
            elif named and self._booked(named[0]) and not parts:
                parts.append(f"You've already booked {named[0].name}.")
        if r.asked or r.open:
            answer = self._questions(r, message, turn)
            if type(answer) is not str:
                if answer.end is not None:
                    return answer
                answer = answer.text
            # A message that restates the user's values around a place ("X is rated 4.2, above
            # your 4.0") has its answer in what was said about the place; only a correction adds.
            if not (parts and answer == RIGHT):
                parts.append(answer)
        elif parts or r.places:
            pass
        elif r.confirm:
            parts.append(self._confirm_answer(r, message))
        elif r.chatter:
            parts.append(SMALL_TALK.format(a_noun=self._domain.a_noun))
        else:
            parts.append(self._check(r, message) if r.question else self._pick(PROCEED))
        return " ".join(parts)

    def _check(self, r: Reading, message: str) -> str:
        """The answer to a question that asks about no need: a yes-or-no check of values it
        restates ("Summary: Saturday morning; boutique hotel; Station District. Correct?") gets
        the user's word on them, as a restatement beside a question about them does; one whether
        the assistant has it right, in so many words ("Have I got that right?"), a yes; anything
        else a request to rephrase."""
        if r.values and not _QUESTION_WORD.search(message):
            return self._confirmation(replace(r, asked=tuple(dict.fromkeys(s for s, _ in r.values))), message)
        return RIGHT if asks_if_right(message) else REPHRASE

    # -------------------------------------------------------------- questions
    def _questions(self, r: Reading, message: str, turn: int) -> str | UserTurn:
        """Answers to what a message asks, a repeated question costing patience after the first:
        the text, or a turn of its own when a repeat costs patience."""
        if r.asked and r.open and self._unsaid(r.asked):
            # "Anything else the venue should offer?": one need, about what it names.
            return self._say(next(c for c in self._gold.constraints if c.kind in r.asked
                                  and c.id not in self._revealed and self._has(c)))
        if r.open:
            if self._everything and not r.asked:
                return self._repeat(EVERYTHING, turn)
            return self._open_answer(r.excluded)
        exhausted = all(self._exhausted(s) for s in r.asked)
        if exhausted and (r.values or _NUMBER.search(message)):
            return self._confirmation(r, message)
        answers = self._answer(r.asked, turn)
        if exhausted and not r.places and not r.confirm:
            return self._repeat(" ".join(answers), turn)
        return " ".join(answers)

    def _exhausted(self, slot: str) -> bool:
        """Whether the user has answered `slot` and has nothing more to say about it."""
        return slot in self._said and not self._unsaid((slot,))

    def _repeat(self, answer: str, turn: int) -> str | UserTurn:
        """A question the user already answered: the first repeat is forgiven, later ones cost."""
        self._repeats += 1
        text = f"As I said: {clause(answer)}"
        if self._repeats < 2:
            return text
        return self._cost(f"{text} Please keep track of what I've told you.", turn)

    def _confirmation(self, r: Reading, message: str) -> str:
        """The reply to a message restating values of slots the user answered ("So, Tuesday
        morning in Riverside?"): yes when they are its own, else its own restated. Amenities
        said beside a place are the place's ("X has fast wifi, monitors and lockers"), not a
        restatement of the user's: the proposal is judged on them, and no correction adds; so
        are a price and a rating said beside a place ("Velvet Nook, 8 EUR, rated 3.8"). Of the
        words for a category, only a category names one ("8 EUR a coffee" restates no style)."""
        numbers = {f"{float(n):g}" for n in re.findall(r"\d+(?:\.\d+)?", message)}
        wrong: list[Constraint] = []
        for s in r.asked:
            if s in ("amenity", "price", "rating") and r.places:
                continue
            has = [c for c in self._gold.constraints if c.kind == s and self._has(c)]
            if s in ("price", "rating"):
                ok = not numbers or all(f"{float(c.value):g}" in numbers for c in has)
            else:
                own = {str(v).lower() for c in has for v in (c.value if c.kind == "time" else (c.value,))}
                # Only a day or a slot can contradict the wanted time ("180 EUR a night" names none).
                said = [v for sl, v in r.values if sl == s and (s != "time" or v in DAYS or v in SLOTS)
                        and (s != "category" or v in self._domain.categories)]
                ok = not has or all(v in own for v in said)
            if not ok:
                wrong += has
        if wrong:
            return "Not quite: " + " ".join(self._say(c) for c in wrong)
        return RIGHT

    def _answer(self, asked: tuple[str, ...], turn: int) -> list[str]:
        out: list[str] = []
        label = self._domain.category_label
        # A late need due this turn arrives at the reply's end (`_close`): saying first that
        # nothing comes to mind about its slot would contradict it in the same breath.
        due = {c.kind for c, at in self._pending if turn >= at}
        for s in asked:
            # Looked up in the current goal (at most six constraints) rather than kept per slot,
            # so a goal shift needs no bookkeeping here.
            of_slot = [c for c in self._gold.constraints if c.kind == s]
            has = [c for c in of_slot if self._has(c)]
            self._said.add(s)
            if has:
                out += [self._say(c) for c in has]
            elif of_slot and s not in due:
                out.append(f"Nothing comes to mind about the {SLOT_NOUN[s].format(label=label)} right now.")
            elif of_slot:
                continue
            else:
                out.append(NO_PREFERENCE[s].format(label=label))
        return out

    def _unsaid(self, slots: tuple[str, ...]) -> bool:
        """Whether the user has a need about `slots` it has not stated yet."""
        return any(c.kind in slots and c.id not in self._revealed and self._has(c) for c in self._gold.constraints)

    def _open_answer(self, excluded: frozenset[str]) -> str:
        # One need not stated yet: one held back until asked, else one the opening only blurred
        # ("somewhere near the usual place"); a late one arrives in its own time.
        revealed = self._revealed
        for c in self._gold.constraints:
            if c.reveal == "ask" and c.id not in revealed and c.kind not in excluded:
                return self._say(c)
        for c in self._gold.constraints:
            if c.id in self._blurred and c.id not in revealed and c.kind not in excluded:
                return self._say(c)
        self._everything = True
        return EVERYTHING

    def _confirm_answer(self, r: Reading, message: str) -> str:
        """The answer to a request for a go-ahead that names no place: the place accepted, if
        any; else, where it restates the user's values and asks to book nothing ("To recap:
        Monday afternoon in Market Square. Sound good?"), the user's word on them; else which
        place is meant."""
        if self._accepted is not None:
            return f"Yes, please go ahead and book {self._accepted.name}."
        if r.values and not _BOOKING.search(_without_values(r, message)):
            return self._confirmation(replace(r, asked=tuple(dict.fromkeys(s for s, _ in r.values))), message)
        return WHICH_PLACE

    # -------------------------------------------------------------- commitments
    def _judge_proposal(self, place: Place, day: str, slot: str, turn: int) -> UserTurn:
        """Judge a proposal as a booking would be judged, at the time `_proposal` read."""
        why = self._verdict(place, day, slot)
        if why is not None:
            self._accepted = None
            said = f"Hmm, {place.name} won't work for me. {why}"
            # A place that breaks only needs that arrived in this very reply costs nothing.
            return self._cost(said, turn, commit=True) if self._knowable_miss(place, day, slot, turn) else UserTurn(said)
        self._accepted = place
        arrived = self._arrivals(turn, commit=True)
        if arrived:
            return UserTurn(f"{place.name} sounds good. {self._announce(arrived)}")
        return UserTurn(f"{place.name} sounds great. Please book it.")

    def _truth(self, proposing: bool = False, message: str = "") -> UserTurn:
        """The answer to "does X still work?" once the agent has said anything: the truth, at no
        cost; a booking that works ends the dialog. Where the message proposes another place
        (`proposing`), a "no" asks for no other one: that proposal is judged beside it; where
        `message` says X no longer works, a "no" agrees without giving the reason again."""
        assert self._checking is not None
        place, booking_id = self._checking
        self._checking = None
        b = self._world.bookings.get(booking_id) if booking_id is not None else None
        day, slot = (b.day, b.slot) if b is not None else (self._gold.day, self._gold.slot)
        why = self._verdict(place, day, slot)
        if why is None:
            if b is None:
                self._accepted = place
                return UserTurn(f"Good, then {place.name} still works. Please book it.")
            return self._settle(b, f"Good, then {place.name} still works.")
        told = any(gone for *_, gone in aside_mentions(message, [place])) if message else False
        if b is None:
            self._accepted = None
            ask = "" if proposing else " Could you find another one?"
        else:
            self._to_change.add(b.id)
            ask = " Please cancel that booking." if proposing else " Please cancel that booking and book one that fits."
        # Told already that it no longer works (`told`), the user agrees: the reason was the agent's to give.
        head = f"Right, {place.name} won't work now." if proposing or told else f"Then I'm afraid {place.name} won't work now."
        return UserTurn(f"{head}{ask}" if told else f"{head} {why}{ask}")

    def _settle(self, b: Booking, said: str) -> UserTurn:
        """A booking the user approves: accepted when it is the only active one, else it waits
        for the others to be cancelled."""
        others = [o for o in self._world.active_bookings() if o.id != b.id]
        if not others:
            return UserTurn(f"{said} {self._pick(ACCEPT)}", end="accepted")
        self._approved = b.id
        names = ", ".join(self._world.by_id[o.item_id].name for o in others)
        return UserTurn(f"{said} Please cancel the other booking ({names}).")

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        booked = [e.data["booking_id"] for e in events if e.kind == "booked"]
        for e in events:
            if e.kind == "cancelled":
                self._cancelled(e.data["booking_id"])
        if not booked:
            return self._after_cancel()
        # A booking is a commitment: whatever the user came back about is being replaced, and
        # every late need still pending arrives now.
        if self._checking is not None and self._checking[1] is not None:
            self._to_change.add(self._checking[1])
        self._checking = self._accepted = None
        if self._shift is not None:
            # The user changes their mind on seeing the booking; not the assistant's fault.
            text = self._fire_shift(turn)
            self._to_change.update(booked)
            arrived = self._arrivals(turn, commit=True)
            return UserTurn(" ".join([text, "Please change the booking.", *([also_need(arrived, 0)] if arrived else [])]))
        fresh = [b for b in self._world.active_bookings() if b.id in booked]
        if len(fresh) > 1:
            self._to_change.update(booked)
            return self._cost(f"You've made {len(fresh)} bookings, but I only need one. "
                              "Please cancel the extra ones.", turn, commit=True)
        if not fresh:
            return None
        b = fresh[0]
        place = self._world.by_id[b.item_id]
        why = self._verdict(place, b.day, b.slot)
        if why is not None:
            self._to_change.add(b.id)
            return self._cost(f"That won't work for me. {why} Please cancel it.", turn, commit=True)
        arrived = self._arrivals(turn, commit=True)
        if arrived:
            return UserTurn(f"Thanks! {self._announce(arrived)}")
        return self._settle(b, f"{place.name} it is.")

    def _cancelled(self, booking_id: str) -> None:
        self._to_change.discard(booking_id)
        if self._checking is not None and self._checking[1] == booking_id:
            self._checking = None
        if self._approved == booking_id:
            self._approved = None

    def _after_cancel(self) -> UserTurn:
        """The reply to cancellations alone: accepted when what is left is the one booking the
        user approved, else a word that it saw them (and the place it agreed to, if it has one)."""
        active = self._world.active_bookings()
        if len(active) == 1 and active[0].id == self._approved:
            return UserTurn(self._pick(ACCEPT), end="accepted")
        if active:
            return UserTurn(CANCELLED)
        if self._accepted is not None:
            return UserTurn(CANCELLED_BOOK.format(name=self._accepted.name))
        return UserTurn(CANCELLED_NONE)

    def _cost(self, text: str, turn: int, commit: bool = False) -> UserTurn:
        """A miss that costs patience: `text`, the warning with one miss left, the late needs
        that arrive at a first commitment; out of patience, the user gives up."""
        self._costs += 1
        if self._costs >= self._gold.patience:
            return UserTurn(f"{text} {GIVE_UP}", end="gave_up")
        parts = [text]
        if self._gold.patience - self._costs == 1:
            parts.append(WARNING)
        arrived = self._arrivals(turn, commit=commit)
        if arrived:
            parts.append(self._announce(arrived))
        return UserTurn(" ".join(parts))

    # -------------------------------------------------------------- metrics
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
