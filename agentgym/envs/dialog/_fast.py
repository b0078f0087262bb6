"""The speed kernels of the dialog tasks: each does what plain code of the family does, on reset's path.

Every kernel names the plain code it stands for and the invariant that makes the two equal;
`tests/envs/dialog/test_dialog_fast.py` checks each against its plain version on many worlds of
every domain. The plain code stays where it was, as the definition; the modules on reset's path
call the kernels: the world (`tasks`), the goal search and its guard (`tasks`, `fairness`), and
the itinerary's draw and solvers (`itinerary_draw`, `itinerary`).
"""

from __future__ import annotations

from itertools import compress
from math import floor
from sys import intern
from typing import Any

from agentgym.envs.dialog.place_index import PlaceIndex

__all__ = ["accepted", "best_plan", "make_world", "open_places", "pick_goal", "plan_walk", "priced_keys",
           "reachable"]

_new = object.__new__
#: ``1 << b`` for each amenity bit b.
_ONE = tuple(1 << b for b in range(8))


def make_world(domain: Any, rng: Any, tables: Any, place: type, world: type) -> tuple[Any, list[int]]:
    """`agentgym.envs.dialog.tasks._make_world(domain, rng)`: the same draws in the same order,
    with each place made without its ``__init__`` and each index scaled by a float; and the
    places' codes for the fairness guard (`agentgym.envs.dialog.fairness.Codes.of_places`:
    the indexes of each place's category, area, price and rating in `tables`, its amenity mask
    and its opening hours, in turn).

    `tables` is the domain's `_tables`, `place` and `world` the `Place` and `World` classes.
    Plain code calls ``Place(...)``, a class call whose Python ``__init__`` costs several times
    what it stores, multiplies a draw by an int length and loops over the further amenities.
    Invariants: `Place` is a slots dataclass with no defaults and no ``__post_init__``, so its
    ``__init__`` only stores each field, as this does; ``x * k`` for a float x and a small int
    k converts k exactly, so it is ``x * float(k)``, the product the interpreter specialises;
    and ``floor(x) >= k`` for an int k exactly when ``x >= k``, so the count of further
    amenities is tested without its floor. A name made unique by a number is interned (the same
    string, shared by the worlds that draw it); ``by_id`` is a `PlaceIndex`, the mapping plain
    code's dict is (ids are the domain's first n, in place order), without a dict per world. A test compares the worlds of every domain, their
    codes and the generator's state after them.
    """
    rnd, bits = rng.random, rng.getrandbits
    names, categories, areas, prices, ratings = tables.names, tables.categories, tables.areas, tables.prices, \
        tables.ratings
    amenities = tables.amenities
    n_names, n_cat, n_area = float(len(names)), float(len(categories)), float(len(areas))
    n_prices, n_ratings, n_amen = float(len(prices)), float(len(ratings)), float(tables.n_amenities)
    one = _ONE
    n = domain.size[0] + floor(rnd() * (domain.size[1] - domain.size[0] + 1))
    places: list[Any] = []
    used: set[str] = set()
    add = used.add
    append = places.append
    codes: list[int] = []
    code = codes.extend
    for place_id in tables.ids[:n]:
        name = names[floor(rnd() * n_names)]
        if name in used:
            name = f"{name} {2 + floor(rnd() * 8.0)}"
            while name in used:
                name += " II"
            name = intern(name)  # worlds repeat these too: one string per process, not per world
        add(name)
        p = _new(place)
        p.id = place_id
        p.name = name
        p.category = categories[c := floor(rnd() * n_cat)]
        p.area = areas[a := floor(rnd() * n_area)]
        p.price = prices[pr := floor(rnd() * n_prices)]
        p.rating = ratings[r := floor(rnd() * n_ratings)]
        more = rnd() * 3.0  # 1-3 amenities: floor(more) more draws after the first
        mask = one[floor(rnd() * n_amen)]
        if more >= 1.0:
            mask |= one[floor(rnd() * n_amen)]
            if more >= 2.0:
                mask |= one[floor(rnd() * n_amen)]
        p.amenities = amenities[mask]
        p.open = o = bits(21) | (bits(21) & bits(21) & bits(21))
        append(p)
        code((c, a, mask, pr, r, o))
    return world(domain=domain, places=places, by_id=PlaceIndex(places, tables.at)), codes


