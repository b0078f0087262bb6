"""The parts every tool-use domain shares: draws, worlds, effects, gold plans, the toolkit base.

A domain's world keeps the agent's writes as `WorldRecord`s; the task's required `Effect`s are
predicates over those records, and the scorer (`evaluate`) matches records to effects. A write
that breaks a domain policy is blocked, recorded in `World.violations` and reported to the agent
as a `PolicyViolation` (code POLICY_VIOLATION) whose text starts with ``policy violation``.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from agentgym.core.action_types import HOW_TO_CALL, MAX_CALLS_PER_TURN
from agentgym.core.task import WorldEvent
from agentgym.core.tools import READ, PolicyViolation, ToolError, Toolkit, tool
from agentgym.envs.tooluse.policies import consent_who, policy_rows
from agentgym.envs.tooluse.read_backs import read_backs

__all__ = [
    "DAY_ISO",
    "ISO_DAY",
    "Draws",
    "WorldRecord",
    "Effect",
    "Step",
    "Detail",
    "Goal",
    "Gold",
    "World",
    "ToolUseToolkit",
    "evaluate",
    "assign",
    "unwanted",
    "stamp",
    "cents",
    "money",
    "hhmm",
    "parse_day",
    "POLICY_PREFIX",
    "CONSENT",
    "compose_brief",
    "restated",
    "turn_budget",
    "DAY_WEEKDAY",
]

#: Every calendar day of the simulated year, ISO formatted; worlds keep day numbers (0 = Jan 1).
YEAR = 2025
DAY_ISO: tuple[str, ...] = tuple(
    (_dt.date(YEAR, 1, 1) + _dt.timedelta(days=i)).isoformat() for i in range(365)
)
ISO_DAY: dict[str, int] = {iso: i for i, iso in enumerate(DAY_ISO)}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: Weekday name of each day number.
DAY_WEEKDAY: tuple[str, ...] = tuple(WEEKDAYS[(_dt.date(YEAR, 1, 1).weekday() + i) % 7] for i in range(365))

#: The id of the hard tier's consent-before-writes policy (``data/policies.json``).
CONSENT = "consent"
#: How every policy-violation error text starts (the heuristic and the tests look for it).
POLICY_PREFIX = "policy violation"

_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


class Draws:
    """The draws task generation makes, from one derived generator.

    Any generator with a scalar ``random()`` works; the tasks use `agentgym.core.seeding.fast_stream`
    (a Mersenne Twister in C, one call per scalar draw, where a numpy generator's call costs more
    than the draw).
    """

    __slots__ = ("random",)

    def __init__(self, rng: Any) -> None:
        #: A float in [0, 1).
        self.random = rng.random

    # int(u * n) < n for every float u < 1 and int n < 2**53 (round-to-nearest never reaches n),
    # so no clamp is needed.
    def below(self, n: int) -> int:
        """An int in [0, n)."""
        return int(self.random() * n)

    def between(self, lo: int, hi: int) -> int:
        """An int in [lo, hi], both included."""
        return lo + int(self.random() * (hi - lo + 1))

    def chance(self, p: float) -> bool:
        """True with probability `p`."""
        return self.random() < p

    def pick(self, seq: Sequence[Any]) -> Any:
        """One element of `seq`."""
        return seq[int(self.random() * len(seq))]

    def sample(self, seq: Sequence[Any], k: int) -> list[Any]:
        """`k` distinct elements of `seq`, in draw order (partial Fisher-Yates)."""
        pool = list(seq)
        n, rnd = len(pool), self.random
        for i in range(k):
            j = i + int(rnd() * (n - i))
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]


@dataclass(slots=True)
class WorldRecord:
    """One effect a write tool made on the world (a transfer, a booking, a refund ...)."""

    kind: str
    data: dict[str, Any]
    active: bool = True


@dataclass(slots=True)
class Effect:
    """A required effect: some active record of `kind`, assigned to `slot`, has these `fields`.

    Several effects may share a slot (one record checked on several fields, e.g. an incident's
    root cause and its severity); each slot takes at most one record.
    """

    id: str
    slot: str
    kind: str
    fields: dict[str, Any]
    text: str

    def holds(self, record: WorldRecord) -> bool:
        data = record.data
        return record.kind == self.kind and all(data.get(k) == v for k, v in self.fields.items())

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "slot": self.slot, "kind": self.kind, "text": self.text,
                "fields": {k: list(v) if isinstance(v, tuple) else v for k, v in self.fields.items()}}


#: Gold-plan arguments that are prose (an incident's summary): any text is the step's, so the
#: plan lists them as ``{"any": true}`` (`agentgym.core.gold`), never as the solver's wording.
FREE_TEXT_ARGUMENTS = frozenset({"summary"})
#: Gold-plan arguments that search by a full or partial name (`find_employee`, `find_person`): a
#: query of some of the name's words is the step's, so the plan lists ``{"words_of": name}``.
NAME_QUERY_ARGUMENTS = frozenset({"query"})
#: Gold-plan arguments that are lists whose order means nothing (the amounts added up, the
#: expenses of a report, the people of a meeting): the plan lists ``{"any_order": [...]}``.
UNORDERED_ARGUMENTS = frozenset({"amounts", "expense_ids", "person_ids", "attendee_ids"})
_SPECIFIED = FREE_TEXT_ARGUMENTS | NAME_QUERY_ARGUMENTS | UNORDERED_ARGUMENTS
#: Per gold kind, the reads a policy names as the source of a value the plan rests on, beyond
#: the plan's own (the gold's ``useful_calls``: useful when made, never required), from the
#: plan. A domain module registers its kind's; a plan is all they need, so a gold rebuilt from
#: another (its pages read, a goal shift's) keeps them.
POINTED_READS: dict[str, Callable[[tuple["Step", ...]], list[dict[str, Any]]]] = {}
#: Per gold kind, the reads that do a plan step's work another way (every attendee's calendar on
#: the date, for the common free starts): the gold lists them on the step (``or_reads``), and a
#: step is done when each of them went through, as when the step's own call did (recall).
READ_ROUTES: dict[str, Callable[["Step"], list[dict[str, Any]]]] = {}


@dataclass(slots=True)
class Step:
    """One call of the gold plan; `produces` names the ids its result is expected to carry.

    An `optional` step is a read the reference solver makes that the work does not rest on (a
    page of a list between the first and the one that settles it, holding nothing the plan
    names): the gold lists it among the useful reads, not the calls every agent must make."""

    name: str
    arguments: dict[str, Any]
    produces: dict[str, str] = field(default_factory=dict)
    optional: bool = False

    def to_dict(self) -> dict[str, Any]:
        arguments = self.arguments
        if _SPECIFIED.isdisjoint(arguments):  # most steps: a copy, in C
            return {"name": self.name, "arguments": dict(arguments)}
        args = {k: ({"any": True} if k in FREE_TEXT_ARGUMENTS else {"words_of": v} if k in NAME_QUERY_ARGUMENTS
                    else {"any_order": list(v)} if k in UNORDERED_ARGUMENTS and isinstance(v, list) else v)
                for k, v in arguments.items()}
        return {"name": self.name, "arguments": args}


@dataclass(slots=True)
class Detail:
    """A detail of the request the user knows: `slot` names its lexicon entry."""

    id: str
    slot: str
    statement: str
    reveal: str  # "upfront" (in the opening) or "ask" (only when asked)


@dataclass(slots=True)
class Goal:
    """What the user wants, as they say it: the request and the details behind it.

    `blurred` maps an upfront detail to the request worded without it (for ambiguity noise: the
    user then gives the detail only when asked).
    """

    kind: str
    request: str
    details: tuple[Detail, ...]
    blurred: dict[str, str] = field(default_factory=dict)
    #: The structured job the request describes (the domain's own record of it), which a goal
    #: shift changes one parameter of.
    job: Any = None


@dataclass(slots=True)
class Gold:
    """The reference solver's plan (the exact calls, in order) and the effects it achieves."""

    kind: str
    plan: tuple[Step, ...]
    effects: tuple[Effect, ...]
    traps: tuple[str, ...] = ()
    #: Calls of plans the user abandoned by shifting the goal (for tool-accuracy metrics).
    superseded: tuple[dict[str, Any], ...] = ()
    #: Reads a careful agent makes beyond the plan that the task, not the plan, points to (the
    #: calendar tier's organiser, whose days off only `find_person` shows): useful when made,
    #: never required, as the kind's `POINTED_READS` are.
    useful: tuple[dict[str, Any], ...] = ()

    def with_plan(self, plan: tuple[Step, ...], useful: tuple[dict[str, Any], ...] | None = None) -> Gold:
        """This gold with `plan` (and `useful`, where given) in place of its own: what
        ``dataclasses.replace`` makes, built directly (reset makes one or more per task)."""
        return Gold(self.kind, plan, self.effects, self.traps, self.superseded,
                    self.useful if useful is None else useful)

    def with_traps(self, traps: tuple[str, ...]) -> Gold:
        """This gold with `traps` in place of its own (``dataclasses.replace``, built directly)."""
        return Gold(self.kind, self.plan, self.effects, traps, self.superseded, self.useful)

    def plan_calls(self) -> list[dict[str, Any]]:
        """The plan's calls as `to_dict` lists them (``"calls"``). An id that one of the plan's
        steps produces and a later one passes on (a refund's approval) is any id of its kind the
        plan produces, where it produces several: which approval comes back first follows the
        order the agent asks in, and the tool itself refuses an approval given for another item."""
        plan = self.plan
        if any(s.optional for s in plan):  # the hard tier's pages a careful agent may skip
            plan = tuple(s for s in plan if not s.optional)
        calls = [s.to_dict() for s in plan]
        route = READ_ROUTES.get(self.kind)
        if route is not None:
            for call, step in zip(calls, plan):
                reads = route(step)
                if reads:
                    call["or_reads"] = reads
        made = [value for step in plan for value in step.produces.values()]
        if len(made) < 2:  # most plans: no id of a kind produced twice
            return calls
        produced: dict[str, list[str]] = {}
        for value in made:
            produced.setdefault(value.rpartition("-")[0], []).append(value)
        several = {v: ids for ids in produced.values() if len(ids) > 1 for v in ids}
        if several:
            for call, step in zip(calls, plan):
                for key, value in step.arguments.items():
                    if isinstance(value, str) and value in several:
                        call["arguments"][key] = {"any_of": several[value]}
        return calls

    def to_dict(self) -> dict[str, Any]:
        plan = self.plan_calls()
        out = {"kind": self.kind, "plan": plan, "calls": plan,
               "effects": [e.to_dict() for e in self.effects], "traps": list(self.traps),
               "superseded_calls": list(self.superseded)}
        pointed = POINTED_READS.get(self.kind)
        useful = [*(pointed(self.plan) if pointed is not None else ()), *self.useful,
                  *(s.to_dict() for s in self.plan if s.optional), *read_backs(self.plan)]
        if useful:
            out["useful_calls"] = useful
        return out


