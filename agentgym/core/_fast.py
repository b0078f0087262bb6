"""The speed kernels of the core: each does what a line of plain code does, on a hot path.

Every kernel here names the plain code it stands for and the invariant that makes the two equal;
`tests/core/test_fast.py` checks each against its plain version on many inputs. The contract
modules (`agentgym.core.env`, `protocol`, `render`, `seeding`) call them and read as plain code.
What each saves is measured in `benchmarks/RESULTS.md`, not stated here.
"""

from __future__ import annotations

import _random
import hashlib
import json
import marshal
import math
import re
from itertools import accumulate
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii
from typing import Any, Callable, Hashable, Iterable, Mapping

from gymnasium.utils import seeding

from agentgym.core.gold import carried_values, mark_done, same

__all__ = [
    "LazyNpRandom",
    "schemas_copy",
    "schema_copy",
    "json_maker",
    "copy_json",
    "copy_record",
    "message_maker",
    "calls_maker",
    "valid_call_maker",
    "direct_decoder",
    "tree_encoder",
    "nests_deeper",
    "seeded_random",
    "scalar_leaves",
    "arguments_acceptor",
    "DoneSteps",
    "carried_by",
]


# ------------------------------------------------------------------ gymnasium's env generator


class LazyNpRandom:
    """Gymnasium's `Env` seeding, with the env's generator made on its first read.

    Plain code: `gymnasium.Env.reset`, whose ``reset(seed=s)`` sets ``_np_random`` to
    ``seeding.np_random(s)[0]`` and ``_np_random_seed`` to ``s``. Here a seeded reset records `s`
    and `_np_random` (a property over gymnasium's private attribute, which `np_random`, the env
    checker and `np_random_seed` read) makes the generator from it when first read: every read
    sees exactly what gymnasium would have made, and an episode that never reads it (a seeded
    reset draws nothing from it) never makes one. Assigning `_np_random` (as `np_random`'s setter
    does) replaces a pending seed. Put it before `gymnasium.Env` in the bases. A test plays every
    family's episodes on this and on Gymnasium's own seeding, byte for byte.
    """

    _np_seed_pending: int | None = None

    @property
    def _np_random(self) -> Any:
        if self._np_seed_pending is not None:
            seed, self._np_seed_pending = self._np_seed_pending, None
            self.__dict__["_np_random_made"] = seeding.np_random(seed)[0]
        return self.__dict__.get("_np_random_made")

    @_np_random.setter
    def _np_random(self, value: Any) -> None:
        self._np_seed_pending = None
        self.__dict__["_np_random_made"] = value

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """What `gymnasium.Env.reset` does, the generator left to its first read."""
        if seed is not None:
            if not (isinstance(seed, int) and seed >= 0):
                seeding.np_random(seed)  # raises gymnasium's own error for this seed
            self._np_seed_pending = seed
            self._np_random_seed = seed


# ------------------------------------------------------------------ copies handed out in infos

#: Per toolkit key, a maker of each of its schemas; per schema (by identity, the schema kept
#: alive so its id is never reused), its maker: a cross-task session's tool list is a mix of its
#: sub-toolkits' schemas, so sessions of many mixes share the makers of the same few schemas.
#: Both are emptied when the first is full: a process may make toolkit classes anew.
_SCHEMA_MAKERS: dict[Hashable, tuple[Callable[[], Any], ...]] = {}
_MAKER_OF_SCHEMA: dict[int, tuple[Any, Callable[[], Any]]] = {}
_SCHEMA_KEYS_MAX = 4096


def schemas_copy(toolkit: Any) -> list[dict[str, Any]]:
    """``copy_json(toolkit.schemas())``: a fresh copy of a toolkit's tool schemas.

    Invariant: a toolkit's `schemas_key` (see `agentgym.core.tools.Toolkit.schemas_key`)
    determines its `schemas()`: equal keys (of one toolkit type), equal schemas, and schemas are
    never mutated (`Toolkit.schemas`). The copy is then made schema by schema by makers cached
    per key (`json_maker`), so no container appears twice and the copy shares nothing. A toolkit
    without a key (None) is copied as it comes.
    """
    key = getattr(toolkit, "schemas_key", None)
    if key is None:
        return copy_json(toolkit.schemas())
    key = (type(toolkit), key)
    makers = _SCHEMA_MAKERS.get(key)
    if makers is None:
        if len(_SCHEMA_MAKERS) >= _SCHEMA_KEYS_MAX:
            _SCHEMA_MAKERS.clear()
            _MAKER_OF_SCHEMA.clear()
        makers = _SCHEMA_MAKERS[key] = tuple(map(_maker_of_schema, toolkit.schemas()))
    return [make() for make in makers]


