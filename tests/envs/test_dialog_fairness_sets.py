"""The fairness guard's sets of places equal the plain filters: `Board.meets` and `Board.open_at`
(a threshold read as a prefix of its order, the other order from a cumulative table) against
`keep` and the opening bits, place by place, in both orders."""

from __future__ import annotations

from typing import Any

import pytest

from agentgym.envs.dialog.fairness import Board, Goal
from agentgym.envs.dialog.tasks import Place, generate_task, keep


def _plain(board: Board, places: list[Place]) -> tuple[int, int]:
    """The set of `places` (a sub-list of the board's) as rank bits of each order."""
    ids = {p.id for p in places}
    return tuple(sum(1 << r for r, j in enumerate(order.places) if board.places[j].id in ids)  # type: ignore[return-value]
                 for order in (board.rating, board.price))


def _values(places: list[Place]) -> list[tuple[str, Any]]:
    """Every attribute value the world's places hold, and thresholds between and beyond them."""
    out: list[tuple[str, Any]] = []
    for p in places:
        out += [("category", p.category), ("area", p.area), ("price", p.price), ("rating", p.rating),
                ("price", p.price - 1), ("rating", p.rating + 0.05), ("rating", round(p.rating * 2) / 2)]
        out += [("amenity", a) for a in p.amenities]
    out += [("price", -1), ("price", 10**6), ("rating", 0.0), ("rating", 9.9), ("category", "no such"),
            ("amenity", "no such")]
    return out


@pytest.mark.parametrize("split", ["train", "test"])
def test_board_sets_equal_the_plain_filters(split: str) -> None:
    for seed in range(40):
        places = generate_task(seed, {"split": split}).world.places
        board = Board(places)
        for kind, value in _values(places):
            assert board.meets(kind, value) == _plain(board, keep(places, kind, value)), (seed, kind, value)
        for bit in range(21):
            assert board.open_at(bit) == _plain(board, [p for p in places if p.open >> bit & 1]), (seed, bit)


def test_gold_places_are_the_open_places_meeting_every_attribute() -> None:
    for seed in range(40):
        task = generate_task(seed, {})
        places = task.world.places
        board = Board(places)
        attrs = [(c.kind, c.value) for c in task.gold.constraints if c.kind != "time"]
        for bit in range(21):
            goal = Goal(board, attrs, len(attrs), bit)
            gold = [p for p in places if p.open >> bit & 1]
            for kind, value in attrs:
                gold = keep(gold, kind, value)
            assert [places[j] for j in goal.gold_places(board)] == gold, (seed, bit)
