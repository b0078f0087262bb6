"""Parse an assistant turn (the action an LLM agent sends) into a message or tool calls.

Accepted forms, several calls per turn allowed:

1. A whole-turn JSON call ``{"name": ..., "arguments": {...}}`` ("parameters" is an
   alias; arguments may be a JSON-encoded string, OpenAI style).
2. The same inside ``<tool_call>...</tool_call>`` blocks (Hermes/Qwen style).
3. The same inside a fenced ```` ```json ```` block (or a bare fence whose body
   starts with ``{`` or ``[``).
4. OpenAI shapes: ``{"tool_calls": [...], "content": ...}``, a single
   ``{"type": "function", "function": {...}}`` or a JSON list of call objects.
5. An OpenAI assistant-message ``dict`` passed directly as the action.
6. Anything else is a plain message.

Bad input never raises: it becomes an :class:`ActionError` with a stable
:class:`ErrorCode`, either for the whole turn (``ParsedAction.error``) or for
one call (``ToolCall.error``).

Limits, whatever form the turn takes: at most MAX_ACTION_BYTES (a dict action is
sized as its compact JSON text: every key, name, id, argument and bracket counts),
JSON nested at most MAX_JSON_DEPTH deep, at most MAX_CALLS_PER_TURN calls, and
numbers a double can hold (no NaN, no infinities, no integer past the float range).
"""

from __future__ import annotations

import enum
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from agentgym.core._fast import calls_maker, direct_decoder, message_maker, valid_call_maker
from agentgym.core.json_types import json_type_name

__all__ = [
    "MAX_ACTION_BYTES",
    "MAX_CALLS_PER_TURN",
    "MAX_JSON_DEPTH",
    "ActionError",
    "ErrorCode",
    "ParsedAction",
    "ToolCall",
    "join_surrogate_pairs",
    "json_size",
    "parse_action",
    "read_message",
    "strict_json",
]

MAX_ACTION_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32
MAX_CALL_ID_CHARS = 64
#: More calls than this in one turn make the whole turn an error (none of them runs): each call
#: costs a validation, a tool run and a record, and no task needs more at once.
MAX_CALLS_PER_TURN = 32


class ErrorCode(str, enum.Enum):
    """Stable error codes; the parser produces PARSE_ERROR, TOO_LARGE, TOO_DEEP, INVALID_ARGS."""

    PARSE_ERROR = "PARSE_ERROR"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_ARGS = "INVALID_ARGS"
    TOO_LARGE = "TOO_LARGE"
    TOO_DEEP = "TOO_DEEP"
    TOOL_ERROR = "TOOL_ERROR"
    POLICY_VIOLATION = "POLICY_VIOLATION"
    BLOCKED = "BLOCKED"


