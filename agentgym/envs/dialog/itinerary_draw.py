"""Drawing an itinerary of Dialog's hard tier (`agentgym.envs.dialog.itinerary`) and its brief.

Four or five bookings in time order, the first at a day counted from today and each later one
from an earlier booking ("the day after booking A, in the evening"), all within six days. Each
booking is built valid at its time: a category of its own that two or more open places have,
then up to one more need (an area, an amenity, a rating floor), a value that two or more of the
places left meet and not all of them, more while over `MAX_OPTIONS` places fit; so it has two to
`MAX_OPTIONS` places open at its time meeting its needs. No two bookings may be in one area. The
objective that picks the plan is drawn per task, alike: priorities (any order of the bookings:
the plan whose first-priority booking is rated highest, and so on) or the total (the plan whose
ratings add up to the most, a small knapsack over the whole plan). The combined budget is drawn
in the lower half of the totals of plans that keep the other rules, below the cheapest of the
plans the objective would pick without a budget and no lower than the least total on which two
plans that fit differ on the objective (so it always decides something): few of the hundreds of
plans fit, so finding the one the objective picks is a search over the whole plan (the
best-rated place for the first priority may leave no plan that keeps the areas apart within the
budget), not a booking-by-booking choice. A draw is kept when some plan keeps every rule."""

from __future__ import annotations

import math
from typing import Any

from agentgym.core.action_types import MAX_CALLS_PER_TURN
from agentgym.core.seeding import Rng
from agentgym.envs.dialog import _fast
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain
from agentgym.envs.dialog.fairness import OPEN, Codes
from agentgym.envs.dialog.itinerary import (
    LABELS,
    PRIORITY,
    TOTAL,
    Leg,
    PlanGold,
    best_first,
    settle,
)
from agentgym.envs.dialog.tasks import Place, World, keep

__all__ = ["draw_plan", "plan_brief", "form_lines", "rule_lines", "PLAN_TURNS", "MAX_OPTIONS"]

#: The turn budget of an itinerary: the expert's most turns without noise (20: a changed mind and
#: a moved world each add a search, a booking, a read-back and a question) times 1.5, plus four.
PLAN_TURNS = 34
#: At most this many places may fit one booking at its time (so a plan search stays small).
MAX_OPTIONS = 7
#: How many bookings an itinerary has, fewest first.
_LEGS = (4, 5)
#: The objectives a task may state, drawn alike.
_OBJECTIVES = (PRIORITY, TOTAL)
#: Draws of legs tried before the tier falls back to its other kind of task.
_DRAWS = 64
#: How a booking's day is counted: from today for the first, from an earlier booking after.
_FROM_TODAY = ("today", "tomorrow", "the day after tomorrow", "three days from today")
_AFTER = ("the same day as booking {ref}", "the day after booking {ref}", "two days after booking {ref}")
#: The needs a booking may have beside its category, and the rating floors it may state.
_NEED_KINDS = ("area", "amenity", "rating")
_FLOORS = (3.5, 4.0)


def draw_plan(world: World, rng: Rng, today: str, codes: Codes | None = None) -> PlanGold | None:
    """An itinerary over `world`, its days counted from `today`; None when no draw of `_DRAWS`
    carries one. `codes`: the world's places' `fairness.Codes`, when the caller has them."""
    for _ in range(_DRAWS):
        gold = _draw(world, rng, DAYS.index(today), codes)
        if gold is not None:
            return gold
    return None


