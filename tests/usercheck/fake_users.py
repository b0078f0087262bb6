"""Fake simulated users with known behaviour, over the real tasks, for testing the measurement.

Each knows which concepts every corpus message asks for (the lookup the test gives it) and
answers as its `mode` says: ``right`` states exactly the held slots asked for (an open
question: one held slot), ``wrong`` states every held slot that was not asked (all of them
for an open question or a message that asks nothing), ``silent``
states nothing, ``volunteer`` states its first held slot whatever it is told (the paired
control must cancel that).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

from agentgym.core.task import NoiseEvent, SimulatedUser, Task, UserTurn

_MODES = ("right", "wrong", "silent", "volunteer")


def _goal_slots(task: Task) -> list[tuple[str, str, bool]]:
    """(id, concept, stated in the opening) of every answerable slot of the task."""
    if task.family == "dialog":
        return [(c.id, c.kind, c.reveal == "upfront") for c in task.goal.constraints if c.reveal != "late"]
    return [(d.id, d.slot, d.reveal == "upfront") for d in task.goal.details]


class LookupUser(SimulatedUser):
    def __init__(self, task: Task, rng: Any, mode: str, asks_of: dict[str, tuple[str, ...]]) -> None:
        assert mode in _MODES
        self._mode = mode
        self._asks_of = asks_of
        self._slots = _goal_slots(task)
        self._known = [sid for sid, _, upfront in self._slots if upfront]
        # What ambiguity noise may blur: the details a ToolUse request can be worded without,
        # the Dialog constraints stated up front.
        self._blurrable = list(task.goal.blurred) if task.family == "tooluse" else list(self._known)

    def blur(self, rng: Any) -> NoiseEvent | None:
        options = [sid for sid in self._blurrable if sid in self._known]
        if not options:
            return None
        sid = options[int(rng.random() * len(options))]
        self._known.remove(sid)
        return NoiseEvent(target=sid, detail="left out of the opening")

    def opening(self) -> str:
        return "Hello, I need help."

    def _held(self) -> list[tuple[str, str]]:
        return [(sid, concept) for sid, concept, _ in self._slots if sid not in self._known]

    def reply(self, message: str, turn: int) -> UserTurn:
        held = self._held()
        asks = self._asks_of.get(message)
        if self._mode == "volunteer":
            say = held[:1]
        elif self._mode == "silent" or asks is None:
            say = []
        elif asks == ("open",):
            say = held[:1] if self._mode == "right" else held
        elif self._mode == "right":
            say = [(sid, c) for sid, c in held if c in asks]
        else:
            say = [(sid, c) for sid, c in held if c not in asks]
        self._known += [sid for sid, _ in say]
        return UserTurn(" ".join(f"About {c}: noted." for _, c in say) or "Please go ahead.")

    def known_constraints(self) -> list[str]:
        return self._known


def factory(mode: str, corpus: Any, nouns: tuple[str, ...] = ("cafe", "restaurant", "stay", "coworking space",
                                                               "event venue", "")) -> Callable[..., LookupUser]:
    """A user factory of `mode` that knows what every message of `corpus` asks for."""
    asks_of: dict[str, tuple[str, ...]] = {}
    for p in corpus:
        for noun in nouns:
            asks_of.setdefault(p.message(noun), p.asks)
    return partial(LookupUser, mode=mode, asks_of=asks_of)