@dataclass(frozen=True, slots=True)
class ActionError:
    """A problem with a turn or with one call: a stable code and a readable message."""

    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call; ``arguments`` is None exactly when ``error`` is set."""

    name: str
    arguments: dict | None
    id: str | None = None
    error: ActionError | None = None


@dataclass(frozen=True, slots=True)
class ParsedAction:
    """A parsed turn: message text, the calls it makes, or a turn-level error.

    ``content`` is the whole (stripped) turn when there are no calls, the text
    outside the call blocks otherwise; on a turn-level error it is the stripped
    turn, except for TOO_LARGE where it is empty (so huge inputs are not carried on).
    """

    content: str
    calls: tuple[ToolCall, ...] = ()
    error: ActionError | None = None

    @property
    def is_message(self) -> bool:
        """True for a plain message: no turn-level error and no calls."""
        return self.error is None and not self.calls


# The shapes every step produces (a plain message, a valid call, a turn of calls), built without
# the frozen dataclasses' keyword-handling __init__ (see `agentgym.core._fast`).
_message = message_maker(ParsedAction)
_with_calls = calls_maker(ParsedAction)
_valid_call = valid_call_maker(ToolCall)


# --- strict JSON ------------------------------------------------------------------


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _out_of_range(text: str) -> ValueError:
    shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
    return ValueError(f"number {shown} is out of range")


def _finite_float(text: str) -> float:
    # json turns 1e999 into inf without calling parse_constant; reject it the same way.
    value = float(text)
    if not math.isfinite(value):
        raise _out_of_range(text)
    return value


def _fits_double(value: int) -> bool:
    """Whether `float(value)` is finite: a JSON number must be one a double can hold."""
    bits = value.bit_length()
    if bits != 1024:  # 2**1023 fits, 2**1024 does not; between them it depends on the rounding
        return bits < 1024
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _double_int(text: str) -> int:
    # Every integer of at most 308 digits fits a double; only longer ones need the check.
    value = int(text)
    if len(text) > 308 and not _fits_double(value):
        raise _out_of_range(text)
    return value


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_pairs, parse_constant=_reject_constant, parse_float=_finite_float,
    parse_int=_double_int,
)

#: `_DECODER.decode`, calling its scanner directly (every tool call of every step is decoded here).
_decode_json = direct_decoder(_DECODER)


# A JSON string (so brackets inside strings do not count) or one bracket. The
# string branch also takes an unterminated string up to the end, so it always
# matches at the first try: no backtracking, linear time even on hostile input.
_DEPTH_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.?[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_JSON_LIST_START_RE = re.compile(r"\[\s*[\[\]{]")


def _too_deep(text: str) -> bool:
    """Whether ``text`` nests deeper than MAX_JSON_DEPTH, found without recursion."""
    if text.count("{") + text.count("[") <= MAX_JSON_DEPTH:
        return False
    depth = 0
    for match in _DEPTH_TOKEN_RE.finditer(text):
        char = text[match.start()]
        if char == "{" or char == "[":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return True
        elif char == "}" or char == "]":
            depth -= 1
    return False


def _decode(text: str, where: str = "") -> object:
    """Strictly decode ``text``; returns the value, or an ActionError on failure."""
    if _too_deep(text):
        return _deep_error(where)
    try:
        return _decode_json(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data":
            hint = " (text after the JSON value)"
        elif text[exc.pos : exc.pos + 1] == "'":
            hint = " (single quotes are not valid JSON)"
        return ActionError(
            ErrorCode.PARSE_ERROR,
            f"{_prefix(where)}invalid JSON at line {exc.lineno} col {exc.colno}: {exc.msg}{hint}",
        )
    except RecursionError:  # Last guard only: the depth pre-scan should make this unreachable.
        return _deep_error(where)
    except ValueError as exc:  # Our hooks (duplicate key, NaN) and int digit limits.
        return ActionError(ErrorCode.PARSE_ERROR, f"{_prefix(where)}invalid JSON: {exc}")


def strict_json(text: str) -> object:
    """`text` decoded as strict JSON, as tool calls are: no NaN or infinities, no number past a
    double's range, no duplicate keys, at most MAX_JSON_DEPTH deep, never a RecursionError.

    Raises:
        ValueError: `text` is not such JSON; the message says why.
    """
    value = _decode(text)
    if isinstance(value, ActionError):
        raise ValueError(value.message)
    return value


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def _deep_error(where: str) -> ActionError:
    return ActionError(
        ErrorCode.TOO_DEEP, f"{_prefix(where)}JSON nests deeper than {MAX_JSON_DEPTH} levels"
    )


# --- call shapes ------------------------------------------------------------------


def _is_call_object(value: object) -> bool:
    return isinstance(value, dict) and ("name" in value or "function" in value)


def _call_error(name: str, call_id: str | None, code: ErrorCode, message: str) -> ToolCall:
    return ToolCall(name=name, arguments=None, id=call_id, error=ActionError(code, message))


def _call_from_object(obj: dict) -> ToolCall:
    """Build a ToolCall from a flat ``{"name", "arguments"}`` or an OpenAI ``{"function"}`` object."""
    call_id = obj.get("id")
    if not (isinstance(call_id, str) and len(call_id) <= MAX_CALL_ID_CHARS):
        call_id = None
    if "name" not in obj:  # OpenAI: {"id", "type": "function", "function": {...}}
        obj = obj["function"]
        if not isinstance(obj, dict):
            return _call_error(
                "", call_id, ErrorCode.PARSE_ERROR,
                f"'function' must be a JSON object, got {json_type_name(obj)}",
            )
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        got = "an empty string" if name == "" else json_type_name(name)
        return _call_error(
            name if isinstance(name, str) else "", call_id, ErrorCode.PARSE_ERROR,
            f"tool call 'name' must be a non-empty string, got {got}",
        )
    if "arguments" in obj and "parameters" in obj:
        return _call_error(
            name, call_id, ErrorCode.INVALID_ARGS, "give 'arguments' or 'parameters', not both"
        )
    args = obj.get("arguments", obj.get("parameters", {}))
    decoded = False
    if isinstance(args, str):  # OpenAI sends arguments as a JSON-encoded string.
        args = _decode(args, "arguments string")
        if isinstance(args, ActionError):
            return ToolCall(name=name, arguments=None, id=call_id, error=args)
        decoded = True
    if not isinstance(args, dict):
        note = " (decoded from a string)" if decoded else ""
        return _call_error(
            name, call_id, ErrorCode.INVALID_ARGS,
            f"arguments must be a JSON object, got {json_type_name(args)}{note}",
        )
    return _valid_call(name, args, call_id)


def _from_message_fields(msg: dict) -> tuple[str, list[ToolCall]] | ActionError:
    """Content and calls of an OpenAI assistant message (``content`` + ``tool_calls``)."""
    content = msg.get("content")
    if content is None:
        content = ""
    elif not isinstance(content, str):
        return ActionError(
            ErrorCode.PARSE_ERROR,
            f"message 'content' must be a string or null, got {json_type_name(content)}",
        )
    tool_calls = msg.get("tool_calls")
    if tool_calls is None:
        return content.strip(), []
    if not isinstance(tool_calls, list):
        return ActionError(
            ErrorCode.PARSE_ERROR, f"'tool_calls' must be a list, got {json_type_name(tool_calls)}"
        )
    if len(tool_calls) > MAX_CALLS_PER_TURN:
        return _TOO_MANY_CALLS
    calls = []
    for index, item in enumerate(tool_calls):
        if _is_call_object(item):
            calls.append(_call_from_object(item))
        else:
            calls.append(_call_error(
                "", None, ErrorCode.PARSE_ERROR,
                f"tool_calls[{index}] is not a tool call object, got {json_type_name(item)}",
            ))
    return content.strip(), calls


def _calls_from_value(value: object) -> tuple[str, list[ToolCall]] | ActionError | None:
    """Content and calls of a decoded JSON value; None when it is not a tool-call shape."""
    if isinstance(value, dict):
        if "tool_calls" in value:
            return _from_message_fields(value)
        if _is_call_object(value):
            return "", [_call_from_object(value)]
        return None
    if isinstance(value, list) and value and all(_is_call_object(item) for item in value):
        if len(value) > MAX_CALLS_PER_TURN:
            return _TOO_MANY_CALLS
        return "", [_call_from_object(item) for item in value]
    return None


# --- turn forms -------------------------------------------------------------------

_OPEN_TAG = "<tool_call>"
_CLOSE_TAG = "</tool_call>"
_FENCE = "```"
_MAX_TAG_RETRIES = 8  # Bounds the work spent on closing tags quoted inside JSON strings.


def _failed(text: str, code: ErrorCode, message: str) -> ParsedAction:
    return ParsedAction(content=text, error=ActionError(code, message))


def _turn_error(text: str, error: ActionError) -> ParsedAction:
    """The turn failed with `error`; a TOO_LARGE turn carries no content (see ParsedAction)."""
    return ParsedAction(content="" if error.code is ErrorCode.TOO_LARGE else text, error=error)


_TOO_MANY_CALLS = ActionError(
    ErrorCode.TOO_LARGE, f"the turn makes more than {MAX_CALLS_PER_TURN} tool calls, the limit per turn"
)


def _join(pieces: list[str]) -> str:
    return "\n".join(piece for piece in (p.strip() for p in pieces) if piece)


def _utf8_size(text: str) -> int:
    """UTF-8 size of ``text`` (lone surrogates count 3), or len(text) once that is already over."""
    if len(text) > MAX_ACTION_BYTES:  # Every char is at least one byte: no need to encode.
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def join_surrogate_pairs(text: str) -> str:
    """`text` with each high and low surrogate sent as two characters joined into the one
    character they encode, as any JSON round trip of the text would (so records read back
    equal); lone surrogates stay as they are."""
    if len(text) > MAX_ACTION_BYTES:  # over the cap anyway: rejected before parsing
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _too_large(text: str) -> ParsedAction | None:
    size = len(text)
    if size * 4 <= MAX_ACTION_BYTES:  # At most 4 bytes a char: surely within the limit.
        return None
    if size <= MAX_ACTION_BYTES:
        size = _utf8_size(text)
        if size <= MAX_ACTION_BYTES:
            return None
        return _failed("", ErrorCode.TOO_LARGE,
                       f"action is {size} bytes, over the {MAX_ACTION_BYTES}-byte limit")
    # The size is not in the message: any action this long reads the same (so a remote client
    # can send a stand-in of MAX_ACTION_BYTES + 1 characters and get the identical episode).
    return _failed("", ErrorCode.TOO_LARGE,
                   f"action is more than {MAX_ACTION_BYTES} characters, over the {MAX_ACTION_BYTES}-byte limit")


def _parse_whole_json(text: str) -> ParsedAction:
    value = _decode(text)
    if isinstance(value, ActionError):
        return ParsedAction(content=text, error=value)
    got = _calls_from_value(value)
    if got is None:
        if isinstance(value, dict):
            return _failed(text, ErrorCode.PARSE_ERROR,
                           "JSON object is not a tool call: missing 'name'")
        return _failed(text, ErrorCode.PARSE_ERROR,
                       f"JSON {json_type_name(value)} is not a list of tool calls")
    if isinstance(got, ActionError):
        return _turn_error(text, got)
    content, calls = got
    return _with_calls(content, calls)


def _double_encoded(text: str) -> ParsedAction | None:
    """An error when the turn is a JSON string holding JSON; None when it is just quoted text."""
    try:
        value = _decode_json(text)  # A top-level string cannot recurse.
    except ValueError:  # Includes JSONDecodeError: quoted prose such as '"Hi," she said.'
        return None
    if not isinstance(value, str) or value.strip()[:1] not in ("{", "["):
        return None
    inner = _decode(value)
    if isinstance(inner, ActionError):
        return ParsedAction(content=text, error=inner) if inner.code is ErrorCode.TOO_DEEP else None
    if isinstance(inner, (dict, list)):
        return _failed(text, ErrorCode.PARSE_ERROR,
                       "double-encoded JSON: the turn is a JSON string that holds JSON; "
                       "send the object itself")
    return None


def _json_fence_body(inner: str) -> str | None:
    """The JSON body of a fence's inside (after the opening ```), or None for another language."""
    body = inner.lstrip()
    if body[:1] in ("{", "["):
        return body.rstrip()
    if body[:4].lower() == "json":
        rest = body[4:]
        if not rest or rest[0].isspace() or rest[0] in "{[":
            return rest.strip()
    return None


