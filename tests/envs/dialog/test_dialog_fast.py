"""Each speed kernel of `agentgym.envs.dialog._fast` equals the plain code it stands for."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentgym.core.seeding import fast_stream
from agentgym.envs.dialog import _fast, hard_tier, itinerary, tasks
from agentgym.envs.dialog.domain import load_domains


def test_place_is_a_plain_slots_dataclass() -> None:
    """The world kernel's invariant: `Place.__init__` only stores its fields."""
    fields = dataclasses.fields(tasks.Place)
    assert tasks.Place.__slots__ == tuple(f.name for f in fields)
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in fields)
    assert not hasattr(tasks.Place, "__post_init__")


def _coded(places: list[Any], tables: Any) -> list[int]:
    """Each place's codes as the world kernel records them: the indexes of its category, area,
    price and rating in the domain's tables, its amenities as a mask over the domain's, and its
    opening hours."""
    category, area, amenity, prices, ratings = tables.codes
    out: list[int] = []
    for p in places:
        out += [category[p.category], area[p.area], sum(1 << amenity[a] for a in p.amenities),
                prices.index(p.price), ratings.index(p.rating), p.open]
    return out


@pytest.mark.parametrize("domain", sorted(load_domains()))
def test_make_world_equals_plain(domain: str) -> None:
    """The same places (values and types), ids and generator state after the world, on the
    streams tasks draw worlds from and on others (repeated names and their suffixes included);
    and the codes it records are the places' own."""
    d = load_domains()[domain]
    repeated = 0
    for seed in range(400):
        name = f"task/world/{domain}" if seed % 2 else f"check/{domain}"
        plain_rng, fast_rng = fast_stream(seed, name), fast_stream(seed, name)
        plain = tasks._make_world(d, plain_rng)
        fast, codes = _fast.make_world(d, fast_rng, tasks._tables(d), tasks.Place, tasks.World)
        assert fast == plain, (domain, seed)
        assert codes == _coded(plain.places, tasks._tables(d)), (domain, seed)
        assert [[type(getattr(p, f)) for f in p.__slots__] for p in fast.places] == \
               [[type(getattr(p, f)) for f in p.__slots__] for p in plain.places]
        assert list(fast.by_id) == list(plain.by_id) and fast_rng.getstate() == plain_rng.getstate()
        repeated += sum(p.name not in tasks._tables(d).names for p in plain.places)
    assert repeated > 100  # the suffix draws are exercised


def test_generate_task_uses_the_kernel_world() -> None:
    """A generated task's world is the plain world of its stream."""
    for seed in range(40):
        task = tasks.generate_task(seed, {})
        plain = tasks._make_world(load_domains()[task.domain], fast_stream(seed, f"task/world/{task.domain}"))
        assert task.world == plain


def test_reachable_equals_the_guard() -> None:
    """`_fast.reachable` gives `fairness.reachable`'s verdict (no margin) on goals of generated
    worlds (the generated task's own, fair at its patience, and goals of two to six attributes
    of a place with up to two late ones, at times it is open and not): every patience from one
    to four, every count of needs stated up front."""
    import random

    from agentgym.envs.dialog import fairness

    rng = random.Random(11)  # which goals are asked about, not an episode's draw
    seen: dict[bool, int] = {True: 0, False: 0}
    for seed in range(150):
        task = tasks.generate_task(seed, {"split": "train" if seed % 3 else "test"})
        places = task.world.places
        board = fairness.Board(places)
        goals = [tasks._as_goal(task.world, task.gold.constraints, task.gold.day, task.gold.slot, board)[1]]
        for _ in range(12):
            p = rng.choice(places)
            values = [("category", p.category), ("area", p.area), ("price", p.price), ("rating", p.rating),
                      *(("amenity", a) for a in p.amenities)]
            attrs = rng.sample(values, rng.randint(2, min(6, len(values))))
            n_held = len(attrs) - rng.randint(0, min(2, len(attrs) - 1))
            goals.append(fairness.Goal(board, attrs, n_held, rng.randrange(21)))
        for goal in goals:
            n_held = goal.n_held
            for patience in range(1, 5):
                for upfront in range(min(3, n_held) + 1):
                    want = fairness.reachable(board, goal, upfront, patience)
                    assert _fast.reachable(board, goal, upfront, patience, fairness.DECOY_MARGIN) == want, \
                        (seed, n_held, patience, upfront)
                    seen[want] += 1
    assert min(seen.values()) > 500  # both verdicts, many times


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_pick_goal_equals_plain(difficulty: str) -> None:
    """`_fast.pick_goal` draws what `tasks._pick_goal` draws on the same board, draw by draw
    (kept and rejected alike): the same verdict, time, attributes in order, late count, goal
    sets and statements, and the same generator state after."""
    from agentgym.envs.dialog import fairness

    spec = tasks.DIFFICULTY[difficulty]
    kept = 0
    for seed in range(60):
        for split in ("train", "test"):
            names = tasks.domains_for(split)
            domain = load_domains()[names[seed % len(names)]]
            rng = fast_stream(seed, f"task/world/{domain.name}")
            world, codes = _fast.make_world(domain, rng, tasks._tables(domain), tasks.Place, tasks.World)
            board = fairness.Board(world.places, fairness.Codes.of_places(codes, *tasks._tables(domain).codes))
            need = min(spec["patience"] + fairness.DECOY_MARGIN, len(world.places)) - 1
            bounds = tasks._Bounds(board, *board.bounds(need))
            for _ in range(20):
                state = rng.getstate()
                fast = _fast.pick_goal(world.places, board, fairness.Goal, rng, spec["n"], spec["held"],
                                       spec["patience"], fairness.DECOY_MARGIN, tasks.MAX_GOLD, *bounds[1:])
                after = rng.getstate()
                rng.setstate(state)
                plain = tasks._pick_goal(world, bounds, difficulty, rng)
                assert rng.getstate() == after, (seed, split)
                assert (fast is None) == (plain is None), (seed, split)
                if plain is not None:
                    kept += 1
                    assert fast[:3] == plain[:3] and fast[4:] == plain[4:], (seed, split)
                    assert [getattr(fast[3], k) for k in fairness.Goal.__slots__] == \
                           [getattr(plain[3], k) for k in fairness.Goal.__slots__], (seed, split)
    assert kept > 200


