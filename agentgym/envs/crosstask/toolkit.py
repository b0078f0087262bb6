"""`SessionToolkit`: every sub-task's tools of a cross-task session in one toolkit, calls and
events routed by tool name to the sub-task whose tool it is (a name several share: the active
request's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agentgym.core.protocol import ActionError, ErrorCode
from agentgym.core.task import WorldEvent
from agentgym.core.tools import Toolkit, ToolSpec, close_names

__all__ = ["SessionToolkit", "LayoutKey"]


class _Session(Protocol):
    """What the toolkit reads of a session's world (`session.SessionWorld`)."""

    segments: list[Any]
    active: int
    committed: int | None


LayoutKey = tuple[tuple[int, type], ...]


@dataclass(frozen=True, slots=True)
class _Layout:
    """A session toolkit's tool table. It depends only on which sub-toolkit classes sit at
    which indexes (a `Toolkit`'s tools and schemas are fixed when its class is defined), so
    sessions with the same ones share one, built once and never mutated."""

    #: The (index, class) of each sub-toolkit: the session toolkit's `schemas_key`.
    key: LayoutKey
    #: Tool name -> the indexes of the sub-toolkits that have it, in index order.
    owners: dict[str, tuple[int, ...]]
    #: Every sub-toolkit's schemas in index order; a shared name listed once (the first's).
    schemas: list[dict[str, Any]]
    #: (index, name) of every terminal tool: one that commits its sub-task's outcome.
    terminal: frozenset[tuple[int, str]]


_LAYOUTS: dict[LayoutKey, _Layout] = {}


def _layout(key: LayoutKey, toolkits: dict[int, Toolkit]) -> _Layout:
    """The shared layout of `key`, built from `toolkits` the first time it is asked for."""
    layout = _LAYOUTS.get(key)
    if layout is None:
        owners: dict[str, list[int]] = {}
        for index, tk in toolkits.items():
            for name in tk.tool_specs():
                owners.setdefault(name, []).append(index)
        seen: set[str] = set()
        schemas: list[dict[str, Any]] = []
        for tk in toolkits.values():
            for schema in tk.schemas():
                name = schema["function"]["name"]
                if name not in seen:
                    seen.add(name)
                    schemas.append(schema)
        terminal = frozenset((index, name) for index, tk in toolkits.items()
                             for name, spec in tk.tool_specs().items() if spec.terminal)
        layout = _LAYOUTS[key] = _Layout(key, {name: tuple(i) for name, i in owners.items()}, schemas, terminal)
    return layout


#: Tools whose result depends on which area "the" means (`list_policies`): a result names that area and scope.
_AREA_NAMED = frozenset({"list_policies"})
_AREA_SCOPE = "the active request's area; the brief lists every area's policies"
#: The scope of the answer for a request whose area has no such tool (a booking, a change to one).
_NO_POLICIES = ("the active request's area, which has no policies of its own (its rules are in its part of the "
                "brief); the brief lists every area's policies")


