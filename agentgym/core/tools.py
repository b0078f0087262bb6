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

Validation is strict and never coerces: bool is not an int, int is not a str, float is not an
int (not even 3.0), NaN and infinities are not numbers; an int is accepted where a float is
expected (JSON has one number type). The validator is compiled from the JSON schema itself, once
per tool, into one small closure per parameter.

`ToolError` is the one exception a tool raises to report a failure the agent should see (not
found, unavailable, refused by policy...). Any other exception is a bug and propagates.
"""

from __future__ import annotations

import difflib
import enum
import inspect
import math
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Hashable, Literal, Union

from agentgym.core.protocol import ActionError, ErrorCode

__all__ = [
    "ToolKind",
    "READ",
    "WRITE",
    "ToolError",
    "Bounds",
    "MaxLen",
    "tool",
    "ToolSpec",
    "Toolkit",
    "close_names",
    "function_spec",
]


class ToolKind(str, enum.Enum):
    """Whether a tool only reads the world or changes it."""

    READ = "read"
    WRITE = "write"


READ, WRITE = ToolKind.READ, ToolKind.WRITE


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


@dataclass(frozen=True)
class Bounds:
    """Inclusive numeric bounds: `Annotated[int, Bounds(ge=1, le=20)]`."""

    ge: float | None = None
    le: float | None = None

    def __post_init__(self) -> None:
        for label, bound in (("ge", self.ge), ("le", self.le)):
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise TypeError(f"Bounds.{label} must be a number or None, got {bound!r}")
            if not math.isfinite(bound):
                raise TypeError(f"Bounds.{label} must be finite, got {bound!r}")
        if self.ge is None and self.le is None:
            raise TypeError("Bounds needs at least one of ge, le")
        if self.ge is not None and self.le is not None and self.ge > self.le:
            raise TypeError(f"empty Bounds: ge={self.ge!r} > le={self.le!r}")


@dataclass(frozen=True)
class MaxLen:
    """Length cap for a string (characters) or a list (items): `Annotated[str, MaxLen(200)]`."""

    n: int

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 0:
            raise TypeError(f"MaxLen.n must be an int >= 0, got {self.n!r}")


# ---------------------------------------------------------------------------------------------
# The decorator


@dataclass(frozen=True)
class _ToolMarker:
    kind: ToolKind
    terminal: bool


_MARKER = "__agentgym_tool__"
_SPEC_CACHE = "__agentgym_toolspec__"


def tool(fn: Callable | None = None, *, kind: ToolKind = READ, terminal: bool = False) -> Any:
    """Mark a Toolkit method as a tool: `@tool` or `@tool(kind=WRITE, terminal=True)`.

    `kind` says whether the tool changes the world; `terminal` whether calling it ends the
    episode (e.g. a final "submit"). The function is returned unchanged, with a marker attached;
    its ToolSpec is built when the Toolkit subclass that holds it is defined.
    """
    kind = ToolKind(kind)
    if not isinstance(terminal, bool):
        raise TypeError(f"terminal must be a bool, got {terminal!r}")
    marker = _ToolMarker(kind, terminal)

    def mark(f: Callable) -> Callable:
        if not inspect.isfunction(f):
            raise TypeError(f"@tool applies to plain methods, got {f!r}")
        setattr(f, _MARKER, marker)
        return f

    return mark if fn is None else mark(fn)


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


def _json_type(v: object) -> str:
    """The JSON type name of a value, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number" if math.isfinite(v) else repr(v)  # 'nan', 'inf'
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


#: Past this many characters a string is cut before repr(), and past this many bits an integer
#: is described, not printed: repr() of either costs in proportion to its size (and of an
#: integer past 4,300 digits raises).
_SHORT_MAX_CHARS = 4096
_SHORT_MAX_BITS = 4096


def _short(v: object, limit: int = 60) -> str:
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


def _fmt_num(x: float) -> str:
    return repr(int(x)) if isinstance(x, float) and x.is_integer() and abs(x) < 1e16 else repr(x)


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
                return f"{type_msg}, got {_json_type(v)}"
            if enum_set is not None and v not in enum_set:
                return f"{enum_msg}, got {_short(v)}"
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
                    return f"{type_msg}, got {_json_type(v)}"
                if not math.isfinite(v):
                    return f"must be a finite number, got {_short(v)}"
            elif not isinstance(v, int):
                return f"{type_msg}, got {_json_type(v)}"
            if enum_set is not None and v not in enum_set:
                return f"{enum_msg}, got {_short(v)}"
            if lo is not None and v < lo:
                return f"must be >= {_fmt_num(lo)}, got {_short(v)}"
            if hi is not None and v > hi:
                return f"must be <= {_fmt_num(hi)}, got {_short(v)}"
            return None

        return check_num

    if t == "boolean":

        def check_bool(v: object) -> str | None:
            if not isinstance(v, bool):
                return f"must be {expected}, got {_json_type(v)}"
            return None

        return check_bool

    if t == "array":
        max_items = schema.get("maxItems")
        items = schema.get("items")
        item_check = _compile(items) if items is not None else None

        def check_list(v: object) -> str | None:
            if not isinstance(v, list):
                return f"must be {expected}, got {_json_type(v)}"
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
        return None if ok else f"must be one of {values!r}, got {_short(v)}"

    return check_enum