class World:
    """The mutable part every domain world has: the agent's records, violations and events.

    Ids of new records are ``<PREFIX>-<n>`` with a per-world random base, so the solver can
    predict them (`predict_id`) and an agent cannot guess them. Worlds (this class and the
    domains') have slots: one lives per live env, so their size is the env's memory.
    """

    __slots__ = ("records", "violations", "events", "consent", "press", "_id_base", "_id_counts")

    def __init__(self, id_base: int) -> None:
        self.records: list[WorldRecord] = []
        self.violations: list[str] = []
        self.events: list[WorldEvent] = []
        #: The plans the customer said yes to (`agentgym.envs.tooluse.consent.Consent`), in the
        #: hard tier, whose writes need one; None elsewhere.
        self.consent: Any = None
        #: A customer who presses for what a policy forbids (`agentgym.envs.tooluse.consent.Press`),
        #: drawn in the hard tier; None elsewhere.
        self.press: Any = None
        self._id_base = id_base
        self._id_counts: dict[str, int] = {}

    def new_id(self, prefix: str) -> str:
        n = self._id_counts.get(prefix, 0)
        self._id_counts[prefix] = n + 1
        return f"{prefix}-{self._id_base + n}"

    def predict_id(self, prefix: str, k: int = 0) -> str:
        """The id of the `k`-th new record of `prefix` made from the initial world."""
        return f"{prefix}-{self._id_base + k}"

    def issued(self, prefix: str) -> int:
        """How many ids of `prefix` the world has given out."""
        return self._id_counts.get(prefix, 0)

    def owned(self, detail_id: str) -> frozenset[str]:
        """What the user already has of a detail's subject (lower case: an item's current colour),
        which a message names to say what it is, never to propose it; nothing by default."""
        return frozenset()

    def choices(self, detail_id: str) -> tuple[str, ...]:
        """The values a detail's subject may take (an item's variants), which a plan may name
        for it; none by default."""
        return ()

    def add(self, kind: str, data: dict[str, Any]) -> WorldRecord:
        record = WorldRecord(kind, data)
        self.records.append(record)
        self.events.append(WorldEvent(kind, data))
        return record


