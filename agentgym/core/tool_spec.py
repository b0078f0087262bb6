"""A tool's spec (`ToolSpec`) and the strict validator compiled from its JSON schema.

Validation is strict and never coerces: bool is not an int, int is not a str, float is not an
int (not even 3.0), NaN and infinities are not numbers; an int is accepted where a float is
expected (JSON has one number type). The validator is compiled from the JSON schema itself, once
per tool, into one small closure per parameter: the schema the model sees is the one its calls
are checked against.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from typing import Callable

from agentgym.core._fast import arguments_acceptor
from agentgym.core.json_types import json_type_name
from agentgym.core.protocol import ActionError, ErrorCode

__all__ = ["ToolKind", "READ", "WRITE", "ToolSpec", "Checker", "compile_checker", "short_repr", "MAX_TOOL_NAME_CHARS"]


class ToolKind(str, enum.Enum):
    """Whether a tool only reads the world or changes it."""

    READ = "read"
    WRITE = "write"


READ, WRITE = ToolKind.READ, ToolKind.WRITE



# ---------------------------------------------------------------------------------------------
# Schema -> checker compilation (the single source of truth for validation is the JSON schema)

_JSON_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "null": "null",
}

Checker = Callable[[object], "str | None"]  # returns None when valid, else "must be ..., got ..."


#: Past this many characters a string is cut before repr(), and past this many bits an integer
#: is described, not printed: repr() of either costs in proportion to its size (and of an
#: integer past 4,300 digits raises).
_SHORT_MAX_CHARS = 4096
_SHORT_MAX_BITS = 4096


def short_repr(v: object, limit: int = 60) -> str:
    """repr() capped for messages (agent-sent values can be huge)."""
    if isinstance(v, str) and len(v) > _SHORT_MAX_CHARS:
        v = v[:_SHORT_MAX_CHARS]
    elif isinstance(v, int) and v.bit_length() > _SHORT_MAX_BITS:
        return f"an integer of {v.bit_length()} bits"
    r = repr(v)
    return r if len(r) <= limit else r[: limit - 3] + "..."


#: The longest tool name: an agent's longer name is unknown without being looked up (hashed).
MAX_TOOL_NAME_CHARS = 64
_TOOL_NAME_RE = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_TOOL_NAME_CHARS}}}")
def _fmt_num(x: float) -> str:
    return repr(int(x)) if isinstance(x, float) and x.is_integer() and abs(x) < 1e16 else repr(x)


# Argument schemas are compiled to these closures rather than checked by the jsonschema package:
# every tool step validates its call, where jsonschema costs more than the rest of the step, and
# the messages (each offending field, in the env's words) are episode bytes the golden lock holds.
def _compile_base(t: str, schema: dict, expected: str | None = None) -> Checker:
    """Checker for one non-null JSON type with its constraints (enum, bounds, lengths, items).

    `expected` is the type wording of "must be ..., got ..." messages (e.g. "a string or null").
    """
    expected = expected or _JSON_TYPE_NAMES[t]
    enum_values = schema.get("enum")
    enum_set = None
    type_msg = f"must be {expected}"  # for a value of the wrong type
    if enum_values is not None:
        enum_set = frozenset(v for v in enum_values if v is not None)
        enum_msg = type_msg = f"must be one of {[v for v in enum_values if v is not None]!r}"

    if t == "string":
        max_len = schema.get("maxLength")

        def check_str(v: object) -> str | None:
            if not isinstance(v, str):
                return f"{type_msg}, got {json_type_name(v, schema_words=True)}"
            if enum_set is not None and v not in enum_set:
                return f"{enum_msg}, got {short_repr(v)}"
            if max_len is not None and len(v) > max_len:
                return f"is too long ({len(v)} > {max_len} characters)"
            return None

        return check_str

    if t in ("integer", "number"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        is_int = t == "integer"

        def check_num(v: object) -> str | None:
            if isinstance(v, bool):
                return f"{type_msg}, got boolean"
            if isinstance(v, float):
                if is_int:
                    return f"{type_msg}, got {json_type_name(v, schema_words=True)}"
                if not math.isfinite(v):
                    return f"must be a finite number, got {short_repr(v)}"
            elif not isinstance(v, int):
                return f"{type_msg}, got {json_type_name(v, schema_words=True)}"
            if enum_set is not None and v not in enum_set:
                return f"{enum_msg}, got {short_repr(v)}"
            if lo is not None and v < lo:
                return f"must be >= {_fmt_num(lo)}, got {short_repr(v)}"
            if hi is not None and v > hi:
                return f"must be <= {_fmt_num(hi)}, got {short_repr(v)}"
            return None

        return check_num

    if t == "boolean":

        def check_bool(v: object) -> str | None:
            if not isinstance(v, bool):
                return f"must be {expected}, got {json_type_name(v, schema_words=True)}"
            return None

        return check_bool

    if t == "array":
        max_items = schema.get("maxItems")
        items = schema.get("items")
        item_check = compile_checker(items) if items is not None else None

        def check_list(v: object) -> str | None:
            if not isinstance(v, list):
                return f"must be {expected}, got {json_type_name(v, schema_words=True)}"
            if max_items is not None and len(v) > max_items:
                return f"has too many items ({len(v)} > {max_items})"
            if item_check is not None:
                for i, x in enumerate(v):
                    problem = item_check(x)
                    if problem is not None:
                        return f"item {i} {problem}"
            return None

        return check_list

    raise TypeError(f"unsupported JSON schema type {t!r}")


def _enum_kind(v: object) -> str:
    # Distinguishes 1 from True and from 1.0, which compare (and hash) equal in Python.
    return "bool" if isinstance(v, bool) else type(v).__name__


def _compile_enum_only(schema: dict) -> Checker:
    """Checker for a schema with an "enum" and no "type" (e.g. a mixed str/int Literal)."""
    values = list(schema["enum"])
    try:
        allowed = frozenset((_enum_kind(v), v) for v in values)
    except TypeError:  # unhashable enum member: fall back to a linear scan
        allowed = None

    def check_enum(v: object) -> str | None:
        if allowed is not None:
            try:
                ok = (_enum_kind(v), v) in allowed
            except TypeError:  # unhashable value: cannot be a member
                ok = False
        else:
            ok = any(_enum_kind(v) == _enum_kind(m) and v == m for m in values)
        return None if ok else f"must be one of {values!r}, got {short_repr(v)}"

    return check_enum


def compile_checker(schema: dict) -> Checker:
    """Compile a (supported subset of) JSON schema into a checker: None for a valid value, else
    the problem (``"must be ..., got ..."``)."""
    if not isinstance(schema, dict):
        raise TypeError(f"a property schema must be a dict, got {schema!r}")
    t = schema.get("type")
    if t is None:
        if "enum" not in schema:
            raise TypeError(f"a property schema needs a 'type' or an 'enum': {schema!r}")
        return _compile_enum_only(schema)
    types_ = [t] if isinstance(t, str) else list(t)
    unknown = [x for x in types_ if x not in _JSON_TYPE_NAMES]
    if unknown or not types_:
        raise TypeError(f"unsupported JSON schema type {t!r}")
    nullable = "null" in types_
    bases = [x for x in types_ if x != "null"]
    if nullable and schema.get("enum") is not None and None not in schema["enum"]:
        nullable = False  # JSON-schema semantics: the enum excludes null
    expected = " or ".join(_JSON_TYPE_NAMES[x] for x in types_)
    if len(bases) == 1 and nullable:
        checks = [_compile_base(bases[0], schema, expected)]
    else:
        checks = [_compile_base(b, schema) for b in bases]

    if len(checks) == 1:
        (only,) = checks
        if not nullable:
            return only

        def check_nullable(v: object) -> str | None:
            return None if v is None else only(v)

        return check_nullable

    def check_any(v: object) -> str | None:
        if v is None:
            return None if nullable else f"must be {expected}, got null"
        problems = [c(v) for c in checks]
        if any(p is None for p in problems):
            return None
        # Prefer a constraint message ("must be >= 1") over a type message when one type matched.
        specific = [p for p in problems if p is not None and not p.startswith("must be a")]
        return specific[0] if specific else f"must be {expected}, got {json_type_name(v, schema_words=True)}"

    return check_any


# ---------------------------------------------------------------------------------------------
# ToolSpec


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description, kind and JSON-schema parameters, with a compiled validator.

    `parameters` is a JSON schema object: {"type": "object", "properties": {...},
    "required": [...], "additionalProperties": False}. The validator is compiled from it once,
    when the spec is created; do not mutate `parameters` afterwards. Unlike plain JSON Schema, a
    missing "additionalProperties" means False: `invoke` passes the arguments as keywords, so an
    extra key could only crash the call.
    """

    name: str
    description: str
    kind: ToolKind
    terminal: bool
    parameters: dict = field(hash=False)
    _checkers: dict = field(init=False, repr=False, compare=False)
    _required: tuple = field(init=False, repr=False, compare=False)
    _extra_ok: bool = field(init=False, repr=False, compare=False)
    _openai: dict = field(init=False, repr=False, compare=False)
    _accepts: Callable[[object], bool] = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        # The hash dataclass would compute from the compared fields, computed once: specs key
        # the decoy caches looked up on every reset with the `distractors` noise.
        return self._hash

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _TOOL_NAME_RE.fullmatch(self.name):
            raise TypeError(f"invalid tool name {self.name!r} (want {_TOOL_NAME_RE.pattern})")
        object.__setattr__(self, "kind", ToolKind(self.kind))
        p = self.parameters
        if not isinstance(p, dict) or p.get("type") != "object":
            raise TypeError(f"tool {self.name!r}: parameters must be a JSON schema object")
        props = p.get("properties", {})
        required = tuple(p.get("required", ()))
        missing = [r for r in required if r not in props]
        if missing:
            raise TypeError(f"tool {self.name!r}: required names unknown properties {missing}")
        object.__setattr__(self, "_checkers", {k: compile_checker(s) for k, s in props.items()})
        object.__setattr__(self, "_required", required)
        object.__setattr__(self, "_hash", hash((self.name, self.description, self.kind, self.terminal)))
        object.__setattr__(self, "_extra_ok", p.get("additionalProperties", False) is True)
        object.__setattr__(self, "_accepts", arguments_acceptor(p, self._checkers))
        object.__setattr__(
            self,
            "_openai",
            {
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": self.parameters,
                },
            },
        )

    def openai_schema(self) -> dict:
        """{"type": "function", "function": {"name", "description", "parameters"}}.

        The same dict object on every call: callers must not mutate it.
        """
        return self._openai

    def validate(self, arguments: object) -> ActionError | None:
        """None when `arguments` is a valid call of this tool, else an INVALID_ARGS error.

        The message names every offending field and its problem.
        """
        if self._accepts(arguments):  # the checks compiled into one function (`_fast`)
            return None
        if not isinstance(arguments, dict):
            return ActionError(
                ErrorCode.INVALID_ARGS,
                f"tool '{self.name}': arguments must be an object, got {json_type_name(arguments, schema_words=True)}",
            )
        checkers = self._checkers
        problems: list[str] | None = None
        for key, value in arguments.items():
            check = checkers.get(key) if isinstance(key, str) else None
            if check is None:
                if self._extra_ok and isinstance(key, str):
                    continue
                problems = problems or []
                allowed = ", ".join(checkers) if checkers else "none: this tool takes no arguments"
                problems.append(f"unexpected argument {short_repr(key)} (allowed: {allowed})")
                continue
            problem = check(value)
            if problem is not None:
                problems = problems or []
                problems.append(f"argument '{key}' {problem}")
        for key in self._required:
            if key not in arguments:
                problems = problems or []
                problems.append(f"missing required argument '{key}'")
        if problems is None:
            return None
        return ActionError(ErrorCode.INVALID_ARGS, f"tool '{self.name}': " + "; ".join(problems))
