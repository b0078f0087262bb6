"""Reading a person's words as a careful reader does: through the typos people make.

A message may come with a few letters swapped, dropped, doubled or mistyped in its longer words
(the `typos` noise, and people), so a cue word is matched by its first letter and at most one
such slip; short words, numbers, codes and names are matched as they are.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentgym.agents.transcript import SENTENCE_BREAK

__all__ = ["near", "words_of", "has_word", "has_phrase", "sentences"]

_WORD = re.compile(r"[A-Za-z']+")
#: Words shorter than this are read as they are: a slip in them makes another word.
_MIN_FUZZY = 4


@lru_cache(maxsize=4096)
def near(word: str, target: str) -> bool:
    """Whether `word` is `target` (both lower case) or `target` with one slip: a letter swapped
    with its neighbour, dropped, doubled or replaced, never the first (people read by it)."""
    if word == target:
        return True
    if len(target) < _MIN_FUZZY or not word or word[0] != target[0] or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target)) if a != b]
        if len(diff) == 1:
            return True
        return (len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == target[diff[1]]
                and word[diff[1]] == target[diff[0]])
    short, long_ = (word, target) if len(word) < len(target) else (target, word)
    i = next((k for k, (a, b) in enumerate(zip(short, long_)) if a != b), len(short))
    return short[i:] == long_[i + 1:]


def words_of(text: str) -> list[str]:
    """The words of `text`, lower case, in order."""
    return [w.lower() for w in _WORD.findall(text)]


def has_word(text: str, *targets: str) -> bool:
    """Whether `text` holds one of `targets` (single lower-case words), typos allowed."""
    words = words_of(text)
    return any(near(w, t) for w in words for t in targets)


def has_phrase(text: str, phrase: str) -> bool:
    """Whether `text` holds the words of `phrase` one after another, typos allowed."""
    want = words_of(phrase)
    words = words_of(text)
    n = len(want)
    return any(all(near(words[i + k], want[k]) for k in range(n)) for i in range(len(words) - n + 1))


def sentences(text: str) -> list[str]:
    """`text` cut into sentences."""
    return [s for s in SENTENCE_BREAK.split(text.strip()) if s]
