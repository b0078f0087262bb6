"""Your tools as an agentgym toolkit: plain typed functions, or a `Toolkit` subclass.

A plain function is a tool as a `Toolkit` method is: its JSON schema is derived from its
signature and Google docstring (`agentgym.core.tools.function_spec`), never written by hand, and
arguments are validated against it before it runs. A function whose first parameter is named
``world`` is given the episode's world (the task's state) there; it is not in the schema. An
unmarked function is a read tool; mark one ``@tool(kind=WRITE)`` (``terminal=True`` for a call
that ends the task, such as a final answer).

A set of functions becomes a `FunctionToolkit` subclass of its own, with the specs on the class as
every `Toolkit` has them (built once per set of functions, however many envs use it).
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from agentgym.core.task import WorldEvent
from agentgym.core.tools import ToolKind, Toolkit, ToolSpec, function_spec
from agentgym.toolenv.task import check_json_data

__all__ = ["ToolSet", "FunctionToolkit", "tool_set"]

#: The name of the first parameter through which a plain-function tool receives the world.
WORLD = "world"


class FunctionToolkit(Toolkit):
    """Base of the toolkits made from plain functions (see the module docstring); a subclass per
    set of functions holds their specs, the functions and which take the world.

    Each successful write is appended to the episode's log (``{"name", "arguments"}``), which the
    default scorer and the final-state judge read, and becomes a `WorldEvent` for the user.

    Args:
        world: the episode's world.
        log: where successful writes are appended.
    """

    _functions: Mapping[str, Callable[..., Any]] = {}
    _takes_world: frozenset[str] = frozenset()

    def __init__(self, world: Any, log: list[dict[str, Any]]) -> None:
        self.world = world
        self._log = log
        self._events: list[WorldEvent] = []

    def invoke(self, name: str, arguments: dict) -> object:
        """Call tool `name` with `arguments` (validated before, as for any toolkit)."""
        fn = self._functions.get(name)
        if fn is None:
            raise KeyError(f"unknown tool {name!r}")
        result = fn(self.world, **arguments) if name in self._takes_world else fn(**arguments)
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


@dataclass(frozen=True)
class ToolSet:
    """The tools of an env: their specs, and the toolkit class to build over a task's world.

    Attributes:
        specs: ``{name: ToolSpec}`` in the order given.
        toolkit_class: a `FunctionToolkit` subclass (made for plain functions) or the `Toolkit`
            subclass given.
    """

    specs: Mapping[str, ToolSpec]
    toolkit_class: type[Toolkit]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.specs)

    @property
    def functions(self) -> bool:
        """Whether the tools are plain functions (their writes are logged for the default scorer)."""
        return issubclass(self.toolkit_class, FunctionToolkit)

    def writes(self) -> tuple[str, ...]:
        """The names of the write tools."""
        return tuple(n for n, s in self.specs.items() if s.kind is ToolKind.WRITE)

    def toolkit(self, world: Any, log: list[dict[str, Any]]) -> Toolkit:
        """A toolkit over `world`; a plain-function toolkit appends each successful write to `log`."""
        if self.functions:
            return self.toolkit_class(world, log)  # type: ignore[call-arg]
        return self.toolkit_class(world)  # type: ignore[call-arg]


def tool_set(tools: Sequence[Callable[..., Any]] | type[Toolkit]) -> ToolSet:
    """The `ToolSet` of `tools`: plain functions, or a `Toolkit` subclass whose ``__init__`` takes the world.

    Raises:
        TypeError: a tool's signature or docstring does not fit (the message names it), two
            tools share a name, or `tools` is neither.
    """
    if isinstance(tools, type):
        if not issubclass(tools, Toolkit):
            raise TypeError(f"tools must be functions or a Toolkit subclass, got the class {tools.__name__}")
        if not tools.tool_specs():
            raise TypeError(f"{tools.__name__} has no @tool methods")
        return ToolSet(dict(tools.tool_specs()), tools)
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence) or not tools:
        raise TypeError(f"tools must be a non-empty list of functions or a Toolkit subclass, got {tools!r}")
    for fn in tools:
        if not inspect.isfunction(fn):
            raise TypeError(f"a tool must be a plain function, got {fn!r}")
    return _function_tools(tuple(tools))


@lru_cache(maxsize=256)
def _function_tools(functions: tuple[Callable[..., Any], ...]) -> ToolSet:
    # One toolkit class per set of functions: every env made from them (a vector env's, a
    # server's pool) shares its specs, and the env's schema cache holds one entry for it.
    specs: dict[str, ToolSpec] = {}
    by_name: dict[str, Callable[..., Any]] = {}
    world: set[str] = set()
    for fn in functions:
        params = list(inspect.signature(fn).parameters)
        takes_world = bool(params) and params[0] == WORLD
        spec = function_spec(fn, world=takes_world)
        if spec.name in specs:
            raise TypeError(f"two tools are named {spec.name!r}")
        specs[spec.name] = spec
        by_name[spec.name] = fn
        if takes_world:
            world.add(spec.name)
    kit = type("FunctionToolkit", (FunctionToolkit,), {"__doc__": f"The tools {', '.join(specs)}."})
    # Set after the class is made: `Toolkit.__init_subclass__` collects only @tool methods.
    kit._agentgym_specs = specs
    kit._agentgym_schemas = [s.openai_schema() for s in specs.values()]
    kit._functions = by_name
    kit._takes_world = frozenset(world)
    return ToolSet(specs, kit)