def _block_value(raw: str, where: str) -> object:
    """The decoded body of one <tool_call> block, or an ActionError."""
    body = raw.strip()
    if body.startswith(_FENCE) and body.endswith(_FENCE) and len(body) >= 6:
        # Some models wrap the JSON in a code fence inside the tags.
        body = _json_fence_body(body[3:-3]) or body
    return _decode(body, where)


def _parse_tagged(text: str) -> ParsedAction:
    pieces: list[str] = []
    calls: list[ToolCall] = []
    pos = 0
    block = 0
    while (start := text.find(_OPEN_TAG, pos)) >= 0:
        block += 1
        body_start = start + len(_OPEN_TAG)
        end = text.find(_CLOSE_TAG, body_start)
        if end < 0:
            return _failed(text, ErrorCode.PARSE_ERROR,
                           f"<tool_call> block {block} has no closing </tool_call> tag")
        where = f"<tool_call> block {block}"
        value = _block_value(text[body_start:end], where)
        # A "</tool_call>" inside a JSON string cuts the block short: retry with later tags.
        probe = end
        for _ in range(_MAX_TAG_RETRIES):
            if not (isinstance(value, ActionError) and value.code is ErrorCode.PARSE_ERROR):
                break
            probe = text.find(_CLOSE_TAG, probe + len(_CLOSE_TAG))
            if probe < 0:
                break
            retry = _block_value(text[body_start:probe], where)
            if not isinstance(retry, ActionError):
                value, end = retry, probe
        if isinstance(value, ActionError):
            return ParsedAction(content=text, error=value)
        got = _calls_from_value(value)
        if got is None:
            return _failed(text, ErrorCode.PARSE_ERROR,
                           f"{where} is not a tool call: missing 'name'")
        if isinstance(got, ActionError):
            return _turn_error(text, got)
        pieces.append(text[pos:start])
        pieces.append(got[0])
        calls.extend(got[1])
        if len(calls) > MAX_CALLS_PER_TURN:
            return _turn_error(text, _TOO_MANY_CALLS)
        pos = end + len(_CLOSE_TAG)
    pieces.append(text[pos:])
    return _with_calls(_join(pieces), calls)


