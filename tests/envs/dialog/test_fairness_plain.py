"""The fairness guard (`agentgym.envs.dialog.fairness`, sets of places as rank bits, a learner
that stops once its verdict is known) gives the verdicts of its plain contract
(`plain_fairness`, lists and Python sets) on every goal the task generator draws, its board
made with the world kernel's codes as the generator makes it and with codes read off the
places, and the generator draws the same tasks on each.

Run as a script for a longer check: ``python tests/envs/dialog/test_fairness_plain.py [FIRST] STOP``
(every split and difficulty of seeds FIRST..STOP-1; it prints how many verdicts it compared).
"""

from __future__ import annotations

import sys
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, Sequence

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plain_fairness import PlainGuard, reachable, reachable_midway  # noqa: E402

from agentgym.core.seeding import fast_stream  # noqa: E402
from agentgym.envs.dialog import _fast, fairness  # noqa: E402
from agentgym.envs.dialog.fairness import Codes  # noqa: E402
from agentgym.envs.dialog.tasks import Place, World, _make_goal, _tables, domains_for, load_domains  # noqa: E402


class _Pair(tuple):  # type: ignore[type-arg]
    """A goal on every guard (the boards', then the plain one), read by the generator as the
    first board's."""

    @property
    def n_gold(self) -> int:
        return self[0].n_gold

    @property
    def n_held(self) -> int:
        return self[0].n_held

    def gold_places(self, guard: Any) -> list[int]:
        return self[0].gold_places(guard.boards[0])


class Checked:
    """A guard that asks the boards (with the world kernel's codes, and with codes read off the
    places) and the plain code, and fails on any difference; the learner is also compared with
    a margin of one, and from midway (what a goal shift asks)."""

    def __init__(self, places: Sequence[Any], codes: fairness.Codes, seen: Counter[str]) -> None:
        self.boards = (fairness.Board(places, codes), fairness.Board(places, fairness.codes_of(places)))
        self.plain, self.seen = PlainGuard(places), seen

    def _same(self, what: str, fast: Sequence[Any], plain: Any) -> Any:
        assert all(f == plain for f in fast), (what, fast, plain)
        self.seen[what] += 1
        return plain

    def bounds(self, need: int) -> Any:
        return self._same("bounds", [b.bounds(need) for b in self.boards], self.plain.bounds(need))

    def room(self, j: int, bit: int, need: int) -> bool:
        return self._same("room", [b.room(j, bit, need) for b in self.boards], self.plain.room(j, bit, need))

    def breadth(self, kind: str, value: Any) -> int:
        return self._same("breadth", [b.breadth(kind, value) for b in self.boards], self.plain.breadth(kind, value))

    def goal(self, attrs: Sequence[tuple[str, Any]], n_held: int, bit: int) -> _Pair:
        pair = _Pair((*(b.goal(attrs, n_held, bit) for b in self.boards), self.plain.goal(attrs, n_held, bit)))
        self._same("gold", [g.gold_places(b) for g, b in zip(pair, self.boards)], pair[-1].gold_places())
        return pair

    def reachable(self, pair: Any, upfront: int, patience: int) -> bool:
        *fast, plain = pair
        self._same("reachable, margin 1", [fairness.reachable(b, g, upfront, patience, 1)
                                           for b, g in zip(self.boards, fast)], reachable(plain, upfront, patience, 1))
        self._same("reachable midway", [fairness.reachable_midway(b, g, upfront, patience)
                                        for b, g in zip(self.boards, fast)], reachable_midway(plain, upfront, patience))
        return self._same("reachable", [b.reachable(g, upfront, patience) for b, g in zip(self.boards, fast)],
                          reachable(plain, upfront, patience))


def compare(seeds: range) -> Counter[str]:
    """Draw every task of `seeds` (both splits, every difficulty) with the checked guard, and
    again with each board alone and with the plain code alone: the same tasks, the same draws."""
    seen: Counter[str] = Counter()
    for seed in seeds:
        for split in ("train", "test"):
            names = domains_for(split)
            name = names[seed % len(names)]
            domain = load_domains()[name]
            for difficulty in ("easy", "medium", "hard"):
                rng = fast_stream(seed, f"task/world/{name}")
                world, coded = _fast.make_world(domain, rng, _tables(domain), Place, World)
                state = rng.getstate()
                golds, ends = [], []
                for guard in (partial(fairness.Board, codes=Codes.of_places(list(coded), *_tables(domain).codes)),
                              lambda places: fairness.Board(places, fairness.codes_of(places)), PlainGuard,
                              lambda places: Checked(places, Codes.of_places(list(coded), *_tables(domain).codes),
                                                     seen)):
                    rng.setstate(state)
                    golds.append(_make_goal(world, difficulty, rng, guard))
                    ends.append(rng.getstate())
                assert all(g == golds[0] for g in golds) and all(e == ends[0] for e in ends), (seed, split, difficulty)
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
