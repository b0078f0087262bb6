"""Tests for agentgym.toolenv.tools: plain functions become tools with derived schemas, the world
reaches those that ask for it, and writes are logged."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from agentgym.core._fast import schemas_copy as _schemas_copy
from agentgym.core.tools import READ, WRITE, Bounds, ToolError, Toolkit, tool
from agentgym.toolenv.tools import FunctionToolkit, tool_set


def lookup(world: dict, key: Literal["a", "b"]) -> int:
    """Look a key up.

    Args:
        world: The state (documenting it is allowed; it is not in the schema).
        key: Which key.
    """
    if key not in world:
        raise ToolError(f"no key {key}")
    return world[key]


@tool(kind=WRITE)
def store(world: dict, key: str, value: Annotated[int, Bounds(ge=0)] = 1) -> dict:
    """Store a value.

    Args:
        key: Where.
        value: What.
    """
    world[key] = value
    return {"stored": key}


def add(x: int, y: int) -> int:
    """Add two numbers (no world: a pure function).

    Args:
        x: One.
        y: The other.
    """
    return x + y


def test_schemas_come_from_signatures_and_docstrings_without_the_world() -> None:
    tools = tool_set([lookup, store, add])
    assert tools.names == ("lookup", "store", "add") and tools.functions
    assert tools.writes() == ("store",)
    assert tools.specs["lookup"].kind is READ
    params = tools.specs["store"].parameters
    assert params["properties"] == {"key": {"type": "string", "description": "Where."},
                                    "value": {"type": "integer", "minimum": 0, "description": "What."}}
    assert params["required"] == ["key"]
    assert tools.specs["lookup"].parameters["properties"]["key"]["enum"] == ["a", "b"]
    assert tools.specs["add"].description == "Add two numbers (no world: a pure function)."


def test_the_toolkit_validates_runs_and_logs_each_successful_write() -> None:
    tools = tool_set([lookup, store, add])
    world: dict = {"a": 5}
    log: list = []
    kit = tools.toolkit(world, log)
    assert isinstance(kit, FunctionToolkit)
    assert kit.validate("lookup", {"key": "c"}) is not None  # not in the enum
    assert kit.validate("store", {"key": "x", "value": -1}) is not None
    assert kit.validate("nope", {}) is not None
    assert kit.invoke("lookup", {"key": "a"}) == 5
    assert kit.invoke("add", {"x": 2, "y": 3}) == 5
    assert kit.invoke("store", {"key": "b", "value": 7}) == {"stored": "b"}
    with pytest.raises(ToolError):
        kit.invoke("lookup", {"key": "c"})
    assert world == {"a": 5, "b": 7}
    assert log == [{"name": "store", "arguments": {"key": "b", "value": 7}}]
    events = kit.drain_events()
    assert [(e.kind, e.data) for e in events] == [("store", {"key": "b", "value": 7})]
    assert kit.drain_events() == []
    with pytest.raises(KeyError):
        kit.invoke("validate", {})  # only tools are reachable by name


def test_envs_made_from_the_same_tools_share_one_toolkit_class_and_schema_cache_entry() -> None:
    a, b = tool_set([lookup, add]), tool_set([lookup, add])
    assert a.toolkit_class is b.toolkit_class is not tool_set([add]).toolkit_class
    cls = a.toolkit_class
    assert issubclass(cls, FunctionToolkit) and cls.tool_specs() == dict(a.specs)  # specs on the class, as for any Toolkit
    kit_a, kit_b = a.toolkit({}, []), b.toolkit({}, [])
    first = _schemas_copy(kit_a)
    assert first == _schemas_copy(kit_b) == [s.openai_schema() for s in a.specs.values()]
    first[0]["function"]["name"] = "edited"  # a copy: the cache is untouched
    assert _schemas_copy(kit_b)[0]["function"]["name"] == "lookup"
    assert _schemas_copy(tool_set([add]).toolkit({}, []))[0]["function"]["name"] == "add"


class Counter(Toolkit):
    def __init__(self, world: dict) -> None:
        self.world = world

    @tool(kind=WRITE)
    def bump(self) -> int:
        """Add one."""
        self.world["n"] += 1
        return self.world["n"]


def test_a_toolkit_subclass_is_used_as_it_is() -> None:
    tools = tool_set(Counter)
    assert tools.toolkit_class is Counter and not tools.functions and tools.writes() == ("bump",)
    kit = tools.toolkit({"n": 0}, [])
    assert isinstance(kit, Counter) and kit.invoke("bump", {}) == 1


def bare(x):  # type: ignore[no-untyped-def]
    """No annotation.

    Args:
        x: A value.
    """


def undocumented(x: int) -> None:
    """Its parameter is not in Args."""


@pytest.mark.parametrize("tools, match", [
    ([], "non-empty"),
    ("lookup", "non-empty"),
    ([lookup, lookup], "two tools"),
    ([len], "plain function"),
    ([bare], "annotation"),
    ([undocumented], "Args"),
    (dict, "Toolkit subclass"),
    (Toolkit, "no @tool"),
])
def test_tools_that_do_not_fit_are_refused_naming_the_problem(tools: object, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        tool_set(tools)  # type: ignore[arg-type]


def bad_result(world: dict) -> object:
    """Return something that is not JSON."""
    return {"when": {1, 2}}


def test_a_tool_result_that_is_not_json_is_a_bug_named_after_the_tool() -> None:
    kit = tool_set([bad_result, add]).toolkit({}, [])
    with pytest.raises(TypeError, match=r"tool 'bad_result' returned\.when: set is not JSON"):
        kit.invoke("bad_result", {})
