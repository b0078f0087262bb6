"""Tests for agentgym.core.json_types: one function names a value's JSON type in both of the
env's vocabularies (the action protocol's, and JSON Schema's for tool arguments)."""

from __future__ import annotations

import pytest

from agentgym.core.json_types import json_type_name


@pytest.mark.parametrize("value, plain, schema", [
    (None, "null", "null"), (True, "bool", "boolean"), (3, "number", "integer"), (2.5, "number", "number"),
    (float("nan"), "number", "nan"), (float("-inf"), "number", "-inf"), ("x", "string", "string"),
    ([1], "list", "array"), ((1,), "tuple", "array"), ({"a": 1}, "object", "object"), ({1}, "set", "set"),
    (b"x", "bytes", "bytes"),
])
def test_each_vocabulary_names_each_kind_of_value(value: object, plain: str, schema: str) -> None:
    assert json_type_name(value) == plain
    assert json_type_name(value, schema_words=True) == schema
