"""Dialog tasks: a generated world of bookable places, the user's goal, and the gold bookings.

The generator picks a target place and a time it is open, derives the goal's constraints from the
target's attributes (so the task is solvable), and enumerates exactly the places that satisfy the
whole goal at that time (`Gold.items`), redrawing goals that too many places would satisfy or that
an agent could reach without asking (`guessable`): a sprayer that never asks but learns one need
from each reasoned rejection must run out of patience first, since decoys outrank every gold place
on rating and on price at each stage of its learning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache, partial
from math import floor
from typing import Any, Callable, Mapping, NamedTuple

from agentgym.core.action_types import HOW_TO_CALL
from agentgym.core.seeding import Rng, fast_stream, stream_bits
from agentgym.core.task import DIFFICULTIES, Score, Task
from agentgym.envs.dialog import _fast
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain, load_domains
from agentgym.envs.dialog.fairness import DECOY_MARGIN, Board, Codes, Goal, reachable, reachable_midway

__all__ = ["Place", "open_bit", "time_index", "Booking", "World", "Constraint", "Gold", "draw_target", "generate_task", "score_task", "satisfying_places",
           "place_phrases", "guessable", "guessable_midway", "DIFFICULTY", "DECOY_MARGIN", "RATING_RANGE"]

#: Per difficulty: (min, max) constraints in the goal (the time counts as one), how many of its
#: attributes the user has from the start (the rest arrive late), the turns by which the late ones
#: arrive (sooner at the agent's first proposal or booking), the patience (costly misses after
#: which the user gives up; the first never ends the dialog) and the turn budget. Each reasoned
#: rejection teaches a sprayer one need and late needs come to it free, so the needs held back
#: until asked must outnumber the misses it can afford: the user states one attribute up front
#: only when that still holds (see `_fair_statement`).
DIFFICULTY: dict[str, dict[str, Any]] = {
    "easy": {"n": (3, 3), "held": 2, "late_turns": (3, 7), "patience": 2, "max_turns": 16},
    "medium": {"n": (5, 5), "held": 3, "late_turns": (5, 10), "patience": 2, "max_turns": 20},
    "hard": {"n": (6, 6), "held": 4, "late_turns": (6, 12), "patience": 2, "max_turns": 24},
}
#: A goal is redrawn until at most this many places satisfy it and no never-ask agent can reach
#: it (up to MAX_GOAL_DRAWS times; none of 6,000 generated tasks needed more).
MAX_GOLD = 6
MAX_GOAL_DRAWS = 256
#: Every (day, slot) bit of a week.
_WEEK = (1 << 21) - 1
#: The ratings places have (in steps of 0.1), as the brief states them.
RATING_RANGE = (3.0, 5.0)


def time_index(day: str, slot: str) -> int:
    """Where (`day`, `slot`) stands in the week, slot by slot: its bit of a place's ``open`` mask."""
    return DAYS.index(day) * 3 + SLOTS.index(slot)


def open_bit(day: str, slot: str) -> int:
    """The bit of a place's ``open`` mask that says it is open on `day` at `slot`."""
    return 1 << time_index(day, slot)


@dataclass(slots=True)
class Place:
    """A bookable place. `open` holds one bit per (day, slot): bit ``day * 3 + slot``."""

    id: str
    name: str
    category: str
    area: str
    price: int
    rating: float
    amenities: tuple[str, ...]
    open: int

    def is_open(self, day: str, slot: str) -> bool:
        return bool(self.open & open_bit(day, slot))

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "category": self.category, "area": self.area,
                "price": self.price, "rating": self.rating}

    def details(self) -> dict[str, Any]:
        return {**self.summary(), "amenities": list(self.amenities)}


@dataclass(slots=True)
class Booking:
    id: str
    item_id: str
    day: str
    slot: str
    active: bool = True


