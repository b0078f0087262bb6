"""The bound `agentgym.leaderboard.bounded_json` sets before parsing holds against what parsing takes.

tracemalloc measures what each text's objects hold (and the peak while it is measured and
parsed); the parser's estimate must be at least that for every shape: the tiny containers that
make JSON expand, strings of every width, numbers, keys shared and unique, and honest records.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import lb_support as S
import pytest

from agentgym.leaderboard.bounded_json import BoundedParser, Budget, Refused, json_depth, measure, scanning_memory

UNBOUNDED = 1 << 62
# What tracemalloc counts besides the parsed values (its own frames, the list that keeps them).
SLACK = 64 * 1024


def _list_of(unit: bytes, n: int) -> bytes:
    return b"[" + b",".join([unit] * n) + b"]"


SHAPES: dict[str, bytes] = {
    "empty lists": _list_of(b"[]", 30_000),
    "empty objects": _list_of(b"{}", 30_000),
    "one-key objects": _list_of(b'{"":0}', 20_000),
    "nested objects": _list_of(b'{"a":{"b":{}}}', 10_000),
    "nested lists": _list_of(b"[[[]]]", 10_000),
    "unique keys": b"{" + b",".join(b'"k%d":true' % i for i in range(20_000)) + b"}",
    "unique-key objects": b"[" + b",".join(b'{"k%d":null}' % i for i in range(10_000)) + b"]",
    "six-key objects": _list_of(b'{"a":null,"b":null,"c":null,"d":null,"e":null,"f":null}', 5_000),
    "ints": _list_of(b"1000", 30_000),
    "big ints": _list_of(b"1" * 200, 2_000),
    "floats": _list_of(b"1e5", 30_000),
    "literals": _list_of(b"null", 30_000),
    "short strings": _list_of(b'"ab"', 30_000),
    "empty strings": _list_of(b'""', 30_000),
    "escaped quotes": _list_of(b'"a\\"b\\\\"', 20_000),
    "latin-1 strings": _list_of('"é"'.encode(), 20_000),
    "BMP strings": _list_of('"€€"'.encode(), 20_000),
    "astral strings": _list_of('"abcdefgh\U0001F600"'.encode(), 20_000),
    "escaped astral": _list_of(b'"abc\\ud83d\\ude00"', 20_000),
    "escaped latin-1": _list_of(b'"\\u00e9"', 20_000),
    "one long string": b'["' + b"x" * 2_000_000 + b'"]',
    "spaced": b"[ " + b"[ ] , " * 20_000 + b"[ ] ]",
    **{f"lists of {n}": _list_of(_list_of(b"null", n), max(1, 20_000 // n)) for n in (1, 2, 9, 17, 43, 171, 2000)},
    **{f"objects of {n}": _list_of(b"{" + b",".join(b'"k%d":null' % i for i in range(n)) + b"}", max(1, 20_000 // n))
       for n in (1, 5, 6, 11, 22, 43, 86, 683, 5000)},
}


def _parse_all(texts: list[bytes]) -> tuple[int, int, float]:
    """Parse `texts` in one parser under tracemalloc: (bytes held after, the parser's estimate, worst peak / bound)."""
    parser = BoundedParser(Budget(UNBOUNDED, 10_000, UNBOUNDED, UNBOUNDED))
    kept: list[Any] = []
    worst = 0.0
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for text in texts:
            shape = measure(text)
            bound = max(parser.held + len(text) + scanning_memory(text), parser.held + shape.memory + shape.parsing)
            tracemalloc.reset_peak()
            kept.append(parser.parse(text))
            worst = max(worst, (tracemalloc.get_traced_memory()[1] - base - SLACK) / bound)
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return held, parser.held, worst


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_estimate_bounds_what_parsing_holds(name: str) -> None:
    text = SHAPES[name]
    assert json.loads(text) is not None
    held, estimate, worst_peak = _parse_all([text, text])  # twice: keys shared across texts
    assert held <= estimate + SLACK, (name, held, estimate)
    assert worst_peak <= 1.0, (name, worst_peak)


def test_honest_records_are_charged_under_twice_what_they_hold() -> None:
    for agent, kwargs in S.AGENTS:
        held, estimate, worst_peak = _parse_all(S.records_bytes(S.records(agent, kwargs)).splitlines())
        assert held <= estimate and worst_peak <= 1.0
        assert estimate / held < 2.0, (agent, estimate / held)


def test_values_and_depth_are_counted_outside_strings() -> None:
    shape = measure(b'{"a": [1, 2.5, "x,[{:"], "b": {"c": null}}')
    assert shape.depth == 2 and shape.values <= 12
    assert json_depth(b'{"a": "\\\\"}') == 1  # an escaped backslash does not escape the quote after it
    assert json_depth(b'["\\"[[[["]') == 1
    assert json_depth(b"[" * 70_000 + b"]" * 70_000) == 70_000  # across blocks
    assert measure(b'"' + b"[" * 50_000 + b'"').depth == 0


@pytest.mark.parametrize("text, code", [
    (b'{"a": 1, "a": 2}', "duplicate_key"),
    (b'{"a": 1, "\\u0061": 2}', "duplicate_key"),
    (b'[{"x": {"y": 1, "y": 1}}]', "duplicate_key"),
    (b"[NaN]", "bad_json"),
    (b'{"a": -Infinity}', "bad_json"),
    (b'{"a": 1', "bad_json"),
    (b'["\xff"]', "not_utf8"),
    (b"[" * 40 + b"]" * 40, "too_deep"),
])
def test_strict_parsing(text: bytes, code: str) -> None:
    with pytest.raises(Refused) as info:
        BoundedParser(Budget(UNBOUNDED, 32, UNBOUNDED, UNBOUNDED)).parse(text)
    assert info.value.code == code and not info.value.over_limit
    if code == "duplicate_key":
        assert info.value.key in ("a", "y")


def test_budget_refuses_before_parsing() -> None:
    text = _list_of(b"[]", 50_000)
    with pytest.raises(Refused) as info:
        BoundedParser(Budget(len(text) - 1, 32, UNBOUNDED, UNBOUNDED)).parse(text)
    assert info.value.code == "too_long" and info.value.over_limit
    with pytest.raises(Refused) as info:
        BoundedParser(Budget(UNBOUNDED, 32, 10_000, UNBOUNDED)).parse(text)
    assert info.value.code == "too_many_values"
    parser = BoundedParser(Budget(UNBOUNDED, 32, UNBOUNDED, measure(text).memory * 3))
    parser.parse(text)
    with pytest.raises(Refused) as info:
        for _ in range(10):
            parser.parse(text)
    assert info.value.code == "over_memory" and parser.held <= parser.budget.memory
