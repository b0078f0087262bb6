"""Tests for agentgym.core.tools: derived schemas, definition-time errors, strict validation.

The reliability test (E8) GENERATES its cases from the derived schemas: every way a call can be
wrong (missing, unexpected, wrongly typed, out of bounds, out of enum, over length, confusable
tool name) must be rejected with the right code and a message naming the field or tool, every
valid call sampled from the schema must be accepted, and no invalid call may reach the tool.
"""

import copy
import dataclasses
import json
import math
import time
from collections import Counter
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentgym.core.protocol import ActionError, ErrorCode
from agentgym.core.tools import (
    READ,
    SUGGEST_MAX_CHARS,
    WRITE,
    Bounds,
    MaxLen,
    ToolError,
    ToolKind,
    Toolkit,
    ToolSpec,
    close_names,
    tool,
)

# ---------------------------------------------------------------------------------------------
# The fake toolkit: every supported annotation kind appears at least once.


class FakeShop(Toolkit):
    """A tiny shop. Each tool counts its calls before doing anything else."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.items = {1: "apple", 2: "pear", 3: "fig"}

    @tool
    def search(
        self,
        query: Annotated[str, MaxLen(50)],
        limit: Annotated[int, Bounds(ge=1, le=20)] = 5,
        in_stock: bool = False,
    ) -> list[str]:
        """Search the catalog by free text.

        Matches names and descriptions.

        Args:
            query (str): Free-text query.
            limit (int): Maximum number of results,
                between 1 and 20.
            in_stock: Only return items in stock.

        Returns:
            Matching item names.
        """
        self.calls["search"] += 1
        return [n for n in self.items.values() if query in n][:limit]

    @tool(kind=WRITE)
    def set_price(
        self,
        item_id: int,
        price: Annotated[float, Bounds(ge=0.0)],
        currency: Literal["USD", "EUR"] = "USD",
    ) -> str:
        """Set the price of an item.

        Args:
            item_id: The item.
            price: New price, not negative.
            currency: Currency of the price.
        """
        self.calls["set_price"] += 1
        return "ok"

    @tool(kind=WRITE)
    def tag_items(
        self,
        item_ids: Annotated[list[int], MaxLen(5)],
        tags: list[Annotated[str, MaxLen(10)]],
        weights: list[float] | None = None,
    ) -> int:
        """Attach tags to items.

        Args:
            item_ids: Items to tag (at most 5).
            tags: Tags, each at most 10 characters.
            weights: Optional weight per tag.
        """
        self.calls["tag_items"] += 1
        return len(item_ids) * len(tags)

    @tool
    def rate(
        self,
        stars: Literal[1, 2, 3, 4, 5],
        comment: Optional[str] = None,
        score: Annotated[float | None, Bounds(ge=0.0, le=1.0)] = None,
    ) -> str:
        """Rate the service.

        Args:
            stars: One to five stars.
            comment: Free-text comment.
            score: Normalised score in [0, 1].
        """
        self.calls["rate"] += 1
        return "thanks"

    @tool
    def configure(
        self,
        level: Literal["low", "high", 0, 1] = "low",
        ratio: Annotated[float, Bounds(le=1)] = 0.5,
    ) -> str:
        """Configure verbosity.

        Args:
            level: Verbosity level, by name or number.
            ratio: Sampling ratio, at most 1.
        """
        self.calls["configure"] += 1
        return "ok"

    @tool
    def lookup(self, item_id: Annotated[int, Bounds(ge=0)]) -> str:
        """Look an item up by id.

        Args:
            item_id: The item id.

        Raises:
            ToolError: The item does not exist.
        """
        self.calls["lookup"] += 1
        if item_id not in self.items:
            raise ToolError(f"item {item_id} not found")
        return self.items[item_id]

    @tool
    def ratio_of(self, a: int, b: int) -> float:
        """Divide two integers (buggy: b=0 crashes).

        Args:
            a: Numerator.
            b: Denominator.
        """
        self.calls["ratio_of"] += 1
        return a / b

    @tool
    def ping(self) -> str:
        """Check the service is up."""
        self.calls["ping"] += 1
        return "pong"

    @tool(kind=WRITE, terminal=True)
    def submit(self, answer: str | None, note: Annotated[Optional[str], MaxLen(20)] = None) -> str:
        """Submit the final answer and end the episode.

        Args:
            answer: The answer, or null to give up.
            note: Short note.
        """
        self.calls["submit"] += 1
        return "done"

    def helper(self) -> None:
        """Not a tool."""


EXPECTED_PARAMETERS: dict[str, dict] = {
    "search": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 50, "description": "Free-text query."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 20,
                "description": "Maximum number of results, between 1 and 20.",
            },
            "in_stock": {"type": "boolean", "description": "Only return items in stock."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "set_price": {
        "type": "object",
        "properties": {
            "item_id": {"type": "integer", "description": "The item."},
            "price": {"type": "number", "minimum": 0.0, "description": "New price, not negative."},
            "currency": {
                "type": "string",
                "enum": ["USD", "EUR"],
                "description": "Currency of the price.",
            },
        },
        "required": ["item_id", "price"],
        "additionalProperties": False,
    },
    "tag_items": {
        "type": "object",
        "properties": {
            "item_ids": {
                "type": "array",
                "items": {"type": "integer"},
                "maxItems": 5,
                "description": "Items to tag (at most 5).",
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "maxLength": 10},
                "description": "Tags, each at most 10 characters.",
            },
            "weights": {
                "type": ["array", "null"],
                "items": {"type": "number"},
                "description": "Optional weight per tag.",
            },
        },
        "required": ["item_ids", "tags"],
        "additionalProperties": False,
    },
    "rate": {
        "type": "object",
        "properties": {
            "stars": {
                "type": "integer",
                "enum": [1, 2, 3, 4, 5],
                "description": "One to five stars.",
            },
            "comment": {"type": ["string", "null"], "description": "Free-text comment."},
            "score": {
                "type": ["number", "null"],
                "minimum": 0.0,
                "maximum": 1.0,
                "description": "Normalised score in [0, 1].",
            },
        },
        "required": ["stars"],
        "additionalProperties": False,
    },
    "configure": {
        "type": "object",
        "properties": {
            "level": {
                "enum": ["low", "high", 0, 1],
                "description": "Verbosity level, by name or number.",
            },
            "ratio": {"type": "number", "maximum": 1, "description": "Sampling ratio, at most 1."},
        },
        "required": [],
        "additionalProperties": False,
    },
    "lookup": {
        "type": "object",
        "properties": {"item_id": {"type": "integer", "minimum": 0, "description": "The item id."}},
        "required": ["item_id"],
        "additionalProperties": False,
    },
    "ratio_of": {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "Numerator."},
            "b": {"type": "integer", "description": "Denominator."},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    "ping": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    "submit": {
        "type": "object",
        "properties": {
            "answer": {
                "type": ["string", "null"],
                "description": "The answer, or null to give up.",
            },
            "note": {"type": ["string", "null"], "maxLength": 20, "description": "Short note."},
        },
        "required": ["answer"],
        "additionalProperties": False,
    },
}

EXPECTED_DESCRIPTIONS = {
    "search": "Search the catalog by free text.\n\nMatches names and descriptions.",
    "set_price": "Set the price of an item.",
    "tag_items": "Attach tags to items.",
    "rate": "Rate the service.",
    "configure": "Configure verbosity.",
    "lookup": "Look an item up by id.",
    "ratio_of": "Divide two integers (buggy: b=0 crashes).",
    "ping": "Check the service is up.",
    "submit": "Submit the final answer and end the episode.",
}

TOOL_NAMES = list(EXPECTED_PARAMETERS)


# ---------------------------------------------------------------------------------------------
# Derived schema


def test_schema_golden() -> None:
    specs = FakeShop.tool_specs()
    assert list(specs) == TOOL_NAMES  # definition order; `helper` is not a tool
    for name, spec in specs.items():
        assert spec.name == name
        assert spec.parameters == EXPECTED_PARAMETERS[name], name
        assert spec.description == EXPECTED_DESCRIPTIONS[name], name
    assert specs["search"].kind is ToolKind.READ and specs["search"].terminal is False
    assert specs["set_price"].kind is WRITE and specs["lookup"].kind is READ
    assert specs["submit"].kind is WRITE and specs["submit"].terminal is True
    assert sum(s.terminal for s in specs.values()) == 1
    assert ToolKind.READ.value == "read" and ToolKind.WRITE == "write"


def test_openai_function_tool_shape() -> None:
    kit = FakeShop()
    schemas = kit.schemas()
    assert [s["function"]["name"] for s in schemas] == TOOL_NAMES
    for s in schemas:
        assert set(s) == {"type", "function"} and s["type"] == "function"
        fn = s["function"]
        assert set(fn) == {"name", "description", "parameters"}
        assert fn["description"] == EXPECTED_DESCRIPTIONS[fn["name"]]
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop["description"]
        assert s == kit.spec(fn["name"]).openai_schema()
    assert json.loads(json.dumps(schemas)) == schemas  # plain JSON


def test_schemas_are_valid_json_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for spec in FakeShop.tool_specs().values():
        jsonschema.Draft202012Validator.check_schema(spec.parameters)


def test_specs_built_once_per_class() -> None:
    a, b = FakeShop(), FakeShop()
    assert a.tool_specs() is b.tool_specs() is FakeShop.tool_specs()
    assert a.schemas() is b.schemas()
    assert a.spec("search") is b.spec("search")
    assert a.has_tool("search") and not a.has_tool("helper") and not a.has_tool("invoke")
    with pytest.raises(KeyError):
        a.spec("nope")
    assert Toolkit.tool_specs() == {} and Toolkit().schemas() == []


def test_inheritance_order_and_override() -> None:
    class Extended(FakeShop):
        @tool
        def extra(self, x: int) -> int:
            """Extra tool.

            Args:
                x: A number.
            """
            return x

        @tool
        def search(self, query: str) -> list[str]:
            """Search, narrowed.

            Args:
                query: Text.
            """
            return []

        def ping(self) -> str:  # overridden without @tool: no longer a tool
            return "pong"

    names = list(Extended.tool_specs())
    assert names == [n for n in TOOL_NAMES if n != "ping"] + ["extra"]
    assert Extended.tool_specs()["search"].description == "Search, narrowed."
    assert FakeShop.tool_specs()["search"].description == EXPECTED_DESCRIPTIONS["search"]
    assert list(FakeShop.tool_specs()) == TOOL_NAMES  # the base class is unaffected


def test_docstring_forms() -> None:
    class Kit(Toolkit):
        @tool
        def f(self, a: int, b: str, c: float = 1.0) -> None:
            """Summary line one
            continues here.

            Args:
                a (int): First,
                    continued on a second line
                    and a third.
                b: Second.

                c (Annotated[float, Bounds(ge=0)], optional): Third.
            Returns:
                Nothing.
            """

    spec = Kit.tool_specs()["f"]
    assert spec.description == "Summary line one continues here."
    props = spec.parameters["properties"]
    assert props["a"]["description"] == "First, continued on a second line and a third."
    assert props["b"]["description"] == "Second."
    assert props["c"]["description"] == "Third."


def test_string_annotations_resolve() -> None:
    class Kit(Toolkit):
        @tool
        def f(self, a: "int", b: "list[str] | None" = None) -> None:
            """F.

            Args:
                a: A.
                b: B.
            """

    props = Kit.tool_specs()["f"].parameters["properties"]
    assert props["a"]["type"] == "integer" and props["b"]["type"] == ["array", "null"]


def test_union_optional_spellings_agree() -> None:
    class Kit(Toolkit):
        @tool
        def f(self, a: Optional[int], b: Union[int, None], c: int | None) -> None:
            """F.

            Args:
                a: A.
                b: B.
                c: C.
            """

    props = Kit.tool_specs()["f"].parameters["properties"]
    assert props["a"]["type"] == props["b"]["type"] == props["c"]["type"] == ["integer", "null"]
    assert Kit.tool_specs()["f"].parameters["required"] == ["a", "b", "c"]


# ---------------------------------------------------------------------------------------------
# Programming errors surface at class definition


def _define(
    annotation: Any, *, doc: str = "x: The x.", default: Any = None, has_default: bool = False
) -> type:
    ns: dict[str, Any] = {}

    def f(self, x):  # type: ignore[no-untyped-def]
        pass

    f.__annotations__ = {"x": annotation} if annotation is not _MISSING else {}
    f.__doc__ = f"Do it.\n\nArgs:\n    {doc}\n" if doc else "Do it."
    if has_default:
        f.__defaults__ = (default,)
    ns["f"] = tool(f)
    return type("Kit", (Toolkit,), ns)


_MISSING = object()


@pytest.mark.parametrize(
    "annotation",
    [
        dict,
        tuple,
        list,  # bare list: no element type
        Any,
        object,
        dict[str, int],
        tuple[int, int],
        Union[int, str],
        int | str | None,
        Literal[1.5],
        Literal[True],
        list[dict],
        Annotated[str, Bounds(ge=1)],  # Bounds on a string
        Annotated[int, MaxLen(3)],  # MaxLen on an int
        Annotated[int, Bounds],  # the class, not an instance
        Annotated[int, "some doc"],  # unknown metadata
        type(None),
    ],
)
def test_unsupported_annotation_raises_at_definition(annotation: Any) -> None:
    with pytest.raises(TypeError):
        _define(annotation)


def test_definition_errors() -> None:
    with pytest.raises(TypeError, match="missing type annotation"):
        _define(_MISSING)
    with pytest.raises(TypeError, match="not described"):
        _define(int, doc="")
    with pytest.raises(TypeError, match="not described"):
        _define(int, doc="y: Another parameter.")
    with pytest.raises(TypeError, match="does not fit"):
        _define(Annotated[int, Bounds(ge=1)], default=0, has_default=True)
    with pytest.raises(TypeError, match="does not fit"):
        _define(str, default=None, has_default=True)  # None default needs `str | None`
    _define(Optional[str], default=None, has_default=True)  # fine

    with pytest.raises(TypeError, match="kwargs"):

        class K1(Toolkit):
            @tool
            def f(self, a: int, **kwargs: int) -> None:
                """F.

                Args:
                    a: A.
                    kwargs: More.
                """

    with pytest.raises(TypeError, match="args"):

        class K2(Toolkit):
            @tool
            def f(self, *args: int) -> None:
                """F.

                Args:
                    args: A.
                """

    with pytest.raises(TypeError, match="docstring"):

        class K3(Toolkit):
            @tool
            def f(self) -> None:
                pass

    with pytest.raises(TypeError, match="unknown parameters"):

        class K4(Toolkit):
            @tool
            def f(self, a: int) -> None:
                """F.

                Args:
                    a: A.
                    b: Stale.
                """

    with pytest.raises(TypeError, match="positional-only"):

        class K5(Toolkit):
            @tool
            def f(self, a: int, /) -> None:
                """F.

                Args:
                    a: A.
                """

    with pytest.raises(TypeError):
        tool(staticmethod(lambda: None))  # type: ignore[arg-type]


def test_bounds_and_maxlen_reject_nonsense() -> None:
    for bad in (dict(ge=2, le=1), dict(ge=float("nan")), dict(le=True), dict(ge="1"), dict()):
        with pytest.raises(TypeError):
            Bounds(**bad)
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(TypeError):
            MaxLen(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# An independent oracle of the validation rules, written from the spec, not from the code.


def _types(schema: dict) -> list[str] | None:
    t = schema.get("type")
    return None if t is None else ([t] if isinstance(t, str) else list(t))


def _same(a: object, b: object) -> bool:
    # JSON-level identity: True is not 1, 1.0 is not 1.
    return type(a) is type(b) and a == b


def oracle_allows(schema: dict, v: object) -> bool:
    types = _types(schema)
    if "enum" in schema and not any(_same(v, m) for m in schema["enum"]):
        return False
    if v is None:
        return types is None or "null" in types
    if types is None:
        return True  # enum membership already checked
    for t in types:
        if t == "string" and type(v) is str:
            return len(v) <= schema.get("maxLength", math.inf)
        if t == "boolean" and type(v) is bool:
            return True
        if t in ("integer", "number") and (type(v) is int or (t == "number" and type(v) is float)):
            if type(v) is float and not math.isfinite(v):
                return False
            return schema.get("minimum", -math.inf) <= v <= schema.get("maximum", math.inf)
        if t == "array" and type(v) is list:
            return len(v) <= schema.get("maxItems", math.inf) and all(
                oracle_allows(schema["items"], x) for x in v
            )
    return False


def valid_example(schema: dict) -> object:
    """A deterministic valid value, preferring a non-null one."""
    if "enum" in schema:
        return next(m for m in schema["enum"] if m is not None)
    t = [x for x in _types(schema) if x != "null"][0]
    if t == "string":
        return "s"[: schema.get("maxLength", 1)]
    if t == "boolean":
        return True
    if t in ("integer", "number"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        v = lo if lo is not None else (hi if hi is not None else 3)
        return int(v) if t == "integer" else float(v)
    if t == "array":
        return [valid_example(schema["items"])]
    raise AssertionError(schema)


def strategy(schema: dict) -> st.SearchStrategy:
    """Hypothesis strategy of valid values of a property schema."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    types = _types(schema)
    options = []
    for t in types:
        if t == "null":
            options.append(st.none())
        elif t == "string":
            options.append(st.text(max_size=schema.get("maxLength", 30)))
        elif t == "boolean":
            options.append(st.booleans())
        elif t == "integer":
            options.append(st.integers(schema.get("minimum"), schema.get("maximum")))
        elif t == "number":
            lo, hi = schema.get("minimum"), schema.get("maximum")
            options.append(st.floats(lo, hi, allow_nan=False, allow_infinity=False))
            options.append(
                st.integers(
                    None if lo is None else math.ceil(lo), None if hi is None else math.floor(hi)
                )
            )
        elif t == "array":
            options.append(st.lists(strategy(schema["items"]), max_size=schema.get("maxItems", 6)))
    return st.one_of(options)


