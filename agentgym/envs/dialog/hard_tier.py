"""Dialog's hard tier: needs that no place meets all at once, and a user with priorities.

An explicit ``difficulty="hard"`` draws this tier; a drawn difficulty (None, what `core-v0` and
default training use) keeps the three levels of `agentgym.envs.dialog.tasks` exactly, and a
CrossTask session's dialog sub-task passes ``tier=False`` to keep them too.

The goal is drawn around a target place as the other levels draw theirs, four of its attributes
and a time it is open (the needs the user keeps, `kept`; a budget among them up to
`_PRICE_SLACK` steps above the target's price, drawn from a stream of its own, so it equals no
one place's price by rule), plus one need the target lacks (an amenity, a lower budget or a
higher rating: the `flexible` one). No place meets every need at the
wanted time, so the agent must find that out, say so, and ask which need may give way; the user
(`agentgym.envs.dialog.hard_user`) names the flexible one, and only then does the goal drop it.
The gold is then the places that meet every kept need (one to `MAX_GOLD`, the target among
them), computed by the reference solver (`satisfying_places`). A draw is kept only when another
need could also give way (some place meets all the others), so a compromise the agent picks on
its own may well be the wrong one, and when no never-ask agent could reach the kept needs' gold
(`guessable`). A booking of a compromise the user did not agree to breaks a need the goal still
holds: it never succeeds.

Two needs come late. The first (one of the kept ones) arrives as the other levels' late needs
do, and at the latest when the agent says that nothing fits or asks which need can give way
(`hard_user`). The second (`after_booking`, an amenity) comes to the user only once a place it
would otherwise accept is booked, never before (`_remembered`): no place of the first gold has it, so it always rules
out the booking made, and no place meets it with every kept need either. The user then gives
up a second need (`flexible_after`, drawn among the kept ones: the goal's places meeting all the
rest and the remembered one are one to `MAX_GOLD`), so the agent must cancel the booking, find
that nothing fits, ask again, and book from the last gold. Giving up the remembered need instead
would bring back the booked place: the wrong compromise, which the user refuses.

The brief also says which day today is (`TODAY_RULE`, drawn from a stream of its own), and the
user names the wanted day by how many days it is from today (`hard_user`).
"""

from __future__ import annotations

import math
from functools import reduce
from operator import and_
from typing import Any

from agentgym.core.seeding import Rng, stream_bits
from agentgym.core.task import Task
from agentgym.envs.dialog import tasks
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain
from agentgym.envs.dialog.fairness import DECOY_MARGIN, Board, Codes, room_above
from agentgym.envs.dialog.itinerary import PlanGold
from agentgym.envs.dialog.itinerary_draw import PLAN_TURNS, draw_plan, plan_brief
from agentgym.envs.dialog.itinerary_twists import draw_state
from agentgym.envs.dialog.tasks import (
    DIFFICULTY,
    MAX_GOAL_DRAWS,
    MAX_GOLD,
    RATING_RANGE,
    Constraint,
    Gold,
    World,
    candidates,
    guessable,
)

__all__ = ["generate_task", "tier_of", "flexible_of", "after_booking_of", "HARD_RULE", "TODAY_RULE", "NEEDS"]

#: Every (day, slot) bit of a week.
#: Attributes of the target the user keeps (the time besides): with the flexible need, the
#: hard level's five.
_KEPT = 4
#: An attribute of a drawn goal: (constraint id, kind, value).
_Attr = tuple[str, str, Any]
#: How many price steps above the target's price a budget the user keeps may lie.
_PRICE_SLACK = 2
#: What the brief adds about the wanted day ({today}: the day of the week today is).
TODAY_RULE = (
    "- They name the day they want by how many days it is from today (\"tomorrow\", \"the day after "
    "tomorrow\", \"three days from today\"). Today is {today}.\n"
)
#: The keys of `Task.extra` naming the tier's needs with a part to play: the one given up first,
#: the one remembered after a booking, and the one given up once that has come.
NEEDS = ("flexible", "after_booking", "flexible_after")
#: What the brief adds on the hard tier: how a user with priorities behaves.
HARD_RULE = (
    "- They may want more than any one place offers. If no place meets all of their needs, tell them so and "
    "ask which need can give way; they will say which matters least. Book a place that breaks a need only once "
    "they have agreed to give it up.\n"
    "- Here two needs come to them later: the first at the latest when you propose or book a place, tell them "
    "that nothing fits or ask which need can give way; the second only once you have booked a place that meets "
    "every other need they have. Then check the booking against it; if it no longer fits, cancel it and book one "
    "that meets everything, and if no place does, ask again which need can give way.\n"
)


