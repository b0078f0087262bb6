"""The speed kernels of the dialog tasks: each does what plain code of the family does, on reset's path.

Every kernel names the plain code it stands for and the invariant that makes the two equal;
`tests/envs/dialog/test_dialog_fast.py` checks each against its plain version on many worlds of
every domain. The plain code stays where it was, as the definition; `agentgym.envs.dialog.tasks`
calls the kernels.
"""

from __future__ import annotations

from math import floor
from typing import Any

__all__ = ["make_world"]

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