@dataclass
class World:
    """The mutable state of one dialog episode."""

    domain: Domain
    places: list[Place]
    #: The places by id (read only): a dict, or the generator's `PlaceIndex` of the same items.
    by_id: Mapping[str, Place]
    bookings: dict[str, Booking] = field(default_factory=dict)

    def active_bookings(self) -> list[Booking]:
        return [b for b in self.bookings.values() if b.active]


def keep(places: list[Place], kind: str, value: Any) -> list[Place]:
    """The places (in their order) that meet the attribute constraint `kind`/`value`: the
    filter behind the search tool, the reference solver and `Constraint.holds`.

    Plain list filters: a world has 30-80 places, too few for NumPy's per-call overhead to pay.
    """
    if kind == "category":
        return [p for p in places if p.category == value]
    if kind == "area":
        return [p for p in places if p.area == value]
    if kind == "price":
        return [p for p in places if p.price <= value]
    if kind == "rating":
        return [p for p in places if p.rating >= value]
    if kind == "amenity":
        return [p for p in places if value in p.amenities]
    raise ValueError(f"unknown constraint kind {kind!r}")


@dataclass(frozen=True, slots=True)
class Constraint:
    """One goal constraint: `kind` in category, area, price, rating, amenity, time."""

    id: str
    kind: str
    value: Any
    reveal: str  # "upfront", "ask" or "late"

    def holds(self, place: Place, day: str, slot: str) -> bool:
        if self.kind == "time":
            return (day, slot) == tuple(self.value)
        return bool(keep([place], self.kind, self.value))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "value": list(self.value) if self.kind == "time" else self.value,
                "reveal": self.reveal}


def booked_in(calls: tuple[dict[str, Any], ...]) -> list[str]:
    """The places the `book` steps of `calls` name: by id, or each place an ``any_of`` spec
    allows (a replaced plan's booking, right for any of them when it stood)."""
    out: list[str] = []
    for c in calls:
        item = c.get("arguments", {}).get("item_id") if c.get("name") == "book" else None
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("any_of"), list):
            out += [i for i in item["any_of"] if isinstance(i, str)]
    return out


def useful_reads(places: list[str]) -> list[dict[str, Any]]:
    """The reads useful beyond a plan that books `places`: their details (`details_of`), and the
    look at the bookings made (`list_bookings`): the brief points to it as the way to see which
    bookings stand, and a careful agent looks once it has booked or cancelled (above all after a
    write that failed, timed out or went through on a retry). Useful when made after a write of
    the plan (``after_plan_write``), never required; its repeats count as every read's do
    (`agentgym.eval.judging`)."""
    return [*details_of(places), {"name": "list_bookings", "arguments": {}, "after_plan_write": True}]


def details_of(places: list[str]) -> list[dict[str, Any]]:
    """The useful read of those places' details (`get_details`, one of them), or none."""
    ids = list(dict.fromkeys(places))
    return [{"name": "get_details", "arguments": {"item_id": {"any_of": ids}}}] if ids else []


