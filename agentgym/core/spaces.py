"""Text spaces for agent environments.

`gymnasium.spaces.Text` only admits a fixed character set (alphanumerics by default), so a space
holding chat text, with its spaces, punctuation and any Unicode, needs its own `contains`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import shared_memory as _shm

__all__ = ["UnicodeText", "SharedTexts"]

_PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " "
_TABLES = (
    frozenset(_PRINTABLE),
    tuple(_PRINTABLE),
    {c: np.int32(i) for i, c in enumerate(_PRINTABLE)},
    "".join(sorted(_PRINTABLE)),
)


class UnicodeText(spaces.Text):
    """Any Python `str` of at most `max_length` characters.

    `sample()` returns printable ASCII text (letters, digits, punctuation and spaces), enough for
    `check_env` and random agents; `contains()` accepts every string, including non-ASCII text,
    lone surrogates and control characters, because agents and users send those.
    """

    def __init__(self, max_length: int = 65536, *, min_length: int = 0, seed: Any = None):
        if not 0 <= int(min_length) <= int(max_length):
            raise ValueError(f"need 0 <= min_length <= max_length, got {min_length}, {max_length}")
        self.min_length = int(min_length)
        self.max_length = int(max_length)
        # Text builds its character tables per instance and every env holds two spaces, so the
        # tables of the one sampling charset are shared instead (they are never mutated).
        self._char_set, self._char_list, self._char_index, self._char_str = _TABLES
        spaces.Space.__init__(self, dtype=str, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        length = int(self.np_random.integers(self.min_length, min(self.max_length, 64) + 1))
        chars = self.np_random.choice(len(_PRINTABLE), size=length)
        return "".join(_PRINTABLE[i] for i in chars)

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.min_length, self.max_length))


# ------------------------------------------------------------------ AsyncVectorEnv shared memory
# gymnasium stores a `Text` observation in shared memory as indices into its charset, which knows
# no newline, no punctuation beyond it and no Unicode: `AsyncVectorEnv`'s default
# (``shared_memory=True``) would raise on the first observation. A `UnicodeText` is stored as its
# length followed by its code points (int32, surrogates included), so any `str` it contains
# round-trips exactly.


@_shm.create_shared_memory.register(UnicodeText)
def _create_unicode_text_shared_memory(space: UnicodeText, n: int = 1, ctx: Any = None) -> Any:
    import multiprocessing as mp

    return (ctx or mp).Array(np.dtype(np.int32).char, n * (space.max_length + 1))


class SharedTexts(Sequence[str]):
    """The texts of a vector env's sub-envs, read from its shared memory when indexed.

    `AsyncVectorEnv` reads its shared observation buffer once, at construction, and expects a
    view that later writes show through (NumPy arrays are); a `str` cannot be one, so this
    sequence decodes the buffer on each access. A deep copy (what the vector env returns with
    its default ``copy=True``) is a plain tuple of the texts at that moment.
    """

    __slots__ = ("_rows",)

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(self)[i]
        row = self._rows[i]
        return row[1:1 + int(row[0])].tobytes().decode("utf-32-le", "surrogatepass")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, (tuple, SharedTexts)) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # a live view: equal now, maybe not later

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"


@_shm.read_from_shared_memory.register(UnicodeText)
def _read_unicode_text_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length + 1)))


@_shm.write_to_shared_memory.register(UnicodeText)
def _write_unicode_text_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length + 1
    points = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    if points.size > space.max_length:
        raise ValueError(f"a text of {points.size} characters does not fit {space!r}")
    row = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * size:(index + 1) * size]
    row[0] = points.size
    row[1:1 + points.size] = points
