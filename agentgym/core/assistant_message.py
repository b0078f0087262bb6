"""An assistant-message dict read as plain JSON data, and JSON data and text sized in bytes.

A dict action is checked in one walk (`read_message`) that sizes, checks and copies every part
and stops at the first limit passed, so a hostile message of any size or depth costs at most
what its first MAX_ACTION_BYTES do. `json_size` sizes data without a copy (noise specs use it
too); `utf8_size` and `join_surrogate_pairs` size and normalise the text of a string turn the
way a message's strings are.
"""

from __future__ import annotations

import math
from typing import Any

from agentgym.core.action_types import MAX_ACTION_BYTES, MAX_JSON_DEPTH, ActionError, ErrorCode
from agentgym.core.strict_json import fits_double, too_deep_error

__all__ = ["join_surrogate_pairs", "json_size", "read_message", "utf8_size"]


def utf8_size(text: str) -> int:
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
        return (len(value) if value.isascii() else utf8_size(value)) + 2
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, float):
        return len(repr(value))
    if isinstance(value, int):
        # Past a double's range the digits are estimated from the bits: str() of a huge
        # integer costs quadratic time (and past 4,300 digits raises).
        return len(repr(value)) if fits_double(value) else value.bit_length() * 3 // 10
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
        if isinstance(value, int) and fits_double(value):
            return int(value)
        if not problems:
            problems.append(f"{_where(path)}: {_not_json(value)}")
        return None

    try:
        plain = read(msg)
    except _OverBudget:
        return _MESSAGE_TOO_LARGE
    except _TooDeep as deep:
        return _MESSAGE_TOO_LARGE if json_size(msg) > MAX_ACTION_BYTES else too_deep_error(str(deep))
    if problems:
        return ActionError(ErrorCode.PARSE_ERROR, problems[0])
    return plain  # type: ignore[return-value]
