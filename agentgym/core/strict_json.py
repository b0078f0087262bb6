"""Strict JSON, as every tool call's arguments are decoded: no NaN or infinities, no number past
a double's range, no duplicate keys, at most MAX_JSON_DEPTH deep, never a RecursionError.

`decode_strict` gives the value or an `ActionError` naming where the text came from (the
protocol's form for a turn or a call); `strict_json` raises a `ValueError` instead.
"""

from __future__ import annotations

import json
import math
import re

from agentgym.core._fast import direct_decoder, nests_deeper
from agentgym.core.action_types import MAX_JSON_DEPTH, ActionError, ErrorCode

__all__ = ["DECODER", "decode_json", "decode_strict", "fits_double", "strict_json", "too_deep_error"]


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


def fits_double(value: int) -> bool:
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
    if len(text) > 308 and not fits_double(value):
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


#: The strict decoder (its hooks refuse what `strict_json` refuses, but not nesting: see `_too_deep`).
DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_pairs, parse_constant=_reject_constant, parse_float=_finite_float,
    parse_int=_double_int,
)

#: `DECODER.decode`, calling its scanner directly (every tool call of every step is decoded here).
decode_json = direct_decoder(DECODER)


# A JSON string (so brackets inside strings do not count). It also takes an
# unterminated string up to the end, so it always matches at the first try: no
# backtracking, linear time even on hostile input.
_STRING_RE = re.compile(r'"[^"\\]*(?:\\.?[^"\\]*)*"?', re.DOTALL)


def _too_deep(text: str) -> bool:
    """Whether ``text`` nests deeper than MAX_JSON_DEPTH, found without recursion."""
    if text.count("{") + text.count("[") <= MAX_JSON_DEPTH:
        return False
    return nests_deeper(text, MAX_JSON_DEPTH, _STRING_RE)


def decode_strict(text: str, where: str = "") -> object:
    """Strictly decode ``text``: the value, or an ActionError (PARSE_ERROR or TOO_DEEP).

    Args:
        text: the JSON text.
        where: where the text came from, the start of an error's message ("" for none).
    """
    if _too_deep(text):
        return too_deep_error(where)
    try:
        return decode_json(text)
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
        return too_deep_error(where)
    except ValueError as exc:  # Our hooks (duplicate key, NaN) and int digit limits.
        return ActionError(ErrorCode.PARSE_ERROR, f"{_prefix(where)}invalid JSON: {exc}")


def strict_json(text: str) -> object:
    """`text` decoded as strict JSON, as tool calls are: no NaN or infinities, no number past a
    double's range, no duplicate keys, at most MAX_JSON_DEPTH deep, never a RecursionError.

    Raises:
        ValueError: `text` is not such JSON; the message says why.
    """
    value = decode_strict(text)
    if isinstance(value, ActionError):
        raise ValueError(value.message)
    return value


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def too_deep_error(where: str) -> ActionError:
    """The TOO_DEEP error of a value from `where` ("" for none) nested past MAX_JSON_DEPTH."""
    return ActionError(
        ErrorCode.TOO_DEEP, f"{_prefix(where)}JSON nests deeper than {MAX_JSON_DEPTH} levels"
    )