def _compile(schema: dict) -> Checker:
    """Compile a (supported subset of) JSON schema into a checker closure."""
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
        return specific[0] if specific else f"must be {expected}, got {_json_type(v)}"

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
        object.__setattr__(self, "_checkers", {k: _compile(s) for k, s in props.items()})
        object.__setattr__(self, "_required", required)
        object.__setattr__(self, "_hash", hash((self.name, self.description, self.kind, self.terminal)))
        object.__setattr__(self, "_extra_ok", p.get("additionalProperties", False) is True)
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
        if not isinstance(arguments, dict):
            return ActionError(
                ErrorCode.INVALID_ARGS,
                f"tool '{self.name}': arguments must be an object, got {_json_type(arguments)}",
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
                problems.append(f"unexpected argument {_short(key)} (allowed: {allowed})")
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


# ---------------------------------------------------------------------------------------------
# Signature + docstring -> ToolSpec

_NONE_TYPE = type(None)
_UNION_ORIGINS = (Union, types.UnionType)
_SECTION_RE = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns|Return|Yields|"
    r"Yield|Raises|Examples?|Notes?|Warnings?|Todo|See Also|Attributes|References):\s*$"
)
_ARGS_HEADERS = ("Args", "Arguments", "Parameters", "Params")
_ARG_RE = re.compile(r"^\*{0,2}(\w+)\s*(?:\((.*?)\))?\s*:(.*)$")


def _schema_of(tp: Any, where: str) -> dict:
    """JSON schema for a supported annotation; TypeError for anything else."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        base, *meta = typing.get_args(tp)
        schema = _schema_of(base, where)
        for m in meta:
            _apply_meta(schema, m, where)
        return schema
    if origin in _UNION_ORIGINS:
        args = typing.get_args(tp)
        non_none = [a for a in args if a is not _NONE_TYPE]
        if len(non_none) != 1 or len(non_none) == len(args):
            raise TypeError(f"{where}: unsupported union {tp!r} (only `X | None` is supported)")
        schema = _schema_of(non_none[0], where)
        t = schema.get("type")
        if t is not None:
            schema["type"] = [t, "null"] if isinstance(t, str) else [*t, "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if origin is Literal:
        values = list(typing.get_args(tp))
        if not values or any(isinstance(v, bool) or not isinstance(v, (str, int)) for v in values):
            raise TypeError(f"{where}: Literal values must be str or int, got {tp!r}")
        if all(isinstance(v, str) for v in values):
            return {"type": "string", "enum": values}
        if all(isinstance(v, int) for v in values):
            return {"type": "integer", "enum": values}
        return {"enum": values}
    if origin is list:
        args = typing.get_args(tp)
        if len(args) != 1:
            raise TypeError(f"{where}: list needs an element type, e.g. list[str]; got {tp!r}")
        return {"type": "array", "items": _schema_of(args[0], where)}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    raise TypeError(
        f"{where}: unsupported annotation {tp!r} (supported: str, int, float, bool, Literal[...], "
        "list[X], X | None, Annotated[X, Bounds(...)|MaxLen(n)])"
    )


def _apply_meta(schema: dict, meta: object, where: str) -> None:
    t = schema.get("type")
    types_ = [t] if isinstance(t, str) else list(t or ())
    base = [x for x in types_ if x != "null"]
    base_t = base[0] if len(base) == 1 else None
    if isinstance(meta, Bounds):
        if base_t not in ("integer", "number"):
            raise TypeError(f"{where}: Bounds applies to int or float, not {schema!r}")
        if meta.ge is not None:
            schema["minimum"] = meta.ge
        if meta.le is not None:
            schema["maximum"] = meta.le
    elif isinstance(meta, MaxLen):
        if base_t == "string":
            schema["maxLength"] = meta.n
        elif base_t == "array":
            schema["maxItems"] = meta.n
        else:
            raise TypeError(f"{where}: MaxLen applies to str or list, not {schema!r}")
    else:
        raise TypeError(
            f"{where}: unsupported Annotated metadata {meta!r} "
            "(use Bounds(...) or MaxLen(n) instances)"
        )


def _parse_docstring(doc: str | None, where: str) -> tuple[str, dict[str, str]]:
    """(summary, {param: description}) from a Google-style docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary_lines: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines) and not _SECTION_RE.match(lines[i].strip()):
        summary_lines.append(lines[i].strip())
        i += 1
    # Paragraphs joined by a blank line, lines within a paragraph by a space.
    summary = "\n\n".join(
        " ".join(par.split()) for par in "\n".join(summary_lines).split("\n\n") if par.strip()
    )
    while i < len(lines):
        header = lines[i]
        m = _SECTION_RE.match(header.strip())
        i += 1
        if m is None:
            continue
        header_indent = len(header) - len(header.lstrip())
        body: list[str] = []
        while i < len(lines):
            line = lines[i]
            if line.strip() and len(line) - len(line.lstrip()) <= header_indent:
                break
            body.append(line)
            i += 1
        if m.group(1) not in _ARGS_HEADERS:
            continue
        entry_indent: int | None = None
        current: str | None = None
        for line in body:
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip())
            if entry_indent is None:
                entry_indent = indent
            if indent <= entry_indent:
                em = _ARG_RE.match(line.strip())
                if em is None:
                    raise TypeError(f"{where}: cannot parse Args entry {line.strip()!r}")
                current = em.group(1)
                if current in params:
                    raise TypeError(f"{where}: parameter {current!r} documented twice")
                params[current] = em.group(3).strip()
            else:
                assert current is not None
                params[current] = (params[current] + " " + line.strip()).strip()
    return summary, params