class ToolUseToolkit(Toolkit):
    """Base of the domain toolkits: `list_policies`, events and policy bookkeeping.

    A subclass sets `domain`, the key of its policies in ``data/policies.json``.
    """

    domain: str = ""

    def __init__(self, world: Any) -> None:
        self.world = world

    @tool(kind=READ)
    def list_policies(self) -> dict[str, Any]:
        """The domain's policies: what a write must respect, by policy id."""
        return {"policies": policy_rows(self.domain)}

    def invoke(self, name: str, arguments: dict) -> object:
        """Call a tool (see `Toolkit.invoke`); in the hard tier a write that no plan the customer
        said yes to describes is refused as a violation of the consent policy, before it runs."""
        consent = self.world.consent
        if consent is not None:
            want = consent.rules.want(self.world, name, arguments)
            if want is not None and not consent.covers(want):
                # Whose yes, as the domain's brief words the rule (a customer, an on-call engineer).
                raise self.violation(CONSENT, f"{consent_who(self.domain)} has not said yes to a plan that "
                                              f"describes this {name} call (its target, outcome and values)")
        return super().invoke(name, arguments)

    def drain_events(self) -> list[WorldEvent]:
        events = self.world.events
        if not events:
            return events
        self.world.events = []
        return events

    def violation(self, policy: str, message: str) -> PolicyViolation:
        """Record a broken policy in the world and return the error to raise (nothing is done)."""
        self.world.violations.append(policy)
        return PolicyViolation(policy, f"{POLICY_PREFIX} ({policy}): {message}. Nothing was done.")


