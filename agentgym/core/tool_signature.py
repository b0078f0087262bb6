"""The `@tool` decorator and a tool's spec derived from its Python signature and docstring.

The OpenAI function-tool JSON schema of each tool is DERIVED from the function's type annotations
and its Google-style docstring, never written by hand (see `agentgym.core.tools` for the
supported annotations). Anything else, a missing annotation, a parameter missing from the
docstring's "Args:" section, *args or **kwargs raise TypeError when the spec is built (for a
`Toolkit` method: when its class is defined), a programming error caught early.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Union

from agentgym.core.tool_spec import READ, ToolKind, ToolSpec, compile_checker

__all__ = ["Bounds", "MaxLen", "tool", "function_spec", "is_tool", "method_spec"]


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
            problem = compile_checker(schema)(p.default)
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


def is_tool(fn: object) -> bool:
    """Whether `fn` is a plain function marked with `@tool`."""
    return inspect.isfunction(fn) and hasattr(fn, _MARKER)


def method_spec(fn: Callable) -> ToolSpec:
    """The ToolSpec of a marked method (its `self` is not a parameter), built once and cached on
    the function."""
    spec = fn.__dict__.get(_SPEC_CACHE)
    if spec is None:
        spec = _build_spec(fn, getattr(fn, _MARKER))
        setattr(fn, _SPEC_CACHE, spec)
    return spec
