"""The speed kernels of the dialog tasks: each does what plain code of the family does, on reset's path.

Every kernel names the plain code it stands for and the invariant that makes the two equal;
`tests/envs/dialog/test_dialog_fast.py` checks each against its plain version on many worlds of
every domain. The plain code stays where it was, as the definition; `agentgym.envs.dialog.tasks`
calls the kernels.
"""

from __future__ import annotations

from math import floor
from typing import Any

__all__ = ["make_world", "reachable"]

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
    amenities is tested without its floor. A test compares the worlds of every domain, their
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
    return world(domain=domain, places=places, by_id=dict(zip(tables.ids, places))), codes


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
    ones if it books, else every place)."""
    candidates = known & ~tried & tries
    first = candidates & above
    if not first:
        return True
    if arrived and patience <= 1:
        return False
    picks = order.tie((first & -first).bit_length() - 1) & candidates
    if arrived:
        late = every
    deeper: set[tuple[int, int, int]] = set()
    while picks:
        low = picks & -picks
        picks ^= low
        for named in held:
            if not named & low:  # a miss, naming the first need it breaks
                if patience > 1:
                    k = known & named & late
                    if not k & ~tried & tries & above:
                        return True
                    if patience > 2:
                        deeper.add((k, patience - 1, tried))
                break
        else:
            if not opens & low:  # a proposal of a closed place: a miss that teaches nothing new
                if patience > 1:
                    k, t = known & late, tried | low
                    if not k & ~t & tries & above:
                        return True
                    if patience > 2:
                        deeper.add((k, patience - 1, t))
            else:  # breaks only a late need: it arrives, at no cost
                k = known & late
                if not k & ~tried & tries & above:
                    return True
                if patience > 1:
                    deeper.add((k, patience, tried))
    for k, p, t in deeper:
        if _learns(order, held, opens, above, late, every, k, True, p, tries, t):
            return True
    return False