def reachable(board: Any, goal: Any, upfront: int, patience: int, decoys: int) -> bool:
    """`agentgym.envs.dialog.fairness.reachable(board, goal, upfront, patience)` (no margin),
    `decoys` being its ``DECOY_MARGIN``: the same sets and the same verdict, each learner stage
    that plain code would enter only to find its verdict at once settled without a call.

    Invariants: the verdict is whether any learner stage reaches the gold, an OR over stages
    with no other effect, so the order stages are tried in does not change it; and a stage
    after the late needs arrived is entered with its `known` set, so the test it opens with
    (no candidate above the gold: True; else, with one patience left: False) reads sets its
    parent already has."""
    gold = goal.gold[0]
    if not gold or goal.n_held - upfront < patience:
        return True
    need = patience + decoys
    every = goal.all
    stated_r = stated_p = every
    for a in goal.attrs[:upfront]:
        stated_r &= a[0]
        stated_p &= a[1]
    open_r, open_p = goal.open
    above_r, above_p = goal.above
    if (stated_r & open_r & above_r).bit_count() < need or (stated_p & open_p & above_p).bit_count() < need:
        return True
    held_r, held_p = goal.held
    late_r, late_p = goal.late
    for order, stated, held, opens, above, late in ((board.rating, stated_r, held_r, open_r, above_r, late_r),
                                                   (board.price, stated_p, held_p, open_p, above_p, late_p)):
        if _learns(order, held, opens, above, late, every, stated, False, patience, opens, 0) or \
                _learns(order, held, opens, above, late, every, stated, False, patience, every, 0):
            return True
        # A booking at a guessed time first: its miss brings the late needs.
        if not stated & late & opens & above or patience > 2 and \
                _learns(order, held, opens, above, late, every, stated & late, True, patience - 1, opens, 0):
            return True
    return False


def _learns(order: Any, held: list[int], opens: int, above: int, late: int, every: int, known: int, arrived: bool,
            patience: int, tries: int, tried: int) -> bool:
    """`fairness._learner` without a margin, in one order: `held`, `opens`, `above` and `late`
    are the goal's sets in that order; `tries` is the places the learner may commit to (the open
    ones if it books, else every place). Plain code looks at each pick in turn; here the picks
    are split by the first held need they break, a set operation per need: every pick a need
    is named for leads to the same stage, and so does every open pick that breaks only a late
    need (a closed proposal's stage remembers the pick, so those are still one at a time)."""
    # The places this learner may commit to above the best of the gold, untried: a stage
    # reaches the gold when it knows of none (its candidates are the known ones of these).
    reach = tries & above
    candidates = known & tries
    if tried:
        reach &= ~tried
        candidates &= ~tried
    first = known & reach
    if not first:
        return True
    if arrived and patience <= 1:
        return False
    picks = order.tie((first & -first).bit_length() - 1) & candidates
    if arrived:
        late = every
    deeper: set[tuple[int, int, int]] = set()
    # The picks that break a held need, by the first they break (the one the user names): each
    # need leads every such pick to the same stage.
    rest = picks
    for named in held:
        if rest & ~named:  # a miss, naming the first need it breaks
            if patience > 1:
                k = known & named & late
                if not k & reach:
                    return True
                if patience > 2:
                    deeper.add((k, patience - 1, tried))
            rest &= named
            if not rest:
                break
    # The picks that meet every held need.
    closed = rest & ~opens
    if closed and patience > 1:  # proposals of closed places: misses that teach nothing new
        k = known & late
        left = k & reach
        while closed:
            low = closed & -closed
            closed ^= low
            if not left & ~low:
                return True
            if patience > 2:
                deeper.add((k, patience - 1, tried | low))
    if rest & opens:  # each breaks only a late need: it arrives, at no cost
        k = known & late
        if not k & reach:
            return True
        if patience > 1:
            deeper.add((k, patience, tried))
    for k, p, t in deeper:
        if _learns(order, held, opens, above, late, every, k, True, p, tries, t):
            return True
    return False


#: Every (day, slot) bit of a week.
_WEEK = (1 << 21) - 1
#: Per count m of items, `Rng.permutation`'s steps: each index i from m - 1 down to 1 and the
#: width of its draw, ``(i + 1).bit_length()``.
_SHUFFLE = tuple(tuple((i, (i + 1).bit_length()) for i in range(m - 1, 0, -1)) for m in range(8))
#: Per byte: how many bits it has set, and which, lowest first.
_COUNT = bytes(v.bit_count() for v in range(256))
_SELECT = tuple(bytes(b for b in range(8) if v >> b & 1) for v in range(256))