def _parse_fenced(text: str) -> ParsedAction | None:
    """Calls from ```json fences; None when no fence holds a call (the turn is a message)."""
    pieces: list[str] = []
    calls: list[ToolCall] = []
    kept_from = 0  # Start of the text not yet moved to pieces (non-call fences stay in it).
    pos = 0
    while (start := text.find(_FENCE, pos)) >= 0:
        end = text.find(_FENCE, start + 3)
        body = _json_fence_body(text[start + 3 : end if end >= 0 else len(text)])
        alone = not text[:start].strip()  # The fence opens the turn.
        if end < 0:
            if body is not None and alone:
                return _failed(text, ErrorCode.PARSE_ERROR, "unclosed ``` code fence")
            break
        pos = end + 3
        if body is None:
            continue
        value = _decode(body, "```json block")
        if isinstance(value, ActionError):
            # Prose may quote broken JSON; a turn that is nothing but the fence was a call.
            if value.code is ErrorCode.TOO_DEEP or (alone and not text[pos:].strip()):
                return ParsedAction(content=text, error=value)
            continue
        got = _calls_from_value(value)
        if got is _TOO_MANY_CALLS:
            return _turn_error(text, got)
        if got is None or isinstance(got, ActionError) or not got[1]:
            continue  # Only tool-call shapes count: models paste JSON examples.
        pieces.append(text[kept_from:start])
        pieces.append(got[0])
        calls.extend(got[1])
        if len(calls) > MAX_CALLS_PER_TURN:
            return _turn_error(text, _TOO_MANY_CALLS)
        kept_from = pos
    if not calls:
        return None
    pieces.append(text[kept_from:])
    return _with_calls(_join(pieces), calls)


