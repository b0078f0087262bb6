"""Human-like typos and paraphrase for user messages (the `typos` noise).

Changes stay readable to a person: letters swapped, dropped, doubled or hit on a neighbouring key
in a few longer words, never making another English word of one, and a few stock phrases said
another way. Numbers are never touched, so a request keeps its amounts, ratings and dates.
"""

from __future__ import annotations

import re

import numpy as np

from agentgym.core.english_words import is_english_word

__all__ = ["perturb", "PARAPHRASES"]

#: Stock phrases and how people also say them, each as firm or as soft as the phrase it replaces:
#: a wish ("I'd like") is the cue of a need that may give way, so it stays a wish.
PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("I'd like", "i would like"),
    ("please", "pls"),
    ("It should be", "should be"),
    ("I'm looking for", "looking for"),
    ("Thank you", "thx"),
    ("I need", "i really need"),
    ("Could you", "can u"),
    ("doesn't", "doesnt"),
    ("I don't mind", "dont mind"),
)

_NEIGHBOURS = {
    "a": "qs", "b": "vn", "c": "xv", "d": "sf", "e": "wr", "f": "dg", "g": "fh", "h": "gj", "i": "uo",
    "j": "hk", "k": "jl", "l": "k", "m": "n", "n": "bm", "o": "ip", "p": "o", "q": "w", "r": "et",
    "s": "ad", "t": "ry", "u": "yi", "v": "cb", "w": "qe", "x": "zc", "y": "tu", "z": "x",
}
_WORD = re.compile(r"[A-Za-z]{4,}")
#: Slips drawn again when one lands on another real word ("Good" -> "God"), before the word is
#: left as it is: a typo changes how a message is spelt, never what it says.
_REDRAWS = 3


def _typo(word: str, rng: np.random.Generator) -> str:
    i = int(rng.integers(1, len(word) - 1))  # keep the first letter: people read by it
    kind = int(rng.integers(4))
    if kind == 0:  # swap two adjacent letters
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == 1:  # drop one
        return word[:i] + word[i + 1:]
    if kind == 2:  # double one
        return word[:i] + word[i] + word[i:]
    near = _NEIGHBOURS.get(word[i].lower(), word[i])
    return word[:i] + near[int(rng.integers(len(near)))] + word[i + 1:]


def _slip(word: str, rng: np.random.Generator) -> str:
    """A typo of `word` that makes no other English word, drawn up to 1 + `_REDRAWS` times; the
    word as it is when every draw made one."""
    for _ in range(1 + _REDRAWS):
        new = _typo(word, rng)
        if new == word or not is_english_word(new):
            return new
    return word


def perturb(text: str, rng: np.random.Generator, max_typos: int = 3) -> tuple[str, list[str]]:
    """Add 1 to `max_typos` typos (and maybe a paraphrase) to `text`.

    Returns:
        The new text and a list of the changes, e.g. ``["Riverside->Rivreside"]``.
    """
    changes: list[str] = []
    for phrase, other in PARAPHRASES:
        if phrase in text and rng.random() < 0.3:
            text = text.replace(phrase, other, 1)
            changes.append(f"{phrase}->{other}")
    words = [m.span() for m in _WORD.finditer(text)]
    if words:
        n = min(len(words), int(rng.integers(1, max_typos + 1)))
        picks = sorted(rng.choice(len(words), size=n, replace=False), reverse=True)
        for k in picks:  # right to left, so earlier offsets stay valid
            start, end = words[k]
            old = text[start:end]
            new = _slip(old, rng)
            text = text[:start] + new + text[end:]
            if new != old:  # a swap of two equal letters ("roll") changes nothing to report
                changes.append(f"{old}->{new}")
    return text, changes