def tier_of(options: dict[str, Any]) -> bool:
    """Whether `options` ask for the hard tier: an explicit hard difficulty, `tier` not False."""
    return options.get("difficulty") == "hard" and options.get("tier", True) is not False


def flexible_of(task: Task) -> str | None:
    """The id of the need the user of `task` would give up now (None off the tier, or once
    given up until the need remembered after a booking brings the next one)."""
    flexible = task.extra.get("flexible")
    return flexible if flexible != task.extra.get("relaxed") else None


def after_booking_of(task: Task) -> str | None:
    """The id of the need the user of `task` remembers only after a booking, until it does
    (None off the tier, or once remembered)."""
    return None if task.extra.get("remembered") else task.extra.get("after_booking")


def generate_task(seed: int, options: dict[str, Any]) -> Task:
    """The dialog task of `seed`: the hard tier's when `options` ask for it (`tier_of`), else
    exactly `agentgym.envs.dialog.tasks.generate_task`'s."""
    if not tier_of(options):
        return tasks.generate_task(seed, options)
    # Streams of their own: the kind of task and which day today is never move the world.
    today = DAYS[stream_bits(seed, "task/today") % len(DAYS)]
    if stream_bits(seed, "task/kind") % 3:
        task = _itinerary(seed, options, today)
        if task is not None:
            return task
    drawn: dict[str, str] = {}

    # A stream of its own: how far a budget lies above the target's price never moves the
    # other draws.
    slack = stream_bits(seed, "task/budget") % (_PRICE_SLACK + 1)

    def make_goal(world: World, rng: Rng, codes: Codes) -> Gold:
        gold, needs = _tier_goal(world, rng, slack, codes)
        drawn.update(needs)
        return gold

    task = tasks.generate_task(seed, options, make_goal=make_goal)
    task.extra["tier"] = "hard"
    task.extra.update(drawn)
    task.extra["today"] = today
    task.brief = _brief(task.world.domain, today)
    return task


def _itinerary(seed: int, options: dict[str, Any], today: str) -> Task | None:
    """The itinerary of `seed` (`agentgym.envs.dialog.itinerary`), today being `today`; None
    when its world carries none."""
    plan: list[PlanGold] = []

    def make_goal(world: World, rng: Rng, codes: Codes) -> Any:
        gold = draw_plan(world, rng, today, codes)
        if gold is not None:
            plan.append(gold)
        return gold

    task = tasks.generate_task(seed, options, make_goal=make_goal)
    if not plan:
        return None
    dom = task.world.domain
    task.extra.update(tier="hard", kind="itinerary", today=today, plan=draw_state(task.world, plan[0], seed))
    task.max_turns = PLAN_TURNS
    vocabulary = tasks.brief_for(dom)
    task.brief = plan_brief(dom, plan[0], today, vocabulary[vocabulary.index(f"Known {dom.category_label}s:"):],
                            PLAN_TURNS)
    return task


def _brief(domain: Domain, today: str) -> str:
    """The hard tier's brief: the domain's, with the rules about needs that conflict and the day
    the user names from `today`."""
    brief = tasks.brief_for(domain)
    cut = brief.index(f"Known {domain.category_label}s:")
    return brief[:cut] + HARD_RULE + TODAY_RULE.format(today=today.capitalize()) + brief[cut:]


def _tier_goal(world: World, rng: Rng, slack: int, codes: Codes) -> tuple[Gold, dict[str, str]]:
    """A goal of the tier and the ids of its needs with a part to play (`NEEDS`), a budget
    `slack` price steps above the target's price; should no draw of `MAX_GOAL_DRAWS` carry
    one, the hard level's own goal, with none. `codes`: the world's places' codes."""
    board = Board(world.places, codes)
    for _ in range(MAX_GOAL_DRAWS):
        got = _draw(world, board, rng, slack)
        if got is not None:
            return got
    return tasks._make_goal(world, "hard", rng, lambda places: board), {}


