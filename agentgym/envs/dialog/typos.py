"""Typos in the dialog user's messages, only where a person's slips would land and matter.

The `typos` noise asks the user for a slipped copy of a message (`DialogUser.perturb_text`). A
stock reply that carries nothing beyond itself ("Okay. Please find something that fits and book
it.") comes back as it is, and the values an agent must copy or look up as the brief writes them
stay intact: place names and ids, the domain's categories, areas and amenities, days (a day
counted from today too) and times of day (numbers are never touched). The words around them take the slips, so a careful reader
still has everything it needs.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain
from agentgym.envs.dialog.wording import RELATIVE_DAYS, stock
from agentgym.users.typos import perturb_keeping

__all__ = ["slip"]

@lru_cache(maxsize=None)
def _kept(domain: Domain) -> re.Pattern[str]:
    """What typos never touch in `domain`: any name a place of it can have (with the suffix of
    a repeated name), its ids, and its vocabulary, as one pattern (longest first)."""
    first, second = domain.name_parts
    name = rf"(?:{'|'.join(map(re.escape, first))}) (?:{'|'.join(map(re.escape, second))})(?: \d+)?(?: II)*"
    values = sorted({*domain.categories, *domain.areas, *domain.amenities, *DAYS, *SLOTS, *RELATIVE_DAYS},
                    key=len, reverse=True)
    words = "|".join(re.escape(v) for v in values)
    return re.compile(rf"(?<!\w)(?:{name}|{re.escape(domain.id_prefix)}_\d+|(?i:{words}))(?!\w)")


def slip(text: str, domain: Domain, rng: Any) -> tuple[str, list[str]]:
    """`text` with typos outside the values it holds, and what changed; a stock reply of
    `domain` unchanged (see the module docstring)."""
    if text in stock(domain):
        return text, []
    return perturb_keeping(text, rng, patterns=(_kept(domain),))
