"""Whether an agent that never asks could reach a dialog goal: the generator's guard.

A user whose rejections always name their reason teaches an agent one need per rejection, and
its late needs arrive at the agent's first commitment, free of cost. So a goal is fair only if
no agent that never asks can book a gold place before the user's patience runs out. Two such
agents are played, in each naive order (best rated first, cheapest first) and whichever way
they break ties:

* a walker, that books the places fitting what the user states up front in its order: at
  least ``patience + DECOY_MARGIN`` decoys must outrank every gold place (its first try may
  cost nothing, when it breaks only a late need);
* a learner, that books (or proposes) the first place fitting everything it has heard, and
  learns the need each rejection names (the first the place breaks, in the goal's order) and
  the late needs; it must never reach a gold place, nor after a first booking at a guessed time
  that cost a miss naming the time.

A decoy is a place open at the time that fits all the agent knows and is strictly better rated,
or cheaper, than every gold place (a gold place never is one).

Reset runs this for every goal drawn, millions of times in a training run, so sets of places
are integers: in each order, bit r stands for the place ranked r. Which places meet an
attribute is computed once per world and value (`Board.meets`), the first place of an order
that fits is the lowest set bit, and a tie is a run of ranks. The gold is always among a
learner's candidates, so a stage's verdict is known from the candidates strictly better than
the best gold place (`Goal.above`) before its picks are looked at.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate, combinations, compress, repeat
from operator import and_, or_
from typing import Any, Iterable, Sequence

__all__ = ["DECOY_MARGIN", "Board", "Goal", "reachable", "reachable_midway", "room_above"]

#: Decoys needed beyond the patience in each naive order, so a never-ask agent that walks the
#: results without learning and loses a few of them (a failed call it does not repeat) still
#: runs out of patience first.
DECOY_MARGIN = 2

#: A set of places in each order: (by rating, by price).
Sets = tuple[int, int]


#: ``1 << r`` for each rank r of a world of up to 256 places: sets are sums of these, and a table
#: of constants spares making a new big int per place and order.
_BITS = tuple(1 << r for r in range(256))


def _rank(s: int) -> int:
    """The rank of the first place of the non-empty set `s`."""
    return (s & -s).bit_length() - 1


class _Order:
    """One naive order of a world's places: the place at each rank, each place's rank (as a set
    of one), and the keys in rank order, where a tie is a run of equal keys."""

    __slots__ = ("places", "bit", "keys", "_ties")

    def __init__(self, keys: Sequence[Any]) -> None:
        self.places = sorted(range(len(keys)), key=keys.__getitem__)  # stable: ties in world order
        self.keys = [keys[j] for j in self.places]
        n = len(keys)
        bit = [0] * n
        for j, one in zip(self.places, _BITS if n <= len(_BITS) else [1 << r for r in range(n)]):
            bit[j] = one
        self.bit = bit
        self._ties: dict[int, int] = {}

    def above(self, r: int) -> int:
        """The ranks strictly before the tie of rank `r` (keys strictly better)."""
        return (1 << bisect_left(self.keys, self.keys[r])) - 1

    def tie(self, r: int) -> int:
        """The ranks tied with rank `r`."""
        got = self._ties.get(r)
        if got is None:
            key = self.keys[r]
            lo = bisect_left(self.keys, key)
            got = self._ties[r] = ((1 << (bisect_right(self.keys, key) - lo)) - 1) << lo
        return got


class Board:
    """A world's places in the two naive orders, built once per goal search, and the sets of
    places meeting each attribute value asked so far (a world's goals share most of them).
    It is also the guard the task generator asks (`bounds`, `room`, `breadth`, `goal`,
    `reachable`)."""

    __slots__ = ("places", "all", "rating", "price", "_meets", "_open", "_opens", "_cumulative")

    def __init__(self, places: Sequence[Any]) -> None:
        self.places = places
        #: Every place, as a set.
        self.all = (1 << len(places)) - 1
        self.rating = _Order([-p.rating for p in places])
        self.price = _Order([p.price for p in places])
        self._meets: dict[tuple[str, Any], Sets] = {}
        self._open: dict[int, Sets] = {}
        #: Each place's opening hours, read once per world.
        self._opens: list[int] | None = None
        #: The places of the first k ranks of the price order as a set of the rating order, for
        #: each k, and the other way round (indexed by "is the rating order").
        self._cumulative: list[list[int] | None] = [None, None]

    def _sets(self, hits: Iterable[int]) -> Sets:
        hits = list(hits)
        return sum(map(self.rating.bit.__getitem__, hits)), sum(map(self.price.bit.__getitem__, hits))

    def _first(self, order: _Order, n: int) -> Sets:
        """The first `n` places of `order` (the board's rating or price order), as a set of each."""
        rated = order is self.rating
        cumulative = self._cumulative[rated]
        if cumulative is None:  # the other order's set of each prefix, made once
            other = self.price if rated else self.rating
            cumulative = self._cumulative[rated] = list(accumulate(map(other.bit.__getitem__, order.places), or_,
                                                                   initial=0))
        return ((1 << n) - 1, cumulative[n]) if rated else (cumulative[n], (1 << n) - 1)

    def meets(self, kind: str, value: Any) -> Sets:
        """The places meeting an attribute, as `agentgym.envs.dialog.tasks.keep` decides it."""
        key = (kind, value)
        got = self._meets.get(key)
        if got is None:
            places = self.places
            if kind == "price":  # the cheapest, up to the value: a prefix of the price order
                got = self._first(self.price, bisect_right(self.price.keys, value))
            elif kind == "rating":  # the best rated, down to the value: a prefix of the rating order
                got = self._first(self.rating, bisect_right(self.rating.keys, -value))
            elif kind == "amenity":
                got = self._sets([j for j, p in enumerate(places) if value in p.amenities])
            elif kind == "category":
                got = self._sets([j for j, p in enumerate(places) if p.category == value])
            else:
                got = self._sets([j for j, p in enumerate(places) if p.area == value])
            self._meets[key] = got
        return got

    def bounds(self, need: int) -> tuple[float, int, int, float]:
        """The rating and the price of the place ranked `need` in each order, then the top price
        and the lowest rating."""
        return -self.rating.keys[need], self.price.keys[need], self.price.keys[-1], -self.rating.keys[-1]

    def room(self, j: int, bit: int, need: int) -> bool:
        """`room_above` on this board."""
        return room_above(self, j, bit, need)

    def breadth(self, kind: str, value: Any) -> int:
        """How many places meet an attribute."""
        return self.meets(kind, value)[0].bit_count()

    def goal(self, attrs: Sequence[tuple[str, Any]], n_held: int, bit: int) -> Goal:
        """The `Goal` of `attrs` (held first, late last) at the time of `bit` on this board."""
        return Goal(self, attrs, n_held, bit)

    def reachable(self, goal: Goal, upfront: int, patience: int) -> bool:
        """`reachable` on this board, without a margin."""
        return reachable(self, goal, upfront, patience)

    def open_at(self, bit: int) -> Sets:
        """The places open at the time of `bit` (``day * 3 + slot``)."""
        got = self._open.get(bit)
        if got is None:
            opens = self._opens
            if opens is None:
                opens = self._opens = [p.open for p in self.places]
            got = self._open[bit] = self._sets(compress(range(len(opens)), map(and_, opens, repeat(1 << bit))))
        return got


class Goal:
    """A goal as the agents meet it: per attribute, in the goal's order (those the user has from
    the start first, the late ones last), the places meeting it; the places open at the time;
    and the gold, the places open that meet every attribute."""

    __slots__ = ("attrs", "n_held", "open", "gold", "n_gold", "above", "all", "late", "held")

    def __init__(self, board: Board, attrs: Sequence[tuple[str, Any]], n_held: int, bit: int) -> None:
        self.all = board.all
        self.attrs = [board.meets(kind, value) for kind, value in attrs]
        self.n_held = n_held
        #: The held attributes' sets, per order, in the goal's order (what a rejection names).
        self.held = ([a[0] for a in self.attrs[:n_held]], [a[1] for a in self.attrs[:n_held]])
        self.open = board.open_at(bit)
        late_r = late_p = board.all
        for a in self.attrs[n_held:]:
            late_r &= a[0]
            late_p &= a[1]
        #: The places meeting every late attribute, per order.
        self.late = (late_r, late_p)
        gold_r, gold_p = self.open[0] & late_r, self.open[1] & late_p
        for a in self.attrs[:n_held]:
            gold_r &= a[0]
            gold_p &= a[1]
        self.gold = (gold_r, gold_p)
        self.n_gold = gold_r.bit_count()
        #: The places strictly better than the best of the gold, per order.
        self.above = (board.rating.above(_rank(gold_r)), board.price.above(_rank(gold_p))) if gold_r else (0, 0)

    def gold_places(self, board: Board) -> list[int]:
        """The gold, as indexes into the world's places, in world order."""
        ranks, g, out = board.rating.places, self.gold[0], []
        while g:
            out.append(ranks[(g & -g).bit_length() - 1])
            g &= g - 1
        return sorted(out)


def room_above(board: Board, j: int, bit: int, need: int) -> bool:
    """Whether `need` places open at the time of `bit` are better rated than place `j`, and as
    many cheaper: decoys must outrank the best of the gold in each order, and a goal drawn
    around `j` holds it in its gold, so without this room the goal cannot be fair (a test
    before its sets are built)."""
    opens = board.open_at(bit)
    for s, order in enumerate((board.rating, board.price)):
        if (opens[s] & order.above(order.bit[j].bit_length() - 1)).bit_count() < need:
            return False
    return True


def reachable(board: Board, goal: Goal, upfront: int, patience: int, margin: int = 0) -> bool:
    """Whether a never-ask agent could reach the gold, the user stating the first `upfront` held
    attributes (see the module docstring); the learner may skip `margin` places at each stage."""
    if not goal.gold[0] or goal.n_held - upfront < patience:
        return True  # each reasoned rejection teaches one need: it would learn them all
    need = patience + DECOY_MARGIN
    for s in (0, 1):
        if (_fits(goal, s, range(upfront)) & goal.open[s] & goal.above[s]).bit_count() < need:
            return True  # the walker meets a gold place within its patience
    for s, order in enumerate((board.rating, board.price)):
        stated = _fits(goal, s, range(upfront))
        for books in (True, False):
            if _learner(goal, order, s, stated, False, patience, books, 0, margin):
                return True
        # A booking at a guessed time first costs a miss that names the time and brings the late
        # needs (so when the time is held back, and when the ambiguity noise blurs the one
        # stated); at the wanted time it has tried nothing yet.
        if _learner(goal, order, s, stated & goal.late[s], True, patience - 1, True, 0, margin):
            return True
    return False


def reachable_midway(board: Board, goal: Goal, upfront: int, patience: int, margin: int = 0) -> bool:
    """`reachable`, or from any point of a learner's learning: it may know the late needs and
    any of the held-back needs already (each learnt at the cost of one patience). What a goal
    shift must survive: it comes mid-dialog, and the agent keeps what it learnt."""
    if reachable(board, goal, upfront, patience, margin):
        return True
    stages = [c for k in range(patience) for c in combinations(range(upfront, goal.n_held), k)]
    for s, order in enumerate((board.rating, board.price)):
        base = _fits(goal, s, range(upfront)) & goal.late[s]
        for learnt in stages:
            known = base & _fits(goal, s, learnt)
            for books in (True, False):
                if _learner(goal, order, s, known, True, patience - len(learnt), books, 0, margin):
                    return True
    return False


def _fits(goal: Goal, s: int, attrs: Any) -> int:
    """The places (in order `s`) meeting every attribute of `attrs` (indexes into the goal's)."""
    out = goal.all
    for i in attrs:
        out &= goal.attrs[i][s]
    return out


def _learner(goal: Goal, order: _Order, s: int, known: int, arrived: bool, patience: int, books: bool, tried: int,
             margin: int) -> bool:
    """Whether the learner walking order `s` reaches a gold place before its patience runs out.
    It commits to the first place it has not tried among those meeting all it knows (`known`,
    a set; any of those tied for first, and `margin` more); one that `books` skips places closed
    at the time (booking one fails at no cost), one that proposes does not. A place breaking a
    held attribute costs one patience and the user names the first; a proposed place closed at
    the time costs one and names nothing. At the first commitment the late needs arrive, and a
    place that breaks only those costs nothing.

    Without a margin the picks are the first tie, and they hold a gold place exactly when no
    candidate is strictly better than the best of the gold; once the late needs have arrived,
    a pick meeting all it has heard is gold, so with one patience left no pick leads on."""
    candidates = known & ~tried & (goal.open[s] if books else goal.all)
    if not margin:
        # The gold is always among the candidates (a gold place meets all an agent can know and
        # is open; only closed places are tried), so the first tie holds a gold place unless a
        # candidate is strictly better than the best of the gold.
        first = candidates & goal.above[s]
        if not first:
            return True
        if arrived and patience <= 1:
            return False  # every pick is a costly miss (one meeting all it has heard is gold)
        picks = order.tie(_rank(first)) & candidates
    else:
        if not candidates:
            return False
        picks = order.tie(_rank(candidates)) & candidates
        taken = picks.bit_count()
        candidates &= ~picks
        while candidates and taken <= margin:
            tie = order.tie(_rank(candidates)) & candidates
            picks |= tie
            candidates &= ~tie
            taken += tie.bit_count()
        if picks & goal.gold[s]:
            return True
    late = goal.all if arrived else goal.late[s]
    held, open_s = goal.held[s], goal.open[s]
    # The next stage of each pick; picks that teach the same need lead to the same one (a place
    # breaking what it taught no longer fits, so only a closed proposal is remembered as tried).
    stages: set[tuple[int, int, int]] = set()
    while picks:
        low = picks & -picks
        picks ^= low
        for named in held:
            if not named & low:  # a miss, naming the first need it breaks
                if patience > 1:
                    stages.add((known & named & late, patience - 1, tried))
                break
        else:
            if not open_s & low:  # a proposal of a closed place: a miss that teaches nothing new
                if patience > 1:
                    stages.add((known & late, patience - 1, tried | low))
            else:  # breaks only a late need: it arrives, at no cost
                stages.add((known & late, patience, tried))
    for k, p, t in stages:
        if _learner(goal, order, s, k, True, p, books, t, margin):
            return True
    return False