class SessionToolkit:
    """Every sub-task's tools in one toolkit; calls and events are routed by tool name.

    It offers the `Toolkit` interface `AgentEnv` uses (schemas, validate, spec, invoke,
    drain_events). A name several sub-tasks share (``list_policies`` of the tool-use domains) is
    listed once and means the active sub-task's tool, as "the policies" would in a conversation;
    its result names the area it answered for (``task_area``, as the brief numbers them) and that
    scope. During a request whose area has no policies (a booking) it answers that there are none
    for it, and where the others' are: another area's policies were taken for the booking's rules.
    Its schema and argument checks are the latest earlier tool-use area's, else the first's.
    """

    __slots__ = ("session", "toolkits", "schemas_key", "_owners", "_schemas", "_terminal", "_last")

    def __init__(self, session: _Session, toolkits: dict[int, Toolkit]) -> None:
        self.session = session
        self.toolkits = toolkits
        layout = _layout(tuple((index, type(tk)) for index, tk in toolkits.items()), toolkits)
        #: Equal keys mean equal `schemas()` and `tool_specs()`: copies and decoys are cached by it.
        self.schemas_key = layout.key
        self._owners = layout.owners
        self._schemas = layout.schemas
        self._terminal = layout.terminal
        #: The sub-toolkit that ran the latest call.
        self._last: Toolkit | None = None

    @property
    def value_ranges(self) -> Mapping[str, tuple[float, float]] | None:
        """The ranges the brief states for the values of the latest call's results (its
        sub-toolkit's `value_ranges`): what a corrupted value of that result stays inside."""
        return getattr(self._last, "value_ranges", None)

    def owner(self, name: str) -> int | None:
        """The segment whose toolkit a call of `name` goes to now."""
        owners = self._owners.get(name)
        if not owners:
            return None
        if len(owners) == 1:
            return owners[0]
        active = self.session.active
        earlier = [i for i in owners if i <= active]
        return active if active in owners else (earlier[-1] if earlier else owners[0])

    def tool_specs(self) -> dict[str, ToolSpec]:
        """Every tool of the session by name (a shared name: the first sub-task's spec)."""
        return {name: self.toolkits[owners[0]].spec(name) for name, owners in self._owners.items()}

    def schemas(self) -> list[dict[str, Any]]:
        """The session's tool schemas; shared by every session with the same sub-toolkits, as
        `Toolkit.schemas` is: callers must not mutate them."""
        return self._schemas

    def has_tool(self, name: str) -> bool:
        return name in self._owners

    def spec(self, name: str) -> ToolSpec:
        return self.toolkits[self.owner(name)].spec(name)

    def validate(self, name: str, arguments: object) -> ActionError | None:
        index = self.owner(name) if isinstance(name, str) else None
        if index is None:
            close = close_names(str(name), self._owners)
            hint = f"; did you mean: {', '.join(close)}?" if close else f"; available tools: {', '.join(self._owners)}"
            return ActionError(ErrorCode.UNKNOWN_TOOL, f"unknown tool {str(name)[:60]!r}{hint}")
        return self.toolkits[index].validate(name, arguments)

    def invoke(self, name: str, arguments: dict[str, Any]) -> object:
        if name in _AREA_NAMED and self.session.active not in self._owners[name]:
            # "The policies" of a request that has none: none, not another area's, which were
            # read as the booking's own rules (CrossTask playtests 7058, 7073, 7091, 7096).
            self._last = None
            return {"task_area": self._active_area(), "scope": _NO_POLICIES, "policies": []}
        index = self.owner(name)
        self._last = self.toolkits[index]
        result = self._last.invoke(name, arguments)
        if (index, name) in self._terminal:
            self.session.committed = index
        if name in _AREA_NAMED and isinstance(result, dict):
            result = {"task_area": self._area(index), "scope": _AREA_SCOPE, **result}
        return result

    def _active_area(self) -> str | None:
        """The active request's task area: its own, or, for a change to a booking (a follow-up,
        which has no tools of its own), the booking's area (the latest earlier of its domain)."""
        segments, active = self.session.segments, self.session.active
        for index in sorted((i for i in self.toolkits if i <= active), reverse=True):
            if index == active or segments[index].domain == segments[active].domain:
                return self._area(index)
        return None

    def _area(self, index: int) -> str:
        """Segment `index`'s task area as the brief heads it ("2: tooluse / orders"): areas are
        the segments with a toolkit, numbered in order."""
        segment = self.session.segments[index]
        return f"{list(self.toolkits).index(index) + 1}: {segment.family} / {segment.domain}"

    def drain_events(self) -> list[WorldEvent]:
        events = []
        for index, tk in self.toolkits.items():
            for e in tk.drain_events():
                events.append(WorldEvent(e.kind, {**e.data, "segment": index}))
        return events
