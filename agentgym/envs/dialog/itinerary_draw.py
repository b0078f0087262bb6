"""Drawing an itinerary of Dialog's hard tier (`agentgym.envs.dialog.itinerary`) and its brief.

Three or four bookings in time order, each of a category of its own with up to two more needs
(an area, an amenity, a rating floor), the first at a day counted from today and each later one
from an earlier booking ("the day after booking A, in the evening"), all within six days. Which
rules hold is drawn per task: no two bookings in one area (half the tasks) and the priority
order (any order of the bookings). The combined budget is drawn among the totals of plans that
keep the other rules, below the total of the plan the priorities would pick without a budget,
so the budget always decides something. A draw is kept only when every booking has two to
`MAX_OPTIONS` places open at its time meeting its needs and some plan keeps every rule.
"""

from __future__ import annotations

import math
from typing import Any

from agentgym.core.seeding import Rng
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain
from agentgym.envs.dialog.itinerary import LABELS, Leg, PlanGold, best_plan, candidates, plans
from agentgym.envs.dialog.tasks import World

__all__ = ["draw_plan", "plan_brief", "PLAN_TURNS", "MAX_OPTIONS"]

#: The turn budget of an itinerary: the expert's turns (seven to ten) times 1.5, plus four.
PLAN_TURNS = 20
#: At most this many places may fit one booking at its time (so a plan search stays small).
MAX_OPTIONS = 6
#: Draws of legs tried before the tier falls back to its other kind of task.
_DRAWS = 64
#: How a booking's day is counted: from today for the first, from an earlier booking after.
_FROM_TODAY = ("today", "tomorrow", "the day after tomorrow", "three days from today")
_AFTER = ("the same day as booking {ref}", "the day after booking {ref}", "two days after booking {ref}")


def draw_plan(world: World, rng: Rng, today: str) -> PlanGold | None:
    """An itinerary over `world`, its days counted from `today`; None when no draw of `_DRAWS`
    carries one."""
    for _ in range(_DRAWS):
        gold = _draw(world, rng, DAYS.index(today))
        if gold is not None:
            return gold
    return None


def _draw(world: World, rng: Rng, start: int) -> PlanGold | None:
    rnd = rng.random
    dom = world.domain
    n = 3 + int(rnd() * 2)
    cats = [dom.categories[i] for i in rng.permutation(len(dom.categories))[:n]]
    distinct = rnd() < 0.5
    # Times as (day offset from today, slot index), strictly increasing.
    times: list[tuple[int, int]] = []
    whens: list[str] = []
    for i in range(n):
        if i == 0:
            ahead, slot = int(rnd() * len(_FROM_TODAY)), int(rnd() * 3)
            when = _FROM_TODAY[ahead]
        else:
            # From an earlier booking, at a later time than the one before: the day at least the
            # last one's (the next day after an evening), the slot among those after it.
            last_day, last_slot = times[-1]
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
        times.append((ahead, slot))
        whens.append(f"{when}, in the {SLOTS[slot]}")
    legs = []
    for i, cat in enumerate(cats):
        needs: list[tuple[str, Any]] = [("category", cat)]
        for _ in range(int(rnd() * 3)):
            kind = ("area", "amenity", "rating")[int(rnd() * 3)]
            if any(k == kind for k, _ in needs):
                continue
            if kind == "area":
                needs.append(("area", dom.areas[int(rnd() * len(dom.areas))]))
            elif kind == "amenity":
                needs.append(("amenity", dom.amenities[int(rnd() * len(dom.amenities))]))
            else:
                needs.append(("rating", 3.5 + 0.5 * int(rnd() * 2)))
        day = DAYS[(start + times[i][0]) % len(DAYS)]
        legs.append(Leg(LABELS[i], tuple(needs), day, SLOTS[times[i][1]], whens[i]))
    order = tuple(int(k) for k in rng.permutation(n))
    draw = rnd()
    return _fit(world, legs, order, distinct, draw)


def _fit(world: World, legs: list[Leg], order: tuple[int, ...], distinct: bool, draw: float) -> PlanGold | None:
    """The goal of drawn `legs`, with a budget `draw` picks among those that decide something;
    None when the legs cannot carry one."""
    options = [candidates(world, leg) for leg in legs]
    if any(not 2 <= len(o) <= MAX_OPTIONS for o in options):
        return None
    free = best_plan(options, order, None, distinct)
    if free is None:
        return None
    top = sum(p.price for p in free)
    totals = sorted({sum(p.price for p in plan) for plan in plans(options, order, top - 1, distinct)})
    if not totals:
        return None
    # The upper half of the totals that bind: many plans fit, the best one does not.
    budget = totals[len(totals) // 2 + int(draw * math.ceil(len(totals) / 2))] if len(totals) > 1 else totals[0]
    best = best_plan(options, order, budget, distinct)
    assert best is not None  # the budget is the total of a plan that keeps the rules
    ratings = tuple(best[i].rating for i in order)
    accepted = tuple(tuple(p.id for p in plan) for plan in plans(options, order, budget, distinct)
                     if tuple(plan[i].rating for i in order) == ratings)
    return PlanGold(tuple(legs), budget, distinct, order, ratings, accepted)


def plan_brief(domain: Domain, gold: PlanGold, today: str, vocabulary: str, max_turns: int) -> str:
    """The brief of an itinerary: the request form, the rules with their boundaries, the turn
    budget, then the domain's vocabulary and how to call tools (`vocabulary`)."""
    lines = [
        f"You are a booking assistant for {domain.plural}. The user filled in a request form for a plan of "
        f"{len(gold.legs)} bookings; book the plan the rules below pick, then call submit_plan.",
        f"Today is {today.capitalize()}.",
        "The request form (bookings in time order):",
    ]
    for leg in gold.legs:
        lines.append(f"- Booking {leg.label}: {_needs_text(domain, leg)}; {leg.when}.")
    rules = [
        "Each booking must meet its own needs and be available at its own day and time of day.",
        "No place may be booked for two bookings.",
    ]
    if gold.distinct_areas:
        rules.append("No two bookings may be in the same area.")
    rules.append(f"The prices of all bookings together may be at most {gold.budget} (in {domain.price_unit}) "
                 f"(a total of exactly {gold.budget} is fine).")
    order = [LABELS[i] for i in gold.priority]
    rules.append(
        f"Among all plans that keep the rules above, book the one whose booking {order[0]} is rated highest; "
        + "".join(f"among those, the one whose booking {label} is rated highest; " for label in order[1:])
        + "where plans tie on all of these ratings, any of them is fine (the price plays no part beyond the "
          "budget).")
    lines.append("Rules for the whole plan:")
    lines += [f"{i}. {rule}" for i, rule in enumerate(rules, 1)]
    lines.append(
        "How the user behaves: everything they need is on the form; they have nothing to add and change "
        "nothing. Days count as calendar days (\"the day after booking A\" is the day after booking A's day). "
        "Only what is active when you call submit_plan counts: exactly one active booking per booking of the "
        "form, at its day and time of day, and nothing else. submit_plan ends the conversation and the plan "
        "is judged then, all or nothing: no booking is checked before. Cancel any booking you no longer want "
        f"before you submit. You have {max_turns} turns.")
    return "\n".join(lines) + "\n" + vocabulary


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
