"""The hard tier's user (`agentgym.envs.dialog.hard_tier`): the dialog user, with priorities.

It wants more than any one place offers, and knows which of its needs matters least. When the
agent says that no place meets everything, or asks which need could give way, in whatever words
(`gives_way`), the user first thinks of what it has not said yet: a late need arrives then (as
at a commitment), and a need it holds back until asked it now states ("Before I give anything
up, you should know: ..."), giving nothing up, since an agent that has not heard every need
cannot know that nothing fits. Once it has said every need it has, it checks the claim as a
person would: when no place meets all of them at the wanted time it gives up its flexible need
("If something has to give, it doesn't need to have a projector."), and from then on the goal
(and so the scorer, the gold and every verdict) no longer holds it; when some place does, it
asks the agent to look again. Either way it costs no patience. Before it has agreed, a place
that breaks the flexible need is rejected for it like any other broken need.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from agentgym.core.task import NoiseEvent, Task, UserTurn
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.envs.dialog.fairness import Board
from agentgym.envs.dialog.hard_tier import flexible_of
from agentgym.envs.dialog.tasks import Constraint, guessable_midway, satisfying_places
from agentgym.envs.dialog.user import DialogUser
from agentgym.envs.dialog.wording import clause

__all__ = ["HardDialogUser", "make_user", "gives_way", "LOOK_AGAIN", "GIVE_WAY"]

#: A message that asks the user to compromise or rank its needs.
_ASK = re.compile(
    r"\b(?:compromis\w*|flexib\w*|give (?:way|up|something up)|do without|go without|live without|"
    r"drop (?:one|a|any|some|the)|relax\w*|loosen\w*|trade[- ]?offs?|let go of|priorit\w*|"
    r"(?:matters?|important|essential|negotiable|crucial) (?:most|least|more|less)|"
    r"(?:most|least|more|less) (?:important|essential|crucial)|(?:non-?)?negotiable|must-haves?|"
    r"nice[- ]to[- ]haves?|skip (?:one|a|any|some|the)|willing to (?:give|drop|skip|change|bend|budge|sacrifice)|"
    r"sacrific\w*|bend on|budge on)\b")
#: A sentence that says no place meets everything: a negation, a whole ("everything", "all of
#: your needs", "all at once") and a verb of meeting, in any order.
_NO = re.compile(r"\b(?:no|none|nothing|not|nowhere|neither|couldn't|could not|can't|cannot|unable|didn't|"
                 r"did not|doesn't|does not|don't|do not|isn't|aren't|haven't|wasn't|weren't)\b|n't\b")
_ALL = re.compile(r"\b(?:everything|all (?:of )?(?:your|the|those|these|them|at once|together|four|five|six)|"
                  r"every (?:one of your|need|requirement|criterion|criteria|constraint|box)|all \w+ (?:needs|"
                  r"requirements|criteria|constraints|boxes)|both)\b")
_MEET = re.compile(r"\b(?:meet|meets|fit|fits|match|matches|satisf\w+|has|have|had|offer|offers|tick|ticks|"
                   r"check|checks|cover|covers|combine|combines|find|found|available)\b")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
#: Said to a claim that nothing fits while something fits every need the user has told.
LOOK_AGAIN = "Really? I'd have thought something fits everything I've told you. Could you look again?"
#: How the user gives up its flexible need, by kind ({phrase}: the amenity's own words).
GIVE_WAY = {
    "amenity": "If something has to give, it doesn't need to {phrase}.",
    "price": "If something has to give, I can spend more than {value} {unit}.",
    "rating": "If something has to give, it doesn't need to be rated {value} or more.",
}
_BEFORE = "Before I give anything up, you should know: "


def gives_way(message: str) -> bool:
    """Whether `message` asks the user which need may give way, or says that no place meets
    them all (`_ASK`, or a sentence with a negation, a whole and a verb of meeting)."""
    low = message.lower().replace("\u2019", "'")
    if _ASK.search(low):
        return True
    return any(_NO.search(s) and _ALL.search(s) and _MEET.search(s) for s in _SENTENCE.split(low))


class HardDialogUser(DialogUser):
    """See the module docstring."""

    __slots__ = ("_flexible", "_gave")

    def __init__(self, task: Task, rng: np.random.Generator) -> None:
        super().__init__(task, rng)
        fid = flexible_of(task)
        #: The need the user would give up, until it does; then what it said giving it up.
        self._flexible: Constraint | None = next((c for c in self._gold.constraints if c.id == fid), None)
        self._gave = ""

    def reply(self, message: str, turn: int) -> UserTurn:
        if (self._flexible is None and not self._gave) or not gives_way(message):
            return super().reply(message, turn)
        checking = self._checking is not None
        said = self._give_way(turn)
        r = self._reading(message)
        if r.placed and not r.salad and (r.places or checking):
            # A proposal, or the answer about the place the user came back about, said beside
            # the claim: judged by the needs the user has now. The claim's words are no question.
            rest = self._respond(replace(r, asked=(), open=False), message, turn)
            if isinstance(rest, UserTurn):
                if rest.end is not None:
                    return UserTurn(f"{said} {rest.text}", rest.end)
                rest = rest.text
            said = f"{said} {rest}"
        return self._close(said, turn, False)

    def _give_way(self, turn: int) -> str:
        """The answer to "which need could give way?" (see the module docstring)."""
        if self._flexible is None:
            return f"As I said: {clause(self._gave)}"
        parts: list[str] = []
        arrived = self._arrivals(turn, commit=True)
        if arrived:
            parts.append(self._announce(arrived))
        g = self._gold
        unsaid = [c for c in g.constraints if self._has(c) and c.id not in self._revealed]
        if unsaid:
            parts.append(_BEFORE + clause(self._say(unsaid[0])))
        elif satisfying_places(self._world, [c for c in g.constraints if self._has(c)], g.day, g.slot):
            parts.append(LOOK_AGAIN)
        else:
            parts.append(self._relax(self._flexible))
        return " ".join(parts)

    def _relax(self, c: Constraint) -> str:
        """Give up need `c`: the goal drops it, and the gold is enumerated anew."""
        g = self._gold
        kept = tuple(k for k in g.constraints if k.id != c.id)
        self._gold = self._task.gold = self._task.goal = replace(
            g, constraints=kept, items=satisfying_places(self._world, kept, g.day, g.slot))
        self._task.extra["relaxed"] = c.id
        self._flexible = None
        dom = self._domain
        self._gave = GIVE_WAY[c.kind].format(phrase=dom.amenity_phrases.get(c.value, ""), value=c.value,
                                             unit=dom.price_unit)
        return self._gave

    def plan_goal_shift(self, rng: np.random.Generator, fire: Callable[[NoiseEvent], None]) -> bool:
        # As the dialog user's, and the shift keeps the tier's conflict: at the new time no
        # place meets every need, and some meet all the user keeps.
        g = self._gold
        flexible = self._flexible
        if flexible is None:
            return super().plan_goal_shift(rng, fire)
        kept = [c for c in g.constraints if c.kind != "time" and c.id != flexible.id]
        options = [(d, s) for d in DAYS for s in SLOTS if (d, s) != (g.day, g.slot)]
        board = Board(self._world.places)
        for k in rng.permutation(len(options)):
            d, s = options[k]
            time = Constraint("time", "time", (d, s), "upfront")
            if satisfying_places(self._world, kept, d, s) and \
                    not satisfying_places(self._world, [*kept, flexible], d, s) and \
                    not guessable_midway(self._world, [time, *kept], d, s, g.patience, board=board):
                return self._plan_shift((d, s), rng, fire)
        return False


def make_user(task: Task, rng: np.random.Generator) -> Any:
    """The dialog family's user factory: the hard tier's user on a task of the tier."""
    if task.extra.get("tier") == "hard":
        return HardDialogUser(task, rng)
    return DialogUser(task, rng)