@dataclass(frozen=True)
class Gold:
    """The hidden goal and its exact set of satisfying bookings."""

    constraints: tuple[Constraint, ...]
    day: str
    slot: str
    items: tuple[str, ...]
    late_turns: tuple[int, ...]
    patience: int
    #: Calls of plans the user abandoned by shifting the goal (for tool-accuracy metrics).
    superseded: tuple[dict[str, Any], ...] = ()
    #: The places that meet every need the user has from the start (its late needs aside), open
    #: at the wanted time or not: what a careful agent reads the details of before it knows
    #: which one is free, or which a need still to come rules out. (On the hard tier's give-way
    #: tasks, the places that miss at most one of those needs: `hard_tier`.)
    candidates: tuple[str, ...] = ()

    def plan(self) -> list[dict[str, Any]]:
        """The reference plan, for tool accuracy and for tying faults to what they hit: the
        reads a sound agent needs and the booking (argument specs as in `agentgym.core.gold`).

        1. ``search`` with filters that keep the gold places: each filter the goal constrains
           may be given, at the goal's value (a budget of at least the goal's, a minimum rating
           of at most the goal's, amenities among the goal's); unconstrained filters are free.
        2. ``check_availability`` of a candidate (any place) at the goal's day and slot.
        3. ``book`` of a gold place at that day and slot.
        """
        filters: dict[str, Any] = {}
        amenities: list[str] = []
        for c in self.constraints:
            if c.kind in ("category", "area"):
                filters[c.kind] = {"if_given": c.value}
            elif c.kind == "price":
                filters["max_price"] = {"if_given": {"at_least": c.value}}
            elif c.kind == "rating":
                filters["min_rating"] = {"if_given": {"at_most": c.value}}
            elif c.kind == "amenity":
                amenities.append(c.value)
        if amenities:
            filters["amenities"] = {"if_given": {"subset_of": amenities}}
        return [
            {"name": "search", "arguments": filters},
            {"name": "check_availability", "arguments": {"item_id": {"any": True}, "day": self.day, "slot": self.slot}},
            {"name": "book", "arguments": {"item_id": {"any_of": list(self.items)}, "day": self.day, "slot": self.slot}},
        ]

    def plan_calls(self) -> list[dict[str, Any]]:
        """`plan`, as `to_dict` lists it (``"calls"``)."""
        return self.plan()

    def useful_calls(self) -> list[dict[str, Any]]:
        """Reads a careful agent makes beyond the plan (useful when made, never required): the
        details of a gold place, of a candidate (`candidates`), or of one a superseded plan would
        book, the one read that shows its amenities (search results do not), and the look at the
        bookings made."""
        return useful_reads([*self.items, *self.candidates, *booked_in(self.superseded)])

    def to_dict(self) -> dict[str, Any]:
        return {"constraints": [c.to_dict() for c in self.constraints], "day": self.day, "slot": self.slot,
                "items": list(self.items), "calls": self.plan_calls(), "superseded_calls": list(self.superseded),
                "useful_calls": self.useful_calls()}


@dataclass(frozen=True)
class _Tables:
    """Per domain, built once and shared by every world of it: the values a place's draws index
    (so each world holds references to the same name, price and rating objects, not copies)."""

    names: tuple[str, ...]
    ids: tuple[str, ...]
    categories: tuple[str, ...]
    areas: tuple[str, ...]
    prices: tuple[int, ...]
    #: Ratings 3.0-5.0 in steps of 0.1, each computed as ``tenths / 10``.
    ratings: tuple[float, ...]
    #: The amenity tuple of each bitmask over the domain's amenities.
    amenities: tuple[tuple[str, ...], ...]
    n_amenities: int
    #: What a world's `fairness.Codes` stand for: each category's, area's and amenity's code,
    #: the prices and the ratings (the world kernel codes each by its index here).
    codes: tuple[dict[str, int], dict[str, int], dict[str, int], tuple[int, ...], tuple[float, ...]]
    #: Each id's position in `ids`: the table of every world's `PlaceIndex` (never written).
    at: dict[str, int]


@lru_cache(maxsize=None)
def _tables(domain: Domain) -> _Tables:
    first, second = domain.name_parts
    n_prices = (domain.price_max - domain.price_min) // domain.price_step + 1
    prices = tuple(domain.price_min + domain.price_step * k for k in range(n_prices))
    ratings = tuple(tenths / 10 for tenths in range(round(RATING_RANGE[0] * 10), round(RATING_RANGE[1] * 10) + 1))
    ids = tuple(f"{domain.id_prefix}_{i + 1:03d}" for i in range(domain.size[1]))
    return _Tables(
        names=tuple(f"{a} {b}" for a in first for b in second),
        ids=ids,
        categories=domain.categories,
        areas=domain.areas,
        prices=prices,
        ratings=ratings,
        amenities=tuple(tuple(a for b, a in enumerate(domain.amenities) if m >> b & 1)
                        for m in range(1 << len(domain.amenities))),
        n_amenities=len(domain.amenities),
        codes=({c: k for k, c in enumerate(domain.categories)}, {a: k for k, a in enumerate(domain.areas)},
               {a: b for b, a in enumerate(domain.amenities)}, prices, ratings),
        at={place_id: k for k, place_id in enumerate(ids)},
    )