def pick_goal(places: list[Any], board: Any, goal_type: type, rng: Any, n: tuple[int, int], held: int, patience: int,
              decoys: int, max_gold: int, rating_cap: float, price_floor: int, top_price: int,
              low_rating: float) -> tuple[int, list[tuple[str, str, Any]], int, Any, bool, bool] | None:
    """`agentgym.envs.dialog.tasks._pick_goal(world, bounds, difficulty, rng)` on a
    `fairness.Board`, `goal_type` being `fairness.Goal`, `n`, `held` and `patience` the
    difficulty's, `decoys` the ``DECOY_MARGIN``, `max_gold` the ``MAX_GOLD``, the rest the goal
    search's `_Bounds`: the same draws in the same order, the same attributes, goal and verdict.

    Plain code asks the board each question by a method (each a call), finds the target's time
    by clearing set bits one at a time, keys the attributes' breadths by the attribute tuples,
    sorts them twice by a key function, builds the whole goal before testing its size and
    permutes by `Rng.permutation`. Invariants: a draw consumes the generator only by its calls,
    which run here in the same order with the same arguments (the permutation is
    `Rng.permutation`'s Fisher-Yates, its ``getrandbits`` calls unchanged); the tests between
    draws read no randomness, so their order is free: the gold's size is tested before the rest
    of the goal is built; the k-th set bit of the week is found a byte at a time; and two
    stable sorts, by breadth and then the held ones by breadth downward, put the attributes in
    the order of the keys (breadth, place in the draw) and then, for the held ones, (-breadth,
    place in the draw), as sorting those keys does (within a breadth the first sort keeps the
    draw's order). A test compares draw by draw, kept and rejected, and the generator's state
    after each."""
    rnd, bits = rng.random, rng.getrandbits
    # `draw_target`
    j = int(rnd() * len(places))
    target = places[j]
    week = target.open & _WEEK
    if not week:
        return None
    # The k-th set bit of the week, a byte at a time.
    k = int(rnd() * week.bit_count())
    byte = week & 255
    if k < _COUNT[byte]:
        bit = _SELECT[byte][k]
    else:
        k -= _COUNT[byte]
        byte = week >> 8 & 255
        bit = 8 + _SELECT[byte][k] if k < _COUNT[byte] else 16 + _SELECT[week >> 16][k - _COUNT[byte]]
    lo, hi = n
    n_total = lo + int(rnd() * (hi - lo + 1))
    rating, price = target.rating, target.price
    if rating >= rating_cap or price <= price_floor:
        return None
    # `fairness.room_above`
    need = patience + decoys
    open_r, open_p = opens = board.open_at(bit)
    by_rating, by_price = board.rating, board.price
    if (open_r & by_rating.above(by_rating.places.index(j))).bit_count() < need or \
            (open_p & by_price.above(by_price.places.index(j))).bit_count() < need:
        return None
    kinds: list[tuple[str, str, Any]] = [("category", "category", target.category), ("area", "area", target.area)]
    if price < top_price:
        kinds.append(("price", "price", int(price)))
    half = floor(rating * 2) / 2
    if rating >= 3.5 and low_rating < half:
        kinds.append(("rating", "rating", half))
    for a in target.amenities[:2]:
        kinds.append((f"amenity:{a}", "amenity", a))
    m = len(kinds)
    if m < n_total - 1:
        return None
    # `Rng.permutation(m)`
    perm = list(range(m))
    for i, width in _SHUFFLE[m]:
        k = bits(width)
        while k > i:
            k = bits(width)
        perm[i], perm[k] = perm[k], perm[i]
    count = n_total - 1
    meets, known = board.meets, board.known
    drawn = [kinds[i] for i in perm[:count]]
    sets = [known((kind, value)) or meets(kind, value) for _, kind, value in drawn]
    late = count - held
    n_held = count - late
    # The attributes by (breadth, draw), then the held ones by (-breadth, draw): a key packs
    # breadth and place in the draw, both under 256 (255 - breadth for the second order).
    keys = [s[0].bit_count() << 8 | i for i, s in enumerate(sets)]
    if late:
        keys.sort()
        tail = [k & 255 for k in keys[n_held:]]
        del keys[n_held:]
    order = [k & 255 for k in sorted([65280 - k + ((k & 255) << 1) for k in keys])]
    if late:
        order += tail
    gold_r, gold_p = open_r, open_p
    for i in order:
        r, p = sets[i]
        gold_r &= r
        gold_p &= p
    if gold_r.bit_count() > max_gold:
        return None
    time_up, lead_up = rnd() < 0.7, rnd() < 0.5
    # `fairness.Goal`
    attrs = [sets[i] for i in order]
    late_r = late_p = every = board.all
    for r, p in attrs[n_held:]:
        late_r &= r
        late_p &= p
    goal = _new(goal_type)
    goal.all = every
    goal.attrs = attrs
    goal.n_held = n_held
    goal.held = ([a[0] for a in attrs[:n_held]], [a[1] for a in attrs[:n_held]])
    goal.open = opens
    goal.late = (late_r, late_p)
    goal.gold = (gold_r, gold_p)
    goal.n_gold = gold_r.bit_count()
    goal.above = (by_rating.above((gold_r & -gold_r).bit_length() - 1),
                  by_price.above((gold_p & -gold_p).bit_length() - 1)) if gold_r else (0, 0)
    # `tasks._fair_statement`
    if reachable(board, goal, 0, patience, decoys):
        return None
    stated = lead_up and n_held > patience and not reachable(board, goal, 1, patience, decoys)
    return bit, [drawn[i] for i in order], late, goal, time_up, stated


