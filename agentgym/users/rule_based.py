"""The rule-based user that a family's user of task details builds on: what every such user does
alike, so each family keeps only what it does its own way.

It holds details it may state, some up front, and states one when a message asks about it,
remembering in order what it has stated (`known_constraints`, which goal consistency judges
against). A message is read once by the family's `Understanding`: an empty one, a list of
keywords and one it cannot place get the same stock replies in every family; what it answers
otherwise is the family's (`_respond`). Its stock replies are picked by four draws made when it is
made, so how many messages it reads never changes the draws of the rest of the episode.

A goal shift, once planned (`_plan_shift`), is announced at the first reply from a turn drawn in
2-4 on, at a reply to a confirmation question, or on seeing the world change (`react`), whichever
comes first; what the announcement says and changes is the family's (`_fire_shift`). After a
world change the user judges it (`_judge`), and says the shift first when both come at once.

Typos (`perturb_text`) never touch a stock reply (`STOCK`) and never a value the agent must copy
(`_kept_patterns`, `_kept_values`).
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from agentgym.core.task import NoiseEvent, SimulatedUser, UserTurn, WorldEvent
from agentgym.users.stock import EMPTY, KEYWORDS, REPHRASE
from agentgym.users.typos import perturb_keeping
from agentgym.users.understanding import Reading

__all__ = ["RuleBasedUser"]

class RuleBasedUser(SimulatedUser):
    """The shared part of a family's rule-based user (see the module docstring).

    Args:
        rng: the episode's user stream; four draws are made from it here, before any other.
        read: the family's reader of a message (`Understanding.read`).
        upfront: the ids of the details stated in the opening, in order.
    """

    __slots__ = ("_picks", "_n", "_read", "_revealed", "_shift", "_shift_turn", "_shift_fire")

    #: Replies that carry nothing the agent needs: typos never touch them.
    STOCK: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, rng: Any, read: Callable[[str], Reading], upfront: Iterable[str]) -> None:
        rnd = rng.random
        self._picks = (rnd(), rnd(), rnd(), rnd())
        self._n = 0
        self._read = read
        self._revealed: list[str] = list(upfront)
        #: The family's planned goal shift, until it is announced.
        self._shift: Any = None
        self._shift_turn = 0
        self._shift_fire: Callable[[NoiseEvent], None] | None = None

    # -------------------------------------------------------------- what the family says
    @abc.abstractmethod
    def _respond(self, r: Reading, message: str) -> str | UserTurn:
        """The answer to a message the user placed (neither empty nor a keyword list): a text,
        or a whole turn that ends the reply there (the shift waits)."""

    @abc.abstractmethod
    def _judge(self) -> UserTurn | None:
        """The user's word on the world after it changed, or None to say nothing."""

    @abc.abstractmethod
    def _fire_shift(self, turn: int) -> str:
        """Announce the planned shift at `turn` and apply it: what the user says ("" to say
        nothing)."""

    def _with_shift(self, text: str, said: str, confirm: bool) -> str:
        """A reply's `text` with the shift announced at it (`said`; `confirm` when the message
        asked to confirm): after the reply, by default."""
        return f"{text} {said}" if said else text

    def _kept_patterns(self) -> Sequence[re.Pattern[str]]:
        """What typos never touch in a message, as patterns (held out first)."""
        return ()

    def _kept_values(self) -> Sequence[str]:
        """What typos never touch in a message, as values (held out after the patterns)."""
        return ()

    # -------------------------------------------------------------- shared
    def _pick(self, options: tuple[str, ...]) -> str:
        u = self._picks[self._n % len(self._picks)]
        self._n += 1
        return options[int(u * len(options))]

    def _reveal(self, detail_id: str) -> None:
        """The user has now stated `detail_id`."""
        if detail_id not in self._revealed:
            self._revealed.append(detail_id)

    def reply(self, message: str, turn: int) -> UserTurn:
        if not message.strip():
            answer: str | UserTurn = EMPTY
            confirm = False
        else:
            r = self._read(message)
            confirm = r.confirm and not r.asked
            if r.salad:
                answer = KEYWORDS
            elif not r.placed:
                answer = REPHRASE
            else:
                answer = self._respond(r, message)
                if isinstance(answer, UserTurn):
                    return answer
        if self._shift is not None and (turn >= self._shift_turn or confirm):
            answer = self._with_shift(answer, self._fire_shift(turn), confirm)
        return UserTurn(answer)

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        said = self._fire_shift(turn) if self._shift is not None else ""
        # On seeing the world change the user may change their mind; the change is judged
        # against the new goal.
        verdict = self._judge()
        if not said:
            return verdict
        return UserTurn(said if verdict is None else f"{said} {verdict.text}", verdict.end if verdict else None)

    def known_constraints(self) -> list[str]:
        return self._revealed

    def perturb_text(self, text: str, rng: Any) -> tuple[str, list[str]]:
        """Typos in a message that carries something the agent needs, never inside a value it
        must copy; a stock reply comes back as it is."""
        if text in self.STOCK:
            return text, []
        return perturb_keeping(text, rng, self._kept_patterns(), self._kept_values())

    # -------------------------------------------------------------- goal shift
    def _plan_shift(self, shift: Any, rng: Any, fire: Callable[[NoiseEvent], None]) -> bool:
        """Plan `shift`, to be announced from turn 2, 3 or 4 on (one draw of `rng`)."""
        self._shift = shift
        self._shift_turn = 2 + int(rng.random() * 3)
        self._shift_fire = fire
        return True

    def _take_shift(self) -> tuple[Any, Callable[[NoiseEvent], None]]:
        """The planned shift and its log hook, now no longer planned."""
        shift, fire = self._shift, self._shift_fire
        assert shift is not None and fire is not None
        self._shift = None
        return shift, fire

    def shift_pending(self) -> bool:
        """Whether a planned goal shift is still to be announced (the oracle asks before its first
        write when one is, as a careful assistant checks in before committing)."""
        return self._shift is not None
