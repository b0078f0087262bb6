"""Dialog tasks: a generated world of bookable places, the user's goal, and the gold bookings.

The generator picks a target place and a time it is open, derives the goal's constraints from the
target's attributes (so the task is solvable), and enumerates exactly the places that satisfy the
whole goal at that time (`Gold.items`), redrawing goals that too many places would satisfy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from agentgym.core.seeding import Rng, fast_stream
from agentgym.core.task import DIFFICULTIES, Score, Task
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain, load_domains

__all__ = ["Place", "Booking", "World", "Constraint", "Gold", "generate_task", "score_task", "satisfying_places",
           "DIFFICULTY"]

#: Per difficulty: (min, max) constraints in the goal (the time counts as one), how many arrive
#: late and from which turns they are volunteered, the wrong bookings after which the user gives
#: up, and the turn budget.
DIFFICULTY: dict[str, dict[str, Any]] = {
    "easy": {"n": (2, 3), "late": 0, "late_turns": (3, 7), "patience": 3, "max_turns": 16},
    "medium": {"n": (3, 4), "late": 1, "late_turns": (5, 10), "patience": 1, "max_turns": 20},
    "hard": {"n": (5, 6), "late": 3, "late_turns": (6, 12), "patience": 1, "max_turns": 24},
}
#: A goal is redrawn until at most this many places satisfy it (up to MAX_GOAL_DRAWS times).
MAX_GOLD = 6
MAX_GOAL_DRAWS = 64


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
        return bool(self.open >> (DAYS.index(day) * 3 + SLOTS.index(slot)) & 1)

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


@dataclass(slots=True)
class Columns:
    """The places' attributes as arrays (indices into the domain's vocabularies), for fast
    filtering by the tools and the reference solver. Read-only after generation."""

    cat: np.ndarray
    area: np.ndarray
    price: np.ndarray
    rating: np.ndarray
    amen: np.ndarray
    open: np.ndarray
    #: Place indices best rated first (ties by id): the order search results come in.
    order: np.ndarray

    def mask(self, constraints: Any, domain: Domain, day: str | None = None, slot: str | None = None) -> np.ndarray:
        """Which places meet every constraint (and are open at day/slot when given)."""
        m = np.ones(len(self.cat), dtype=bool)
        for c in constraints:
            k, v = c.kind, c.value
            if k == "category":
                m &= self.cat == domain.categories.index(v)
            elif k == "area":
                m &= self.area == domain.areas.index(v)
            elif k == "price":
                m &= self.price <= v
            elif k == "rating":
                m &= self.rating >= v
            elif k == "amenity":
                m &= (self.amen >> domain.amenities.index(v)) & 1 == 1
            elif k == "time":
                day, slot = v
        if day is not None and slot is not None:
            m &= (self.open >> (DAYS.index(day) * 3 + SLOTS.index(slot))) & 1 == 1
        return m


@dataclass
class World:
    """The mutable state of one dialog episode."""

    domain: Domain
    places: list[Place]
    by_id: dict[str, Place]
    cols: Columns
    bookings: dict[str, Booking] = field(default_factory=dict)

    def active_bookings(self) -> list[Booking]:
        return [b for b in self.bookings.values() if b.active]


@dataclass(frozen=True, slots=True)
class Constraint:
    """One goal constraint: `kind` in category, area, price, rating, amenity, time."""

    id: str
    kind: str
    value: Any
    reveal: str  # "upfront", "ask" or "late"

    def holds(self, place: Place, day: str, slot: str) -> bool:
        k, v = self.kind, self.value
        if k == "category":
            return place.category == v
        if k == "area":
            return place.area == v
        if k == "price":
            return place.price <= v
        if k == "rating":
            return place.rating >= v
        if k == "amenity":
            return v in place.amenities
        if k == "time":
            return (day, slot) == tuple(v)
        raise ValueError(f"unknown constraint kind {k!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "value": list(self.value) if self.kind == "time" else self.value,
                "reveal": self.reveal}


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

    def plan(self) -> list[dict[str, Any]]:
        """The reference plan, for tool accuracy: one booking of any gold place at the time."""
        return [{"name": "book", "arguments": {"item_id": {"any_of": list(self.items)}, "day": self.day,
                                               "slot": self.slot}}]

    def to_dict(self) -> dict[str, Any]:
        return {"constraints": [c.to_dict() for c in self.constraints], "day": self.day, "slot": self.slot,
                "items": list(self.items), "calls": self.plan(), "superseded_calls": list(self.superseded)}


@lru_cache(maxsize=None)
def _vocab_tables(domain: Domain) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """Per domain, built once: every place name, the amenity tuple of each bitmask, and ids."""
    first, second = domain.name_parts
    names = tuple(f"{a} {b}" for a in first for b in second)
    amen = tuple(tuple(a for b, a in enumerate(domain.amenities) if m >> b & 1)
                 for m in range(1 << len(domain.amenities)))
    ids = tuple(f"{domain.id_prefix}_{i + 1:03d}" for i in range(domain.size[1]))
    return names, amen, ids


def _make_world(domain: Domain, rng: Rng) -> World:
    # Scalar draws on a fast generator and per-domain lookup tables keep reset cheap: it runs
    # once per episode, millions of times in a training run.
    rnd, bits = rng.random, rng.getrandbits
    n = domain.size[0] + int(rnd() * (domain.size[1] - domain.size[0] + 1))
    names, amen_table, ids = _vocab_tables(domain)
    n_names, n_cat, n_area, n_amen = len(names), len(domain.categories), len(domain.areas), len(domain.amenities)
    n_prices = (domain.price_max - domain.price_min) // domain.price_step + 1
    cats, areas, prices, ratings, amens, opens = [], [], [], [], [], []
    places: list[Place] = []
    used: set[str] = set()
    for i in range(n):
        name = names[int(rnd() * n_names)]
        if name in used:  # names are how users and LLMs refer to places: keep them unique
            name = f"{name} {2 + int(rnd() * 8)}"
            while name in used:
                name += " II"
        used.add(name)
        c, a = int(rnd() * n_cat), int(rnd() * n_area)
        price = domain.price_min + domain.price_step * int(rnd() * n_prices)
        rating = 30 + int(rnd() * 21)
        mask = 0
        for _ in range(1 + int(rnd() * 3)):  # 1-3 amenities (a repeat draw means fewer)
            mask |= 1 << int(rnd() * n_amen)
        # Each (day, slot) open with probability 5/8.
        open_bits = bits(21) | (bits(21) & bits(21) & bits(21))
        cats.append(c)
        areas.append(a)
        prices.append(price)
        ratings.append(rating)
        amens.append(mask)
        opens.append(open_bits)
        places.append(Place(ids[i], name, domain.categories[c], domain.areas[a], price, rating / 10,
                            amen_table[mask], open_bits))
    rating_arr = np.array(ratings)
    cols = Columns(cat=np.array(cats), area=np.array(areas), price=np.array(prices), rating=rating_arr / 10,
                   amen=np.array(amens, dtype=np.int64), open=np.array(opens, dtype=np.int64),
                   order=np.lexsort((np.arange(n), -rating_arr)))
    return World(domain=domain, places=places, by_id={p.id: p for p in places}, cols=cols)


def _make_goal(world: World, difficulty: str, rng: Rng) -> Gold:
    # Draw goals until one is selective enough that the set of satisfying places is small; the
    # set is then enumerated exactly (the world is never edited to force uniqueness).
    best: Gold | None = None
    for _ in range(MAX_GOAL_DRAWS):
        gold = _draw_goal(world, difficulty, rng)
        if gold is None:
            continue
        if len(gold.items) <= MAX_GOLD:
            return gold
        if best is None or len(gold.items) < len(best.items):
            best = gold
    assert best is not None, "no place can carry a goal of this difficulty"
    return best


def _draw_goal(world: World, difficulty: str, rng: Rng) -> Gold | None:
    spec = DIFFICULTY[difficulty]
    # The target is a place open at a drawn time; its attributes become the constraints, so the
    # task is solvable by construction.
    target = world.places[int(rng.integers(len(world.places)))]
    day, slot = DAYS[int(rng.integers(7))], SLOTS[int(rng.integers(3))]
    n_total = int(rng.integers(spec["n"][0], spec["n"][1] + 1))
    if not target.is_open(day, slot):
        return None
    # Skip attributes that every place of this world meets (the world's top price, a rating
    # under 3.5): no vacuous constraints.
    kinds = ["category", "area"]
    if target.price < int(world.cols.price.max()):
        kinds.append("price")
    if target.rating >= 3.5 and float(world.cols.rating.min()) < math.floor(target.rating * 2) / 2:
        kinds.append("rating")
    kinds += [f"amenity:{a}" for a in target.amenities[:2]]
    if len(kinds) < n_total - 1:
        return None
    order = [kinds[i] for i in rng.permutation(len(kinds))][: n_total - 1]
    attrs: list[tuple[str, str, Any]] = []
    for k in order:
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
    late = min(spec["late"], n_total - 3) if difficulty == "hard" else spec["late"]  # hard: 2 late of 5, 3 of 6
    constraints: list[Constraint] = []
    time_reveal = "upfront" if rng.random() < 0.7 else "ask"
    constraints.append(Constraint("time", "time", (day, slot), time_reveal))
    for i, (cid, kind, value) in enumerate(attrs):
        if i >= len(attrs) - late:
            reveal = "late"
        elif i == 0:
            reveal = "upfront"
        else:
            reveal = "ask"
        constraints.append(Constraint(cid, kind, value, reveal))
    items = satisfying_places(world, constraints, day, slot)
    lo, hi = spec["late_turns"]
    late_turns = tuple(sorted(rng.integers(lo, hi + 1, size=late)))
    return Gold(tuple(constraints), day, slot, items, late_turns, spec["patience"])


def satisfying_places(world: World, constraints: Any, day: str, slot: str) -> tuple[str, ...]:
    """The reference solver: ids of the places open at (day, slot) that meet every constraint
    (a time constraint in `constraints` must equal (day, slot), else nothing satisfies it)."""
    for c in constraints:
        if c.kind == "time" and tuple(c.value) != (day, slot):
            return ()
    m = world.cols.mask([c for c in constraints if c.kind != "time"], world.domain, day, slot)
    return tuple(world.places[i].id for i in np.flatnonzero(m).tolist())


def brief_for(domain: Domain) -> str:
    """The system brief: the assistant's job, the domain vocabulary and how to call tools."""
    return (
        f"You are a booking assistant for {domain.plural}. Help the user find a {domain.noun} that meets "
        f"all of their needs and book it for the day and time they want. Ask about what you do not know; "
        f"the user may add needs later, and you may propose a place to check it with them first. Book "
        f"exactly one {domain.noun}; cancel a booking the user rejects.\n"
        f"Known {domain.category_label}s: {', '.join(domain.categories)}.\n"
        f"Areas: {', '.join(domain.areas)}.\n"
        f"Amenities: {', '.join(domain.amenities)}.\n"
        f"Prices are in {domain.price_unit}; ratings go from 3.0 to 5.0.\n"
        'To call a tool, reply with JSON {"name": "<tool>", "arguments": {...}} (or <tool_call> tags); '
        "anything else is a message to the user."
    )


def domains_for(split: str) -> list[str]:
    return sorted(name for name, d in load_domains().items() if d.split == split)


def generate_task(seed: int, options: dict[str, Any]) -> Task:
    """Generate the dialog task of `seed` (deterministic in seed and options)."""
    rng = fast_stream(seed, "task")
    split = options.get("split", "train")
    names = domains_for(split)
    domain_name = options.get("domain")
    # Draw unconditionally so fixing the domain or difficulty never shifts later draws.
    drawn_domain = names[int(rng.integers(len(names)))]
    drawn_difficulty = DIFFICULTIES[int(rng.integers(len(DIFFICULTIES)))]
    if domain_name is None:
        domain_name = drawn_domain
    elif domain_name not in load_domains():
        raise ValueError(f"unknown dialog domain {domain_name!r}; known: {sorted(load_domains())}")
    difficulty = options.get("difficulty") or drawn_difficulty
    domain = load_domains()[domain_name]
    world = _make_world(domain, fast_stream(seed, f"task/world/{domain_name}"))
    gold = _make_goal(world, difficulty, fast_stream(seed, f"task/goal/{difficulty}"))
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