def schema_copy(schema: Any) -> Any:
    """``copy_json(schema)`` for a tool schema that is never mutated (a `ToolSpec`'s
    ``openai_schema()``, the same object on every call): made by the maker cached for that object
    (`json_maker`), as `schemas_copy` makes a toolkit's. Invariant: an unmutated schema's round
    trip is the same every time, and the cache holds the schema, so its id names no other."""
    if len(_MAKER_OF_SCHEMA) >= _SCHEMA_KEYS_MAX:
        _SCHEMA_MAKERS.clear()
        _MAKER_OF_SCHEMA.clear()
    return _maker_of_schema(schema)()


def _maker_of_schema(schema: Any) -> Callable[[], Any]:
    got = _MAKER_OF_SCHEMA.get(id(schema))
    if got is None or got[0] is not schema:
        got = _MAKER_OF_SCHEMA[id(schema)] = (schema, json_maker(schema))
    return got[1]


def json_maker(value: Any) -> Callable[[], Any]:
    """A function that returns ``json.loads(json.dumps(value))`` afresh on every call.

    Plain code: that round trip. The maker is a compiled display of the round trip's value
    (``lambda: {"type": "function", ...}``): each call builds new dicts and lists, in the same
    key order, holding the same immutable scalars, which the interpreter builds from constants
    without parsing. Invariant: `repr` writes every JSON scalar (str, int, finite float, bool,
    None) as a literal that evaluates to an equal value of the same type; the maker is checked
    equal to the round trip once, and where it is not (a non-finite float, a nesting too deep
    to compile) the round trip's `marshal` bytes are loaded instead.
    """
    data = json.loads(json.dumps(value))
    try:
        make = eval(compile("lambda: " + _display(data), "<json_maker>", "eval"))  # noqa: S307
        if json.dumps(make()) == json.dumps(data) and make() == data:
            return make
    except (RecursionError, SyntaxError, NameError, MemoryError, ValueError):
        pass
    blob = marshal.dumps(data)
    return lambda: marshal.loads(blob)


def _display(value: Any) -> str:
    """Python source that builds `value` (JSON data from `json.loads`)."""
    if type(value) is dict:
        return "{" + ",".join(f"{k!r}:{_display(v)}" for k, v in value.items()) + "}"
    if type(value) is list:
        return "[" + ",".join(map(_display, value)) + "]"
    return repr(value)


_CONTAINERS = (dict, list)


def copy_json(value: Any) -> Any:
    """``json.loads(json.dumps(value))`` for JSON-like data (dicts, lists and scalars), without
    the text: a deep copy whose containers are plain dicts and lists, sharing none with `value`.

    A plain dict is copied whole by `dict.copy` and only its container values are replaced by
    copies; a dict subclass (a caller's message) becomes a plain dict; scalars are shared, as
    they are immutable.
    """
    if type(value) is dict:
        out = value.copy()
        for key, item in value.items():
            if isinstance(item, _CONTAINERS):
                out[key] = copy_json(item)
        return out
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(item) if isinstance(item, _CONTAINERS) else item for item in value]
    return value


def copy_record(record: dict[str, Any]) -> dict[str, Any]:
    """``copy_json(record)`` for a call record made by `AgentEnv._run_one`.

    Invariant: a call record holds two containers at most, ``contradicts`` (a list of
    constraint ids, always present) and ``arguments`` (the agent's JSON, once the call is
    valid); every other value is a scalar. A test plays episodes of every family and kind of
    noise and checks each record against the invariant.
    """
    out = record.copy()
    out["contradicts"] = list(record["contradicts"])
    arguments = record.get("arguments")
    if arguments is not None:
        out["arguments"] = copy_json(arguments)
    return out


# ------------------------------------------------------------------ frozen dataclass constructors

_new = object.__new__
_set = object.__setattr__


def message_maker(cls: type) -> Callable[[str], Any]:
    """``lambda text: cls(content=text)`` for `agentgym.core.protocol.ParsedAction`.

    A frozen dataclass's ``__init__`` sets each field through `object.__setattr__` with keyword
    handling; this sets the same fields the same way. Invariant: `cls`'s fields are exactly
    ``content, calls, error`` with defaults ``()`` and None (a test checks the field list).
    """

    def message(text: str) -> Any:
        action = _new(cls)
        _set(action, "content", text)
        _set(action, "calls", ())
        _set(action, "error", None)
        return action

    return message


