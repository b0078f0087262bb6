"""Typed tools for agent environments: schema derived from the signature, strict validation.

A toolkit is a class whose methods marked with `@tool` are the actions an agent may call. The
OpenAI function-tool JSON schema of each tool is DERIVED from the method's type annotations and
its Google-style docstring, never written by hand, so the schema the model sees, the validation
applied to its calls and the Python code can never drift apart:

    class Shop(Toolkit):
        @tool
        def search(
            self,
            query: Annotated[str, MaxLen(200)],
            limit: Annotated[int, Bounds(ge=1, le=20)] = 5,
        ) -> list[str]:
            '''Search the catalog.

            Args:
                query: Free-text query.
                limit: Maximum number of results.
            '''

Supported annotations: `str`, `int`, `float`, `bool`, `Literal[...]` of str/int values (an
"enum"), `list[X]` of a supported X, `X | None` / `Optional[X]` (nullable) and
`Annotated[X, Bounds(...)]` (numbers) / `Annotated[X, MaxLen(n)]` (strings and lists). Anything
else, a missing annotation, a parameter missing from the docstring's "Args:" section, *args or
**kwargs raise TypeError when the toolkit class is defined (a programming error, caught early).

Validation is strict and never coerces (`agentgym.core.tool_spec`); the schema is derived from
the signature (`agentgym.core.tool_signature`). This module holds the `Toolkit` base class and the
errors a tool raises, and every public name of the three.

`ToolError` is the one exception a tool raises to report a failure the agent should see (not
found, unavailable, refused by policy...). Any other exception is a bug and propagates.
"""

from __future__ import annotations

import difflib
import inspect
import typing
from typing import Any, Hashable

from agentgym.core.protocol import ActionError, ErrorCode
from agentgym.core.tool_signature import Bounds, MaxLen, function_spec, is_tool, method_spec, tool
from agentgym.core.tool_spec import MAX_TOOL_NAME_CHARS, READ, WRITE, ToolKind, ToolSpec, short_repr

__all__ = [
    "ToolKind",
    "READ",
    "WRITE",
    "ToolError",
    "PolicyViolation",
    "Bounds",
    "MaxLen",
    "tool",
    "ToolSpec",
    "Toolkit",
    "close_names",
    "function_spec",
]


class ToolError(Exception):
    """A failure the agent should see (not found, unavailable, policy refusal...).

    Any other exception from a tool is a bug and must propagate.
    """


class PolicyViolation(ToolError):
    """A call that breaks a domain policy: refused (nothing is done), reported to the agent with
    the code POLICY_VIOLATION, counted in the episode, and the task fails.

    Args:
        policy: the policy's id in the domain's policy data.
        message: what the agent sees.
    """

    def __init__(self, policy: str, message: str) -> None:
        super().__init__(message)
        self.policy = policy



#: "Did you mean" is offered only for names up to this long: difflib's cost grows with the
#: name's length, and a name twice as long as any tool's is no typo.
SUGGEST_MAX_CHARS = 2 * MAX_TOOL_NAME_CHARS


def close_names(name: str, names: typing.Iterable[str], n: int = 3, *, ignore_case: bool = False) -> list[str]:
    """Up to `n` of `names` close to `name` (difflib), best first; none for a long `name`.

    Args:
        name: the unknown name an agent sent.
        names: the names it may have meant.
        n: the most suggestions to return.
        ignore_case: compare lower-cased names (the suggestions keep their own case).
    """
    if len(name) > SUGGEST_MAX_CHARS:
        return []
    if not ignore_case:
        return difflib.get_close_matches(name, list(names), n=n)
    folded = {candidate.lower(): candidate for candidate in names}
    return [folded[m] for m in difflib.get_close_matches(name.lower(), list(folded), n=n)]


# ---------------------------------------------------------------------------------------------
# Toolkit


class Toolkit:
    """Base class: subclasses define `@tool` methods over some world state.

    Specs are built once per class, when the class is defined (so schema errors surface at
    import), in definition order; inherited tools come first and an override keeps its place.
    A subclass that overrides a tool without `@tool` removes it.
    """

    _agentgym_specs: dict[str, ToolSpec] = {}
    _agentgym_schemas: list[dict] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names: dict[str, None] = {}  # first appearance, base classes first
        for klass in reversed(cls.__mro__):
            names.update(dict.fromkeys(vars(klass)))
        specs: dict[str, ToolSpec] = {}
        for name in names:
            attr = inspect.getattr_static(cls, name)
            if is_tool(attr):
                spec = method_spec(attr)
                if spec.name != name:  # aliased: `other = search`
                    raise TypeError(f"{cls.__qualname__}.{name}: tool aliases are not supported")
                specs[name] = spec
        cls._agentgym_specs = specs
        cls._agentgym_schemas = [s.openai_schema() for s in specs.values()]

    @classmethod
    def tool_specs(cls) -> dict[str, ToolSpec]:
        """{name: ToolSpec} in definition order. Shared by the class: do not mutate."""
        return cls._agentgym_specs

    def schemas(self) -> list[dict]:
        """OpenAI tool schemas in definition order.

        Returns the same cached list on every call (built once per class): callers must not
        mutate it or its dicts; copy first (`copy.deepcopy`) to edit.
        """
        return self._agentgym_schemas

    @property
    def schemas_key(self) -> Hashable | None:
        """What determines `schemas()` and `tool_specs()`: equal keys (of one toolkit type) mean
        equal schemas and specs, so a caller may cache a copy by it; None when they may vary. A
        class that keeps `schemas` has them (and its specs) fixed when it is defined, so its key
        is the class. A toolkit that is not a `Toolkit` (a cross-task session's) may offer one too."""
        return type(self) if type(self).schemas is Toolkit.schemas else None

    def has_tool(self, name: str) -> bool:
        return name in self._agentgym_specs

    def spec(self, name: str) -> ToolSpec:
        """The ToolSpec of `name`; KeyError if there is no such tool."""
        return self._agentgym_specs[name]

    def validate(self, name: str, arguments: object) -> ActionError | None:
        """None if `name(**arguments)` is a valid call, else UNKNOWN_TOOL or INVALID_ARGS."""
        known = isinstance(name, str) and len(name) <= MAX_TOOL_NAME_CHARS
        spec = self._agentgym_specs.get(name) if known else None
        if spec is None:
            return ActionError(ErrorCode.UNKNOWN_TOOL, self._unknown_tool_message(name))
        return spec.validate(arguments)

    def _unknown_tool_message(self, name: object) -> str:
        specs = self._agentgym_specs
        if not specs:
            return f"unknown tool {short_repr(name)}: this toolkit has no tools"
        close = close_names(name, specs, ignore_case=True) if isinstance(name, str) else []
        if close:
            return f"unknown tool {short_repr(name)}; did you mean: {', '.join(close)}?"
        return f"unknown tool {short_repr(name)}; available tools: {', '.join(specs)}"

    def invoke(self, name: str, arguments: dict) -> object:
        """Call tool `name` with `**arguments` and return its result.

        The caller must have validated the call first (`validate`); this does not. ToolError
        and any other exception raised by the tool propagate. KeyError if `name` is not a tool
        (so only tools, never other methods, can be reached by name).
        """
        if name not in self._agentgym_specs:
            raise KeyError(f"unknown tool {name!r}")
        return getattr(self, name)(**arguments)

    def drain_events(self) -> list[Any]:
        """World changes (`agentgym.core.task.WorldEvent`) made since the last call, oldest
        first; the env hands them to the simulated user. Toolkits without events return []."""
        return []