def _parse_text(action: str) -> ParsedAction:
    too_large = _too_large(action)
    if too_large is not None:
        return too_large
    text = action.strip()
    if text.startswith("\ufeff"):
        text = text.lstrip("\ufeff").strip()
    if not text:
        return _message(text)
    first = text[0]
    # Hot path: plain prose holds no call marker; `in` is far cheaper than a regex.
    if first not in '{["' and _OPEN_TAG not in text and _FENCE not in text:
        return _message(text)
    # '[' only counts as attempted JSON when a list of calls could follow, so that
    # prose like "[tool] result" or "[1] footnote" stays a message.
    if first == "{" or (first == "[" and _JSON_LIST_START_RE.match(text)):
        return _parse_whole_json(text)
    if first == '"':
        result = _double_encoded(text)
        if result is not None:
            return result
    if _OPEN_TAG in text:
        return _parse_tagged(text)
    if _FENCE in text:
        result = _parse_fenced(text)
        if result is not None:
            return result
    return _message(text)


# --- a dict action: one budget walk over all of it ----------------------------------------

_MESSAGE_TOO_LARGE = ActionError(
    ErrorCode.TOO_LARGE,
    f"assistant message is over the {MAX_ACTION_BYTES}-byte limit (its JSON size: every part counts)",
)
#: Sized by their length only (each element or byte counts one), never iterated or encoded.
_SIZED_BY_LEN = (bytes, bytearray, tuple, set, frozenset)


def _scalar_size(value: object) -> int:
    """The compact JSON size of a string (UTF-8 bytes and quotes; escapes not counted), number,
    bool or null. A value JSON cannot carry counts its length if it has one, else nothing: it
    is an error anyway, and this only decides whether the size limit is the one to report."""
    if isinstance(value, str):
        return (len(value) if value.isascii() else _utf8_size(value)) + 2
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, float):
        return len(repr(value))
    if isinstance(value, int):
        # Past a double's range the digits are estimated from the bits: str() of a huge
        # integer costs quadratic time (and past 4,300 digits raises).
        return len(repr(value)) if _fits_double(value) else value.bit_length() * 3 // 10
    return len(value) if type(value) in _SIZED_BY_LEN else 0