def calls_maker(cls: type) -> Callable[[str, list[Any]], Any]:
    """``lambda content, calls: cls(content=content, calls=tuple(calls))`` for `ParsedAction`
    (the same invariant as `message_maker`)."""

    def with_calls(content: str, calls: list[Any]) -> Any:
        action = _new(cls)
        _set(action, "content", content)
        _set(action, "calls", tuple(calls))
        _set(action, "error", None)
        return action

    return with_calls


def valid_call_maker(cls: type) -> Callable[[str, dict, "str | None"], Any]:
    """``lambda name, arguments, call_id: cls(name=name, arguments=arguments, id=call_id)`` for
    `agentgym.core.protocol.ToolCall`. Invariant: `cls`'s fields are exactly ``name, arguments,
    id, error``, with ``error`` defaulting to None (a test checks the field list)."""

    def valid_call(name: str, arguments: dict, call_id: str | None) -> Any:
        call = _new(cls)
        _set(call, "name", name)
        _set(call, "arguments", arguments)
        _set(call, "id", call_id)
        _set(call, "error", None)
        return call

    return valid_call


# ------------------------------------------------------------------ JSON in and out

_skip_space = json.decoder.WHITESPACE.match


def direct_decoder(decoder: json.JSONDecoder) -> Callable[[str], Any]:
    """``decoder.decode``, calling its scanner directly: the same value, or the same
    `json.JSONDecodeError` (message and position), for every text.

    Invariant: `JSONDecoder.decode` is `raw_decode` at the first non-space character followed by
    a check that only whitespace follows, and `raw_decode` is ``scan_once`` with its
    StopIteration turned into "Expecting value"; this is those two, inlined.
    """
    scan_once = decoder.scan_once

    def decode(text: str) -> Any:
        try:
            value, end = scan_once(text, _skip_space(text, 0).end())
        except StopIteration as err:
            raise json.JSONDecodeError("Expecting value", text, err.value) from None
        end = _skip_space(text, end).end()
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
        return value

    return decode