def place_phrases(domain: Domain) -> tuple[str, ...]:
    """What any place of `domain` is referred to by: each possible name, lower-cased (a repeated
    name's suffix comes after it), and each possible id."""
    t = _tables(domain)
    return (*(name.lower() for name in t.names), *t.ids)


def _make_world(domain: Domain, rng: Rng) -> World:
    # Scalar draws on a fast generator and per-domain lookup tables keep reset cheap: it runs
    # once per episode, millions of times in a training run. The draws per place, in order:
    # name (and a suffix for a repeated name), category, area, price, rating, 1-3 amenities,
    # opening hours. An index is `floor(random() * len)`: for these non-negative draws the same
    # integer as `int(...)`, and a cheaper call (eight per place).
    rnd, bits = rng.random, rng.getrandbits
    t = _tables(domain)
    names, categories, areas, prices, ratings = t.names, t.categories, t.areas, t.prices, t.ratings
    n_names, n_cat, n_area, n_prices, n_ratings = len(names), len(categories), len(areas), len(prices), len(ratings)
    n_amen = t.n_amenities
    n = domain.size[0] + floor(rnd() * (domain.size[1] - domain.size[0] + 1))
    places: list[Place] = []
    used: set[str] = set()
    for place_id in t.ids[:n]:
        name = names[floor(rnd() * n_names)]
        if name in used:  # names are how users and LLMs refer to places: keep them unique
            name = f"{name} {2 + floor(rnd() * 8)}"
            while name in used:
                name += " II"
        used.add(name)
        category = categories[floor(rnd() * n_cat)]
        area = areas[floor(rnd() * n_area)]
        price = prices[floor(rnd() * n_prices)]
        rating = ratings[floor(rnd() * n_ratings)]
        # 1-3 amenities (a repeat draw means fewer): how many more after the first, then each.
        more = floor(rnd() * 3)
        mask = 1 << floor(rnd() * n_amen)
        while more:
            mask |= 1 << floor(rnd() * n_amen)
            more -= 1
        # Each (day, slot) open with probability 5/8.
        open_bits = bits(21) | (bits(21) & bits(21) & bits(21))
        places.append(Place(place_id, name, category, area, price, rating, t.amenities[mask], open_bits))
    return World(domain=domain, places=places, by_id=dict(zip(t.ids, places)))  # ids in place order


def _make_goal(world: World, difficulty: str, rng: Rng, guard: Callable[[list[Place]], Any] = Board) -> Gold:
    # Draw goals until one is selective enough that the set of satisfying places is small and a
    # never-ask agent cannot reach it (see `guessable`); the set is then enumerated exactly (the
    # world is never edited to force uniqueness). Should no draw pass, the smallest goal of as
    # many further draws is taken. `guard` makes the fairness guard of the world's places:
    # `fairness.Board`, or (in a test) the plain contract it must agree with.
    places = world.places
    board = guard(places)
    spec = DIFFICULTY[difficulty]
    need = min(spec["patience"] + DECOY_MARGIN, len(places)) - 1
    bounds = _Bounds(board, *board.bounds(need))
    if isinstance(board, Board):  # `_pick_goal`'s kernel
        pick = partial(_fast.pick_goal, places, board, Goal, rng, spec["n"], spec["held"], spec["patience"],
                       DECOY_MARGIN, MAX_GOLD, *bounds[1:])
    else:
        pick = partial(_pick_goal, world, bounds, difficulty, rng)
    for _ in range(MAX_GOAL_DRAWS):
        picked = pick()
        if picked is not None:
            return _gold_of(world, board, spec, rng, *picked)
    best: Gold | None = None
    for _ in range(MAX_GOAL_DRAWS):
        gold = _draw_goal(world, bounds, difficulty, rng, fair_only=False)
        if gold is not None and (best is None or len(gold.items) < len(best.items)):
            best = gold
    assert best is not None, "no place can carry a goal of this difficulty"
    return best


