"""The tools as a tool chain reads their schemas: each argument with its stem, JSON type, the
words of its name and its value check (`Arg`), each tool with its arguments and vocabulary
(`Tool`), and what an argument's name says of the values it takes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from agentgym.agents.transcript import ID, key_stem, value_check

__all__ = ["Arg", "Tool", "tools_of", "is_id", "names_another", "PROSE", "FREE_CHOICE", "FORMATTED", "FROM_TOOLS"]

#: Argument stems that hold free text: filled with a line made of the call's other values.
PROSE = frozenset(map(key_stem, ("summary", "description", "note", "reason", "comment", "message", "body", "text")))
#: Argument stems whose value the user may name as a phrase after "for" (``for the 34 variant``).
FREE_CHOICE = frozenset(map(key_stem, ("variant", "version", "option", "size")))
#: Words of an argument's name that say its value has a format no plain word has.
FORMATTED = frozenset({"id", "ids", "email", "date", "month", "time", "utc", "url", "phone", "title"})
#: Argument stems whose values only come from tools (asking the user for them is no use).
FROM_TOOLS = frozenset(map(key_stem, ("amount", "total", "price", "utc", "version", "incident", "meeting", "approval",
                                        "report", "account", "item", "customer", "expense", "person", "attendee")))



def _kind(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    kinds = [k for k in (kind if isinstance(kind, list) else [kind]) if k != "null"]
    return kinds[0] if kinds else "any"


@dataclass(slots=True)
class Arg:
    """One tool parameter."""

    name: str
    stem: str
    schema: dict[str, Any]
    required: bool
    #: The JSON type (the first non-null one).
    kind: str = ""
    #: The words of the name (``duration_minutes`` -> duration, minutes).
    words: frozenset[str] = frozenset()
    #: Whether a value fits its schema, and (an array) whether an item fits its items' schema.
    fits: Callable[[Any], bool] = field(default=lambda value: True, repr=False)
    item_fits: Callable[[Any], bool] = field(default=lambda value: True, repr=False)

    def __post_init__(self) -> None:
        self.kind = _kind(self.schema)
        self.words = frozenset(self.name.lower().split("_"))
        self.fits = value_check(self.schema)
        self.item_fits = value_check(self.schema.get("items") or {})


@dataclass(slots=True)
class Tool:
    name: str
    args: list[Arg]
    description: str = ""
    #: The stems of its required arguments (a record sharing none binds nothing).
    stems: frozenset[str] = frozenset()
    #: The first five letters of the words of its name, arguments and descriptions.
    vocabulary: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.stems = frozenset(a.stem for a in self.args if a.required)
        text = " ".join([self.name, self.description, *(a.name for a in self.args),
                         *(str(a.schema.get("description", "")) for a in self.args)]).lower().replace("_", " ")
        self.vocabulary = frozenset(w[:5] for w in re.findall(r"[a-z]{3,}", text))


def tools_of(schemas: Iterable[Any]) -> list[Tool]:
    """The tools of ``info["tools"]`` (OpenAI function schemas), as `Tool`s."""
    out = []
    for t in schemas:
        if not isinstance(t, dict):
            continue
        fn = t.get("function", t)
        params = fn.get("parameters") or {}
        props = params.get("properties") or {}
        required = set(params.get("required") or ())
        args = [Arg(name, key_stem(name), dict(schema), name in required) for name, schema in props.items()
                if isinstance(schema, dict)]
        if isinstance(fn.get("name"), str):
            out.append(Tool(fn["name"], args, str(fn.get("description") or "")))
    return out



def is_id(key: str, value: Any) -> bool:
    """Whether a field holds an id (by its key or by its value's shape)."""
    return isinstance(value, str) and (key == "id" or key.endswith("_id") or ID.fullmatch(value) is not None)


def names_another(name: str) -> bool:
    """Whether an argument's name says it holds a value other than a record's (``new_variant``)."""
    return name.lower().startswith(("new_", "to_", "target_", "other_"))