def assign(effects: Sequence[Effect],
           records: Sequence[WorldRecord]) -> tuple[dict[str, WorldRecord], list[WorldRecord]]:
    """Match the active records to the effects' slots: (the record each slot takes, the records
    no slot takes).

    Each slot, in order, takes the unused record of its kind that meets most of the slot's
    effects (the earliest on ties, and only one that meets at least one). A record no slot takes
    is an extra effect the user did not ask for (a second transfer, a refund of the wrong item).
    """
    active = [r for r in records if r.active]
    used: set[int] = set()
    taken: dict[str, WorldRecord] = {}
    slots: dict[str, list[Effect]] = {}
    for e in effects:
        slots.setdefault(e.slot, []).append(e)
    for slot, group in slots.items():
        best, best_n = -1, 0
        for i, r in enumerate(active):
            if i in used or r.kind != group[0].kind:
                continue
            n = sum(1 for e in group if e.holds(r))
            if n > best_n:
                best, best_n = i, n
        if best >= 0:
            used.add(best)
            taken[slot] = active[best]
    return taken, [r for i, r in enumerate(active) if i not in used]


def renumbered(plan: tuple[Step, ...], world: World, stale: Sequence[WorldRecord]) -> tuple[Step, ...]:
    """A plan solved on the initial world, with the ids its writes will produce as `world` gives
    them out now: a goal shift's plan, met after some writes. Its writes of a kind every earlier
    record of which is undone or unwanted (`stale`) make new records, numbered after those
    (`issued`); where a record of the kind still stands, the plan may mean it, and its ids stay."""
    standing = [r for r in world.records if r.active and not any(r is s for s in stale)]
    moved: dict[str, str] = {}
    for step in plan:
        for key, predicted in step.produces.items():
            prefix, _, number = predicted.rpartition("-")
            issued = world.issued(prefix)
            if issued and number.isdigit() and not any(
                    str(r.data.get(key, "")).startswith(f"{prefix}-") for r in standing):
                moved[predicted] = f"{prefix}-{int(number) + issued}"
    if not moved:
        return plan
    return tuple(Step(s.name, {k: _moved(v, moved) for k, v in s.arguments.items()},
                      {k: moved.get(v, v) for k, v in s.produces.items()}, s.optional) for s in plan)


def _moved(value: Any, moved: dict[str, str]) -> Any:
    if isinstance(value, str):
        return moved.get(value, value)
    if isinstance(value, list):
        return [_moved(v, moved) for v in value]
    return value


def unwanted(effects: Sequence[Effect], records: Sequence[WorldRecord]) -> list[WorldRecord]:
    """The active records the effects do not want as they are: those no slot takes, and those
    a slot takes that miss one of its effects (see `assign`)."""
    taken, extras = assign(effects, records)
    return [*extras, *(r for slot, r in taken.items() if not all(e.holds(r) for e in effects if e.slot == slot))]