# The itinerary solvers (`agentgym.envs.dialog.itinerary`). Each walks the plans as its plain
# solver does, legs in `order`, each leg's options in their order, and cuts a branch where it
# does; "may a partial plan add this place" (`itinerary._admits`: within the budget, not a
# place twice, not an area twice where areas must differ) is one comparison and one `&`: each
# option carries a mark, a bit of its own (places are told apart by identity, as `_admits`
# does) and, where areas must differ, the bit of its area, and a partial plan the union of its
# places' marks. Tests compare each with its solver on the hard tier's itineraries.

#: A walk's legs, per depth: (leg index, its options as (price, rating, tenths, mark, place)),
#: and what the legs from each depth on cost at least (`itinerary._rest`).
PlanWalk = tuple[list[tuple[int, list[tuple[int, float, int, int, Any]]]], list[int]]


def plan_walk(options: list[list[Any]], order: tuple[int, ...], distinct_areas: bool) -> PlanWalk:
    """What the solvers below walk: `options` (each leg's places, best rated first) in `order`,
    under the rule of distinct areas or not; the tenths of a rating are ``round(rating * 10)``."""
    marks: dict[int, int] = {}
    areas: dict[str, int] = {}
    legs = []
    for leg in order:
        opts = []
        for p in options[leg]:
            mark = marks.get(id(p))
            if mark is None:
                mark = marks[id(p)] = 1 << len(marks)
            if distinct_areas:
                area = areas.get(p.area)
                if area is None:
                    area = areas[p.area] = 1 << (256 + len(areas))
                mark |= area
            rating = p.rating
            opts.append((p.price, rating, round(rating * 10), mark, p))
        legs.append((leg, opts))
    cheapest = [min([o[0] for o in opts]) if opts else 0 for _, opts in legs]
    rest = [0] * (len(legs) + 1)
    for depth in range(len(legs) - 1, -1, -1):
        rest[depth] = rest[depth + 1] + cheapest[depth]
    return legs, rest


def priced_keys(walk: PlanWalk, cap: int, total: bool) -> list[tuple[int, tuple[float, ...]]]:
    """``sorted(itinerary.priced_keys(options, order, cap, distinct_areas, objective))`` on
    their `plan_walk`, `total` telling whether the objective is ``TOTAL``: the same plans,
    each leg's options walked cheapest first so that a leg's walk ends at the first option over
    what the budget leaves (the list is sorted, so the order plans are found in is free)."""
    legs, rest = walk
    last = len(legs) - 1
    # An option's tuple sorts by its price first; ties never reach the place (marks differ).
    cheapest = [sorted(opts) for _, opts in legs]
    out: list[tuple[int, tuple[float, ...]]] = []
    add = out.append

    def step(depth: int, spent: int, key: tuple[float, ...], score: int, used: int) -> None:
        limit = cap - spent - rest[depth + 1]
        if depth == last:
            for price, rating, tenths, mark, _ in cheapest[depth]:
                if price > limit:
                    break
                if not used & mark:
                    add((spent + price, ((score + tenths) / 10,) if total else key + (rating,)))
            return
        for price, rating, tenths, mark, _ in cheapest[depth]:
            if price > limit:
                break
            if not used & mark:
                step(depth + 1, spent + price, key + (rating,), score + tenths, used | mark)

    if legs:
        step(0, 0, (), 0, 0)
    else:
        add((0, (0 / 10,) if total else ()))
    out.sort()
    return out


