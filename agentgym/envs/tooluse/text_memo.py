"""Memos of pure functions of a message's text, shared by every env and thread of the process.

A user asks some questions of every message it answers ("does it ask leave?", "does it ask whether
a finding is so?"), each a pure function of the text: memoised per text in a bounded table, as
the understanding engine memoises its readings (emptied when full; a text longer than
`MEMO_MAX_CHARS` is read afresh, so a long message is never kept).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["MEMO_MAX_CHARS", "MEMO_SIZE", "per_text"]

#: Entries a table holds before it is emptied, and the longest text kept.
MEMO_SIZE = 4096
MEMO_MAX_CHARS = 2000
_T = TypeVar("_T")


def per_text(fn: Callable[[str], _T]) -> Callable[[str], _T]:
    """`fn` memoised per text (see `MEMO_SIZE`). The table is shared by every env and thread of
    the process: `fn` is a pure function of the text, so a race stores an equal value twice."""
    memo: dict[str, _T] = {}

    def memoised(text: str) -> _T:
        got = memo.get(text)
        if got is None:
            if len(text) > MEMO_MAX_CHARS:
                return fn(text)
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            got = memo[text] = fn(text)
        return got

    memoised.__doc__, memoised.__wrapped__ = fn.__doc__, fn  # type: ignore[attr-defined]
    return memoised
