"""What the dialog family's user (`agentgym.envs.dialog.user.DialogUser`) does for the noise
layers: typos where they matter, a blurred need it states vaguely, the question that makes it
state one, and a goal shift to another time that keeps the task solvable and fair.

A mixin of the user's own state (its task, gold, world, domain, blurred and revealed needs): the
layers call these through the user, and a subclass (the hard tier's user) overrides what a
shift keeps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from agentgym.core.task import NoiseEvent
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.envs.dialog.fairness import Board
from agentgym.envs.dialog.tasks import Constraint, guessable_midway, satisfying_places
from agentgym.envs.dialog.typos import slip
from agentgym.envs.dialog.wording import QUESTION_FOR, VAGUE
from agentgym.users.rule_based import shift_event

__all__ = ["DialogNoiseSupport"]


class DialogNoiseSupport:
    """The noise layers' side of `DialogUser` (see the module docstring)."""

    __slots__ = ()
    _task: Any
    _gold: Any
    _world: Any
    _domain: Any
    _blurred: list[str]
    _revealed: Any
    _said: set[str]
    _to_change: set[str]
    _accepted: Any
    _checking: Any
    _approved: Any

    def perturb_text(self, text: str, rng: np.random.Generator) -> tuple[str, list[str]]:
        """Typos only where they matter: never in a stock reply, nor in a value the agent must
        copy (`agentgym.envs.dialog.typos`)."""
        return slip(text, self._domain, rng)

    def blur(self, rng: np.random.Generator) -> NoiseEvent | None:
        options = [c for c in self._gold.constraints if c.reveal == "upfront" and c.kind in VAGUE]
        if not options:
            return None
        c = options[int(rng.integers(len(options)))]
        self._blurred.append(c.id)
        return NoiseEvent(target=c.id, detail=VAGUE[c.kind])

    def unclarified(self) -> list[str]:
        """Blurred constraints the assistant has not yet asked about."""
        return [cid for cid in self._blurred if cid not in self._revealed]

    def clarifying_question(self, constraint_id: str) -> str:
        """A question that makes this user state `constraint_id` (used by the oracle)."""
        kind = next(c.kind for c in self._gold.constraints if c.id == constraint_id)
        return QUESTION_FOR[kind].format(label=self._domain.category_label)

    def plan_goal_shift(self, rng: np.random.Generator, fire: Callable[[NoiseEvent], None]) -> bool:
        # Move the wanted time to another one at which some place meets every other constraint,
        # so the task stays solvable and its gold is enumerated anew. The shift costs the agent
        # nothing and may come mid-dialog: at the new time no never-ask agent may reach the gold
        # from wherever its learning stands (`guessable_midway`). No such time: no shift.
        g = self._gold
        others = self._shift_kept()
        options = [(d, s) for d in DAYS for s in SLOTS if (d, s) != (g.day, g.slot)]
        board = Board(self._world.places)
        for k in rng.permutation(len(options)):
            d, s = options[k]
            time = Constraint("time", "time", (d, s), "upfront")
            if satisfying_places(self._world, others, d, s) and self._shift_keeps_task(others, d, s) and \
                    not guessable_midway(self._world, [time, *others], d, s, g.patience, board=board):
                # Announced from turn 2, 3 or 4 on: one `random()` of `rng` (`_plan_shift`), the
                # draw `Rng.integers(2, 5)` makes.
                return self._plan_shift((d, s), rng, fire)
        return False

    def _shift_kept(self) -> list[Constraint]:
        """The needs a goal shift must leave some place meeting: every one but the time."""
        return [c for c in self._gold.constraints if c.kind != "time"]

    def _shift_keeps_task(self, kept: list[Constraint], day: str, slot: str) -> bool:
        """Whether a shift to (day, slot) keeps what the task is beyond `kept` being met: always,
        for this user."""
        return True

    def _fire_shift(self, turn: int) -> str:
        (day, slot), fire = self._take_shift()
        old = self._gold
        constraints = tuple(replace(c, value=(day, slot), reveal="upfront") if c.kind == "time" else c
                            for c in old.constraints)
        # The old plan's booking, and cancelling what stands of it, were right when made: keep
        # them for metrics, each cancel by the booking it undoes.
        superseded = (*old.superseded, *old.plan(), *({"name": "cancel_booking", "arguments": {"booking_id": b.id}}
                                                      for b in self._world.active_bookings()))
        new = replace(old, constraints=constraints, day=day, slot=slot, superseded=superseded,
                      items=satisfying_places(self._world, constraints, day, slot))
        self._gold = self._task.gold = self._task.goal = new
        self._accepted = self._checking = self._approved = None
        self._to_change.update(b.id for b in self._world.active_bookings())
        self._reveal("time")
        self._said.add("time")
        # Cancel (if something is booked) and rebook: two turns are needed to recover.
        recoverable = turn + 2 <= self._task.max_turns
        fire(shift_event("time", [old.day, old.slot], [day, slot], recoverable))
        return f"Actually, can we make it {day.capitalize()} {slot} instead?"

