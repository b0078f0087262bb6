"""The itinerary of Dialog's hard tier: several bookings that must fit together, one plan.

A task of this kind (`agentgym.envs.dialog.itinerary_draw` draws it) asks for four or five
bookings, each with needs of its own (a category, maybe an area, an amenity or a rating floor)
at a time of its own, and rules over the whole plan: no place twice, no two bookings in one
area (a gold's `distinct_areas`; records before 0.15.0 may lack the rule), one combined
budget, and an objective that decides among the plans that keep the rules: priorities (the plan
whose first-priority booking is rated highest; among those, the second's; and so on) or the
total (the plan whose bookings' ratings add up to the most). The reference solver (`best_plan`)
finds the best plan by branch and bound; the scorer (`score_plan`) accepts every plan that keeps
the rules and ties the best on the objective (`plan_key`), all or nothing, and only when it was submitted with the user's yes to that very plan
(`agentgym.envs.dialog.itinerary_twists`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterator

from agentgym.core.task import Score
from agentgym.envs.dialog import _fast
from agentgym.envs.dialog.tasks import Place, World, booked_in, keep, open_bit, useful_reads

__all__ = ["Leg", "PlanGold", "best_first", "candidates", "meeting", "plans", "priced_keys", "best_plan", "plan_key", "settle",
           "score_plan", "LABELS", "PRIORITY", "TOTAL"]

#: How the request form names its bookings, in time order.
LABELS = ("A", "B", "C", "D", "E")
#: The objectives that pick a plan among those that keep the rules: the ratings compared booking
#: by booking in priority order, or the ratings' sum.
PRIORITY, TOTAL = "priority", "total"


@dataclass(frozen=True, slots=True)
class Leg:
    """One booking of the plan: its label, needs ((kind, value) pairs as `tasks.keep` reads
    them, the category first) and time; `when` is how the request form states the time."""

    label: str
    needs: tuple[tuple[str, Any], ...]
    day: str
    slot: str
    when: str

    def meets(self, place: Place) -> bool:
        """Whether `place` meets every need of this booking (its opening hours aside)."""
        return all(keep([place], kind, value) for kind, value in self.needs)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "needs": [list(n) for n in self.needs], "day": self.day, "slot": self.slot,
                "when": self.when}


@dataclass(frozen=True)
class PlanGold:
    """The hidden goal of an itinerary and what the reference solver found for it.

    `priority` lists leg indices, most important first (the order the solvers walk the legs in);
    `best` the best plan's `plan_key` under `objective`: its ratings in priority order, or the
    one-element sum of its ratings (rounded to tenths); `accepted` every plan (place ids in leg
    order) that keeps the rules and ties `best`."""

    legs: tuple[Leg, ...]
    budget: int
    distinct_areas: bool
    priority: tuple[int, ...]
    best: tuple[float, ...]
    accepted: tuple[tuple[str, ...], ...]
    #: Kept for the family's shared code, which reads a goal's constraints: a plan has none.
    constraints: tuple[Any, ...] = ()
    objective: str = PRIORITY
    #: The steps of the plans this one replaced (a changed mind, a place taken), so a booking
    #: made for the plan as it stood is no wrong call (`superseded_calls`).
    superseded: tuple[dict[str, Any], ...] = ()
    #: Every place that meets a booking's needs and is open at its time (the options the
    #: plans are made of): a careful agent reads their details to weigh the plans.
    candidates: tuple[str, ...] = ()

    def replacing(self, old: PlanGold, world: World) -> PlanGold:
        """This gold as the one that replaced `old` in `world`: `old`'s steps (and those it
        replaced) become superseded, with the cancels of the bookings the change may leave
        unwanted: each active booking at a booking's old time that some plan this gold accepts
        does without (the brief asks to cancel a booking no longer wanted; the change may move
        other bookings of the plan too, and which accepted plan to take is the assistant's)."""
        active, unwanted = world.active_bookings(), []
        for i, (was, now) in enumerate(zip(old.legs, self.legs)):
            every = {p[i] for p in self.accepted}
            keep = every if len(every) == 1 and (now.day, now.slot) == (was.day, was.slot) else set()
            unwanted += [b.id for b in active if (b.day, b.slot) == (was.day, was.slot) and b.item_id not in keep]
        undo = ({"name": "cancel_booking", "arguments": {"booking_id": b}} for b in sorted(set(unwanted)))
        return replace(self, superseded=(*old.superseded, *old.plan(), *undo))

    def plan(self) -> list[dict[str, Any]]:
        """The reference plan, for tool accuracy: a search per booking with its filters, a check
        of a candidate at each booking's time, a booking of an accepted place for each, and the
        submission (argument specs as in `agentgym.core.gold`)."""
        calls: list[dict[str, Any]] = []
        for leg in self.legs:
            filters: dict[str, Any] = {}
            amenities = [v for k, v in leg.needs if k == "amenity"]
            for kind, value in leg.needs:
                if kind in ("category", "area"):
                    filters[kind] = {"if_given": value}
                elif kind == "rating":
                    filters["min_rating"] = {"if_given": {"at_most": value}}
            if amenities:
                filters["amenities"] = {"if_given": {"subset_of": amenities}}
            calls.append({"name": "search", "arguments": filters})
        for leg in self.legs:
            calls.append({"name": "check_availability",
                          "arguments": {"item_id": {"any": True}, "day": leg.day, "slot": leg.slot}})
        for i, leg in enumerate(self.legs):
            items = sorted({p[i] for p in self.accepted})
            calls.append({"name": "book", "arguments": {"item_id": {"any_of": items}, "day": leg.day,
                                                        "slot": leg.slot}})
        calls.append({"name": "submit_plan", "arguments": {}})
        return calls

    def plan_calls(self) -> list[dict[str, Any]]:
        """`plan`, as `to_dict` lists it (``"calls"``)."""
        return self.plan()

    def to_dict(self) -> dict[str, Any]:
        return {"legs": [leg.to_dict() for leg in self.legs], "budget": self.budget,
                "distinct_areas": self.distinct_areas, "objective": self.objective,
                "priority": [LABELS[i] for i in self.priority],
                "best": list(self.best), "accepted": [list(p) for p in self.accepted], "calls": self.plan_calls(),
                "superseded_calls": list(self.superseded),
                # The details of a place of an accepted plan, of a candidate for a booking (as a
                # single booking's candidates are: Dialog 9523 T3), or of one a replaced plan
                # booked, and the look at the bookings made.
                "useful_calls": useful_reads([*(i for p in self.accepted for i in p), *self.candidates,
                                              *booked_in(self.superseded)])}


def best_first(places: list[Place]) -> list[Place]:
    """`places` best rated first, then cheapest, then in id order: the order the solvers walk."""
    return sorted(places, key=lambda p: (-p.rating, p.price, p.id))


def candidates(world: World, leg: Leg) -> list[Place]:
    """The places that meet `leg`'s needs and are open at its time, `best_first`."""
    bit = open_bit(leg.day, leg.slot)  # `Place.is_open`, its bit found once for every place
    return best_first(meeting([p for p in world.places if p.open & bit], leg.needs))


def meeting(places: list[Place], needs: tuple[tuple[str, Any], ...]) -> list[Place]:
    """The `places` (in their order) that meet every one of `needs`: ``[p for p in places if
    leg.meets(p)]`` for a leg of `needs`, filtered need by need (`keep` filters each place alone)."""
    for kind, value in needs:
        places = keep(places, kind, value)
    return places


def plans(options: list[list[Place]], order: tuple[int, ...], budget: int | None,
          distinct_areas: bool) -> Iterator[tuple[Place, ...]]:
    """Every plan (one place per leg, in leg order) that keeps the rules, walked in `order`
    (leg indices) with each leg's options in their order. `budget` None: no budget."""
    n = len(options)
    rest = _rest(options, order)
    chosen: list[Place | None] = [None] * n

    def walk(depth: int, spent: int) -> Iterator[tuple[Place, ...]]:
        if depth == n:
            yield tuple(p for p in chosen if p is not None)
            return
        leg = order[depth]
        taken = [p for p in chosen if p is not None]
        for place in options[leg]:
            if not _admits(place, taken, spent + rest[depth + 1], budget, distinct_areas):
                continue
            chosen[leg] = place
            yield from walk(depth + 1, spent + place.price)
            chosen[leg] = None

    return walk(0, 0)


def priced_keys(options: list[list[Place]], order: tuple[int, ...], cap: int, distinct_areas: bool,
                objective: str) -> list[tuple[int, tuple[float, ...]]]:
    """(total price, `plan_key`) of every plan `plans` walks within `cap`, in its order: one
    walk that carries the total and the key as it goes (the draw's budget reads every plan under
    a cap, so building each plan to price it would cost the most)."""
    n = len(options)
    rest = _rest(options, order)
    total = objective == TOTAL
    chosen: list[Place] = []
    out: list[tuple[int, tuple[float, ...]]] = []

    def walk(depth: int, spent: int, key: tuple[float, ...], score: int) -> None:
        if depth == n:
            out.append((spent, (score / 10,) if total else key))
            return
        for place in options[order[depth]]:
            if not _admits(place, chosen, spent + rest[depth + 1], cap, distinct_areas):
                continue
            chosen.append(place)
            walk(depth + 1, spent + place.price, key + (place.rating,), score + round(place.rating * 10))
            chosen.pop()

    walk(0, 0, (), 0)
    return out


def plan_key(plan: tuple[Place, ...] | list[Place], order: tuple[int, ...], objective: str) -> tuple[float, ...]:
    """What `objective` compares plans by, higher better: the ratings in `order` (`PRIORITY`), or
    their sum, alone (`TOTAL`; summed in tenths, as ratings are, so equal sums compare equal)."""
    if objective == TOTAL:
        return (sum(round(p.rating * 10) for p in plan) / 10,)
    return tuple(plan[i].rating for i in order)


def best_plan(options: list[list[Place]], order: tuple[int, ...], budget: int | None,
              distinct_areas: bool, objective: str = PRIORITY) -> tuple[Place, ...] | None:
    """The plan `objective` picks (`plan_key`): with `PRIORITY` the highest ratings in `order`,
    compared in turn, with `TOTAL` the highest sum of ratings; among plans that tie, the cheapest
    (then the first walked); None when no plan keeps the rules. `options`: each leg's places,
    best rated first.

    A branch and bound: a partial plan whose ratings so far fall below the best plan's is cut,
    and with it every later option of its leg (rated no higher)."""
    if objective == TOTAL:
        return _best_total(options, order, budget, distinct_areas)
    n = len(options)
    rest = _rest(options, order)
    chosen: list[Place | None] = [None] * n
    ratings: list[float] = [0.0] * n
    best: list[Any] = [None, None]  # (ratings, -total) of the best plan so far, and the plan

    def walk(depth: int, spent: int) -> None:
        if depth == n:
            key = (tuple(ratings), -spent)
            if best[0] is None or key > best[0]:
                best[0], best[1] = key, tuple(p for p in chosen if p is not None)
            return
        leg = order[depth]
        taken = [p for p in chosen if p is not None]
        for place in options[leg]:
            top = best[0]
            # The best plan so far (it changes as the walk goes on) beats every plan from here.
            if top is not None and place.rating < top[0][depth] and tuple(ratings[:depth]) == top[0][:depth]:
                break
            if not _admits(place, taken, spent + rest[depth + 1], budget, distinct_areas):
                continue
            chosen[leg], ratings[depth] = place, place.rating
            walk(depth + 1, spent + place.price)
            chosen[leg] = None

    walk(0, 0)
    return best[1]


def _best_total(options: list[list[Place]], order: tuple[int, ...], budget: int | None,
                distinct_areas: bool) -> tuple[Place, ...] | None:
    """`best_plan` under `TOTAL`: the highest sum of ratings (in tenths, so sums compare exactly),
    then the cheapest, then the first walked. A branch and bound: a partial plan whose sum so far
    with the best rating of every leg still to place falls below the best plan's sum is cut, and
    with it every later option of its leg (rated no higher)."""
    n = len(options)
    rest = _rest(options, order)
    tenths = [[round(p.rating * 10) for p in opts] for opts in options]
    reach = [sum(tenths[order[d]][0] if tenths[order[d]] else 0 for d in range(k, n)) for k in range(n + 1)]
    chosen: list[Place | None] = [None] * n
    best: list[Any] = [None, None]  # (sum, -total) of the best plan so far, and the plan

    def walk(depth: int, spent: int, score: int) -> None:
        if depth == n:
            key = (score, -spent)
            if best[0] is None or key > best[0]:
                best[0], best[1] = key, tuple(p for p in chosen if p is not None)
            return
        leg = order[depth]
        taken = [p for p in chosen if p is not None]
        for place, points in zip(options[leg], tenths[leg]):
            if best[0] is not None and score + points + reach[depth + 1] < best[0][0]:
                break
            if not _admits(place, taken, spent + rest[depth + 1], budget, distinct_areas):
                continue
            chosen[leg] = place
            walk(depth + 1, spent + place.price, score + points)
            chosen[leg] = None

    walk(0, 0, 0)
    return best[1]


def settle(legs: tuple[Leg, ...], options: list[list[Place]], order: tuple[int, ...], budget: int,
           distinct_areas: bool, objective: str, walk: _fast.PlanWalk | None = None) -> PlanGold | None:
    """The gold of `legs` with each leg's `options` (best rated first) under the rules: the best
    plan's key and every plan that ties it (`best_plan`, and `plans` whose `plan_key` is the
    best's, by their kernels in `agentgym.envs.dialog._fast` on `walk`, the options'
    `_fast.plan_walk` when the caller has it); None when no plan keeps the rules."""
    total = objective == TOTAL
    if walk is None:
        walk = _fast.plan_walk(options, order, distinct_areas)
    best = _fast.best_plan(walk, budget, total)
    if best is None:
        return None
    key = plan_key(best, order, objective)
    return PlanGold(legs, budget, distinct_areas, order, key, _fast.accepted(walk, budget, total, key),
                    objective=objective, candidates=tuple(dict.fromkeys(p.id for opts in options for p in opts)))


def _admits(place: Place, taken: list[Place], committed: int, budget: int | None, distinct_areas: bool) -> bool:
    """Whether a partial plan of `taken` may add `place`: within `budget` with what is `committed`
    (spent so far and the least the legs still to place cost), not a place twice, and, where
    areas must differ, not an area twice."""
    if budget is not None and committed + place.price > budget:
        return False
    # "Not a place twice" by identity: a world's places are distinct objects with distinct ids,
    # and every option is one of them, so `t is place` is `t == place` without comparing every
    # field of a dataclass.
    area = place.area
    for t in taken:
        if t is place or (distinct_areas and t.area == area):
            return False
    return True


def _rest(options: list[list[Place]], order: tuple[int, ...]) -> list[int]:
    """What the legs still to place cost at least, from each depth of `order` on: a partial
    plan over budget by then is cut."""
    cheapest = [min(p.price for p in opts) if opts else 0 for opts in options]
    return [sum(cheapest[order[d]] for d in range(k, len(options))) for k in range(len(options) + 1)]


def score_plan(task: Any) -> Score:
    """Score the final world state of an itinerary: one active booking per leg at its time and
    nothing else, each meeting its leg's needs, the plan keeping the rules and tying the best on
    the objective. The score is the share of legs booked right plus one for the plan's rules and,
    where the task asks for the user's yes to the plan, one for that yes, over the legs plus
    those parts; success is all of it."""
    world: World = task.world
    gold: PlanGold = task.gold
    active = world.active_bookings()
    chosen: list[Place | None] = []
    right = 0
    for leg in gold.legs:
        at = [b for b in active if (b.day, b.slot) == (leg.day, leg.slot)]
        place = world.by_id[at[0].item_id] if len(at) == 1 else None
        chosen.append(place)
        right += place is not None and leg.meets(place)
    extra = len(active) - sum(p is not None for p in chosen)
    places = [p for p in chosen if p is not None]
    rules = len(places) == len(gold.legs) and not extra and _keeps(places, gold)
    # A plan counts only when it was submitted with the user's yes to that very plan; where the
    # task asks for that yes, it is one more part of the score, so a plan submitted without it
    # never reads as a perfect score beside a failure.
    state = task.extra.get("plan")
    agreed = state is None or state.consented is True
    parts = len(gold.legs) + 1 + (state is not None)
    share = (right + rules + (state is not None and agreed)) / parts
    return Score(round(share, 6), right == len(gold.legs) and rules and agreed,
                 {"bookings": [p.id if p is not None else None for p in chosen], "legs_right": right,
                  "rules": rules, "extra_bookings": extra, "agreed": agreed})


def _keeps(places: list[Place], gold: PlanGold) -> bool:
    """Whether a whole plan keeps the rules and ties the best plan on the objective."""
    if len({p.id for p in places}) < len(places) or sum(p.price for p in places) > gold.budget:
        return False
    if gold.distinct_areas and len({p.area for p in places}) < len(places):
        return False
    return plan_key(places, gold.priority, gold.objective) == gold.best
