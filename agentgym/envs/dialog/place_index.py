"""A dialog world's places by id, without a dict of their own.

A world's place ids are always the first n of its domain's ids, in place order
(`agentgym.envs.dialog.tasks._make_world`), so ``dict(zip(ids, places))`` is a table every
world of the domain shares (an id's position) and the world's own list. A world of 55 places
kept a 1.5 KB dict beside its places; `PlaceIndex` keeps the shared table and the list: a
lookup is the table's (in C) and an index into the list. Tools, users and scorers only read
`World.by_id`; a test compares it with the plain dict on many worlds of every domain.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

__all__ = ["PlaceIndex"]


class PlaceIndex(Mapping[str, Any]):
    """``dict(zip(ids, places))`` for `places` and the domain's `at` (each id's position in
    the domain's id order, shared by its worlds and never written).

    Args:
        places: the world's places, in order (a world never adds or removes one).
        at: the domain's id -> position table.
    """

    __slots__ = ("_places", "_at", "_n")

    def __init__(self, places: Sequence[Any], at: Mapping[str, int]) -> None:
        self._places = places
        self._at = at
        self._n = len(places)

    def __getitem__(self, key: str) -> Any:
        i = self._at.get(key, self._n)
        if i >= self._n:
            raise KeyError(key)
        return self._places[i]

    def get(self, key: str, default: Any = None) -> Any:
        i = self._at.get(key, self._n)
        return self._places[i] if i < self._n else default

    def __contains__(self, key: object) -> bool:
        return self._at.get(key, self._n) < self._n  # type: ignore[call-overload]

    def __iter__(self) -> Iterator[str]:
        return islice(self._at, self._n)

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return repr(dict(self.items()))