def evaluate(effects: Sequence[Effect], records: Sequence[WorldRecord]) -> tuple[dict[str, bool], list[WorldRecord]]:
    """Judge the active records against the effects (see `assign`): (met per effect id, the
    records no slot takes, which are extra effects)."""
    taken, extras = assign(effects, records)
    met = {e.id: e.slot in taken and e.holds(taken[e.slot]) for e in effects}
    return met, extras


# ------------------------------------------------------------------ value helpers for tools


def cents(amount: float, what: str = "amount") -> int:
    """An amount in currency units (at most 2 decimals) as integer cents; ToolError otherwise."""
    scaled = amount * 100
    c = round(scaled)
    if abs(scaled - c) > 1e-6:
        raise ToolError(f"{what} {amount} has more than 2 decimals")
    return int(c)


def money(c: int) -> float:
    """Integer cents as a 2-decimal float (the form amounts take in tool results)."""
    return c / 100


def _hhmm_text(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


#: ``HH:MM`` of every minute of a day: the generators format tens of times per task (log lines,
#: slots), and a lookup is cheaper than the formatting.
_HHMM: tuple[str, ...] = tuple(_hhmm_text(m) for m in range(1440))


def hhmm(minutes: int) -> str:
    """Minutes after midnight as ``HH:MM`` (formatted the same way outside one day, e.g. ``-1:01``)."""
    if 0 <= minutes < 1440:
        return _HHMM[minutes]
    return _hhmm_text(minutes)


#: Minutes in a day: instants in the worlds are minutes since Jan 1, 00:00 UTC.
DAY_MINUTES = 1440


def stamp(minute: int) -> str:
    """An instant (minutes since Jan 1 of the simulated year, 00:00 UTC) as ``YYYY-MM-DD HH:MM``."""
    # An int's remainder by DAY_MINUTES lies in [0, 1440): `hhmm` of it is its `_HHMM` entry.
    return f"{DAY_ISO[minute // DAY_MINUTES]} {_HHMM[minute % DAY_MINUTES]}"


def parse_day(iso: str) -> int:
    """The day number of an ISO date of the simulated year; ToolError otherwise."""
    day = ISO_DAY.get(iso)
    if day is None:
        if _DATE_RE.fullmatch(iso):
            raise ToolError(f"no records for date {iso} (the books cover {YEAR} only)")
        raise ToolError(f"date must be YYYY-MM-DD, got {iso!r}")
    return day


_HOWTO = (
    HOW_TO_CALL + " A call that comes back as an error changed nothing; now and then a read answers wrongly "
    "(a busy system), so check again a value that a write rests on. Writes cannot be undone unless a tool says so, and a write that breaks "
    "a policy is refused and fails the task."
)


def compose_brief(role: str, job: str, facts: Sequence[str], policies: str) -> str:
    """The system brief: who the assistant is, its job, the domain's facts and its policies."""
    lines = [f"You are {role}. {job}", *facts, "Policies:", policies, _HOWTO]
    return "\n".join(lines)


def turn_budget(turns: int) -> str:
    """The line of a hard-tier brief that states its turn budget (each tier's, `restated`'s
    `fact`; `agentgym.envs.tooluse.tasks.tier_turns` gives the tier's turns, a test keeps them equal)."""
    return f"You have {turns} turns for this request: one reply, with up to {MAX_CALLS_PER_TURN} tool calls in it, " \
           "is one turn."


def restated(brief: str, policies: str, instead: str, fact: str = "") -> str:
    """``compose_brief(role, job, facts, instead)`` for the `brief` that ``compose_brief(role,
    job, facts, policies)`` made (with `fact` last among the facts, where given): its policies
    are the lines before the closing paragraph, which are cut off and put back after `instead`
    (no search for them in the brief)."""
    end = len(brief) - len(_HOWTO) - 1  # where the policies end: a newline, then the closing paragraph
    start = end - len(policies)
    head = start - len(_POLICIES)  # where the facts end
    if not (brief.startswith(policies, start) and brief.startswith(_POLICIES, head) and brief.endswith(_HOWTO)):
        raise ValueError("the brief was not composed with these policies")
    if fact:
        return f"{brief[:head]}\n{fact}{_POLICIES}{instead}{brief[end:]}"
    return f"{brief[:start]}{instead}{brief[end:]}"


#: What stands before a brief's policies.
_POLICIES = "\nPolicies:\n"