def json_size(value: object, budget: int = MAX_ACTION_BYTES) -> int:
    """The size of `value` as compact JSON, counted only until it passes `budget`.

    Every key and value counts (see `_scalar_size`); the count stops the moment it passes
    `budget` and returns what it has, so a value of any size and shape costs at most what its
    first `budget` bytes do. No recursion, no copy, and nothing allocated per level: a hostile
    value may nest 100,000 deep.

    Args:
        value: JSON-like data (dicts, lists, scalars), possibly holding anything.
        budget: the size past which the exact figure no longer matters.

    Returns:
        The size, or a number over `budget` once it is passed.
    """
    size = 0
    pending = [value]
    pop, extend = pending.pop, pending.extend
    while pending:
        item = pop()
        if type(item) is str and item.isascii():  # most parts: sized inline
            size += len(item) + 2
        elif isinstance(item, dict):
            n = len(item)
            size += 2 * n + 1 if n else 2  # braces, colons, commas
            if size > budget:
                return size
            for key in item:
                size += len(key) + 2 if type(key) is str and key.isascii() else _scalar_size(key)
                if size > budget:
                    return size
            extend(item.values())
        elif isinstance(item, list):
            n = len(item)
            size += n + 1 if n else 2  # brackets, commas
            if size > budget:
                return size
            extend(item)
        else:
            size += _scalar_size(item)
        if size > budget:
            return size
    return size


def _where(path: list[object]) -> str:
    """A location in the message, such as ``tool_calls[0].function.arguments.q``."""
    out = []
    for key in path:
        if not isinstance(key, str):  # a list index, or an object key that is itself the problem
            out.append(f"[{key}]" if type(key) is int and key.bit_length() < 64 else f"[<{type(key).__name__}>]")
        elif len(key) <= 40 and key.isidentifier():
            out.append(f".{key}" if out else key)
        else:
            out.append(f"[{key[:40]!r}{'...' if len(key) > 40 else ''}]")
    return "".join(out) or "the message"


def _not_json(value: object) -> str:
    """Why `value` (not a JSON value, or a number outside a double's range) cannot be sent."""
    if isinstance(value, float):
        return f"{value!r} is not a JSON number (numbers must be finite)"
    if isinstance(value, int):
        return f"an integer of {value.bit_length()} bits is out of range (numbers must fit a double)"
    return (f"a value of type {type(value).__name__} is not JSON "
            "(send objects with string keys, lists, strings, finite numbers, booleans or null)")


#: Integers read inline (well inside a double's range: no range check needed).
_INLINE_INT = 2**53
#: Lists of at most this many plain parts are read inline (`_small_list_size`).
_INLINE_LIST = 8


def _small_list_size(items: list) -> int:
    """The compact JSON size of `items` when every one is an int read inline or an ASCII str,
    else 0 (the list is then read part by part). Equal to what `read_message`'s walk counts."""
    size = len(items) + 1
    for item in items:
        kind = type(item)
        if kind is int and -_INLINE_INT < item < _INLINE_INT:
            size += len(repr(item))
        elif kind is str and item.isascii():
            size += len(item) + 2
        else:
            return 0
    return size


class _TooDeep(Exception):
    """Unwinds `read_message` from a part nested deeper than MAX_JSON_DEPTH (the location)."""


class _OverBudget(Exception):
    """Unwinds `read_message` the moment the size passes MAX_ACTION_BYTES."""


