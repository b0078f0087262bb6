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
from agentgym.envs.dialog.tasks import Place, World

__all__ = ["proposal", "final_state", "JUDGE", "proposed_places"]

_TOKEN = re.compile(r"[a-z0-9_]+")


@lru_cache(maxsize=None)
def _first_words(domain: Domain) -> frozenset[str]:
    """Every word a place name of `domain` can start with (lower-cased; a first part may be
    several words, "House of")."""
    return frozenset(_TOKEN.findall(w.lower())[0] for w in domain.name_parts[0] if _TOKEN.findall(w.lower()))


def proposed_places(world: World, text: str) -> list[Place]:
    """The places a lower-cased message names, in the order their first words appear."""
    tokens = _TOKEN.findall(text)
    prefix = world.domain.id_prefix.lower() + "_"
    firsts = _first_words(world.domain)
    if not any(t in firsts or t.startswith(prefix) for t in tokens):
        return []  # most messages name no place: no scan of the world
    out: list[Place] = []
    for place in world.places:
        if place.id.lower() in tokens or place.name.lower() in text:
            out.append(place)
    return out


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