def accepted(walk: PlanWalk, budget: int, total: bool, key: tuple[float, ...]) -> tuple[tuple[str, ...], ...]:
    """The place ids, in leg order, of every plan `itinerary.plans(options, order, budget,
    distinct_areas)` walks whose `plan_key` is `key`, in its order (`itinerary.settle`'s
    accepted plans), on their `plan_walk`; `total` tells whether the objective is ``TOTAL``. A
    branch is cut where no plan below it can have the key: a rating in walk order other than
    the key's (``PRIORITY``), or a sum of tenths that even the best rating of each leg left
    cannot bring up to the key's (``TOTAL``): cutting only skips plans the plain walk would walk
    and discard."""
    legs, rest = walk
    n = len(legs)
    if not n:
        return ((),) if ((0 / 10,) if total else ()) == key else ()
    target = round(key[0] * 10) if total else 0
    best = [max((o[2] for o in opts), default=0) for _, opts in legs]
    reach = [sum(best[d:]) for d in range(n + 1)]
    ids: list[str] = [""] * n
    out: list[tuple[str, ...]] = []

    def step(depth: int, spent: int, score: int, used: int) -> None:
        limit = budget - spent - rest[depth + 1]
        leg, opts = legs[depth]
        for price, rating, tenths, mark, place in opts:
            if price > limit or used & mark:
                continue
            if total:
                if score + tenths + reach[depth + 1] < target:
                    continue
            elif rating != key[depth]:
                continue
            ids[leg] = place.id
            if depth + 1 < n:
                step(depth + 1, spent + price, score + tenths, used | mark)
            elif not total or ((score + tenths) / 10,) == key:
                out.append(tuple(ids))

    step(0, 0, 0, 0)
    return tuple(out)


def best_plan(walk: PlanWalk, budget: int | None, total: bool) -> tuple[Any, ...] | None:
    """`itinerary.best_plan(options, order, budget, distinct_areas, objective)` on their
    `plan_walk`, `total` telling whether the objective is ``TOTAL``: the same branch and bound,
    cut where it cuts."""
    legs, rest = walk
    n = len(legs)
    cap = float("inf") if budget is None else budget
    chosen: list[Any] = [None] * n
    best: list[Any] = [None, None]
    if total:
        reach = [sum(opts[0][2] if opts else 0 for _, opts in legs[k:]) for k in range(n + 1)]

        def step_total(depth: int, spent: int, score: int, used: int) -> None:
            if depth == n:
                key = (score, -spent)
                if best[0] is None or key > best[0]:
                    best[0], best[1] = key, tuple(chosen)
                return
            leg, opts = legs[depth]
            limit = cap - spent - rest[depth + 1]
            for price, _, tenths, mark, place in opts:
                if best[0] is not None and score + tenths + reach[depth + 1] < best[0][0]:
                    break
                if price > limit or used & mark:
                    continue
                chosen[leg] = place
                step_total(depth + 1, spent + price, score + tenths, used | mark)
                chosen[leg] = None

        step_total(0, 0, 0, 0)
        return best[1]
    ratings: list[float] = [0.0] * n

    def step(depth: int, spent: int, used: int) -> None:
        if depth == n:
            key = (tuple(ratings), -spent)
            if best[0] is None or key > best[0]:
                best[0], best[1] = key, tuple(chosen)
            return
        leg, opts = legs[depth]
        limit = cap - spent - rest[depth + 1]
        for price, rating, _, mark, place in opts:
            top = best[0]
            if top is not None and rating < top[0][depth] and tuple(ratings[:depth]) == top[0][:depth]:
                break
            if price > limit or used & mark:
                continue
            chosen[leg], ratings[depth] = place, rating
            step(depth + 1, spent + price, used | mark)
            chosen[leg] = None

    step(0, 0, 0)
    return best[1]


#: Per bit b: each byte's bit b, as a byte (0 or 1).
_ON = tuple(bytes(v >> b & 1 for v in range(256)) for b in range(8))


def open_places(places: list[Any], hours: bytes, bit: int) -> list[Any]:
    """``[p for p in places if p.open >> bit & 1]`` from the places' codes
    (`fairness.Codes`): `hours` is the column of the opening hours' byte that holds `bit`. The
    column translated to each place's bit is the selector of one `itertools.compress`, a C loop
    that keeps the places' order. A test compares them on every time of many worlds."""
    return list(compress(places, hours[:len(places)].translate(_ON[bit & 7])))
