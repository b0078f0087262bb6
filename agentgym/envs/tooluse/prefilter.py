"""A cheap test before a regular expression's scan: whether a text may hold any match at all."""

from __future__ import annotations

__all__ = ["may_hold"]


def may_hold(text: str, words: tuple[str, ...]) -> bool:
    """Whether a case-insensitive pattern every match of which holds one of `words` (lower case)
    may match `text`: a few substring tests stand in for the pattern's scan, which is tried at
    every place of the text. Only in ASCII: outside it case-insensitive matching has more forms
    than `str.lower` gives ("\u017f" is "s", "\u212a" is "k")."""
    if not text.isascii():
        return True
    return any(map(text.lower().__contains__, words))