def _plain_admits(place: Any, taken: list[Any], committed: int, budget: int | None, distinct_areas: bool) -> bool:
    """`itinerary._admits` as first written: "not a place twice" by equality."""
    if budget is not None and committed + place.price > budget:
        return False
    return place not in taken and not (distinct_areas and any(t.area == place.area for t in taken))


def test_itinerary_walks_equal_the_plain_admits(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_admits` tells a place apart by identity: the solvers' plans, best plans and the
    itineraries drawn are those of the test by equality, on the hard tier's tasks."""
    def solved() -> list[Any]:
        out: list[Any] = []
        for seed in range(60):
            task = hard_tier.generate_task(seed, {"difficulty": "hard"})
            out.append((task.gold, task.extra.get("plan")))
            if task.extra.get("kind") != "itinerary":
                continue
            gold = task.gold
            options = [itinerary.candidates(task.world, leg) for leg in gold.legs]
            for budget in (None, gold.budget, gold.budget - 1):
                for distinct in (False, True):
                    out += [itinerary.best_plan(options, gold.priority, budget, distinct, objective)
                            for objective in (itinerary.PRIORITY, itinerary.TOTAL)]
                    if budget is not None:
                        out += [itinerary.priced_keys(options, gold.priority, budget, distinct, objective)
                                for objective in (itinerary.PRIORITY, itinerary.TOTAL)]
                    out.append(list(itinerary.plans(options, gold.priority, budget, distinct)))
        return out

    fast = solved()
    monkeypatch.setattr(itinerary, "_admits", _plain_admits)
    assert fast == solved()


def test_priced_keys_equal_pricing_each_plan_walked() -> None:
    """`priced_keys` (one walk carrying the total and the key) equals each plan of `plans`
    priced and keyed by `plan_key`, in order, under both objectives."""
    for seed in range(80):
        task = hard_tier.generate_task(seed, {"difficulty": "hard"})
        if task.extra.get("kind") != "itinerary":
            continue
        gold = task.gold
        options = [itinerary.candidates(task.world, leg) for leg in gold.legs]
        for cap in (gold.budget, gold.budget * 2):
            for objective in (itinerary.PRIORITY, itinerary.TOTAL):
                plain = [(sum(p.price for p in plan), itinerary.plan_key(plan, gold.priority, objective))
                         for plan in itinerary.plans(options, gold.priority, cap, True)]
                assert itinerary.priced_keys(options, gold.priority, cap, True, objective) == plain


def test_a_board_of_the_generated_places_shares_the_generators() -> None:
    """A board made of the places list the generator's board was made of (the user's goal
    shift at reset) shares its orders and sets; one of an equal copy of the list reads the
    codes off the places and gives the same answers."""
    from agentgym.envs.dialog import fairness

    for seed in range(10):
        task = tasks.generate_task(seed, {})
        places = task.world.places
        shared, copied = fairness.Board(places), fairness.Board(list(places))
        assert shared._meets is fairness._coded._meets and shared.codes is fairness._coded.codes
        assert copied._meets is not shared._meets and copied.codes is not shared.codes
        for c in task.gold.constraints:
            if c.kind != "time":
                assert shared.meets(c.kind, c.value) == copied.meets(c.kind, c.value)
        assert [shared.open_at(bit) for bit in range(21)] == [copied.open_at(bit) for bit in range(21)]
        assert shared.rating.places == copied.rating.places and shared.price.keys == copied.price.keys


def test_open_places_equals_plain() -> None:
    """`_fast.open_places` keeps the places open at each time, in world order, as the plain
    filter does, on worlds of every domain (their codes as the world kernel records them)."""
    from agentgym.envs.dialog.fairness import OPEN, Codes

    for seed in range(30):
        for domain in load_domains().values():
            world, coded = _fast.make_world(domain, fast_stream(seed, f"task/world/{domain.name}"),
                                            tasks._tables(domain), tasks.Place, tasks.World)
            codes = Codes.of_places(coded, *tasks._tables(domain).codes)
            for bit in range(21):
                got = _fast.open_places(world.places, codes.cols[OPEN + (bit >> 3)], bit)
                want = [p for p in world.places if p.open >> bit & 1]
                assert [id(p) for p in got] == [id(p) for p in want], (seed, domain.name, bit)


def test_plan_kernels_equal_the_solvers() -> None:
    """`_fast.best_plan`, `_fast.priced_keys` and `_fast.accepted` equal `itinerary.best_plan`,
    `itinerary.priced_keys` (sorted) and the plans of `itinerary.plans` with a key, on the hard tier's
    itineraries: budgets none, the gold's, one under and twice it; areas distinct or not; both
    objectives; the keys of the best plan and of others walked."""
    compared = 0
    for seed in range(80):
        task = hard_tier.generate_task(seed, {"difficulty": "hard"})
        if task.extra.get("kind") != "itinerary":
            continue
        gold = task.gold
        options = [itinerary.candidates(task.world, leg) for leg in gold.legs]
        for order in (gold.priority, tuple(reversed(gold.priority))):
            for distinct in (False, True):
                walk = _fast.plan_walk(options, order, distinct)
                for objective in (itinerary.PRIORITY, itinerary.TOTAL):
                    total = objective == itinerary.TOTAL
                    for budget in (None, gold.budget, gold.budget - 1, gold.budget * 2):
                        best = itinerary.best_plan(options, order, budget, distinct, objective)
                        assert _fast.best_plan(walk, budget, total) == best, (seed, budget, distinct, objective)
                        if budget is None:
                            continue
                        assert _fast.priced_keys(walk, budget, total) == \
                            sorted(itinerary.priced_keys(options, order, budget, distinct, objective))
                        walked = list(itinerary.plans(options, order, budget, distinct))
                        keys = {itinerary.plan_key(plan, order, objective) for plan in walked[:6]}
                        if best is not None:
                            keys.add(itinerary.plan_key(best, order, objective))
                        for key in keys:
                            assert _fast.accepted(walk, budget, total, key) == tuple(
                                tuple(p.id for p in plan) for plan in walked
                                if itinerary.plan_key(plan, order, objective) == key), (seed, budget, key)
                            compared += 1
    assert compared > 500


def _plain_search(world: Any, category: Any = None, area: Any = None, max_price: Any = None, min_rating: Any = None,
                  amenities: Any = None, page: int = 1) -> dict[str, Any]:
    """The search tool as first written: every place ranked, then filtered."""
    hits = sorted(world.places, key=lambda p: p.rating, reverse=True)
    for kind, value in (("category", category), ("area", area), ("price", max_price), ("rating", min_rating)):
        if value is not None:
            hits = tasks.keep(hits, kind, value)
    for a in amenities or ():
        hits = tasks.keep(hits, "amenity", a)
    chunk = hits[(page - 1) * 5: page * 5]
    return {"results": [p.summary() for p in chunk], "total": len(hits), "page": page,
            "pages": max(1, -(-len(hits) // 5))}


@pytest.mark.parametrize("domain", sorted(load_domains()))
def test_search_filtering_before_ranking_equals_ranking_first(domain: str) -> None:
    """The search tool filters the places, then ranks the hits: the same results, in the same
    order (ties of rating in id order), as ranking every place and filtering the ranking."""
    import random

    from agentgym.envs.dialog.tools import DialogToolkit

    d = load_domains()[domain]
    rng = random.Random(7)  # a fixed set of searches, not an episode's draw
    tables = tasks._tables(d)
    ranked = 0
    for seed in range(20):
        world = tasks._make_world(d, fast_stream(seed, f"task/world/{domain}"))
        toolkit = DialogToolkit(world)
        for _ in range(25):
            kw = {"category": rng.choice([None, None, *d.categories]), "area": rng.choice([None, None, *d.areas]),
                  "max_price": rng.choice([None, None, *tables.prices]),
                  "min_rating": rng.choice([None, None, *tables.ratings]),
                  "amenities": rng.choice([None, [], rng.sample(d.amenities, 1)]), "page": rng.choice([1, 1, 2])}
            got = toolkit.search(**kw)
            assert got == _plain_search(world, **kw)
            ranked += got["total"] > 5
    assert ranked > 10  # searches whose ranking has more than a page to order
