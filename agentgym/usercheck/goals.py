"""What a simulated user holds: the slots of its task's hidden goal, and which it has stated.

A measuring tool may read the hidden goal (the agent never can): the task of the env
(``env.unwrapped.task``) gives each slot's concept and value, the user's
``known_constraints()`` the ids stated so far. In a CrossTask session the active sub-task's user
is read, its ids prefixed with the sub-task's index as the session user lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["GoalSlot", "Holding", "read_holding", "says"]


@dataclass(frozen=True, slots=True)
class GoalSlot:
    """One slot of the user's goal.

    Attributes:
        id: as ``known_constraints()`` lists it once stated.
        concept: a corpus concept (a Dialog constraint kind, a ToolUse detail slot).
        answerable: the user may state it when asked (a Dialog constraint volunteered late
            is not: asking does not reveal it early).
        texts: how its value reads in a reply, for a reply whose ids do not tell.
    """

    id: str
    concept: str
    answerable: bool
    texts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Holding:
    """The active (sub-)task's user at one moment: its family, domain, slots and stated ids."""

    family: str
    domain: str
    noun: str
    slots: tuple[GoalSlot, ...]
    known: tuple[str, ...]

    def held(self) -> frozenset[str]:
        """Concepts with a slot the user would state when asked and has not stated yet."""
        known = set(self.known)
        return frozenset(s.concept for s in self.slots if s.answerable and s.id not in known)

    def stated(self) -> frozenset[str]:
        """Concepts with a slot the user has stated."""
        known = set(self.known)
        return frozenset(s.concept for s in self.slots if s.id in known)


def read_holding(env: Any) -> Holding:
    """What the user of `env` (any wrapper around an agentgym env, after reset) holds now."""
    base = env.unwrapped
    task, user = base.task, base.user
    known = tuple(user.known_constraints())
    prefix = ""
    if task.family == "crosstask":
        index = task.world.active
        task = task.world.segments[index].task
        prefix = f"{index}:"
    if task is None:
        raise ValueError("the active sub-task has no goal of its own (a follow-up)")
    if task.family == "dialog":
        slots = tuple(_dialog_slot(c, prefix) for c in task.goal.constraints)
        noun = task.world.domain.noun
    elif task.family == "tooluse":
        slots = tuple(GoalSlot(prefix + d.id, d.slot, True, (d.statement,)) for d in task.goal.details)
        noun = ""
    else:
        raise ValueError(f"no reading of the goal of family {task.family!r}")
    return Holding(task.family, task.domain, noun, slots, known)


def _dialog_slot(c: Any, prefix: str) -> GoalSlot:
    if c.kind == "time":
        texts: tuple[str, ...] = (str(c.value[0]),)
    elif c.kind == "rating":
        texts = (f"{float(c.value):.1f}", f"{float(c.value):g} star")
    else:
        texts = (str(c.value),)
    return GoalSlot(prefix + c.id, c.kind, c.reveal != "late", texts)


def says(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words (case-insensitive; a number is not
    part of a longer number or decimal: "4" is not in "4.5")."""
    pattern = rf"(?<![\w.]){re.escape(phrase.lower())}(?![\w]|\.\d)"
    return re.search(pattern, text.lower()) is not None