class _Bounds(NamedTuple):
    """The fairness guard of a goal search (`fairness.Board`: the world's places in rating and
    price order, built once per search); where a target leaves no room for decoys
    (one rated `rating_cap` or more, or priced `price_floor` or less, has too few places above
    it in one order); and the top price and the lowest rating, at which a constraint would be
    vacuous."""

    guard: Any
    rating_cap: float
    price_floor: int
    top_price: int
    low_rating: float


#: An attribute of a drawn goal: (constraint id, kind, value).
_Attr = tuple[str, str, Any]


def draw_target(places: list[Place], rnd: Callable[[], float]) -> tuple[int, int] | None:
    """A random place and a time it is open at: (its index, bit ``day * 3 + slot`` of its week,
    the k-th lowest set bit with k uniform below their count), or None when it is never open.
    Scalar draws as `int(random() * n)`: the values `Rng.integers` gives, without its call
    overhead (a reset makes several draws)."""
    j = int(rnd() * len(places))
    week = places[j].open & _WEEK
    if not week:
        return None
    for _ in range(int(rnd() * week.bit_count())):
        week &= week - 1
    return j, (week & -week).bit_length() - 1


def _draw_goal(world: World, bounds: _Bounds, difficulty: str, rng: Rng, fair_only: bool = True) -> Gold | None:
    """A goal drawn around a random target; None when the draw cannot carry one (the target is
    closed at the drawn time or has too few attributes) or, with `fair_only`, when the goal is
    too large or a never-ask agent could reach it."""
    picked = _pick_goal(world, bounds, difficulty, rng, fair_only)
    return None if picked is None else _gold_of(world, bounds.guard, DIFFICULTY[difficulty], rng, *picked)


def _pick_goal(world: World, bounds: _Bounds, difficulty: str, rng: Rng,
               fair_only: bool = True) -> tuple[int, list[_Attr], int, Any, bool, bool] | None:
    """`_draw_goal`'s draws up to the goal's verdict: the time's bit, the attributes in the
    goal's order (held first, narrowest first, then the late ones), how many are late, the
    guard's goal, whether the time is stated up front and whether the lead attribute is; or
    None (see `_draw_goal`). `_fast.pick_goal` is its kernel on a `fairness.Board`."""
    spec = DIFFICULTY[difficulty]
    rnd = rng.random
    places = world.places
    # The target is a place open at a drawn time; its attributes become the constraints, so the
    # task is solvable by construction.
    drawn = draw_target(places, rnd)
    if drawn is None:
        return None
    j, bit = drawn
    target = places[j]
    lo_n, hi_n = spec["n"]
    n_total = lo_n + int(rnd() * (hi_n - lo_n + 1))
    if fair_only and (target.rating >= bounds.rating_cap or target.price <= bounds.price_floor
                      or not bounds.guard.room(j, bit, spec["patience"] + DECOY_MARGIN)):
        return None  # a gold place this high in an order leaves no room for decoys above it
    # Skip attributes that every place of this world meets (the world's top price, a rating
    # under 3.5): no vacuous constraints.
    kinds = ["category", "area"]
    if target.price < bounds.top_price:
        kinds.append("price")
    if target.rating >= 3.5 and bounds.low_rating < math.floor(target.rating * 2) / 2:
        kinds.append("rating")
    kinds += [f"amenity:{a}" for a in target.amenities[:2]]
    if len(kinds) < n_total - 1:
        return None
    attrs: list[_Attr] = []
    for i in rng.permutation(len(kinds))[: n_total - 1]:
        k = kinds[i]
        if k == "category":
            attrs.append(("category", "category", target.category))
        elif k == "area":
            attrs.append(("area", "area", target.area))
        elif k == "price":
            attrs.append(("price", "price", int(target.price)))
        elif k == "rating":
            attrs.append(("rating", "rating", math.floor(target.rating * 2) / 2))
        else:
            attrs.append((k, "amenity", k.split(":", 1)[1]))
    late = n_total - 1 - spec["held"]  # the attributes beyond those the user has arrive late
    guard = bounds.guard
    breadth = {a: guard.breadth(a[1], a[2]) for a in attrs}
    attrs = sorted(attrs, key=lambda a: breadth[a])  # narrowest first
    attrs = sorted(attrs[: len(attrs) - late], key=lambda a: -breadth[a]) + attrs[len(attrs) - late:]
    goal = guard.goal([(kind, value) for _, kind, value in attrs], len(attrs) - late, bit)
    small = goal.n_gold <= MAX_GOLD
    if fair_only and not small:
        return None
    time_up, lead_up = rnd() < 0.7, rnd() < 0.5
    # Whether the user states its lead attribute up front is chosen so the gold cannot be
    # reached without asking (`_fair_statement`).
    stated = _fair_statement(guard, goal, spec["patience"], lead_up) if small else None
    if stated is None and fair_only:
        return None
    return bit, attrs, late, goal, time_up, bool(stated)


