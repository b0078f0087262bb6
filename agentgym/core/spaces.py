"""Text spaces for agent environments.

`gymnasium.spaces.Text` only admits a fixed character set (alphanumerics by default), so a space
holding chat text, with its spaces, punctuation and any Unicode, needs its own `contains`.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["UnicodeText"]

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
        # Text builds its character tables per instance (~15 KB each); every env holds two
        # spaces, so the tables of the one sampling charset are shared instead.
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