def _draw(world: World, board: Board, rng: Rng, slack: int) -> tuple[Gold, dict[str, str]] | None:
    """One draw around a random target; None when it cannot carry a goal of the tier.

    Sets of places are the board's (`agentgym.envs.dialog.fairness.Board`, rating order):
    integers whose bits are places, so each test below is a few `&` of them."""
    spec = DIFFICULTY["hard"]
    rnd = rng.random
    places, dom = world.places, world.domain
    drawn = tasks.draw_target(places, rnd)
    if drawn is None:
        return None
    j, bit = drawn
    target = places[j]
    if not room_above(board, j, bit, spec["patience"] + DECOY_MARGIN):
        return None  # the target is gold: this high in an order, no never-ask agent misses it
    rating = math.floor(target.rating * 2) / 2
    kinds: list[_Attr] = [("category", "category", target.category), ("area", "area", target.area)]
    if target.price < dom.price_max:
        # Up to `slack` steps above the target's price, never the top of the scale: a budget
        # that always equals one place's price would point at it.
        room = int((dom.price_max - dom.price_step - target.price) // dom.price_step)
        kinds.append(("price", "price", int(target.price + min(slack, max(room, 0)) * dom.price_step)))
    if target.rating >= 3.5:
        kinds.append(("rating", "rating", rating))
    kinds += [(f"amenity:{a}", "amenity", a) for a in target.amenities[:2]]
    if len(kinds) < _KEPT:
        return None
    kept = [kinds[i] for i in rng.permutation(len(kinds))[:_KEPT]]
    # The flexible need: one the target lacks, of a kind the kept needs leave free.
    taken = {kind for _, kind, _ in kept}
    options: list[_Attr] = [(f"amenity:{a}", "amenity", a) for a in dom.amenities if a not in target.amenities]
    if "price" not in taken and target.price - dom.price_step >= dom.price_min:
        options.append(("price", "price", int(target.price - dom.price_step)))
    if "rating" not in taken and rating + 0.5 <= RATING_RANGE[1]:
        options.append(("rating", "rating", rating + 0.5))
    flexible = options[int(rnd() * len(options))]
    late = int(rnd() * _KEPT)
    time_up = rnd() < 0.7
    opens = board.open_at(bit)[0]
    meets = [board.meets(kind, value)[0] for _, kind, value in kept]
    gold = reduce(and_, meets, opens)
    give = board.meets(flexible[1], flexible[2])[0]
    if not 1 <= gold.bit_count() <= MAX_GOLD or gold & give:
        return None
    # The places open then meeting every kept need but the i-th: one set per kept need.
    without = [reduce(and_, meets[:i] + meets[i + 1:], opens) for i in range(_KEPT)]
    # Another need could give way too: a compromise the agent picks on its own may be wrong.
    if not any(rest & give for rest in without):
        return None
    remembered = _remembered(board, dom.amenities, kept, flexible, without, gold, rnd)
    if remembered is None:
        return None
    after, second = remembered
    held: list[_Attr] = [a for i, a in enumerate(kept) if i != late]
    held.insert(int(rnd() * (len(held) + 1)), flexible)
    day, slot = DAYS[bit // 3], SLOTS[bit % 3]
    time = Constraint("time", "time", (day, slot), "upfront" if time_up else "ask")
    constraints = (time, *(Constraint(cid, kind, value, "ask") for cid, kind, value in held),
                   Constraint(*kept[late], "late"), Constraint(*after, "late"))
    # The goal the user first settles on (the flexible need given up, the remembered one not yet
    # had) is out of a never-ask agent's reach; the last one needs a booking of it first.
    first = tuple(c for c in constraints if c.id not in (flexible[0], after[0]))
    if guessable(world, first, day, slot, spec["patience"], board=board):
        return None
    lo, hi = spec["late_turns"]
    # The remembered need is never due by a turn: it arrives at a booking (`hard_user`).
    late_turns = (lo + int(rnd() * (hi - lo + 1)), spec["max_turns"] + 1)
    # The details an agent reads to tell the user what giving way would bring: the places that
    # miss at most one of the needs it has from the start, open then or not.
    near = candidates(world, constraints, misses=1)
    return Gold(constraints, day, slot, (), late_turns, spec["patience"], candidates=near), {
        "flexible": flexible[0], "after_booking": after[0], "flexible_after": second}


def _remembered(board: Board, amenities: tuple[str, ...], kept: list[_Attr], flexible: _Attr, without: list[int],
                gold: int, rnd: Any) -> tuple[_Attr, str] | None:
    """The need the user remembers after a booking and the need it then gives up, drawn among
    the pairs that keep the tier's promise; None when there is none.

    The remembered need is an amenity that no place of the first gold has (so whichever the
    agent booked, it rules the booking out); the need then given up is one of the kept ones
    (not the time), such that once it gives way one to `MAX_GOLD` places meet the rest and the
    remembered need at the wanted time. Giving up the remembered need instead would bring back
    the booked place: the wrong compromise, which the user refuses. `without`: per kept need,
    the places open at the wanted time meeting every other kept need."""
    values = {value for _, kind, value in (*kept, flexible) if kind == "amenity"}
    pairs: list[tuple[_Attr, str]] = []
    for amenity in amenities:
        if amenity in values:
            continue
        has = board.meets("amenity", amenity)[0]
        if gold & has:
            continue
        for (cid, _, _), rest in zip(kept, without):
            if 1 <= (rest & has).bit_count() <= MAX_GOLD:
                pairs.append(((f"amenity:{amenity}", "amenity", amenity), cid))
    return pairs[int(rnd() * len(pairs))] if pairs else None
