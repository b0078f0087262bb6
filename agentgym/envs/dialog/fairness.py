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
are integers: in each order, bit r stands for the place ranked r. A world's places are small
codes, one byte column per field (`Codes`), and which places meet an attribute is computed once
per world and value (`Board.meets`) as one `bytes.translate` of a column into binary digits, in
rank order, read by one ``int(digits, 2)``: loops in C where a loop over the places in Python
costs several times as much. The first place of an order that fits is the lowest set bit, and
a tie is a run of ranks. The gold is always among a
learner's candidates, so a stage's verdict is known from the candidates strictly better than
the best gold place (`Goal.above`) before its picks are looked at.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from itertools import combinations
from typing import Any, Sequence

import numpy as np

from agentgym.envs.dialog import _fast

__all__ = ["DECOY_MARGIN", "Board", "Codes", "Goal", "codes_of", "reachable", "reachable_midway", "room_above"]

#: Decoys needed beyond the patience in each naive order, so a never-ask agent that walks the
#: results without learning and loses a few of them (a failed call it does not repeat) still
#: runs out of patience first.
DECOY_MARGIN = 2

#: A set of places in each order: (by rating, by price).
Sets = tuple[int, int]

#: The columns of `Codes.cols`, one code per place: its category, area, amenities (bit b: the
#: b-th amenity of `Codes.amenity`), price and rating (indexes into `Codes.prices` and
#: `Codes.ratings`), and its opening hours' three bytes (`OPEN` + k holds bits 8k..8k+7).
CATEGORY, AREA, AMENITIES, PRICE, RATING, OPEN = range(6)

#: Translation tables to the digits of a set: a code meeting the test becomes ``1``, any other ``0``.
_BIT = tuple(bytes(0x31 if v >> b & 1 else 0x30 for v in range(256)) for b in range(8))
#: A rating code as a key of the rating order: the best rated first.
_DESCENDING = bytes(range(255, -1, -1))
#: An array type code of 32-bit items (the opening hours, 21 bits).
_U32 = next(t for t in "ILH" if array(t).itemsize == 4)

#: Per code c: the codes equal to c, from c on, and below c.
_EQUAL = tuple(b"0" * c + b"1" + b"0" * (255 - c) for c in range(256))
_AT_LEAST = tuple(b"0" * c + b"1" * (256 - c) for c in range(257))
_BELOW = tuple(b"1" * c + b"0" * (256 - c) for c in range(257))


def _rank(s: int) -> int:
    """The rank of the first place of the non-empty set `s`."""
    return (s & -s).bit_length() - 1


class Codes:
    """A world's places as small codes: one byte column per field (`CATEGORY` ... `OPEN` + 2),
    indexed by place and padded to 256 bytes so a column is a `bytes.translate` table from place
    indexes to codes; and what each code stands for. The task generator's world kernel
    (`agentgym.envs.dialog._fast.make_world`) records them with the domain's tables as it draws;
    `codes_of` reads them off any places. A world has at most 256 places (80 in every domain)
    and its places at most 8 amenities (a mask is a byte)."""

    __slots__ = ("cols", "category", "area", "amenity", "prices", "ratings")

    def __init__(self, cols: Sequence[bytes], category: dict[Any, int], area: dict[Any, int], amenity: dict[Any, int],
                 prices: Sequence[int], ratings: Sequence[float]) -> None:
        #: The columns, 256 bytes each.
        self.cols = cols
        #: Each category's, area's and amenity's code (an amenity's: its bit in the mask).
        self.category, self.area, self.amenity = category, area, amenity
        #: The price and the rating of each code, in increasing order.
        self.prices, self.ratings = prices, ratings

    @classmethod
    def of_places(cls, codes: list[int], *maps: Any) -> Codes:
        """The codes of places given as (category, area, amenity mask, price, rating, opening
        hours) in turn, in world order (the list is consumed); `maps` as `Codes` takes them."""
        hours = array(_U32, codes[5::6])
        del codes[5::6]
        if sys.byteorder == "big":
            hours.byteswap()
        by_place, by_hours = bytes(codes), hours.tobytes()
        pad = bytes(256 - len(hours))
        return cls([*(by_place[k::5] + pad for k in range(5)), *(by_hours[k::4] + pad for k in range(3))], *maps)



def codes_of(places: Sequence[Any]) -> Codes:
    """The `Codes` of any places (a board made without the generator's), each value coded in
    the order it first appears; prices and ratings in increasing order."""
    category: dict[Any, int] = {}
    area: dict[Any, int] = {}
    amenity: dict[Any, int] = {}
    prices = sorted({p.price for p in places})
    ratings = sorted({p.rating for p in places})
    price_code = {v: k for k, v in enumerate(prices)}
    rating_code = {v: k for k, v in enumerate(ratings)}
    codes: list[int] = []
    for p in places:
        mask = 0
        for a in p.amenities:
            mask |= 1 << amenity.setdefault(a, len(amenity))
        codes += (category.setdefault(p.category, len(category)), area.setdefault(p.area, len(area)), mask,
                  price_code[p.price], rating_code[p.rating], p.open)
    return Codes.of_places(codes, category, area, amenity, prices, ratings)