def _draw(world: World, rng: Rng, start: int, codes: Codes | None = None) -> PlanGold | None:
    rnd = rng.random
    n = _LEGS[int(rnd() * len(_LEGS))]
    times = _times(rnd, n)
    if times is None:
        return None
    legs: list[Leg] = []
    options: list[list[Place]] = []
    used: set[str] = set()
    for i, (ahead, slot, when) in enumerate(times):
        bit = (start + ahead) % len(DAYS) * 3 + slot
        # The places open then; by their codes' kernel where the caller has them.
        open_now = [p for p in world.places if p.open >> bit & 1] if codes is None else \
            _fast.open_places(world.places, codes.cols[OPEN + (bit >> 3)], bit)
        leg = _leg(world, rnd, open_now, used)
        if leg is None:
            return None
        needs, fits = leg
        used.add(needs[0][1])
        legs.append(Leg(LABELS[i], needs, DAYS[bit // 3], SLOTS[slot], when))
        options.append(best_first(fits))
    # The walk order of the solvers; under `PRIORITY` the priorities too.
    order = tuple(int(k) for k in rng.permutation(n))
    objective = _OBJECTIVES[int(rnd() * len(_OBJECTIVES))]
    return _fit(legs, options, order, objective, rnd())


def _times(rnd: Any, n: int) -> list[tuple[int, int, str]] | None:
    """The times of `n` bookings in time order, as (day offset from today, slot index, how the
    form states it); None when one would fall past six days ahead."""
    times: list[tuple[int, int, str]] = []
    for i in range(n):
        if i == 0:
            ahead, slot = int(rnd() * len(_FROM_TODAY)), int(rnd() * 3)
            when = _FROM_TODAY[ahead]
        else:
            # From an earlier booking, at a later time than the one before: the day at least the
            # last one's (the next day after an evening), the slot among those after it.
            last_day, last_slot, _ = times[-1]
            ref = int(rnd() * i)
            floor_day = last_day + (last_slot == 2)
            ahead = max(times[ref][0] + int(rnd() * len(_AFTER)), floor_day)
            if ahead - times[ref][0] >= len(_AFTER):
                ref, ahead = i - 1, floor_day
            first = last_slot + 1 if ahead == last_day else 0
            slot = first + int(rnd() * (3 - first))
            when = _AFTER[ahead - times[ref][0]].format(ref=LABELS[ref])
        if ahead > 6:
            return None
        times.append((ahead, slot, f"{when}, in the {SLOTS[slot]}"))
    return times


def _leg(world: World, rnd: Any, open_now: list[Place], used: set[str]) -> tuple[tuple[tuple[str, Any], ...], list[Place]] | None:
    """A booking's needs over the places open at its time (`open_now`), valid by construction:
    a category no other booking has, with two or more of them open, then up to one more need
    (an area, an amenity, a rating floor), drawn among the values two or more of the places
    left meet, and more while over `MAX_OPTIONS` fit; with the places that fit. None
    when no category or no narrowing carries one."""
    by_cat: dict[str, list[Place]] = {}
    for p in open_now:
        by_cat.setdefault(p.category, []).append(p)
    cats = [c for c in world.domain.categories if c not in used and len(by_cat.get(c, ())) >= 2]
    if not cats:
        return None
    cat = cats[int(rnd() * len(cats))]
    needs: list[tuple[str, Any]] = [("category", cat)]
    fits = by_cat[cat]
    extra = int(rnd() * 2)
    while extra or len(fits) > MAX_OPTIONS:
        extra = max(extra - 1, 0)
        kinds = [k for k in _NEED_KINDS if all(k != have for have, _ in needs)]
        if not kinds:
            return None
        kind = kinds[int(rnd() * len(kinds))]
        values = _narrowing(kind, fits)
        if not values:
            if len(fits) > MAX_OPTIONS:
                return None
            continue
        value = values[int(rnd() * len(values))]
        needs.append((kind, value))
        fits = keep(fits, kind, value)
    return tuple(needs), fits


def _narrowing(kind: str, fits: list[Place]) -> list[Any]:
    """The values of need `kind` that two or more of `fits` meet and not all of them (a need
    every place meets would decide nothing), in a fixed order."""
    if kind == "rating":
        values: list[Any] = list(_FLOORS)
    elif kind == "area":
        values = sorted({p.area for p in fits})
    else:
        values = sorted({a for p in fits for a in p.amenities})
    return [v for v in values if 2 <= len(keep(fits, kind, v)) < len(fits)]


def _fit(legs: list[Leg], options: list[list[Place]], order: tuple[int, ...], objective: str,
         draw: float) -> PlanGold | None:
    """The goal of drawn `legs` (each with its `options`, best rated first) under `objective`,
    with a budget `draw` picks among those that decide something; None when the legs cannot
    carry one."""
    distinct = True  # every itinerary keeps its bookings in distinct areas
    # `best_plan` and `priced_keys` by their kernels (`agentgym.envs.dialog._fast`).
    walk = _fast.plan_walk(options, order, distinct)
    free = _fast.best_plan(walk, None, objective == TOTAL)
    if free is None:
        return None
    top = sum(p.price for p in free)
    priced = _fast.priced_keys(walk, top - 1, objective == TOTAL)  # sorted
    # The objective must decide something: from the least total on which two plans that fit
    # differ on it (below it, what fits ties, and any plan that keeps the rules is the answer).
    least = next((total for total, key in priced if key != priced[0][1]), None)
    if least is None:
        return None
    totals = sorted({total for total, _ in priced})
    # The lower half of the totals that bind: few plans fit, and the best one does not.
    budget = max(totals[int(draw * math.ceil(len(totals) / 2))], least)
    gold = settle(tuple(legs), options, order, budget, distinct, objective, walk)
    assert gold is not None  # the budget is the total of a plan that keeps the rules
    return gold


def plan_brief(domain: Domain, gold: PlanGold, today: str, vocabulary: str, max_turns: int) -> str:
    """The brief of an itinerary: the request form, the rules with their boundaries, the turn
    budget, then the domain's vocabulary and how to call tools (`vocabulary`)."""
    lines = [
        f"You are a booking assistant for {domain.plural}. The user filled in a request form for a plan of "
        f"{len(gold.legs)} bookings; book the plan the rules below pick, get their yes to it, then call submit_plan.",
        f"Today is {today.capitalize()}.",
        "The request form (bookings in time order):",
    ]
    lines += form_lines(domain, gold)
    lines.append("Rules for the whole plan:")
    lines += rule_lines(domain, gold)
    lines.append(
        "How the user behaves: everything they need is on the form; asked about the form, they restate it. "
        "Before you submit, they must hear the whole plan and say yes to it: send them a message that names the "
        "place for each booking (by name or id; each is heard as the booking of its category, at that booking's "
        "day and time) and asks whether the plan is fine (\"Shall I submit this plan?\"). They say yes to the plan they heard without checking it (keeping the "
        "rules is your job). submit_plan counts only when the active bookings are exactly the places of the plan "
        "they last said yes to: a plan submitted without that yes fails, and a message and a tool call never share "
        "a turn, so wait for their answer. Hearing a plan, they may change their mind about one booking (at most "
        "once): instead of a yes they restate that booking's new line, which replaces the form's; the plan must then "
        "keep it. A place may also be taken while you work (at most once): submit_plan then says what changed and "
        "submits nothing; plan again under every rule and get a yes to the new plan before you submit again. "
        "Days count as calendar days (\"the day after booking A\" is the day after booking A's day). "
        "Only what is active when you call submit_plan counts: exactly one active booking per booking of the "
        "form, at its day and time of day, and nothing else. submit_plan ends the conversation and the plan "
        "is judged then, all or nothing: no booking is checked before. Cancel any booking you no longer want "
        f"before you submit. You have {max_turns} turns: a turn is one message, or up to {MAX_CALLS_PER_TURN} tool calls.")
    return "\n".join(lines) + "\n" + vocabulary


def form_lines(domain: Domain, gold: PlanGold) -> list[str]:
    """The request form's lines, one per booking ("- Booking B: cuisine: thai, in Old Town; the day
    after booking A, in the evening.")."""
    return [f"- Booking {leg.label}: {_needs_text(domain, leg)}; {leg.when}." for leg in gold.legs]


def rule_lines(domain: Domain, gold: PlanGold) -> list[str]:
    """The plan's rules, numbered ("3. The prices of all bookings together may be at most ...")."""
    rules = [
        "Each booking must meet its own needs and be available at its own day and time of day.",
        "No place may be booked for two bookings.",
    ]
    if gold.distinct_areas:
        rules.append("No two bookings may be in the same area.")
    rules.append(f"The prices of all bookings together may be at most {gold.budget} (in {domain.price_unit}) "
                 f"(a total of exactly {gold.budget} is fine).")
    if gold.objective == TOTAL:
        rules.append(
            "Among all plans that keep the rules above, book the one whose bookings' ratings add up to the most "
            "(the sum of the ratings of all its bookings); where plans tie on that sum, any of them is fine (the "
            "price plays no part beyond the budget).")
    else:
        order = [LABELS[i] for i in gold.priority]
        rules.append(
            f"Among all plans that keep the rules above, book the one whose booking {order[0]} is rated highest; "
            + "".join(f"among those, the one whose booking {label} is rated highest; " for label in order[1:])
            + "where plans tie on all of these ratings, any of them is fine (the price plays no part beyond the "
              "budget).")
    return [f"{i}. {rule}" for i, rule in enumerate(rules, 1)]


def _needs_text(domain: Domain, leg: Leg) -> str:
    """A booking's needs as the form states them ("a thai restaurant in Old Town, with parking,
    rated 4.0 or more")."""
    parts = [f"{domain.category_label}: {next(v for k, v in leg.needs if k == 'category')}"]
    for kind, value in leg.needs:
        if kind == "area":
            parts.append(f"in {value}")
        elif kind == "amenity":
            parts.append(f"with {value}")
        elif kind == "rating":
            parts.append(f"rated {value:.1f} or more")
    return ", ".join(parts)
