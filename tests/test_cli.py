"""`agentgym.cli` argument parsing: ``key=value`` options read their values as strict JSON."""

from __future__ import annotations

import pytest

from agentgym.cli import _parse_kv


@pytest.mark.parametrize(
    ("pair", "value"),
    [("n=3", 3), ("t=0.7", 0.7), ("stop=[\"a\", \"b\"]", ["a", "b"]), ("on=true", True), ("x=null", None),
     ("model=Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B"), ("s=\"quoted\"", "quoted"), ("empty=", "")],
)
def test_values_are_json_when_they_can_be(pair: str, value: object) -> None:
    assert _parse_kv([pair], "--agent-arg") == {pair.partition("=")[0]: value}


@pytest.mark.parametrize(
    "raw",
    ["NaN", "Infinity", "-Infinity", "1e999", "[" * 100_000, "9" * 5000, "1" + "0" * 400, '{"a": 1, "a": 2}'],
    ids=["NaN", "inf", "-inf", "1e999", "100k deep", "5000 digits", "past a double", "duplicate key"],
)
def test_values_that_are_not_strict_json_stay_text_and_never_crash(raw: str) -> None:
    assert _parse_kv([f"k={raw}"], "--agent-arg") == {"k": raw}


def test_a_pair_without_a_key_is_an_error_that_does_not_echo_a_huge_argument() -> None:
    with pytest.raises(ValueError, match="must look like key=value") as info:
        _parse_kv(["x" * 2**20], "--agent-arg")
    assert len(str(info.value)) < 200