def read_message(msg: dict) -> dict | ActionError:
    """An assistant-message dict as plain JSON data, or TOO_LARGE, TOO_DEEP or PARSE_ERROR.

    One walk sizes, checks and copies every part, in document order. Each key and value adds
    its compact JSON size (see `_scalar_size`) and the walk stops the moment the total passes
    MAX_ACTION_BYTES, so an input of any size and shape costs at most what its first 64 KiB
    do; it stops too at a part nested deeper than MAX_JSON_DEPTH (which bounds the recursion),
    and then `json_size` (no recursion) says whether the rest is over the limit, which is
    reported first, as for a string turn (sized before it is parsed). The first value JSON
    cannot carry is reported last, as a PARSE_ERROR naming its place.

    The copy holds dicts, lists, str, int, float, bool and None (a subclass becomes its base
    type, a surrogate pair sent as two characters is joined as in a string turn) and shares
    nothing with the caller's message (who may edit it later; a tool may keep what it gets).
    """
    size = 0
    path: list[object] = []  # the keys and indexes down to the part being read
    problems: list[str] = []

    def read(value: object) -> object:
        nonlocal size
        if isinstance(value, (dict, list)):
            is_object = isinstance(value, dict)
            n = len(value)
            size += (2 * n + 1 if is_object else n + 1) if n else 2  # brackets, commas, colons
            if size > MAX_ACTION_BYTES:
                raise _OverBudget
            if len(path) >= MAX_JSON_DEPTH:
                raise _TooDeep(_where(path))
            out: Any = {} if is_object else [None] * n
            for key, item in value.items() if is_object else enumerate(value):
                if is_object:
                    if type(key) is str and key.isascii():
                        size += len(key) + 2
                    elif isinstance(key, str):
                        key = read(key)
                    else:
                        size += _scalar_size(key)
                        if not problems:
                            problems.append(f"{_where(path)}: an object key of type {type(key).__name__} is not a string")
                # The commonest parts are read inline: no call, no step in `path` (which also
                # bounds the worst case, many tiny parts, to a few thousand calls).
                kind = type(item)
                if kind is str and item.isascii():
                    size += len(item) + 2
                    out[key] = item
                elif item is None or item is True or item is False:
                    size += 5 if item is False else 4
                    out[key] = item
                elif kind is int and -_INLINE_INT < item < _INLINE_INT or kind is float and item - item == 0.0:
                    size += len(repr(item))  # `item - item` is 0.0 for a finite float only
                    out[key] = item
                elif (kind is list or kind is dict) and not item:
                    size += 2
                    out[key] = kind()
                elif kind is list and len(item) <= _INLINE_LIST and len(path) + 1 < MAX_JSON_DEPTH \
                        and (small := _small_list_size(item)):
                    # A short list of plain ints and ASCII strings ("[0]", "[1, 2]"), sized and
                    # copied here: hostile messages made of many of them stay a few calls deep.
                    size += small
                    out[key] = list(item)
                else:
                    path.append(key)
                    out[key] = read(item)
                    path.pop()
                if size > MAX_ACTION_BYTES:
                    raise _OverBudget
            return out
        size += _scalar_size(value)
        if size > MAX_ACTION_BYTES:
            raise _OverBudget
        if isinstance(value, str):
            return join_surrogate_pairs(value) if not value.isascii() else value if type(value) is str else str(value)
        if value is None or value is True or value is False:
            return value
        if isinstance(value, float) and math.isfinite(value):
            return float(value)
        if isinstance(value, int) and _fits_double(value):
            return int(value)
        if not problems:
            problems.append(f"{_where(path)}: {_not_json(value)}")
        return None

    try:
        plain = read(msg)
    except _OverBudget:
        return _MESSAGE_TOO_LARGE
    except _TooDeep as deep:
        return _MESSAGE_TOO_LARGE if json_size(msg) > MAX_ACTION_BYTES else _deep_error(str(deep))
    if problems:
        return ActionError(ErrorCode.PARSE_ERROR, problems[0])
    return plain  # type: ignore[return-value]


def _parse_message_dict(msg: dict) -> ParsedAction:
    role = msg.get("role")
    if not (isinstance(role, str) and role == "assistant"):
        if isinstance(role, str):
            shown = repr(role) if len(role) <= 40 else f"{role[:40]!r}..."
        else:
            shown = "None" if role is None else f"of type {type(role).__name__}"
        return _failed("", ErrorCode.PARSE_ERROR,
                       f"action must be a str or an assistant message dict, got dict with role {shown}")
    plain = read_message(msg)
    if isinstance(plain, ActionError):
        return ParsedAction(content="", error=plain)
    got = _from_message_fields(plain)
    if isinstance(got, ActionError):
        return ParsedAction(content="", error=got)
    content, calls = got
    return _with_calls(content, calls)


def parse_action(action: object) -> ParsedAction:
    """Parse one assistant turn into a message, tool calls, or an error.

    Never raises on bad input: problems become an ActionError, on the turn
    (``ParsedAction.error``) or on one call (``ToolCall.error``).

    Args:
        action: The turn text, or an OpenAI assistant-message dict
            (``{"role": "assistant", "content": ..., "tool_calls": [...]}``).

    Returns:
        The parsed turn.
    """
    if isinstance(action, str):
        return _parse_text(action)
    if isinstance(action, dict):
        return _parse_message_dict(action)
    return _failed("", ErrorCode.PARSE_ERROR,
                   f"action must be a str or an assistant message dict, got {type(action).__name__}")