def args_strategy(params: dict) -> st.SearchStrategy:
    props, required = params["properties"], params["required"]
    return st.fixed_dictionaries(
        {k: strategy(props[k]) for k in required},
        optional={k: strategy(s) for k, s in props.items() if k not in required},
    )


def test_oracle_agrees_with_examples() -> None:
    for spec in FakeShop.tool_specs().values():
        for name, s in spec.parameters["properties"].items():
            assert oracle_allows(s, valid_example(s)), (spec.name, name)


# ---------------------------------------------------------------------------------------------
# Reliability E8: generated negative and positive cases

POOL: list[object] = [None, True, 1, 1.5, "s", [], {}, float("nan")]
NOT_OBJECTS: list[object] = [None, [], "x", 1, 1.5, True, [("a", 1)], ("a",)]


def _step(kit: FakeShop, name: object, args: object) -> tuple[ActionError | None, bool]:
    """What an env does: validate, and invoke only when valid. Returns (error, invoked)."""
    err = kit.validate(name, args)  # type: ignore[arg-type]
    if err is not None:
        return err, False
    try:
        kit.invoke(name, args)  # type: ignore[arg-type]
    except (ToolError, ZeroDivisionError):
        pass
    return None, True


def bad_values(schema: dict) -> list[object]:
    """Values that the schema must reject: pool values it does not allow, plus edge cases."""
    out: list[object] = [v for v in POOL if not oracle_allows(schema, v)]
    types = _types(schema) or []
    if "enum" in schema:
        members = [m for m in schema["enum"] if m is not None]
        out += ["not_a_member", *(str(m).upper() + "_" for m in members)]
        ints = [m for m in members if type(m) is int]
        if ints:
            out += [max(ints) + 1, min(ints) - 1, float(ints[0]), str(ints[0])]
    if "integer" in types or "number" in types:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        out += [float("inf"), float("-inf"), "1", True, False]
        if lo is not None:
            out += [lo - 1, lo - 0.5, -(10**30)]
        if hi is not None:
            out += [hi + 1, hi + 0.5, 10**30]
        if "integer" in types:
            out += [3.0, 0.0, -2.5]
    if "string" in types:
        out += [1, b"bytes", ["s"]]
        if "maxLength" in schema:
            out.append("x" * (schema["maxLength"] + 1))
    if "array" in types:
        item = schema["items"]
        out += ["[]", ("a",), {"0": 1}]
        out += [[v] for v in POOL if not oracle_allows(item, v)]
        out += [[valid_example(item), v] for v in bad_values(item)]
        if "maxItems" in schema:
            out.append([valid_example(item)] * (schema["maxItems"] + 1))
    # Keep only what the oracle really forbids (e.g. 1 is a fine number).
    return [v for v in out if not oracle_allows(schema, v)]


