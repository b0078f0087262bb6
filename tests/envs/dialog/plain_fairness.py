"""The fairness guard's contract in plain code: the reference `agentgym.envs.dialog.fairness` is
tested against.

Written from that module's docstring, with lists of places and Python sets and no rank bits:
each agent walks the places of its naive order one tie at a time. `PlainGuard` offers what the
task generator asks of a guard (`agentgym.envs.dialog.tasks._make_goal`), so a whole goal search
can run on this code.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

from agentgym.envs.dialog.fairness import DECOY_MARGIN
from agentgym.envs.dialog.tasks import keep

Key = Any


class PlainGoal:
    """A goal's attributes (held first, late last), the time's bit and its gold, by index."""

    def __init__(self, places: Sequence[Any], attrs: Sequence[tuple[str, Any]], n_held: int, bit: int) -> None:
        self.places, self.attrs, self.n_held, self.bit = places, list(attrs), n_held, bit
        everyone = range(len(places))
        self.meets = [{j for j in everyone if keep([places[j]], kind, value)} for kind, value in self.attrs]
        self.open = {j for j in everyone if places[j].open >> bit & 1}
        self.late = set(everyone).intersection(*self.meets[n_held:])
        self.gold = self.open.intersection(*self.meets)
        self.n_gold = len(self.gold)

    def fits(self, attrs: Any) -> set[int]:
        """The places meeting every attribute of `attrs` (indexes into the goal's)."""
        return set(range(len(self.places))).intersection(*(self.meets[i] for i in attrs))

    def gold_places(self, board: Any = None) -> list[int]:
        return sorted(self.gold)


def naive_order(places: Sequence[Any], rated: bool) -> list[int]:
    """Best rated first, or cheapest first; ties in world order."""
    return sorted(range(len(places)), key=lambda j: _key(places, j, rated))


def _key(places: Sequence[Any], j: int, rated: bool) -> Key:
    return -places[j].rating if rated else places[j].price


def reachable(goal: PlainGoal, upfront: int, patience: int, margin: int = 0) -> bool:
    """Whether a never-ask agent could reach the gold (see `agentgym.envs.dialog.fairness`)."""
    if not goal.gold or goal.n_held - upfront < patience:
        return True
    places, stated = goal.places, goal.fits(range(upfront))
    for rated in (True, False):  # the walker: enough decoys strictly better than all the gold
        best = min(_key(places, j, rated) for j in goal.gold)
        decoys = [j for j in stated & goal.open if _key(places, j, rated) < best]
        if len(decoys) < patience + DECOY_MARGIN:
            return True
    for rated in (True, False):
        for books in (True, False):
            if _learner(goal, rated, stated, False, patience, books, frozenset(), margin):
                return True
        if _learner(goal, rated, stated & goal.late, True, patience - 1, True, frozenset(), margin):
            return True
    return False


def reachable_midway(goal: PlainGoal, upfront: int, patience: int, margin: int = 0) -> bool:
    """`reachable`, or from any point of a learner's learning (`fairness.reachable_midway`)."""
    if reachable(goal, upfront, patience, margin):
        return True
    for k in range(patience):
        for learnt in combinations(range(upfront, goal.n_held), k):
            known = goal.fits(range(upfront)) & goal.late & goal.fits(learnt)
            for rated in (True, False):
                for books in (True, False):
                    if _learner(goal, rated, known, True, patience - len(learnt), books, frozenset(), margin):
                        return True
    return False


def _learner(goal: PlainGoal, rated: bool, known: set[int], arrived: bool, patience: int, books: bool,
             tried: frozenset[int], margin: int) -> bool:
    places = goal.places
    candidates = [j for j in naive_order(places, rated)
                  if j in known and j not in tried and (not books or j in goal.open)]
    picks: list[int] = []
    while candidates and (not picks or len(picks) <= margin):  # a tie at a time
        key = _key(places, candidates[0], rated)
        picks += [j for j in candidates if _key(places, j, rated) == key]
        candidates = [j for j in candidates if _key(places, j, rated) != key]
    if not picks:
        return False
    if goal.gold & set(picks):
        return True
    late = set(range(len(places))) if arrived else goal.late
    stages = set()
    for j in picks:
        broken = [i for i in range(goal.n_held) if j not in goal.meets[i]]
        if broken:  # the user names the first need it breaks, at one patience
            if patience > 1:
                stages.add((frozenset(known & goal.meets[broken[0]] & late), patience - 1, tried))
        elif j not in goal.open:  # a proposal of a closed place: one patience, nothing learnt
            if patience > 1:
                stages.add((frozenset(known & late), patience - 1, tried | {j}))
        else:  # breaks only a late need, which arrives at no cost
            stages.add((frozenset(known & late), patience, tried))
    return any(_learner(goal, rated, set(k), True, p, books, t, margin) for k, p, t in stages)


class PlainGuard:
    """The guard a goal search asks (`tasks._make_goal`'s `guard`), on the plain code."""

    def __init__(self, places: Sequence[Any]) -> None:
        self.places = places

    def bounds(self, need: int) -> tuple[float, int, int, float]:
        by_rating = [self.places[j] for j in naive_order(self.places, True)]
        by_price = [self.places[j] for j in naive_order(self.places, False)]
        return by_rating[need].rating, by_price[need].price, by_price[-1].price, by_rating[-1].rating

    def room(self, j: int, bit: int, need: int) -> bool:
        opens = [k for k, p in enumerate(self.places) if p.open >> bit & 1]
        return all(sum(_key(self.places, k, rated) < _key(self.places, j, rated) for k in opens) >= need
                   for rated in (True, False))

    def breadth(self, kind: str, value: Any) -> int:
        return len(keep(list(self.places), kind, value))

    def goal(self, attrs: Sequence[tuple[str, Any]], n_held: int, bit: int) -> PlainGoal:
        return PlainGoal(self.places, attrs, n_held, bit)

    def reachable(self, goal: PlainGoal, upfront: int, patience: int) -> bool:
        return reachable(goal, upfront, patience)