def _build_spec(fn: Callable, marker: _ToolMarker, *, supplied: str | None = "self") -> ToolSpec:
    """The spec of `fn`. Its first parameter, when `supplied` names one (a method's `self`, a
    plain function's world), is the caller's to pass, not an argument the agent gives."""
    where = f"tool {fn.__qualname__}"
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as e:  # unresolvable string annotation (NameError...)
        raise TypeError(f"{where}: cannot resolve annotations: {e}") from e
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    skip = 0 if supplied is None else 1
    if skip and (not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )):
        taking = "a method taking `self`" if supplied == "self" else f"a function taking `{supplied}`"
        raise TypeError(f"{where}: a tool must be {taking} first")
    summary, docs = _parse_docstring(fn.__doc__, where)
    if not summary:
        raise TypeError(f"{where}: needs a docstring summary (the description the agent sees)")
    properties: dict[str, dict] = {}
    required: list[str] = []
    for p in params[skip:]:
        pw = f"{where}, parameter {p.name!r}"
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"{pw}: *args and **kwargs are not allowed in tools")
        if p.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{pw}: positional-only parameters are not allowed in tools")
        if p.name not in hints:
            raise TypeError(f"{pw}: missing type annotation")
        schema = _schema_of(hints[p.name], pw)
        desc = docs.get(p.name)
        if not desc:
            raise TypeError(f"{pw}: not described in the docstring's Args: section")
        schema["description"] = desc
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
        else:
            problem = _compile(schema)(p.default)
            if problem is not None:
                raise TypeError(f"{pw}: default {p.default!r} does not fit the type: {problem}")
        properties[p.name] = schema
    stale = sorted(set(docs) - set(properties) - {p.name for p in params[:skip]})
    if stale:
        raise TypeError(f"{where}: docstring documents unknown parameters {stale}")
    return ToolSpec(
        name=fn.__name__,
        description=summary,
        kind=marker.kind,
        terminal=marker.terminal,
        parameters={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    )


def function_spec(fn: Callable, *, world: bool = False) -> ToolSpec:
    """The ToolSpec of a plain function, derived as for a `Toolkit` method (see the module
    docstring): its name, docstring summary, annotated parameters and their Args: entries.

    An unmarked function is a read tool; mark it `@tool(kind=WRITE)` (or ``terminal=True``) as a
    method would be. The spec is built afresh on each call (nothing is cached on the function).

    Args:
        fn: the function.
        world: its first parameter is the state it acts on, which the caller passes: it is not
            in the schema (and may be documented or not).

    Raises:
        TypeError: `fn` is not a plain function or its signature or docstring do not fit.
    """
    if not inspect.isfunction(fn):
        raise TypeError(f"a tool must be a plain function, got {fn!r}")
    marker = getattr(fn, _MARKER, None) or _ToolMarker(READ, False)
    return _build_spec(fn, marker, supplied="world" if world else None)


def _spec_for(fn: Callable) -> ToolSpec:
    """The ToolSpec of a marked function, built once and cached on the function."""
    spec = fn.__dict__.get(_SPEC_CACHE)
    if spec is None:
        spec = _build_spec(fn, getattr(fn, _MARKER))
        setattr(fn, _SPEC_CACHE, spec)
    return spec


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
            if inspect.isfunction(attr) and hasattr(attr, _MARKER):
                spec = _spec_for(attr)
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
        """What determines `schemas()`: equal keys (of one toolkit type) mean equal schemas, so a
        caller may cache a copy by it; None when they may vary. A class that keeps `schemas` has
        them fixed when it is defined, so its key is the class. A toolkit that is not a `Toolkit`
        (a cross-task session's) may offer one too."""
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
            return f"unknown tool {_short(name)}: this toolkit has no tools"
        close = close_names(name, specs, ignore_case=True) if isinstance(name, str) else []
        if close:
            return f"unknown tool {_short(name)}; did you mean: {', '.join(close)}?"
        return f"unknown tool {_short(name)}; available tools: {', '.join(specs)}"

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
