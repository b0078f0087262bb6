"""What the tool-use family's user (`agentgym.envs.tooluse.user.ToolUseUser`) does for the noise
layers: a request worded without one detail (ambiguity), and a change of mind (a goal shift) that
leaves the task of its difficulty, says what the change means for records it made unwanted, and
under consent is the customer's word in place of the yes.

A mixin of the user's own state (its task, goal, gold, world, revealed details, the records it
has seen): the layers call these through the user.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from agentgym.core.task import NoiseEvent
from agentgym.envs.tooluse.base import Detail, Draws, renumbered, unwanted
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.replies import YES, before_yes
from agentgym.envs.tooluse.review import review
from agentgym.envs.tooluse.tasks import longest_plan, shift_gold
from agentgym.users.rule_based import shift_event

__all__ = ["ToolUseNoiseSupport"]


class ToolUseNoiseSupport:
    """The noise layers' side of `ToolUseUser` (see the module docstring)."""

    __slots__ = ()
    _task: Any
    _goal: Any
    _gold: Any
    _world: Any
    _spec: Any
    _tier: bool
    _opening: str
    _revealed: Any
    _values: dict[str, Any]
    _seen: list[Any]
    _changed: bool
    _shift_yes: bool

    def blur(self, rng: Any) -> NoiseEvent | None:
        """Ambiguity: word the request without one detail the user then gives only when asked."""
        options = [d for d in self._goal.details if d.id in self._goal.blurred and d.id in self._revealed]
        if not options:
            return None
        d = options[int(rng.random() * len(options))]
        self._opening = self._goal.blurred[d.id]
        self._revealed.remove(d.id)
        return NoiseEvent(target=d.id, detail=f"the request leaves out the {d.slot}")

    def _with_shift(self, text: str, said: str, confirm: bool) -> str:
        # A customer who changes its mind stops pressing for what it asked before ("Can't you roll
        # it back to v1.4? ... Actually, don't roll anything back" says two things at once); under
        # consent the change is said in place of the yes, and is the customer's word on the rest
        # of the plan ("...; just file the incident"), as a person's would be (`reply`).
        press = self._world.press
        pressed = said and press is not None and text in press.asks
        if said and self._world.consent is not None and (pressed or text in YES):
            self._shift_yes = True
            return said if pressed else before_yes(said)
        return said if pressed else super()._with_shift(text, said, confirm)

    def plan_goal_shift(self, rng: Any, fire: Callable[[NoiseEvent], None]) -> bool:
        spec = load_domains()[self._task.domain]
        if spec.shifts is None or self._goal.job is None:
            return False
        # A shift must leave the task of its difficulty: a plan no longer than the difficulty's
        # (in the hard tier, its pages read as the tier's plans read them).
        longest = longest_plan(self._task)
        shifts = (replace(s, gold=shift_gold(self._task, s.gold)) for s in spec.shifts(self._world, self._goal.job))
        options = [s for s in shifts if len(s.gold.plan) <= longest]
        if not options:
            return False
        return self._plan_shift(Draws(rng).pick(options), rng, fire)

    def _fire_shift(self, turn: int) -> str:
        """Announce the planned shift (what the user says), or drop it unannounced ("") when it
        would leave unwanted a record that no tool can undo."""
        shift, fire = self._take_shift()
        spec = self._spec
        stale = unwanted(shift.gold.effects, self._world.records)
        if any(r.kind not in spec.undoable for r in stale):
            return ""
        if not stale and self._tier and self._met(shift):
            return ""  # a change of mind the user closes in the same breath tests nothing
        old = self._gold
        # The old plan's calls were right when made: keep them for metrics, with the calls that
        # undo what the change left unwanted (the same rule as the dialog family's cancel).
        undo = spec.undo_calls(stale)
        new = replace(shift.gold, plan=renumbered(shift.gold.plan, self._world, stale), traps=old.traps,
                      superseded=(*old.superseded, *(s.to_dict() for s in old.plan), *undo))
        self._gold = self._task.gold = new
        details = [d for d in self._goal.details if d.id != shift.detail]
        details.append(Detail(shift.detail, shift.slot, shift.statement, "upfront"))
        self._goal = self._task.goal = replace(self._goal, details=tuple(details))
        self._reveal(shift.detail)
        self._values[shift.detail] = shift.new
        self._changed = True
        recoverable = turn + len(new.plan) + len(stale) <= self._task.max_turns
        # Records the shift made unwanted are not the assistant's wrong writes; the user says
        # what the change means for the first of them, as a person would.
        self._seen.extend(r for r in stale if not any(r is x for x in self._seen))
        fire(shift_event(shift.detail, shift.old, shift.new, recoverable))
        why = next((why for r, why in self._review().wrong if r is stale[0] and why), "") if stale else ""
        return f"{shift.announce} So {why}." if why else shift.announce

    def _met(self, shift: Any) -> bool:
        """Whether the world already meets the shifted gold. Only the hard tier drops such a
        shift: the other difficulties' episodes are frozen with ToolUse-v0."""
        spec = self._spec
        said = frozenset(d.slot for d in self._goal.details if d.id in self._revealed) | {shift.slot}
        return review(shift.gold, self._world, spec.review, spec.undoable, said, spec.names).success

