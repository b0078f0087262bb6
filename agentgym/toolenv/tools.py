"""Your tools as an agentgym toolkit: plain typed functions, or a `Toolkit` subclass.

A plain function is a tool as a `Toolkit` method is: its JSON schema is derived from its
signature and Google docstring (`agentgym.core.tools.function_spec`), never written by hand, and
arguments are validated against it before it runs. A function whose first parameter is named
``world`` is given the episode's world (the task's state) there; it is not in the schema. An
unmarked function is a read tool; mark one ``@tool(kind=WRITE)`` (``terminal=True`` for a call
that ends the task, such as a final answer).
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from agentgym.core.task import WorldEvent
from agentgym.core.tools import ToolKind, ToolSpec, Toolkit, function_spec
from agentgym.toolenv.task import check_json_data

__all__ = ["ToolSet", "FunctionToolkit", "tool_set"]

#: The name of the first parameter through which a plain-function tool receives the world.
WORLD = "world"


@dataclass(frozen=True)
class ToolSet:
    """The tools of an env, made once per env: their specs and how to build a toolkit over a world.

    Attributes:
        specs: ``{name: ToolSpec}`` in the order given.
        functions: ``{name: function}`` for plain-function tools (empty for a `Toolkit` class).
        takes_world: the names of the functions that take the world first.
        toolkit_class: the `Toolkit` subclass given instead of functions, or None.
        schemas_key: the canonical JSON of the schemas: envs made from the same tools share one
            entry of the env's schema cache, however many are made.
    """

    specs: Mapping[str, ToolSpec]
    functions: Mapping[str, Callable[..., Any]]
    takes_world: frozenset[str]
    toolkit_class: type[Toolkit] | None = None
    schemas_key: str = ""

    def __post_init__(self) -> None:
        schemas = [s.openai_schema() for s in self.specs.values()]
        object.__setattr__(self, "schemas_key", json.dumps(schemas, sort_keys=True))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.specs)

    def writes(self) -> tuple[str, ...]:
        """The names of the write tools."""
        return tuple(n for n, s in self.specs.items() if s.kind is ToolKind.WRITE)

    def toolkit(self, world: Any, log: list[dict[str, Any]]) -> Toolkit:
        """A toolkit over `world`; a plain-function toolkit appends each successful write to `log`."""
        if self.toolkit_class is not None:
            return self.toolkit_class(world)  # type: ignore[call-arg]
        return FunctionToolkit(self, world, log)


def tool_set(tools: Sequence[Callable[..., Any]] | type[Toolkit]) -> ToolSet:
    """The `ToolSet` of `tools`: plain functions, or a `Toolkit` subclass whose ``__init__`` takes the world.

    Raises:
        TypeError: a tool's signature or docstring does not fit (the message names it), two
            tools share a name, or `tools` is neither.
    """
    if isinstance(tools, type):
        if not issubclass(tools, Toolkit):
            raise TypeError(f"tools must be functions or a Toolkit subclass, got the class {tools.__name__}")
        specs = dict(tools.tool_specs())
        if not specs:
            raise TypeError(f"{tools.__name__} has no @tool methods")
        return ToolSet(specs, {}, frozenset(), tools)
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence) or not tools:
        raise TypeError(f"tools must be a non-empty list of functions or a Toolkit subclass, got {tools!r}")
    specs: dict[str, ToolSpec] = {}
    functions: dict[str, Callable[..., Any]] = {}
    world: set[str] = set()
    for fn in tools:
        if not inspect.isfunction(fn):
            raise TypeError(f"a tool must be a plain function, got {fn!r}")
        params = list(inspect.signature(fn).parameters)
        takes_world = bool(params) and params[0] == WORLD
        spec = function_spec(fn, world=takes_world)
        if spec.name in specs:
            raise TypeError(f"two tools are named {spec.name!r}")
        specs[spec.name] = spec
        functions[spec.name] = fn
        if takes_world:
            world.add(spec.name)
    return ToolSet(specs, functions, frozenset(world))


class FunctionToolkit(Toolkit):
    """A toolkit over one episode's world whose tools are plain functions (see the module docstring).

    Each successful write is appended to the log (``{"name", "arguments"}``), which the default
    scorer and the final-state judge read, and becomes a `WorldEvent` for the simulated user.
    """

    def __init__(self, tools: ToolSet, world: Any, log: list[dict[str, Any]]) -> None:
        self._tools = tools
        self.world = world
        self._log = log
        self._events: list[WorldEvent] = []
        # The base class's look-ups (`validate`, `spec`, `has_tool`) read these.
        self._agentgym_specs = dict(tools.specs)
        self._agentgym_schemas = [s.openai_schema() for s in tools.specs.values()]

    @property
    def schemas_key(self) -> str:
        """Names this tool set's schemas for the env's schema cache: equal keys, equal schemas."""
        return self._tools.schemas_key

    def tool_specs(self) -> dict[str, ToolSpec]:  # type: ignore[override]
        """``{name: ToolSpec}`` in the order given. Shared: do not mutate."""
        return self._agentgym_specs

    def invoke(self, name: str, arguments: dict) -> object:
        """Call tool `name` with `arguments` (validated before, as for any toolkit)."""
        fn = self._tools.functions.get(name)
        if fn is None:
            raise KeyError(f"unknown tool {name!r}")
        result = fn(self.world, **arguments) if name in self._tools.takes_world else fn(**arguments)
        # The agent reads the result as JSON and the noise acts on its leaves: anything else is a
        # bug in the tool, named here rather than deep in the env's encoder.
        check_json_data(result, f"tool {name!r} returned", tuples=True)
        if self._agentgym_specs[name].kind is ToolKind.WRITE:
            self._log.append({"name": name, "arguments": json.loads(json.dumps(arguments))})
            self._events.append(WorldEvent(name, dict(arguments)))
        return result

    def drain_events(self) -> list[WorldEvent]:
        events, self._events = self._events, []
        return events

