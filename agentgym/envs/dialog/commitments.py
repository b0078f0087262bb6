"""The dialog family's commitments beyond tool calls, for goal consistency.

A proposal is an assistant message that names exactly one place of the world (by its full name or
its id), as the user reads one; it is judged as a booking of that place would be (`DialogUser.
contradictions` of ``book``), at the day and slot the message names, if it names one of each. The
final state is the world's active bookings, each judged as its booking call.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from agentgym.core.commitments import CommitmentJudge
from agentgym.core.task import SimulatedUser, Task
from agentgym.envs.dialog.domain import DAYS, SLOTS, Domain
from agentgym.envs.dialog.tasks import Place, World, place_phrases

__all__ = ["proposal", "final_state", "JUDGE", "proposed_places"]

_PUNCTUATION = ",.;:!?)\"'"


@lru_cache(maxsize=None)
def _name_starts(domain: Domain) -> tuple[frozenset[str], frozenset[tuple[str, str]], str]:
    """The first words any place name of `domain` can start with, its first two words, and how
    its ids start (lower-cased): a message names a place only if it holds such a pair or an id."""
    pairs = {tuple(name.split()[:2]) for name in place_phrases(domain) if "_" not in name and " " in name}
    return frozenset(a for a, _ in pairs), frozenset(pairs), domain.id_prefix.lower() + "_"  # type: ignore[return-value]


def proposed_places(world: World, text: str) -> list[Place]:
    """The places a lower-cased message names (by full name or id), in the world's order.

    Called for every message the assistant sends, so most messages are told apart at once: a
    name starts with one of a few words, followed by one of a few others, and an id with the
    domain's prefix; only a message that has either is checked against the world's places.
    """
    firsts, pairs, id_start = _name_starts(world.domain)
    words = text.split()
    has_id = id_start in text
    if not has_id:
        if firsts.isdisjoint(words):
            return []
        if not any((a, b.rstrip(_PUNCTUATION)) in pairs for a, b in zip(words, words[1:]) if a in firsts):
            return []
    return [p for p in world.places if p.name.lower() in text or (has_id and p.id.lower() in text)]


def _one(text: str, words: tuple[str, ...]) -> str | None:
    hits = [w for w in words if re.search(rf"\b{w}\b", text)]
    return hits[0] if len(hits) == 1 else None


def proposal(task: Task, user: SimulatedUser, message: str) -> list[str] | None:
    """The stated constraints a message's proposal breaks; None when it proposes no one place."""
    world = task.world
    if not isinstance(world, World):
        return None
    text = message.lower()
    places = proposed_places(world, text)
    if len(places) != 1:
        return None
    arguments: dict[str, Any] = {"item_id": places[0].id}
    day, slot = _one(text, DAYS), _one(text, SLOTS)
    if day is not None and slot is not None:
        arguments.update(day=day, slot=slot)
    return list(user.contradictions("book", arguments))


def final_state(task: Task, user: SimulatedUser) -> list[str] | None:
    """The stated constraints the world's active bookings break; None with nothing booked."""
    world = task.world
    if not isinstance(world, World):
        return None
    active = world.active_bookings()
    if not active:
        return None
    broken: list[str] = []
    for b in active:
        for cid in user.contradictions("book", {"item_id": b.item_id, "day": b.day, "slot": b.slot}):
            if cid not in broken:
                broken.append(cid)
    return broken


#: The dialog family's judge (`EnvParts.judge`).
JUDGE = CommitmentJudge(proposal=proposal, final_state=final_state)