def tree_encoder(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode`` for trees of JSON data, with its C encoder made once.

    `JSONEncoder.encode` builds a new C encoder, from the encoder's settings, on every call; this
    builds it once from the same settings. Invariant: the value holds no container twice on one
    path (tool results and calls are trees), so the circular-reference check is left out, and
    the text is the plain encoder's. `encoder` is a plain `json.JSONEncoder` without ``indent``.
    """
    if c_make_encoder is None or encoder.indent is not None:  # pragma: no cover - CPython has it
        return encoder.encode
    strings = encode_basestring_ascii if encoder.ensure_ascii else encode_basestring
    c_encode = c_make_encoder(None, encoder.default, strings, None, encoder.key_separator,
                              encoder.item_separator, encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)

    def encode(value: Any) -> str:
        return "".join(c_encode(value, 0))

    return encode


_BRACKET = re.compile(r"[\[\]{}]")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nests_deeper(text: str, limit: int, strings: re.Pattern[str]) -> bool:
    """Whether the brackets of `text` outside the JSON strings that `strings` matches open deeper
    than `limit`: the plain loop, in C.

    Plain code: ``finditer`` over ``strings|[\\[\\]{}]`` (strings first), depth up by one at each
    opening bracket token and down by one at each closing one, True as soon as it passes
    `limit`. Invariant: `strings` matches only at a ``"``, where it always matches (as that
    alternation's first branch would), and never holds a bracket outside a match; so removing
    its matches leaves exactly the bracket tokens, in order, and the deepest running sum of their
    steps passes `limit` exactly when the loop would have stopped.
    """
    steps = map(_DEPTH_STEP.__getitem__, _BRACKET.findall(strings.sub("", text)))
    return max(accumulate(steps), default=0) > limit


# ------------------------------------------------------------------ named streams

_new_random = _random.Random.__new__
_seed_c = _random.Random.seed


def seeded_random(cls: type, bits: int) -> Any:
    """``cls(bits)`` for a subclass of `random.Random` that keeps its ``__init__`` and ``seed``.

    `random.Random(n)` runs its Python ``__init__`` and ``seed``, which for an int end in the C
    seeding of the Mersenne Twister and ``gauss_next = None``; this does those two directly, so
    the generator's state is the one ``cls(bits)`` has (a test compares `getstate()`).
    """
    rng = _new_random(cls)
    _seed_c(rng, bits)
    rng.gauss_next = None
    return rng


# ------------------------------------------------------------------ values a plan names

_SCALAR = (str, int, float, bool)


def scalar_leaves(values: Iterable[Any]) -> set[Any]:
    """``{v for x in values for v in gold.leaves(x) if isinstance(v, (str, int, float, bool))}``.

    Plain code walks each value with `agentgym.core.gold.leaves`, a recursive generator (a
    generator frame per list and mapping, per value). Here one explicit stack does the walk.
    Invariant: `leaves` opens exactly the values that are instances of dict or list and yields
    every other value, so the same tests open the same containers here and the set of the
    scalar values left is the same (the order of the walk does not matter to a set).
    """
    out: set[Any] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, _SCALAR):
            out.add(value)
    return out


# ------------------------------------------------------------------ the gold plan's done steps


class DoneSteps:
    """`agentgym.core.gold.done_steps(plan, calls)` for one episode, whose calls only grow.

    Plain code matches every successful call of the episode against the plan each time it is
    asked, and a noise fault asks at every fault (a long episode: a hundred calls against a
    dozen steps of one tool, per fault). Here the answer is kept with the digest of the plan it
    is for and the number of calls it covers; asked again of the same plan, only the calls made
    since are matched. Invariants: `done_steps` is a fold over the calls in order (a call
    completes the first step still open that it matches, given what the calls before it
    completed), so the fold over the first k calls, carried on over the rest, is the fold over
    all of them; an env's call records are appended and never changed; and two plans that
    `marshal` writes alike (version 0: each value's type, then the value, a float by its
    ``repr``) hold the same values of the same types in the same places, so they match the same
    calls (``==`` would take True for 1). The plan is kept as the BLAKE2b digest of what
    `marshal` writes (16 bytes, not the kilobytes of a copy: a live env keeps it), so two plans
    are taken as one only when their digests agree (a chance of 2**-128 that two others do). A
    plan that changes (a goal shift, a sub-task's move, an id a call produced) is worked out
    afresh, and so is one that `marshal` cannot write (not JSON data). A test compares the two
    at every fault of noisy episodes of every family and after edits of the plan.
    """

    __slots__ = ("_plan", "_seen", "_done")

    #: The calls from which an env keeps one: with fewer, matching them all costs about what
    #: writing the plan does.
    KEEP_FROM = 16

    def __init__(self) -> None:
        self._plan: bytes | None = None  # the plan's digest
        self._seen = 0
        self._done: list[bool] = []

    def of(self, plan: list[dict[str, Any]], calls: list[dict[str, Any]]) -> list[bool]:
        """Which steps of `plan` the successful `calls` completed (a new list)."""
        try:
            digest = hashlib.blake2b(marshal.dumps(plan, 0), digest_size=16).digest()
        except ValueError:  # not JSON data
            digest = None
        if digest is None or digest != self._plan:
            self._plan, self._seen, self._done = digest, 0, [False] * len(plan)
        if self._seen < len(calls):
            mark_done(plan, calls[self._seen:], self._done)
            self._seen = len(calls)
        return self._done.copy()


def carried_by(steps: Iterable[Mapping[str, Any]]) -> Callable[[Any], bool]:
    """``lambda value: any(gold.carries(step, value) for step in steps)``, the steps' values
    gathered once (a corruption of the hard tier asks it of every leaf of a result).

    Plain code walks every step's argument specs for each value asked. Here their values
    (`agentgym.core.gold.carried_values`) are gathered once: the booleans in one set, the other
    hashable values in another, the rest in a list. Invariant: `gold.same` is ``==``, except
    that a boolean equals only a boolean; a set finds a value ``==`` to the one asked for
    wherever equal values hash alike, as JSON's scalars do (1 and 1.0 too). So a boolean is
    carried when it is in the booleans' set, another hashable value when it is in the other
    set; a value that is not equal to itself (NaN, which a set would find by identity) or not
    hashable is compared with every value as plain code does, and so is every value that is
    not hashable. A test compares the two on the leaves of noisy episodes' results and on
    scalars of every kind.
    """
    values = [v for step in steps for v in carried_values(step)]
    booleans: set[bool] = set()
    hashable: set[Any] = set()
    rest: list[Any] = []
    for v in values:
        if type(v) is bool:
            booleans.add(v)
        else:
            try:
                hashable.add(v)
            except TypeError:
                rest.append(v)

    def carried(value: Any) -> bool:
        if rest and any(same(v, value) for v in rest):
            return True
        if type(value) is bool:
            return value in booleans
        try:
            if value == value:  # not NaN
                return value in hashable
        except TypeError:  # unhashable: as plain code
            pass
        return any(same(v, value) for v in values)

    return carried


# ------------------------------------------------------------------ argument checks

_MISSING = object()


def arguments_acceptor(parameters: dict[str, Any], checkers: dict[str, Callable[[Any], Any]]) -> Callable[[Any], bool]:
    """A function that is True only for arguments `agentgym.core.tool_spec.ToolSpec.validate`
    accepts (returns None for), compiled from the tool's JSON schema into one function.

    Plain code: ``spec.validate(arguments) is None``, which calls a checker closure per argument
    and walks the required names. Here each argument's check is an expression inlined in one
    function, the types tested by identity (``type(v) is str``: a value of a subclass is left
    to the plain check). Invariant: each expression is True only where the property's checker
    (`checkers`, compiled from the same schema) returns None, and the function is True only
    when every argument is a known property, every required one is there and every check
    holds; a property whose schema has no expression here calls its checker. So False means
    "ask the plain check", which gives the error, or accepts (a subclass, an extra argument
    that ``additionalProperties`` allows). A test compares the two on every tool's schema.
    """
    props = parameters.get("properties", {})
    required = set(parameters.get("required", ()))
    env: dict[str, Any] = {"_M": _MISSING, "isfinite": math.isfinite}
    lines = ["def accepts(a):", "    if type(a) is not dict:", "        return False", "    n = len(a)"]
    for i, (key, schema) in enumerate(props.items()):
        env[f"k{i}"] = key
        expr = _ok_expr(schema, "v", f"p{i}", env)
        if expr is None:
            env[f"c{i}"] = checkers[key]
            expr = f"c{i}(v) is None"
        lines.append(f"    v = a.get(k{i}, _M)")
        lines.append("    if v is _M:")
        lines.append("        return False" if key in required else "        pass")
        lines.append(f"    elif not ({expr}):")
        lines.append("        return False")
        lines.append("    else:")
        lines.append("        n -= 1")
    lines.append("    return n == 0")
    exec(compile("\n".join(lines), "<arguments_acceptor>", "exec"), env)  # noqa: S102
    return env["accepts"]


#: What a value of each JSON type passes (exact types: a subclass goes to the plain check); a
#: number is finite, as the checks want, and a bool is no integer.
_TYPE_TESTS = {"string": "type({v}) is str", "integer": "type({v}) is int",
               "number": "(type({v}) is int or (type({v}) is float and isfinite({v})))",
               "boolean": "type({v}) is bool", "array": "type({v}) is list"}


def _ok_expr(schema: Any, v: str, name: str, env: dict[str, Any]) -> str | None:
    """A Python expression over `v` that is True only where `compile_checker(schema)` accepts
    `v`; None where the schema is not one of the shapes written out here. Constants go into
    `env` under names that start with `name`."""
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    types = [t] if isinstance(t, str) else (list(t) if isinstance(t, list) else None)
    if not types or not all(isinstance(x, str) for x in types):
        return None
    bases = [x for x in types if x != "null"]
    if len(bases) != 1 or bases[0] not in _TYPE_TESTS or len(set(types)) != len(types):
        return None
    base = bases[0]
    enum = schema.get("enum")
    nullable = "null" in types and not (enum is not None and None not in enum)
    parts = [_TYPE_TESTS[base].format(v=v)]
    if enum is not None:
        if base not in ("string", "integer"):
            return None
        try:
            env[f"{name}_e"] = frozenset(x for x in enum if x is not None)
        except TypeError:
            return None
        parts.append(f"{v} in {name}_e")
    if base == "string" and schema.get("maxLength") is not None:
        env[f"{name}_n"] = schema["maxLength"]
        parts.append(f"len({v}) <= {name}_n")
    if base in ("integer", "number"):
        for bound, op in (("minimum", ">="), ("maximum", "<=")):
            if schema.get(bound) is not None:
                env[f"{name}_{bound}"] = schema[bound]
                parts.append(f"{v} {op} {name}_{bound}")
    if base == "array":
        if schema.get("maxItems") is not None:
            env[f"{name}_n"] = schema["maxItems"]
            parts.append(f"len({v}) <= {name}_n")
        items = schema.get("items")
        if items is not None:
            item = _ok_expr(items, "x", f"{name}_i", env)
            if item is None:
                return None
            parts.append(f"all({item} for x in {v})")
    expr = " and ".join(parts)
    return f"({v} is None or ({expr}))" if nullable else f"({expr})"
