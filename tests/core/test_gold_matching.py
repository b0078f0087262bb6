"""`call_matches` reads a string argument against a string spec by equality, without
`arg_matches`: the same answers as matching every argument with `arg_matches`."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentgym.core.gold import _operator, arg_matches, call_matches

_VALUES = st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([0.0, 1.0, 1.5]) \
    | st.sampled_from(["a", "b", "1", "True"]) | st.lists(st.sampled_from(["a", "b", 1, True]), max_size=2)
_SPECS = _VALUES | st.builds(lambda op, v: {op: v}, st.sampled_from(["any_of", "subset_of", "any_order"]),
                             st.lists(st.sampled_from(["a", "b", 1, True, 1.0]), max_size=3)) \
    | st.builds(lambda op, v: {op: v}, st.sampled_from(["at_least", "at_most"]), st.integers(-1, 1)) \
    | st.builds(lambda v: {"if_given": v}, _VALUES) | st.just({"any": True}) \
    | st.builds(lambda v: {"words_of": v}, st.sampled_from(["a", "a b", "b 1"]))
_KEYS = st.sampled_from(["x", "y", "z"])


def _plain(name: str, arguments: dict[str, Any] | None, gold_call: dict[str, Any]) -> bool:
    """Every specified argument matched by `arg_matches` (an absent one only under ``if_given``)."""
    if name != gold_call.get("name") or arguments is None:
        return False
    return all(arg_matches(arguments[key], spec) if key in arguments else _operator(spec) == "if_given"
               for key, spec in (gold_call.get("arguments") or {}).items())


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=3), st.dictionaries(_KEYS, _SPECS, max_size=3),
       st.sampled_from(["f", "g"]))
def test_call_matches_equals_matching_every_argument(arguments: dict[str, Any], specs: dict[str, Any],
                                                     name: str) -> None:
    gold_call = {"name": "f", "arguments": specs}
    assert call_matches(name, arguments, gold_call) == _plain(name, arguments, gold_call)
    assert call_matches(name, None, gold_call) is False


def test_words_of_takes_a_full_or_partial_name() -> None:
    spec = {"words_of": "Elena Abbott"}
    for query in ("Elena Abbott", "abbott", "ELENA", "Abbott, Elena", " elena  abbott "):
        assert arg_matches(query, spec), query
    for query in ("", "  ", "Abb", "Elena Abbot", "Elena Abbott Smith", "a", 3, None, ["Elena"]):
        assert not arg_matches(query, spec), query
    assert call_matches("find", {"query": "Abbott"}, {"name": "find", "arguments": {"query": spec}})


def test_any_order_takes_the_same_items_in_any_order() -> None:
    # The amounts added up, the expenses of a report, the attendees of a meeting: a call listing
    # them in another order than the reference solver's is the same step (a playtest's
    # sum_amounts was "no step of the plan": CrossTask 8974 T17).
    spec = {"any_order": [85.88, 132.23, 50.98, 85.88]}
    for got in ([85.88, 132.23, 50.98, 85.88], [132.23, 85.88, 85.88, 50.98], [50.98, 85.88, 85.88, 132.23]):
        assert arg_matches(got, spec), got
    for got in ([85.88, 132.23, 50.98], [85.88, 132.23, 50.98, 50.98], [85.88, 132.23, 50.98, 85.88, 1.0],
                (85.88, 132.23, 50.98, 85.88), "85.88", None, [True, 132.23, 50.98, 85.88]):
        assert not arg_matches(got, spec), got
    assert not arg_matches([1], {"any_order": [True]}) and arg_matches([], {"any_order": []})