def confusable_names(name: str) -> list[str]:
    variants = {
        name.capitalize(),
        name.upper(),
        name + "_",
        "_" + name,
        name + "s",
        name[:-1],
        name[1:],
        name[: len(name) // 2] + name[len(name) // 2 + 1 :],  # drop a middle character
        name.replace("_", "-"),
        name.replace("_", ""),
        name + " ",
        " " + name,
        name[:1] + name[2:1:-1] + name[3:] if len(name) > 3 else name + "x",  # swap 2 chars
    }
    return sorted(v for v in variants if v != name)


def generate_negative_cases() -> list[tuple[str, object, object, ErrorCode, str]]:
    """(label, tool name, arguments, expected code, text the message must contain)."""
    cases: list[tuple[str, object, object, ErrorCode, str]] = []
    bad_args = ErrorCode.INVALID_ARGS
    specs = FakeShop.tool_specs()
    for name, spec in specs.items():
        props = spec.parameters["properties"]
        required = spec.parameters["required"]
        full = {k: valid_example(s) for k, s in props.items()}
        minimal = {k: full[k] for k in required}
        for a in NOT_OBJECTS:
            cases.append((f"{name}: not an object", name, a, bad_args, "must be an object"))
        for r in required:
            for base in (full, minimal):
                args = {k: v for k, v in base.items() if k != r}
                must = f"missing required argument '{r}'"
                cases.append((f"{name}: drop {r}", name, args, bad_args, must))
        for base in (full, minimal, {}):
            for extra in ("unexpected_arg", "Query", name, "self"):
                if extra in props:
                    continue
                args = {**base, extra: 1}
                must = f"unexpected argument '{extra}'"
                cases.append((f"{name}: extra {extra}", name, args, bad_args, must))
        for k, s in props.items():
            for bad in bad_values(s):
                for base in (full, minimal):
                    args = {**base, k: bad}
                    cases.append((f"{name}: {k}={bad!r}", name, args, bad_args, f"argument '{k}'"))
        for wrong in confusable_names(name):
            if wrong in specs:
                continue
            cases.append((f"tool {wrong!r}", wrong, full, ErrorCode.UNKNOWN_TOOL, repr(wrong)))
    for wrong in ("", "helper", "invoke", "validate", "__init__", "schemas", "tool_specs"):
        cases.append((f"tool {wrong!r}", wrong, {}, ErrorCode.UNKNOWN_TOOL, repr(wrong)))
    for wrong in (None, 1, ["search"]):
        args = {"query": "x"}
        cases.append((f"tool {wrong!r}", wrong, args, ErrorCode.UNKNOWN_TOOL, repr(wrong)))
    return cases


NEGATIVE_CASES = generate_negative_cases()


def test_e8_all_generated_negative_cases_rejected() -> None:
    kit = FakeShop()
    failures = []
    for label, name, args, code, must_contain in NEGATIVE_CASES:
        snapshot = copy.deepcopy(args)
        err, invoked = _step(kit, name, args)
        if invoked or err is None:
            failures.append(f"{label}: accepted")
        elif not isinstance(err, ActionError) or err.code != code:
            failures.append(f"{label}: wrong code {err!r}")
        elif must_contain not in err.message:
            failures.append(f"{label}: message {err.message!r} lacks {must_contain!r}")
        if args != snapshot:  # (a NaN is the same object in both, so dicts compare equal)
            failures.append(f"{label}: validation mutated the arguments")
    summary = f"{len(failures)}/{len(NEGATIVE_CASES)} failed:\n" + "\n".join(failures[:30])
    assert not failures, summary
    assert sum(kit.calls.values()) == 0  # no invalid call reached a tool
    # The generator really generated: every tool and field is exercised, in bulk.
    assert len(NEGATIVE_CASES) > 800
    fields_hit = {(c[1], c[4]) for c in NEGATIVE_CASES if c[3] is ErrorCode.INVALID_ARGS}
    for name, spec in FakeShop.tool_specs().items():
        for k in spec.parameters["properties"]:
            assert (name, f"argument '{k}'") in fields_hit


def test_e8_pool_values_allowed_by_schema_are_accepted() -> None:
    """The complement of the pool: values the schema allows must pass (no over-rejection)."""
    kit = FakeShop()
    accepted = 0
    for name, spec in FakeShop.tool_specs().items():
        props = spec.parameters["properties"]
        full = {k: valid_example(s) for k, s in props.items()}
        for k, s in props.items():
            for v in POOL + [0, -1, 10**30, 2.0, "", [1], [1.5], ["s"], "x" * 10]:
                if oracle_allows(s, v):
                    err = kit.validate(name, {**full, k: v})
                    assert err is None, (name, k, v, err)
                    accepted += 1
    assert accepted > 20


def test_e8_confusable_names_suggest_the_real_tool() -> None:
    kit = FakeShop()
    for name in TOOL_NAMES:
        for wrong in (name.capitalize(), name.upper(), name + "_", name[:-1]):
            if wrong == name:
                continue
            err = kit.validate(wrong, {})
            assert err is not None and err.code is ErrorCode.UNKNOWN_TOOL
            assert "did you mean:" in err.message, (wrong, err.message)
            hint = err.message.split("did you mean:")[-1]
            assert name in hint, (wrong, err.message)
    err = kit.validate("seach", {"query": "x"})
    assert err is not None and "did you mean: search" in err.message
    assert len(err.message.split("did you mean:")[1].split(",")) <= 3
    err = kit.validate("zzzzqqqq", {})
    assert err is not None and err.code is ErrorCode.UNKNOWN_TOOL
    assert "available tools" in err.message


def test_suggestions_only_for_short_names() -> None:
    assert close_names("seach", ["search", "book"]) == ["search"]
    assert close_names("s" * SUGGEST_MAX_CHARS, ["s" * SUGGEST_MAX_CHARS]) == ["s" * SUGGEST_MAX_CHARS]
    assert close_names("s" * (SUGGEST_MAX_CHARS + 1), ["s" * SUGGEST_MAX_CHARS]) == []


@pytest.mark.parametrize("length", [SUGGEST_MAX_CHARS + 1, 2**16, 2**20, 64 * 2**20])
def test_a_long_unknown_name_costs_no_suggestion_search(length: int) -> None:
    kit = FakeShop()
    for name in ("search" * (length // 6 + 1))[:length], "é" * length:
        start = time.perf_counter()
        err = kit.validate(name, {})
        elapsed = time.perf_counter() - start
        assert err is not None and err.code is ErrorCode.UNKNOWN_TOOL
        assert "did you mean" not in err.message and "available tools" in err.message
        assert len(err.message) < 400
        # A few microseconds (a 64 KiB name cost 4 ms of difflib, 64 MiB about 10 s).
        assert elapsed < 0.05, f"{length} chars: {elapsed * 1000:.1f} ms"


def test_messages_about_huge_values_are_short_and_never_raise() -> None:
    kit = FakeShop()
    for value in (10**5000, -(10**5000), "q" * 2**24, ["x"] * 10):
        for name, key in (("set_price", "item_id"), ("set_price", "price"), ("search", "query")):
            err = kit.validate(name, {key: value})
            assert err is not None and err.code is ErrorCode.INVALID_ARGS
            assert len(err.message) < 600, err.message[:200]
        err = kit.validate("search", {"q" * 2**24: value})
        assert err is not None and len(err.message) < 600


@pytest.mark.parametrize("name", TOOL_NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_e8_generated_valid_calls_accepted(name: str, data: st.DataObject) -> None:
    spec = FakeShop.tool_specs()[name]
    args = data.draw(args_strategy(spec.parameters))
    kit = FakeShop()
    err, invoked = _step(kit, name, args)
    assert err is None, (args, err)
    assert invoked and kit.calls == Counter({name: 1})


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_e8_valid_samples_also_pass_jsonschema(name: str) -> None:
    """The derived schema means what standard JSON Schema says it means on valid calls."""
    jsonschema = pytest.importorskip("jsonschema")
    spec = FakeShop.tool_specs()[name]
    validator = jsonschema.Draft202012Validator(spec.parameters)

    @settings(max_examples=60, deadline=None)
    @given(args=args_strategy(spec.parameters))
    def check(args: dict) -> None:
        assert spec.validate(args) is None
        assert not list(validator.iter_errors(args))

    check()


# ---------------------------------------------------------------------------------------------
# Messages, exceptions, speed


def _msg(kit: FakeShop, name: str, args: object) -> str:
    err = kit.validate(name, args)
    assert err is not None and err.code is ErrorCode.INVALID_ARGS
    return err.message


def test_messages_name_the_field_and_problem() -> None:
    kit = FakeShop()
    m = _msg(kit, "set_price", {"item_id": 1, "price": 1, "currency": "GBP"})
    assert "argument 'currency' must be one of ['USD', 'EUR'], got 'GBP'" in m
    m = _msg(kit, "search", {"query": "a", "limit": True})
    assert "argument 'limit' must be an integer, got boolean" in m
    m = _msg(kit, "search", {"query": "a", "limit": 3.0})
    assert "argument 'limit' must be an integer, got number" in m
    assert "argument 'limit' must be <= 20" in _msg(kit, "search", {"query": "a", "limit": 21})
    assert "argument 'limit' must be >= 1" in _msg(kit, "search", {"query": "a", "limit": 0})
    assert "argument 'query' must be a string, got integer" in _msg(kit, "search", {"query": 1})
    assert "argument 'query' is too long" in _msg(kit, "search", {"query": "x" * 51})
    assert "finite" in _msg(kit, "set_price", {"item_id": 1, "price": float("nan")})
    m = _msg(kit, "search", {"query": "a", "foo": 1})
    assert "unexpected argument 'foo'" in m and "query, limit, in_stock" in m
    assert "takes no arguments" in _msg(kit, "ping", {"x": 1})
    assert "missing required argument 'query'" in _msg(kit, "search", {})
    assert "arguments must be an object" in _msg(kit, "search", ["a"])
    m = _msg(kit, "tag_items", {"item_ids": [1, "2"], "tags": ["ok"]})
    assert "argument 'item_ids' item 1 must be an integer, got string" in m
    assert "has too many items" in _msg(kit, "tag_items", {"item_ids": [1] * 6, "tags": []})
    assert "argument 'answer' must be a string or null" in _msg(kit, "submit", {"answer": 1})
    # Several problems are all reported, each naming its field.
    m = _msg(kit, "set_price", {"price": -1, "bogus": 0})
    assert "'item_id'" in m and "'price'" in m and "'bogus'" in m
    assert "tool 'set_price'" in m
    # Huge agent-sent values are not echoed back whole.
    assert len(_msg(kit, "set_price", {"item_id": 1, "price": 1, "currency": "x" * 100_000})) < 300
    assert len(_msg(kit, "ping", {"k" * 100_000: 1})) < 300
    err = kit.validate("s" * 100_000, {})
    assert err is not None and len(err.message) < 500


def test_accepts_json_numbers_for_float_and_nulls_where_nullable() -> None:
    kit = FakeShop()
    assert kit.validate("set_price", {"item_id": 1, "price": 3}) is None  # int for float
    assert kit.validate("rate", {"stars": 5, "comment": None, "score": None}) is None
    assert kit.validate("rate", {"stars": 5, "score": 1}) is None
    assert kit.validate("submit", {"answer": None}) is None
    assert kit.validate("configure", {"level": 0}) is None
    assert kit.validate("configure", {"level": False}) is not None  # False is not 0
    assert kit.validate("configure", {"level": 1.0}) is not None  # 1.0 is not 1
    assert kit.validate("ping", {}) is None
    assert kit.validate("search", {"query": None}) is not None  # not nullable


def test_invoke_calls_bound_method_and_propagates_errors() -> None:
    kit = FakeShop()
    assert kit.invoke("lookup", {"item_id": 2}) == "pear"
    with pytest.raises(ToolError, match="not found"):
        kit.invoke("lookup", {"item_id": 99})
    with pytest.raises(ZeroDivisionError):
        kit.invoke("ratio_of", {"a": 1, "b": 0})
    assert kit.invoke("ratio_of", {"a": 1, "b": 4}) == 0.25
    assert kit.calls == Counter({"lookup": 2, "ratio_of": 2})
    for not_a_tool in ("helper", "invoke", "__init__", "nope"):
        with pytest.raises(KeyError):
            kit.invoke(not_a_tool, {})


def test_handwritten_toolspec_validates_like_derived() -> None:
    spec = ToolSpec(
        name="f",
        description="F.",
        kind=READ,
        terminal=False,
        parameters={
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"],
            "additionalProperties": False,
        },
    )
    assert spec.validate({"n": 0}) is None
    assert spec.validate({"n": -1}) is not None
    assert spec.validate({"n": 1, "m": 2}) is not None
    assert spec.openai_schema()["function"]["name"] == "f"
    assert {spec: 1}[spec] == 1  # hashable although `parameters` is a dict
    lax = dataclasses.replace(
        spec, parameters={"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    assert lax.validate({"n": 1, "m": 2}) is not None  # absent additionalProperties means False
    assert lax.validate({"n": 1}) is None  # nothing required
    _obj = {"type": "object"}
    with pytest.raises(TypeError):
        ToolSpec(name="bad name", description="", kind=READ, terminal=False, parameters=_obj)
    with pytest.raises(TypeError):
        ToolSpec(
            name="g",
            description="",
            kind=READ,
            terminal=False,
            parameters={"type": "object", "properties": {"x": {"type": "object"}}},
        )


def test_validate_three_args_is_fast() -> None:
    kit = FakeShop()
    args = {"item_id": 7, "price": 9.5, "currency": "EUR"}
    assert kit.validate("set_price", args) is None
    n = 5000
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            kit.validate("set_price", args)
        best = min(best, (time.perf_counter() - t0) / n)
    # A few microseconds on an idle machine; the bound leaves room for a loaded CI box.
    assert best < 25e-6, f"{best * 1e6:.1f} us per validate"


# ---------------------------------------------------------------------------------------------
# function_spec: plain functions as tools, derived as a Toolkit method is


def _plain_refund(world: dict, order_id: Annotated[str, MaxLen(12)], amount: float = 1.0) -> dict:
    """Refund part of an order.

    Args:
        order_id: The order's id.
        amount: How much.
    """
    return {}


def test_function_spec_derives_the_schema_a_method_would_get_minus_the_world() -> None:
    from agentgym.core.tools import function_spec

    class Shop(Toolkit):
        @tool
        def _plain_refund(self, order_id: Annotated[str, MaxLen(12)], amount: float = 1.0) -> dict:
            """Refund part of an order.

            Args:
                order_id: The order's id.
                amount: How much.
            """
            return {}

    spec = function_spec(_plain_refund, world=True)
    assert spec == Shop.tool_specs()["_plain_refund"]
    assert spec.kind is READ and not spec.terminal
    marked = function_spec(tool(kind=WRITE, terminal=True)(lambda_free_function), world=False)
    assert marked.kind is WRITE and marked.terminal
    assert list(marked.parameters["properties"]) == ["world"]  # without world=True it is an argument


def lambda_free_function(world: int) -> None:
    """A function whose first parameter happens to be called world.

    Args:
        world: A number.
    """


def test_function_spec_refuses_what_it_cannot_derive() -> None:
    from agentgym.core.tools import function_spec

    with pytest.raises(TypeError, match="plain function"):
        function_spec(print)
    with pytest.raises(TypeError, match="taking `world` first"):
        function_spec(_no_params, world=True)
    with pytest.raises(TypeError, match="documents unknown parameters"):
        function_spec(_stale_doc)


def _no_params() -> None:
    """Nothing."""


def _stale_doc(x: int) -> None:
    """Stale.

    Args:
        x: A value.
        y: Gone.
    """