def _gold_of(world: World, guard: Any, spec: dict[str, Any], rng: Rng, bit: int, attrs: list[_Attr], late: int,
             goal: Any, time_up: bool, attr_up: bool) -> Gold:
    """The `Gold` of a goal `_pick_goal` drew (its arguments from `bit` on), with its late
    needs' due turns drawn."""
    items = tuple(world.places[k].id for k in goal.gold_places(guard))
    d, s = divmod(bit, 3)
    day, slot = DAYS[d], SLOTS[s]
    constraints = [Constraint("time", "time", (day, slot), "upfront" if time_up else "ask")]
    for i, (cid, kind, value) in enumerate(attrs):
        if i >= len(attrs) - late:
            reveal = "late"
        elif i == 0 and attr_up:
            reveal = "upfront"
        else:
            reveal = "ask"
        constraints.append(Constraint(cid, kind, value, reveal))
    lo, hi = spec["late_turns"]
    rnd = rng.random
    late_turns = tuple(sorted(lo + int(rnd() * (hi - lo + 1)) for _ in range(late)))
    return Gold(tuple(constraints), day, slot, items, late_turns, spec["patience"],
                candidates=candidates(world, constraints))


def _fair_statement(guard: Any, goal: Any, patience: int, lead_up: bool) -> bool | None:
    """Whether the user states its lead attribute up front (True), states no attribute so no
    never-ask agent can reach the gold (False; see `agentgym.envs.dialog.fairness`), or neither
    works (None). The lead is stated only when `lead_up` and the needs still held back would
    outnumber the patience (each reasoned rejection teaches one), and the goal stays fair."""
    if guard.reachable(goal, 0, patience):
        return None
    return lead_up and goal.n_held > patience and not guard.reachable(goal, 1, patience)


def _as_goal(world: World, constraints: Any, day: str, slot: str, board: Board | None) -> tuple[Board, Goal, int]:
    """A goal's constraints as the never-ask agents meet them: the board (`board`, or the
    world's built anew), the goal (its held attributes first, the late ones last) and how many
    held ones the user states up front."""
    attrs = [c for c in constraints if c.kind != "time"]
    held = [c for c in attrs if c.reveal == "upfront"] + [c for c in attrs if c.reveal == "ask"]
    ordered = held + [c for c in attrs if c.reveal == "late"]
    board = board or Board(world.places)
    goal = Goal(board, [(c.kind, c.value) for c in ordered], len(held), time_index(day, slot))
    return board, goal, sum(c.reveal == "upfront" for c in attrs)


