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

The parts this is built on have modules of their own, and their public names are importable from
here too: what a parsed turn is made of and the limits (`agentgym.core.action_types`), strict
JSON decoding (`agentgym.core.strict_json`) and the one-walk reading of an assistant-message
dict (`agentgym.core.assistant_message`).
"""

from __future__ import annotations

import re

from agentgym.core._fast import calls_maker, message_maker, valid_call_maker
from agentgym.core.action_types import (
    MAX_ACTION_BYTES,
    MAX_CALL_ID_CHARS,
    MAX_CALLS_PER_TURN,
    MAX_JSON_DEPTH,
    ActionError,
    ErrorCode,
    ParsedAction,
    ToolCall,
)
from agentgym.core.assistant_message import join_surrogate_pairs, json_size, read_message, utf8_size
from agentgym.core.json_types import json_type_name
from agentgym.core.strict_json import decode_json, decode_strict, strict_json

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
    "parse_text",
    "read_message",
    "strict_json",
]

# The shapes every step produces (a plain message, a valid call, a turn of calls), built without
# the frozen dataclasses' keyword-handling __init__ (see `agentgym.core._fast`).
_message = message_maker(ParsedAction)
_with_calls = calls_maker(ParsedAction)
_valid_call = valid_call_maker(ToolCall)


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
    if len(obj) == 2:
        # The form agents send most, ``{"name": str, "arguments": {...}}``: a valid call at once
        # (what the checks below find for a non-empty name and object arguments).
        name, args = obj.get("name"), obj.get("arguments")
        if type(name) is str and name and type(args) is dict:
            return _valid_call(name, args, call_id)
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
        args = decode_strict(args, "arguments string")
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
#: Where a turn opening with '[' could be a list of calls: an object or a list opens inside, or
#: the list is empty and nothing follows (prose such as "[1] note" or a checklist's "[ ] 3. the
#: meeting" is not).
_JSON_LIST_START_RE = re.compile(r"\[\s*(?:[\[{]|\]\s*$)")
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


def _too_large(text: str) -> ParsedAction | None:
    size = len(text)
    if size * 4 <= MAX_ACTION_BYTES:  # At most 4 bytes a char: surely within the limit.
        return None
    if size <= MAX_ACTION_BYTES:
        size = utf8_size(text)
        if size <= MAX_ACTION_BYTES:
            return None
        return _failed("", ErrorCode.TOO_LARGE,
                       f"action is {size} bytes, over the {MAX_ACTION_BYTES}-byte limit")
    # The size is not in the message: any action this long reads the same (so a remote client
    # can send a stand-in of MAX_ACTION_BYTES + 1 characters and get the identical episode).
    return _failed("", ErrorCode.TOO_LARGE,
                   f"action is more than {MAX_ACTION_BYTES} characters, over the {MAX_ACTION_BYTES}-byte limit")


def _parse_whole_json(text: str) -> ParsedAction:
    value = decode_strict(text)
    if type(value) is dict and len(value) == 2:
        # The turn agents send most, ``{"name": str, "arguments": {...}}``: one valid call and no
        # content, what `_calls_from_value` and `_call_from_object` find for it (no "tool_calls",
        # no "id"), without their frames.
        name, args = value.get("name"), value.get("arguments")
        if type(name) is str and name and type(args) is dict:
            return _with_calls("", (_valid_call(name, args, None),))
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
        value = decode_json(text)  # A top-level string cannot recurse.
    except ValueError:  # Includes JSONDecodeError: quoted prose such as '"Hi," she said.'
        return None
    if not isinstance(value, str) or value.strip()[:1] not in ("{", "["):
        return None
    inner = decode_strict(value)
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
    return decode_strict(body, where)


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
        value = decode_strict(body, "```json block")
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


def parse_text(action: str) -> ParsedAction:
    """`parse_action` of a str turn."""
    if len(action) * 4 > MAX_ACTION_BYTES:  # else surely within the limit (`_too_large`)
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
        return parse_text(action)
    if isinstance(action, dict):
        return _parse_message_dict(action)
    return _failed("", ErrorCode.PARSE_ERROR,
                   f"action must be a str or an assistant message dict, got {type(action).__name__}")
