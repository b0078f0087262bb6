"""Typos in a user's message that never land inside what the agent must copy.

The typo model itself is the contract's (`agentgym.core.typos.perturb`: every `SimulatedUser`
gets it by default). A family's user knows which parts of its message are values the agent must
copy or look up as written (names, ids, e-mail addresses, the domain's words): those are held
out while the typos land, and put back as they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from agentgym.core.typos import perturb

__all__ = ["perturb_keeping"]

#: Stands in for a held value while typos are added (no letters, so no typo lands in it).
_HOLD = "\x00{}\x00"


def perturb_keeping(text: str, rng: Any, patterns: Iterable[re.Pattern[str]] = (),
                    values: Iterable[str] = ()) -> tuple[str, list[str]]:
    """`text` with typos (`agentgym.core.typos.perturb`) outside what it must keep, and what changed.

    Args:
        text: a user's message.
        rng: the typo noise's stream.
        patterns: held out first, in order: each match of each pattern, one at a time.
        values: held out next, in order: every occurrence of each value still in the text.
    """
    text, held_by_patterns = _held_out(tuple(patterns), text)
    held = list(held_by_patterns)
    for value in values:
        if value in text:
            text = text.replace(value, _HOLD.format(len(held)))
            held.append(value)
    text, changes = perturb(text, rng)
    for i, value in enumerate(held):
        text = text.replace(_HOLD.format(i), value)
    return text, changes


@lru_cache(maxsize=2048)
def _held_out(patterns: tuple[re.Pattern[str], ...], text: str) -> tuple[str, tuple[str, ...]]:
    """`text` with each match of each pattern in turn replaced by its stand-in, and the matches.

    A pure function of its arguments, kept for the texts a user says again and again (its
    statements, its stock answers): the patterns run over the whole text at every position.
    """
    held: list[str] = []

    def hold(m: re.Match[str]) -> str:
        held.append(m.group(0))
        return _HOLD.format(len(held) - 1)

    for pattern in patterns:
        text = pattern.sub(hold, text)
    return text, tuple(held)
