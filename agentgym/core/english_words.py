"""Whether a string is an English word: the typo noise keeps its slips off real words ("Good" ->
"God", "Finance" -> "Fiance" change what a message says; "Goood" and "Fniance" only how it is spelt).

The list is Webster's Second International word list (public domain, as packaged in the
`english-words` distribution's ``web2``): 230,857 words of 3 to 16 letters, lower-cased, in
``data/english_words.txt.gz`` (its README says how to rebuild it). It holds lemmas, not every
inflection, so `is_english_word` also takes a word that a regular ending makes of one ("books",
"hotels", "rated", "booking"). It is read on the first question (about 40 ms), and only by
episodes with typos.
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Mapping
from pathlib import Path

__all__ = ["is_english_word", "english_words"]

_DATA = Path(__file__).parent / "data" / "english_words.txt.gz"
#: Regular endings and what each may stand in for: "hotels" -> "hotel", "boxes" -> "box",
#: "cities" -> "city", "booked" -> "book" / "rated" -> "rate", "booking" -> "book" / "making" ->
#: "make" ("rates" -> "rate" is the plain "s").
_ENDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ies", ("y",)), ("es", ("",)), ("s", ("",)), ("ied", ("y",)), ("ed", ("", "e")),
    ("ing", ("", "e")), ("er", ("", "e")), ("est", ("", "e")), ("ly", ("",)),
)


@functools.cache
def english_words() -> Mapping[str, None]:
    """The word list, read once per process: the keys of a dict, which the garbage collector
    never tracks when it holds only strings (a frozenset is always tracked, and every full
    collection would walk its 230,857 entries)."""
    return dict.fromkeys(gzip.decompress(_DATA.read_bytes()).decode("ascii").split())


def is_english_word(text: str) -> bool:
    """Whether `text` (any case) is an English word of the list, or one a regular ending makes of one."""
    word = text.lower()
    words = english_words()
    if word in words:
        return True
    for ending, stems in _ENDINGS:
        if word.endswith(ending) and len(word) > len(ending) + 2:
            root = word[: -len(ending)]
            if any(root + s in words for s in stems):
                return True
            if len(root) > 2 and root[-1] == root[-2] and root[:-1] in words:  # "stopped", "planning"
                return True
    return False