class _Order:
    """One naive order of a world's places: the place at each rank and the keys in rank order
    (as bytes), where a tie is a run of equal keys."""

    __slots__ = ("places", "keys", "_ties")

    def __init__(self, keys: bytes, n: int) -> None:
        # A stable sort: ties in world order. `keys` holds the key of each place index, padded
        # to 256 bytes (a translation table).
        self.places = np.frombuffer(keys, np.uint8, n).argsort(kind="stable").astype(np.uint8).tobytes()
        self.keys = self.places.translate(keys)
        self._ties: dict[int, int] = {}

    def rank(self, j: int) -> int:
        """The rank of place `j`."""
        return self.places.index(j)

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
    """A world's places in the two naive orders, built once per world, and the sets of places
    meeting each attribute value asked so far (a world's goals share most of them). It is also
    the guard the task generator asks (`bounds`, `room`, `breadth`, `goal`, `reachable`).

    `codes`: the places' `Codes`, when the caller has them (the task generator). A board made
    without them of the very places list the last board made with them was made of shares that
    board's orders and sets: the user's goal shift, planned at reset, asks for the board of the
    world the generator has just searched. A world's places never change, and the shared board
    holds the list, so no other list can be taken for it."""

    __slots__ = ("places", "all", "n", "rating", "price", "codes", "_both", "_cols", "_meets", "_open", "known")

    def __init__(self, places: Sequence[Any], codes: Codes | None = None) -> None:
        global _coded
        if codes is None:
            made = _coded
            if made is not None and made.places is places:
                for name in Board.__slots__:
                    setattr(self, name, getattr(made, name))
                return
        made_with = codes
        if codes is None:
            codes = codes_of(places)
        self.places = places
        self.n = len(places)
        #: Every place, as a set.
        self.all = (1 << self.n) - 1
        self.codes = codes
        self.rating = _Order(codes.cols[RATING].translate(_DESCENDING), self.n)
        self.price = _Order(codes.cols[PRICE], self.n)
        #: The places of the price order, then of the rating order, each from its last rank: the
        #: digits of a number whose low `n` bits are a set in the rating order and the next `n`
        #: in the price order (`_set`).
        self._both = self.price.places[::-1] + self.rating.places[::-1]
        #: Per column, the code of each place of `_both`, made on first use.
        self._cols: list[bytes | None] = [None] * 8
        self._meets: dict[tuple[str, Any], Sets] = {}
        #: The sets of an attribute (kind, value) asked before, else None (`meets` makes them).
        self.known = self._meets.get
        self._open: dict[int, Sets] = {}
        if made_with is not None:
            _coded = self

    def _set(self, col: int, digits: bytes) -> Sets:
        """The places whose code in column `col` the table `digits` turns into ``1``."""
        codes = self._cols[col]
        if codes is None:
            codes = self._cols[col] = self._both.translate(self.codes.cols[col])
        both = int(codes.translate(digits), 2)
        return both & self.all, both >> self.n

    def meets(self, kind: str, value: Any) -> Sets:
        """The places meeting an attribute, as `agentgym.envs.dialog.tasks.keep` decides it."""
        key = (kind, value)
        got = self._meets.get(key)
        if got is None:
            codes = self.codes
            if kind == "price":  # the codes of the prices up to the value
                got = self._set(PRICE, _BELOW[bisect_right(codes.prices, value)])
            elif kind == "rating":  # the codes of the ratings from the value
                got = self._set(RATING, _AT_LEAST[bisect_left(codes.ratings, value)])
            else:
                code = (codes.amenity if kind == "amenity" else codes.category if kind == "category"
                        else codes.area).get(value)
                if code is None:  # no place has it
                    got = (0, 0)
                elif kind == "amenity":
                    got = self._set(AMENITIES, _BIT[code])
                else:
                    got = self._set(CATEGORY if kind == "category" else AREA, _EQUAL[code])
            self._meets[key] = got
        return got

    def bounds(self, need: int) -> tuple[float, int, int, float]:
        """The rating and the price of the place ranked `need` in each order, then the top price
        and the lowest rating."""
        ratings, prices = self.codes.ratings, self.codes.prices
        return (ratings[255 - self.rating.keys[need]], prices[self.price.keys[need]], prices[self.price.keys[-1]],
                ratings[255 - self.rating.keys[-1]])

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
        """`reachable` on this board, without a margin (its kernel, `_fast.reachable`)."""
        return _fast.reachable(self, goal, upfront, patience, DECOY_MARGIN)

    def open_at(self, bit: int) -> Sets:
        """The places open at the time of `bit` (``day * 3 + slot``)."""
        got = self._open.get(bit)
        if got is None:
            got = self._open[bit] = self._set(OPEN + (bit >> 3), _BIT[bit & 7])
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


#: The last board made with its places' codes (see `Board`).
_coded: Board | None = None


def room_above(board: Board, j: int, bit: int, need: int) -> bool:
    """Whether `need` places open at the time of `bit` are better rated than place `j`, and as
    many cheaper: decoys must outrank the best of the gold in each order, and a goal drawn
    around `j` holds it in its gold, so without this room the goal cannot be fair (a test
    before its sets are built)."""
    opens = board.open_at(bit)
    for s, order in enumerate((board.rating, board.price)):
        if (opens[s] & order.above(order.rank(j))).bit_count() < need:
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