def guessable(world: World, constraints: Any, day: str, slot: str, patience: int, margin: int = 0,
              board: Board | None = None) -> bool:
    """Whether an agent that never asks could book a gold place before the user's patience runs
    out (`agentgym.envs.dialog.fairness.reachable`, the learner skipping up to `margin` places
    at each stage), the user stating, holding back and adding late the constraints as their
    `reveal` says, at the wanted time (day, slot). `board`: the world's, when the caller keeps it."""
    board, goal, upfront = _as_goal(world, constraints, day, slot, board)
    return reachable(board, goal, upfront, patience, margin) if margin else board.reachable(goal, upfront, patience)


def guessable_midway(world: World, constraints: Any, day: str, slot: str, patience: int, margin: int = 0,
                     board: Board | None = None) -> bool:
    """`guessable`, or from any point of a learning agent's learning
    (`agentgym.envs.dialog.fairness.reachable_midway`): what a goal shift must survive."""
    board, goal, upfront = _as_goal(world, constraints, day, slot, board)
    return reachable_midway(board, goal, upfront, patience, margin)


def candidates(world: World, constraints: Any, misses: int = 0) -> tuple[str, ...]:
    """Ids of the places (in world order) that meet every need of `constraints` the user has from
    the start (its late needs and the time aside) but at most `misses`, open or not:
    `Gold.candidates`."""
    early = [c for c in constraints if c.kind != "time" and c.reveal != "late"]
    if not misses:  # at every reset: each filter narrows the next
        places = world.places
        for c in early:
            places = keep(places, c.kind, c.value)
        return tuple(p.id for p in places)
    met = [{p.id for p in keep(world.places, c.kind, c.value)} for c in early]
    return tuple(p.id for p in world.places if sum(p.id not in m for m in met) <= misses)


def satisfying_places(world: World, constraints: Any, day: str, slot: str) -> tuple[str, ...]:
    """The reference solver: ids of the places open at (day, slot) that meet every constraint
    (a time constraint in `constraints` must equal (day, slot), else nothing satisfies it)."""
    for c in constraints:
        if c.kind == "time" and tuple(c.value) != (day, slot):
            return ()
    places = world.places
    for c in constraints:
        if c.kind != "time":
            places = keep(places, c.kind, c.value)
    # The opening hours last: the attribute filters leave few places to check.
    bit = open_bit(day, slot)
    return tuple(p.id for p in places if p.open & bit)


@lru_cache(maxsize=None)
def brief_for(domain: Domain) -> str:
    """The system brief: the assistant's job, the rules of the user it serves, the domain's
    vocabulary and ranges, and how to call tools (built once per domain; every task of it
    shares the string)."""
    t = _tables(domain)
    noun, a_noun = domain.noun, domain.a_noun
    return (
        f"You are a booking assistant for {domain.plural}. Help the user find {a_noun} that meets all of "
        f"their needs and book it for the day and time they want.\n"
        f"How the user behaves:\n"
        f"- They tell you some needs at once and the rest when you ask; ask about what you do not know.\n"
        f"- They may think of a new need later in the conversation (at the latest once you propose or book "
        f"something). Then they come back to what you agreed and ask whether it still works: check it against "
        f"the new need and tell them; if it no longer fits, cancel that booking and book one that does.\n"
        f"- They judge a place you propose as they would a booking of it, and say why one will not do.\n"
        f"- A proposal or booking that breaks a need they already had (told you, or would have told you had "
        f"you asked), and asking again for something they already told you, each cost their patience "
        f"(repeating a question once is forgiven). They warn you when their patience wears thin; one more such "
        f"miss after the warning and they leave. A place that only breaks a need they came up with after you "
        f"proposed or booked it costs nothing.\n"
        f"- Book exactly one {noun}, and cancel any booking the user rejects or asks you to change.\n"
        f"Known {domain.category_label}s: {', '.join(domain.categories)}.\n"
        f"Areas: {', '.join(domain.areas)}.\n"
        f"Amenities: {', '.join(domain.amenities)}.\n"
        f"Prices are in {domain.price_unit}, from {t.prices[0]} to {t.prices[-1]} in steps of "
        f"{domain.price_step}; ratings go from {t.ratings[0]:.1f} to {t.ratings[-1]:.1f} in steps of 0.1. "
        f"Bookings are for a day of the week (Monday to Sunday) and a time of day (morning, afternoon or "
        f"evening).\n"
        f"A call that comes back as an error (it failed or timed out) changed nothing: one a busy system "
        f"stopped can be sent again, and one the tool refused (a place fully booked) needs another choice. "
        f"list_bookings shows every booking made and whether it is still active. Now and then "
        f"a tool answers wrongly (a busy system): check again a result that a decision rests on.\n"
        + HOW_TO_CALL
    )


