"""The one reading of the public transcript that every agent of this package shares.

The env renders tool results as JSON text and states the task in a brief; the agents (the
heuristic's strategies, the candidate builders, the exploit and defect agents, the expert, the
PPO features) read that text back here, once, with one stemmer (`agentgym.users.understanding.words`)
and one set of patterns.
"""

from __future__ import annotations

import functools

from agentgym.users.understanding.words import singular, stem

__all__ = ["item_key", "key_stem"]


@functools.lru_cache(maxsize=4096)
def key_stem(key: str) -> str:
    """What a key or argument name refers to: its last word, without ``_id(s)``, stemmed.

    ``from_account``, ``account_id`` -> ``account``; ``person_ids`` -> ``person``;
    ``root_cause_service`` and ``services`` -> one stem; ``free_starts_utc``, ``start_utc`` -> ``utc``.
    """
    k = key.lower()
    for suffix in ("_ids", "_id"):
        if k.endswith(suffix) and len(k) > len(suffix):
            k = k[: -len(suffix)]
            break
    return stem(k.rsplit("_", 1)[-1])


def item_key(key: str) -> str:
    """The key one item of a list under `key` stands under: ``person_ids`` -> ``person_id``,
    ``attendees`` -> ``attendee`` (the last word made singular)."""
    if key.endswith("_ids"):
        return key[:-1]
    head, _, last = key.rpartition("_")
    return f"{head}_{singular(last)}" if head else singular(last)
