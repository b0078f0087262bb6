"""`agentgym.core._fast.arguments_acceptor` accepts only what a tool's plain checks accept, on
every tool schema the families derive and on schemas of every shape the checks compile."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fast import _records

import agentgym  # noqa: F401  (registers the ids)
from agentgym import ENV_IDS
from agentgym.core.tool_spec import READ, ToolSpec
from agentgym.core.tools import Toolkit


def _plain(spec: ToolSpec) -> ToolSpec:
    """`spec` with its compiled acceptor turned off: `validate` runs the plain checks alone."""
    plain = dataclasses.replace(spec)
    object.__setattr__(plain, "_accepts", lambda arguments: False)
    return plain


def _toolkit_classes(cls: type = Toolkit) -> list[type]:
    return [cls, *(k for sub in cls.__subclasses__() for k in _toolkit_classes(sub))]


def _specs_of_the_families() -> list[ToolSpec]:
    """Every tool of every toolkit class defined (once the ids' episodes have loaded their
    domains), and the decoys the distractors add."""
    specs: dict[str, ToolSpec] = {}
    for env_id in ENV_IDS:
        env = gym.make(env_id, noise="distractors=4")
        for seed in range(12):
            env.reset(seed=seed)
            layer = env
            while isinstance(layer, gym.Wrapper):
                for extra in getattr(layer, "extra_tools", {}).values():
                    specs.setdefault(f"{extra.spec.name}|{extra.spec.parameters!r}", extra.spec)
                layer = layer.env
    for cls in _toolkit_classes():
        for spec in cls.tool_specs().values():
            specs.setdefault(f"{spec.name}|{spec.parameters!r}", spec)
    return list(specs.values())


def _schema(props: dict[str, Any], required: tuple[str, ...] = (), extra: bool = False) -> ToolSpec:
    params: dict[str, Any] = {"type": "object", "properties": props, "required": list(required)}
    if extra:
        params["additionalProperties"] = True
    return ToolSpec(name="t", description="d", kind=READ, terminal=False, parameters=params)


#: A schema of each shape `compile_checker` compiles, and of some it compiles without an
#: expression of the acceptor's (they call the checker).
_SHAPES = [
    _schema({"s": {"type": "string", "maxLength": 3}, "i": {"type": "integer", "minimum": 0, "maximum": 5}},
            required=("s",)),
    _schema({"e": {"type": "string", "enum": ["a", "b"]}, "n": {"type": ["number", "null"], "minimum": -1.5}}),
    _schema({"e": {"type": ["string", "null"], "enum": ["a", None]}, "f": {"type": ["string", "null"], "enum": ["a"]}}),
    _schema({"ie": {"type": "integer", "enum": [1, 2, 3]}, "ne": {"type": "number", "enum": [1, 2.5]}}),
    _schema({"b": {"type": "boolean"}, "bn": {"type": ["boolean", "null"]}}, required=("b",)),
    _schema({"a": {"type": "array", "items": {"type": "string", "maxLength": 2}, "maxItems": 2},
             "aa": {"type": ["array", "null"], "items": {"type": "array", "items": {"type": "integer"}}},
             "an": {"type": "array"}}),
    _schema({"u": {"type": ["string", "integer"]}, "m": {"enum": ["x", 1, True]}, "o": {"type": ["null", "integer"]}}),
    _schema({"s": {"type": "string"}}, extra=True),
    _schema({}),
]

_VALUES = (st.none() | st.booleans() | st.integers(-3, 8) | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1.0, 2.5, 5.0, -1.5])
           | st.text(max_size=5) | st.sampled_from(["a", "b", "x", "ab", "abcd"]))
_ANY = st.recursive(_VALUES, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids,
                                                                                       max_size=2), max_leaves=8)


def _arguments(spec: ToolSpec) -> st.SearchStrategy[dict[str, Any]]:
    keys = [*spec.parameters.get("properties", {}), "other"]
    return st.dictionaries(st.sampled_from(keys), _ANY, max_size=len(keys))


_FAMILY_SPECS = _specs_of_the_families()


def test_the_families_specs_are_many() -> None:
    assert len(_FAMILY_SPECS) > 40


@pytest.mark.parametrize("spec", _SHAPES + _FAMILY_SPECS, ids=lambda s: s.name)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_acceptor_accepts_only_what_the_plain_checks_accept(spec: ToolSpec, data: st.DataObject) -> None:
    arguments = data.draw(_arguments(spec))
    plain = _plain(spec).validate(arguments)
    if spec._accepts(arguments):
        assert plain is None
    assert spec.validate(arguments) == plain


@pytest.mark.parametrize("spec", _SHAPES, ids=lambda s: s.name)
def test_the_acceptor_on_the_edge_values(spec: ToolSpec) -> None:
    edges = [None, True, False, 0, 5, 6, -1, 2**1100, 0.0, -1.5, -1.6, math.inf, -math.inf, math.nan, "", "a", "abc",
             "abcd", [], ["a"], ["ab", "c"], ["a", "b", "c"], [[1]], [[1.0]], [[True]], {}, {"a": 1}]
    for key in [*spec.parameters.get("properties", {}), "other"]:
        for value in edges:
            for arguments in ({key: value}, {key: value, "s": "a", "b": True}):
                assert spec.validate(arguments) == _plain(spec).validate(arguments), arguments
    assert spec.validate(["not", "a", "dict"]) == _plain(spec).validate(["not", "a", "dict"])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_valid_calls_of_real_episodes_take_the_compiled_path(env_id: str) -> None:
    toolkit_specs = {name: spec for cls in _toolkit_classes() for name, spec in cls.tool_specs().items()}
    valid = accepted = 0
    for record in _records(env_id):
        if record["valid"] and not record.get("distractor") and record["name"] in toolkit_specs:
            valid += 1
            accepted += any(spec._accepts(record["arguments"]) for cls in _toolkit_classes()
                            if (spec := cls.tool_specs().get(record["name"])) is not None)
    assert valid > 10 and accepted == valid
