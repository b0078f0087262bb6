"""The rule-based simulated user of the dialog family.

It states some constraints up front, reveals others when the assistant asks about them (it
recognises the slot from a lexicon of synonyms, in free text, several slots per question),
volunteers late constraints after a few turns as real users do, accepts a booking only when it
meets every constraint of its goal, says which constraint a wrong booking breaks, and gives up
after too many wrong bookings.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

from agentgym.core.task import NoiseEvent, SimulatedUser, Task, UserTurn, WorldEvent
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain, load_lexicon
from agentgym.envs.dialog.tasks import Constraint, Gold, Place, World, place_phrases, satisfying_places

__all__ = ["DialogUser", "make_user", "statement", "SLOT_ORDER"]

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
_GREETINGS = ("Hi! I'm looking for a {noun}.", "Hello, can you help me book a {noun}?", "Hey, I need to find a {noun}.")
_LATE = ("Oh, one more thing: ", "Actually, I just remembered: ", "My friend just told me something, so: ")
_ACCEPT = ("Perfect, that's exactly what I wanted. Thank you!", "Great, that works for me. Thanks a lot!",
           "Wonderful, that's booked then. Thank you!")
_GIVE_UP = "I think I'll look elsewhere. Goodbye."
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


_TOKEN = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class _Matcher:
    """Compiled look-ups of one domain: which slots a message asks about, and whether it asks."""

    slots: re.Pattern[str]
    slot_of: dict[str, tuple[str, ...]]
    question: re.Pattern[str]
    generic: re.Pattern[str]
    #: Any possible place name or id of the domain: a message without a match names no place.
    places: re.Pattern[str]


def _alternation(words: Any) -> re.Pattern[str]:
    """A regex matching any of `words` as a plain substring (as a reader skims), the longest word
    where several match at one position, so "max price" wins over "price".

    It is compiled as a character trie (``(?:a(?:rea|menit)|b(?:udget)|...)``) rather than a
    longest-first alternation of whole words, which `re` would try one by one at every position
    of the message: the trie's branches start with distinct characters, so at most one is tried
    per character, and its greedy optional groups still prefer the longest word (a terminal
    node's continuation is tried before stopping there). `findall` returns the same words.
    """
    trie: _Trie = {}
    for w in set(words):
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[_END] = {}
    return re.compile(_trie_regex(trie))


#: A character trie of words: one key per next character, `_END` marks the end of a word.
_Trie = dict[str, "_Trie"]
_END = ""


def _trie_regex(node: _Trie) -> str:
    branches = [re.escape(ch) + _trie_regex(child) for ch, child in sorted(node.items()) if ch != _END]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    return f"(?:{body})?" if _END in node else body


@lru_cache(maxsize=None)
def _matcher(domain: Domain) -> _Matcher:
    lex = load_lexicon()
    words: dict[str, list[str]] = {s: [w.lower() for w in lex.slots.get(s, ())] for s in SLOT_ORDER}
    # The shared lexicon plus this domain's own vocabulary (its category label, values, areas
    # and amenity names).
    words["category"] += [w.lower() for w in (domain.category_label, *domain.category_synonyms, *domain.categories)]
    words["area"] += [a.lower() for a in domain.areas]
    words["amenity"] += [a.lower() for a in domain.amenities]
    slot_of: dict[str, tuple[str, ...]] = {}
    for s in SLOT_ORDER:
        for w in words[s]:
            if s not in slot_of.get(w, ()):
                slot_of[w] = slot_of.get(w, ()) + (s,)
    # The longest slot word wins where words overlap: "daylight" asks about an amenity, not
    # about the day.
    return _Matcher(_alternation(slot_of), slot_of, _alternation(lex.question_cues), _alternation(lex.generic),
                    _alternation(place_phrases(domain)))


class DialogUser(SimulatedUser):
    """The simulated user of one dialog episode."""

    __slots__ = ("_task", "_rng", "_blurred", "_shift", "_shift_turn", "_shift_fire", "_world", "_gold", "_domain",
                 "_revealed", "_late", "_rejections", "_match", "_by_first")

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
        self._match = _matcher(self._domain)
        self._by_first: dict[str, list[tuple[str, Place]]] | None = None

    # -------------------------------------------------------------- helpers
    def _pick(self, options: tuple[str, ...]) -> str:
        return options[int(self._rng.integers(len(options)))]

    def _say(self, c: Constraint) -> str:
        if c.id not in self._revealed:
            self._revealed.append(c.id)
        return statement(c, self._domain, int(self._rng.integers(3)))

    def _violation(self, place: Place, day: str, slot: str) -> Constraint | None:
        # Prefer a constraint already stated, as a person repeats what they said before.
        broken = [c for c in self._gold.constraints if not c.holds(place, day, slot)]
        if not broken:
            return None
        stated = [c for c in broken if c.id in self._revealed]
        return (stated or broken)[0]

    def _volunteer(self, turn: int) -> list[str]:
        out = []
        for c, due in zip(self._late, self._gold.late_turns):
            if turn >= due and c.id not in self._revealed:
                out.append(self._pick(_LATE) + self._say(c))
        return out

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
        if "time" not in self._revealed:
            self._revealed.append("time")
        # Cancel (if something is booked) and rebook: two turns are needed to recover.
        recoverable = turn + 2 <= self._task.max_turns
        self._shift_fire(NoiseEvent(target="time", detail={"from": list((old.day, old.slot)), "to": [day, slot],
                                                           "recoverable": recoverable}, recoverable=recoverable))
        return f"Actually, can we make it {day.capitalize()} {slot} instead?"

    def reply(self, message: str, turn: int) -> UserTurn:
        text = message.lower()
        parts: list[str] = []
        if not text.strip():
            parts.append(f"Sorry, I didn't get that. Can you help me find a {self._domain.noun}?")
        else:
            mentioned = self._mentioned(text)
            if len(mentioned) == 1:
                parts.append(self._judge_proposal(mentioned[0]))
            elif len(mentioned) > 1:
                parts.append("That's a lot of options. Which one would you recommend?")
            if self._match.question.search(text) is not None:
                parts += self._answer_question(text)
            if not parts:
                parts.append(self._pick(("Okay. Please find something that fits and book it.",
                                         "Sounds good, go ahead and book something that fits.")))
        if self._shift is not None and turn >= self._shift_turn:
            parts.append(self._fire_shift(turn))
        parts += self._volunteer(turn)
        return UserTurn(" ".join(parts))

    def _mentioned(self, text: str) -> list[Place]:
        if self._match.places.search(text) is None:
            # Most messages name no place: one regex search over every possible name and id of
            # the domain shows that the lookup below would find nothing (a place is found only
            # where its full name or id is in the text), without building its index.
            return []
        if self._by_first is None:
            # Places are found in a message by their first word, then checked in full: a few
            # dict look-ups per message instead of a scan of every name. Built on first use.
            self._by_first = {}
            for p in self._world.places:
                lower = p.name.lower()
                self._by_first.setdefault(lower.split(" ", 1)[0], []).append((lower, p))
                self._by_first.setdefault(p.id, []).append((p.id, p))
        seen: list[Place] = []
        for token in _TOKEN.findall(text):
            for full, place in self._by_first.get(token, ()):
                if place not in seen and full in text:
                    seen.append(place)
        return seen

    def _judge_proposal(self, place: Place) -> str:
        g = self._gold
        broken = self._violation(place, g.day, g.slot)
        if broken is None:
            return f"{place.name} sounds great. Please book it."
        return f"Hmm, {place.name} won't work for me. {self._say(broken)}"

    def _answer_question(self, text: str) -> list[str]:
        slot_of = self._match.slot_of
        hit = {slot for word in self._match.slots.findall(text) for slot in slot_of[word]}
        asked = [s for s in SLOT_ORDER if s in hit]
        out: list[str] = []
        for s in asked:
            # Looked up in the current goal (at most six constraints) rather than kept per slot,
            # so a goal shift needs no bookkeeping here.
            of_slot = [c for c in self._gold.constraints if c.kind == s]
            known = [c for c in of_slot if c.reveal != "late"]
            if known:
                out += [self._say(c) for c in known]
            elif not any(c.id in self._revealed for c in of_slot):
                out.append(_NO_PREFERENCE[s].format(label=self._domain.category_label))
        if not asked and self._match.generic.search(text) is not None:
            hidden = [c for c in self._gold.constraints if c.reveal == "ask" and c.id not in self._revealed]
            out.append(self._say(hidden[0]) if hidden else "That's everything I can think of for now.")
        if not asked and not out:
            out.append(f"I'm not sure what you mean. I just need a {self._domain.noun} that fits what I said.")
        return out

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
        broken = self._violation(place, b.day, b.slot)
        if broken is None:
            return UserTurn(self._pick(_ACCEPT), end="accepted")
        return self._reject(f"That won't work for me. {self._say(broken)}", turn)

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
