"""The corruption's perturbations of a number: what it writes in the noise log."""

from __future__ import annotations

from agentgym.noise.calls import _number


class _Draws:
    """A generator that returns the given draws in turn."""

    def __init__(self, *values: float) -> None:
        self._values = list(values)

    def random(self) -> float:
        return self._values.pop(0)


def test_a_scaled_number_says_its_factor() -> None:
    new, how = _number(200, _Draws(0.0, 0.0), None)  # up, by 10%
    assert (new, how) == (220, "scaled by 1.10")


def test_a_nudge_at_a_bound_says_what_it_moved_by_not_a_factor_of_one() -> None:
    # Down 10% is clamped onto the column's least value, so the value moves one step up instead.
    new, how = _number(200, _Draws(0.9, 0.0), (200.0, 2000.0))
    assert (new, how) == (201, "moved by +1")
    new, how = _number(250.5, _Draws(0.0, 0.0), (0.0, 250.5))
    assert (new, how) == (250.4, "moved by -0.1")


def test_zero_moves_off_zero() -> None:
    assert _number(0, _Draws(0.0, 0.0), None) == (1, "moved off zero")


class _Plan:
    """An env whose gold plan has steps still to do that consume the values in `consumed`."""

    def __init__(self, *consumed: object) -> None:
        self._consumed = consumed

    def gold_steps_to_do(self, *, progress: object = None) -> list[dict[str, object]]:
        return [{"name": "write", "arguments": {"value": value}} for value in self._consumed]


def test_the_tiers_corruption_aims_at_what_the_plan_consumes() -> None:
    from agentgym.noise.calls import _aimed, perturbable_leaves

    result = {"orders": [{"order_id": "O-1201", "total": 15.5, "placed": "2025-03-02"},
                         {"order_id": "O-1202", "total": 40.0, "placed": "2025-03-04"}]}
    leaves = perturbable_leaves(result)
    assert _aimed(_Plan("O-1202", 40.0), result, leaves) == [("orders", 1, "order_id"), ("orders", 1, "total")]
    # Nothing the plan consumes in the result: any leaf, as off the tier.
    assert _aimed(_Plan("O-9999"), result, leaves) == leaves


def test_pagination_fields_are_never_corrupted_not_even_the_next_page() -> None:
    """A page of a list says which page it is, how many there are and which comes next: none of
    them is data, so none is a leaf to corrupt, even where the plan later reads page 2 of another
    list (the value 2 is then consumed, but not from this result)."""
    from agentgym.noise.calls import _aimed, perturbable_leaves

    result = {"service": "inventory", "lines": ["09:10 ERROR pool exhausted"], "page": 1, "pages": 2, "next_page": 2,
              "errors_last_5m": 349}
    leaves = perturbable_leaves(result)
    assert leaves == [("errors_last_5m",)]
    assert _aimed(_Plan(2), result, leaves) == leaves
