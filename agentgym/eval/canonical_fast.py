"""Canonical JSON by orjson, for the record writer: the bytes `records.canonical_json` writes, or None.

A record is written once per episode, and encoding it with the standard library's C encoder
(sorted keys, ASCII escapes) was most of what the runner adds to an episode. orjson encodes the
same tree several times faster; its bytes equal the standard encoder's except where this module
cannot vouch for them, and there `canonical_bytes` returns None and the caller encodes plainly:

- non-ASCII text (orjson writes UTF-8; the canonical form escapes it) and DEL (``\\x7f``, which
  the canonical form escapes as ``\\u007f``): the output is not pure ASCII below DEL;
- floats below 1e-4 in magnitude: Python writes ``1e-05`` where orjson writes ``0.00001`` or
  ``1e-5``. Every such number in orjson's text has a digit before ``e-`` or reads ``0.0000``; a
  string holding either only sends the record the plain way, which is never wrong;
- what orjson refuses (integers past 64 bits, lone surrogates, keys that are not strings, nesting
  past 254 levels) and, through its passthrough options, subclasses of str, int, dict and list,
  dataclasses and datetimes: the plain encoder decides, as before.

Invariant: for a tree of dicts with string keys, lists, tuples, strings, ints, floats, bools
and None (what a record is), a result that is not None equals
``canonical_json(obj).encode("ascii")``; `tests/eval/test_canonical_fast.py` checks it on
generated trees, every float magnitude and real records. orjson also encodes an `enum.Enum`
or a `uuid.UUID` by value where the standard encoder refuses them: a record holds neither.
Without orjson installed every call returns None.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["canonical_bytes"]

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency; the plain encoder stands in
    orjson = None

if orjson is not None:
    _dumps = orjson.dumps
    _OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
                | orjson.OPT_PASSTHROUGH_DATETIME)

_DIGITS = frozenset(b"0123456789")
#: Every "e-" of a text, found in one scan: prose holds many ("one-time", "re-check"), and a
#: search from Python per match costs more than the scan.
_EXPONENT = re.compile(rb"e-")


def _may_hold_small_float(text: bytes) -> bool:
    """Whether `text` (orjson's) may hold a float below 1e-4 in magnitude: a ``0.0000`` anywhere,
    or a digit before an ``e-``."""
    if b"0.0000" in text:
        return True
    return any(m.start() and text[m.start() - 1] in _DIGITS for m in _EXPONENT.finditer(text))


def canonical_bytes(obj: Any) -> bytes | None:
    """``canonical_json(obj)`` as ASCII bytes, or None where this path cannot vouch for them."""
    if orjson is None:  # pragma: no cover
        return None
    try:
        text = _dumps(obj, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: refused, or a passthrough type
        return None
    if not text.isascii() or b"\x7f" in text or _may_hold_small_float(text):
        return None
    return text
