"""Cheaper ways to ask whether a case-insensitive regular expression matches a text: a few
substring tests before its scan (`may_hold`), and its scan on ASCII text as a case-sensitive twin
over the text in lower case (`Folded`)."""

from __future__ import annotations

import re

__all__ = ["Folded", "may_hold"]


def may_hold(text: str, words: tuple[str, ...]) -> bool:
    """Whether a case-insensitive pattern every match of which holds one of `words` (lower case)
    may match `text`: a few substring tests stand in for the pattern's scan, which is tried at
    every place of the text. Only in ASCII: outside it case-insensitive matching has more forms
    than `str.lower` gives ("\u017f" is "s", "\u212a" is "k")."""
    if not text.isascii():
        return True
    return any(map(text.lower().__contains__, words))


#: What a twin in lower case would read otherwise than its case-insensitive pattern: a capital
#: letter outside an escape ("\\S" and "\\W" are no letters), or a group that sets its own flags.
_CASED = re.compile(r"[A-Z]|\(\?[-a-zA-Z]")
_ESCAPE = re.compile(r"\\.", re.S)


class Folded:
    """Whether a case-insensitive pattern matches a text, as `pattern.search` says, found faster.

    A case-insensitive scan compares every letter in both cases and is several times slower than a
    case-sensitive one. On ASCII text (most of what agents write) the same pattern without
    ``re.I`` over the text in lower case matches exactly where it does: ASCII letters have no other
    case forms, lowering keeps every offset, and the pattern names no capital (`_CASED`, checked
    here). Outside ASCII the pattern itself is asked ("\u017f" matches "s" only case-insensitively).

    `words`, where given, are those one of which every match holds (lower case, as `may_hold`
    takes them): an ASCII text holding none is ruled out before the scan, on the same lower-cased
    copy.

    Raises:
        ValueError: `pattern` is not case-insensitive, or its source names a capital letter or
            sets flags in a group.
    """

    __slots__ = ("pattern", "_twin", "_words")

    def __init__(self, pattern: re.Pattern[str], words: tuple[str, ...] = ()) -> None:
        if not pattern.flags & re.I or _CASED.search(_ESCAPE.sub("", pattern.pattern)):
            raise ValueError(f"not a case-insensitive pattern in lower case: {pattern.pattern[:60]!r}")
        self.pattern = pattern
        self._twin = re.compile(pattern.pattern, pattern.flags & ~re.I)
        self._words = words

    def search(self, text: str) -> bool:
        """``pattern.search(text) is not None``."""
        if text.isascii():
            low = text.lower()
            if self._words and not any(map(low.__contains__, self._words)):
                return False
            return self._twin.search(low) is not None
        return self.pattern.search(text) is not None