@lru_cache(maxsize=None)
def domains_for(split: str) -> tuple[str, ...]:
    """The names of the split's domains, sorted (computed once per split)."""
    return tuple(sorted(name for name, d in load_domains().items() if d.split == split))


def generate_task(seed: int, options: dict[str, Any],
                  make_goal: Callable[[World, Rng, Codes], Any] | None = None) -> Task:
    """Generate the dialog task of `seed` (deterministic in seed and options); `make_goal`
    draws the goal in place of the difficulty's own draw (the hard tier's hook), given the
    world's places' `fairness.Codes`."""
    split = options.get("split", "train")
    names = domains_for(split)
    domain_name = options.get("domain")
    # Both draws are read from the stream's bits (two draws need no generator), unconditionally,
    # so fixing the domain or difficulty never shifts the other.
    bits = stream_bits(seed, "task")
    drawn_domain = names[bits % len(names)]
    drawn_difficulty = DIFFICULTIES[bits // len(names) % len(DIFFICULTIES)]
    if domain_name is None:
        domain_name = drawn_domain
    elif domain_name not in load_domains():
        raise ValueError(f"unknown dialog domain {domain_name!r}; known: {sorted(load_domains())}")
    difficulty = options.get("difficulty") or drawn_difficulty
    domain = load_domains()[domain_name]
    # The goal's draws continue the world's stream (one generator per task: making one costs
    # as much as a goal search); the world is drawn first, so it never depends on the difficulty.
    rng = fast_stream(seed, f"task/world/{domain_name}")
    t = _tables(domain)
    world, coded = _fast.make_world(domain, rng, t, Place, World)  # `_make_world`'s world
    codes = Codes.of_places(coded, *t.codes)
    gold = _make_goal(world, difficulty, rng, partial(Board, codes=codes)) if make_goal is None else \
        make_goal(world, rng, codes)
    return Task(
        family="dialog",
        domain=domain_name,
        difficulty=difficulty,
        split=domain.split,
        seed=seed,
        task_id=f"dialog/{domain_name}/{difficulty}/{seed}",
        brief=brief_for(domain),
        world=world,
        goal=gold,
        gold=gold,
        max_turns=DIFFICULTY[difficulty]["max_turns"],
    )


def score_task(task: Task, toolkit: Any) -> Score:
    """Score the final world state: the one active booking against every goal constraint."""
    world: World = task.world
    gold: Gold = task.gold
    active = world.active_bookings()
    if not active:
        return Score(0.0, False, {"reason": "no booking", "met": {}})
    if len(active) > 1:
        return Score(0.0, False, {"reason": f"{len(active)} active bookings (one was asked for)", "met": {}})
    b = active[0]
    place = world.by_id[b.item_id]
    met = {c.id: c.holds(place, b.day, b.slot) for c in gold.constraints}
    share = sum(met.values()) / len(met)
    return Score(round(share, 6), all(met.values()), {"booking": b.item_id, "day": b.day, "slot": b.slot, "met": met})
