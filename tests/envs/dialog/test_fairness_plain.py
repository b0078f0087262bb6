"""The fairness guard (`agentgym.envs.dialog.fairness`, sets of places as rank bits, a learner
that stops once its verdict is known) gives the verdicts of its plain contract
(`plain_fairness`, lists and Python sets) on every goal the task generator draws, and the
generator draws the same tasks on either.

Run as a script for a longer check: ``python tests/envs/dialog/test_fairness_plain.py [FIRST] STOP``
(every split and difficulty of seeds FIRST..STOP-1; it prints how many verdicts it compared).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plain_fairness import PlainGuard, reachable, reachable_midway  # noqa: E402

from agentgym.core.seeding import fast_stream  # noqa: E402
from agentgym.envs.dialog import fairness  # noqa: E402
from agentgym.envs.dialog.tasks import _make_goal, _make_world, domains_for, load_domains  # noqa: E402


class _Pair(tuple):  # type: ignore[type-arg]
    """A goal on both guards, read by the generator as the board's."""

    @property
    def n_gold(self) -> int:
        return self[0].n_gold

    @property
    def n_held(self) -> int:
        return self[0].n_held

    def gold_places(self, guard: Any) -> list[int]:
        return self[0].gold_places(guard.board)


class Checked:
    """A guard that asks both the board and the plain code and fails on any difference; the
    learner is also compared with a margin of one, and from midway (what a goal shift asks)."""

    def __init__(self, places: Sequence[Any], seen: Counter[str]) -> None:
        self.board, self.plain, self.seen = fairness.Board(places), PlainGuard(places), seen

    def _same(self, what: str, fast: Any, plain: Any) -> Any:
        assert fast == plain, (what, fast, plain)
        self.seen[what] += 1
        return fast

    def bounds(self, need: int) -> Any:
        return self._same("bounds", self.board.bounds(need), self.plain.bounds(need))

    def room(self, j: int, bit: int, need: int) -> bool:
        return self._same("room", self.board.room(j, bit, need), self.plain.room(j, bit, need))

    def breadth(self, kind: str, value: Any) -> int:
        return self._same("breadth", self.board.breadth(kind, value), self.plain.breadth(kind, value))

    def goal(self, attrs: Sequence[tuple[str, Any]], n_held: int, bit: int) -> _Pair:
        pair = _Pair((self.board.goal(attrs, n_held, bit), self.plain.goal(attrs, n_held, bit)))
        self._same("gold", pair[0].gold_places(self.board), pair[1].gold_places())
        return pair

    def reachable(self, pair: Any, upfront: int, patience: int) -> bool:
        fast, plain = pair
        self._same("reachable, margin 1", fairness.reachable(self.board, fast, upfront, patience, 1),
                   reachable(plain, upfront, patience, 1))
        self._same("reachable midway", fairness.reachable_midway(self.board, fast, upfront, patience),
                   reachable_midway(plain, upfront, patience))
        return self._same("reachable", self.board.reachable(fast, upfront, patience),
                          reachable(plain, upfront, patience))


def compare(seeds: range) -> Counter[str]:
    """Draw every task of `seeds` (both splits, every difficulty) with the checked guard, and
    again with the board alone and with the plain code alone: the same tasks, the same draws."""
    seen: Counter[str] = Counter()
    for seed in seeds:
        for split in ("train", "test"):
            names = domains_for(split)
            name = names[seed % len(names)]
            for difficulty in ("easy", "medium", "hard"):
                rng = fast_stream(seed, f"task/world/{name}")
                world = _make_world(load_domains()[name], rng)
                state = rng.getstate()
                golds, ends = [], []
                for guard in (fairness.Board, PlainGuard, lambda places: Checked(places, seen)):
                    rng.setstate(state)
                    golds.append(_make_goal(world, difficulty, rng, guard))
                    ends.append(rng.getstate())
                assert golds[0] == golds[1] == golds[2] and ends[0] == ends[1] == ends[2], (seed, split, difficulty)
                seen["task"] += 1
    return seen


@pytest.mark.parametrize("seeds", [range(0, 60), range(60, 120)])
def test_the_guard_gives_the_plain_verdicts(seeds: range) -> None:
    seen = compare(seeds)
    assert seen["task"] == 6 * len(seeds)
    assert seen["reachable"] > 2 * seen["task"]  # every task settles at least one goal


if __name__ == "__main__":
    bounds = [int(a) for a in sys.argv[1:3]] or [1000]
    print(dict(compare(range(*bounds))))
