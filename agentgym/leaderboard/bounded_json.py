"""JSON from untrusted bytes, sized before it is parsed: depth, value count and memory of each text.

`json.loads` builds every object before anyone can look at it, and small texts build large
structures: ``[],`` repeated is 3 bytes per list of 56 (and 8 more for its slot), so 100 MiB of
it is a few GB of lists. `measure` reads a text's structure outside its strings with NumPy, in
linear time, without recursion and a block at a time (its temporaries stay under 1 MiB whatever
the text), and returns

- ``depth``: the deepest bracket nesting;
- ``values``: an upper bound on the values and keys the text holds (every one of them but the
  first is introduced by a ``,`` ``:`` ``[`` or ``{``);
- ``memory``: an upper bound, in bytes, on the objects `json.loads` returns for it (CPython 3.11+,
  64-bit); ``parsing``: what the text, its decoded copy and the parser's scratch hold while it runs.

The weights are each object's size with its slot in its container, rounded up; a test holds the
bound against tracemalloc over many shapes. `BoundedParser` parses texts one after another within
one memory budget, each refused before it is parsed if it would pass the budget, and shares keys
across texts (records repeat a hundred-odd keys millions of times), so what it holds is charged
with each distinct key once: it charges honest records 1.7x to 1.8x what they take.

Parsing is strict the way a leaderboard needs: a key twice in one object, NaN and Infinity are
errors, not a silent last-one-wins or a non-number.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Shape", "measure", "scanning_memory", "json_depth", "Budget", "BoundedParser", "Refused"]

# What widens a str to 4 bytes a character: a 4-byte UTF-8 sequence, or an escaped surrogate pair.
_WIDEST = re.compile(rb"[\xf0-\xf7]|\\u[dD][89abAB]")

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_DEPTH = np.zeros(256, dtype=np.int8)
_DEPTH[[ord("["), ord("{")]] = 1
_DEPTH[[ord("]"), ord("}")]] = -1
_NUMBER_START = np.zeros(256, dtype=bool)
_NUMBER_START[list(b"-0123456789")] = True
_NUMBER_BODY = np.zeros(256, dtype=bool)
_NUMBER_BODY[list(b"-+.0123456789eE")] = True

#: Bytes per object, with its slot in the container that holds it (CPython 3.11, 64-bit, rounded up).
_DICT = 160  # an empty dict is 64; its first key makes it 184, shared by the next four
_PER_KEY = 48  # a dict grows by about 40 bytes a key
_LIST = 120  # 56, then 8 a slot with over-allocation: a short list is at most 120
_PER_ITEM = 12  # a slot (8) with the over-allocation of a long list
_STRING = 64  # a str's header (49 for ASCII, 73 or 77 wider), rounded to the allocator's 16
_NUMBER = 32  # a float is 24, an int 28 plus 4 per 30 bits (its digits are charged apart)
# Bytes of text scanned at a time: the scan's temporaries stay under 1 MiB for any text.
_BLOCK = 1 << 14
# Bytes of NumPy temporaries per byte of a block (int32 positions and running sums, masks; measured at 15),
# and a constant part (the positions, the byte counts).
_SCAN_TEMPORARIES = 24
_SCAN_FIXED = 16 * 1024


@dataclass
class _Counts:
    depth: int = 0
    objects: int = 0
    lists: int = 0
    keys: int = 0
    commas: int = 0
    strings: int = 0
    string_bytes: int = 0
    numbers: int = 0
    number_bytes: int = 0


def _scan(text: bytes) -> _Counts:
    """Count a JSON text's structure outside its strings, a block at a time, left to right.

    A string runs from a quote to the next quote not escaped (preceded by an odd run of
    backslashes). For valid JSON this is exact; for invalid JSON it is exact up to the first
    error, which is as far as a parser builds anything.
    """
    chars = np.frombuffer(text, dtype=np.uint8)
    c = _Counts()
    level = 0
    odd_run = 0  # the previous block ended in an odd run of backslashes
    in_string = 0  # the previous block ended inside a string
    last = ord(",")  # the last character outside strings (what precedes a number)
    where = np.arange(min(len(chars), _BLOCK), dtype=np.int32)
    for start in range(0, len(chars), _BLOCK):
        block = chars[start:start + _BLOCK]
        n = len(block)
        # The run of backslashes ending at each position (0 where there is none); only its parity matters.
        plain_at = np.where(block == _BACKSLASH, np.int32(-1 - odd_run), where[:n])
        np.maximum.accumulate(plain_at, out=plain_at)
        runs = where[:n] - plain_at
        del plain_at
        escaped = np.empty(n, dtype=bool)
        escaped[0], escaped[1:] = odd_run, (runs[:-1] & 1).astype(bool)
        odd_run = int(runs[-1] & 1)
        del runs
        quote = (block == _QUOTE) & ~escaped
        del escaped
        opened = np.cumsum(quote, dtype=np.int32)
        opened += in_string
        in_string = int(opened[-1] & 1)
        outside = block[~((opened & 1).astype(bool) | quote)]
        del opened
        c.strings += int(np.count_nonzero(quote))
        c.string_bytes += n - len(outside)
        del quote
        if len(outside):
            running = np.cumsum(_DEPTH[outside], dtype=np.int32)
            running += level
            c.depth, level = max(c.depth, int(running.max())), int(running[-1])
            del running
            counts = np.bincount(outside, minlength=256)
            c.objects += int(counts[ord("{")])
            c.lists += int(counts[ord("[")])
            c.keys += int(counts[ord(":")])
            c.commas += int(counts[ord(",")])
            preceding = np.empty_like(outside)
            preceding[0], preceding[1:] = last, outside[:-1]
            c.numbers += int(np.count_nonzero(_NUMBER_START[outside] & ~_NUMBER_BODY[preceding]))
            c.number_bytes += int(np.count_nonzero(_NUMBER_BODY[outside]))
            last = int(outside[-1])
    # Quotes open and close strings: a text that ends inside one still holds it.
    c.strings = (c.strings + 1) // 2
    return c


@dataclass(frozen=True)
class Shape:
    """What a JSON text would cost to parse, read without parsing it."""

    #: The deepest bracket nesting.
    depth: int
    #: At most this many values and keys.
    values: int
    #: At most this many bytes in the objects `json.loads` returns for it.
    memory: int
    #: Of `memory`, the bytes of a new string for every key (saved where keys are shared).
    key_strings: int
    #: At most this many more bytes while the parser runs: the text, its decoded copy, the json module's scratch.
    parsing: int


def json_depth(text: bytes) -> int:
    """The deepest bracket nesting of a JSON text, without parsing it (strings are skipped).

    Linear time and no recursion: a text nested 100,000 deep is one pass here instead of a
    RecursionError in the parser. For malformed text it may over-count; such a text is
    refused either way.
    """
    return _scan(text).depth


def measure(text: bytes) -> Shape:
    """The depth, value count and memory bound of a JSON text (see the module docstring)."""
    c = _scan(text)
    # A str is 1, 2 or 4 bytes a character, by its widest character.
    width = 1 if text.isascii() and b"\\u" not in text else 4 if _WIDEST.search(text) else 2
    memory = (_DICT * c.objects + _PER_KEY * c.keys + _LIST * c.lists + _PER_ITEM * c.commas
              + _STRING * c.strings + width * c.string_bytes + _NUMBER * c.numbers + c.number_bytes)
    # While it runs, besides the text itself: the text decoded (`width` bytes a character), the json module's
    # memo of keys, and a second copy of the containers' slots (a list or dict that grows is copied to its new size).
    parsing = len(text) + _STRING + width * len(text) + 2 * _PER_KEY * c.keys + _PER_ITEM * c.commas
    return Shape(depth=c.depth, values=c.objects + c.lists + c.keys + c.commas + 1, memory=memory,
                 key_strings=_STRING * c.keys, parsing=parsing)


def scanning_memory(text: bytes) -> int:
    """What `measure` holds for `text` while it runs: its blocks' temporaries (the text is the caller's)."""
    return _SCAN_FIXED + _SCAN_TEMPORARIES * min(len(text), _BLOCK)


@dataclass(frozen=True)
class Budget:
    """What a `BoundedParser` accepts: per text, and for everything it has parsed."""

    #: Bytes of one text.
    max_bytes: int
    #: Bracket nesting of one text.
    max_depth: int
    #: Values and keys in one text.
    max_values: int
    #: Bytes held by every parsed value together (estimated before each text is parsed).
    memory: int


class Refused(ValueError):
    """A text `BoundedParser` does not parse.

    Attributes:
        code: ``too_long``, ``too_deep``, ``too_many_values``, ``over_memory`` (a limit), or
            ``not_utf8``, ``bad_json``, ``duplicate_key`` (not well-formed).
        over_limit: the text passes a size limit (rather than being malformed).
        key: the repeated key, for ``duplicate_key``.
    """

    def __init__(self, code: str, message: str, *, over_limit: bool = False, key: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.over_limit, self.key = code, message, over_limit, key


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class BoundedParser:
    """Parse JSON texts one after another, each checked against `budget` before it is parsed.

    Not thread-safe: one parser per decoded submission.
    """

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        #: Bytes held by the values parsed so far (an upper bound).
        self.held = 0
        self._keys: dict[str, str] = {}

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = self._keys
        obj = {keys.setdefault(k, k): v for k, v in pairs}
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for k, _ in pairs:
                if k in seen:
                    raise _DuplicateKey(k)
                seen.add(k)
        return obj

    def parse(self, text: bytes) -> Any:
        """One JSON value from `text`: sized, then decoded as strict UTF-8, then parsed.

        Raises:
            Refused: over a limit of the budget, or not well-formed, naming the problem.
        """
        b = self.budget
        if len(text) > b.max_bytes:
            raise Refused("too_long", f"{len(text)} bytes (limit {b.max_bytes})", over_limit=True)
        reading = self.held + len(text) + scanning_memory(text)
        if reading > b.memory:
            raise Refused("over_memory", f"reading it would hold up to {reading} bytes (limit {b.memory})",
                          over_limit=True)
        shape = measure(text)
        if shape.depth > b.max_depth:
            raise Refused("too_deep", f"JSON nested {shape.depth} deep (limit {b.max_depth})")
        if shape.values > b.max_values:
            raise Refused("too_many_values", f"up to {shape.values} JSON values (limit {b.max_values})",
                          over_limit=True)
        parsing = self.held + shape.memory + shape.parsing
        if parsing > b.memory:
            raise Refused("over_memory", f"parsing it would hold up to {parsing} bytes (limit {b.memory})",
                          over_limit=True)
        try:
            decoded = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Refused("not_utf8", f"not valid UTF-8 at byte {exc.start}") from exc
        known = len(self._keys)
        try:
            value = json.loads(decoded, object_pairs_hook=self._object, parse_constant=_no_constants)
        except _DuplicateKey as exc:
            raise Refused("duplicate_key", f"the key {exc.key[:100]!r} appears twice in one object",
                          key=exc.key) from None
        except (ValueError, RecursionError) as exc:
            raise Refused("bad_json", f"not valid JSON: {exc}") from exc
        # Keys seen in an earlier text are shared, not held again.
        self.held += shape.memory - shape.key_strings + (_STRING + _PER_KEY) * (len(self._keys) - known)
        return value
