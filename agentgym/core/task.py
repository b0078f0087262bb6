"""The parts an agent environment is assembled from: task, simulated user, score.

`AgentEnv` (in `env.py`) runs the episode; a family supplies a task generator, a toolkit, a user
and a scorer (inject the parts, do not subclass for variation).
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np

__all__ = [
    "DIFFICULTIES",
    "SPLITS",
    "Task",
    "Score",
    "UserTurn",
    "hold_sign_off",
    "told",
    "WorldEvent",
    "SimulatedUser",
    "TaskGenerator",
    "NoiseEvent",
    "Scorer",
]

DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
SPLITS: tuple[str, ...] = ("train", "test")

Outcome = Literal["accepted", "gave_up", "committed"]


@dataclass
class Task:
    """One generated task: public card, hidden goal and gold, and the mutable world.

    Only `public()` may reach the agent before the episode ends.
    """

    family: str
    domain: str
    difficulty: str
    split: str
    seed: int
    task_id: str
    brief: str
    world: Any
    goal: Any
    gold: Any
    max_turns: int = 30
    #: Simulated milliseconds the user will wait in all (only the latency noise charges time).
    time_budget_ms: float = 120_000.0
    extra: dict[str, Any] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        """What the agent may know about the task (never the goal or gold)."""
        card = {
            "family": self.family,
            "domain": self.domain,
            "difficulty": self.difficulty,
            "split": self.split,
            "id": self.task_id,
        }
        # A family's harder tier (an explicit hard) says so; other tasks' cards are as they were.
        if "tier" in self.extra:
            card["tier"] = self.extra["tier"]
        return card


@dataclass(frozen=True, slots=True)
class Score:
    """A task's score on the final world state."""

    score: float
    success: bool
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UserTurn:
    """What the simulated user says, and whether that ends the dialog."""

    text: str
    end: Outcome | None = None
    #: The opening of `text` that is news to the assistant (a change of mind), said at once even
    #: where the rest, a sign-off, waits for the assistant's word (`hold_sign_off`).
    now: str = ""


def hold_sign_off(said: UserTurn | None) -> tuple[UserTurn | None, UserTurn | None]:
    """A user's reaction to a write, split into what it says now and the sign-off it holds back:
    a user hears that its request is done from the assistant, not from a tool result, so an
    acceptance waits for the assistant's next message (`told`). What the user says that is news
    to the assistant (`UserTurn.now`: a change of mind on seeing the write) is said at once: held,
    it would let the assistant's next write go against a goal it never heard."""
    if said is not None and said.end == "accepted":
        if said.now:
            return UserTurn(said.now), UserTurn(said.text[len(said.now):].strip(), said.end)
        return None, said
    return said, None


def told(message: str) -> bool:
    """Whether an assistant message tells the user something (so a held sign-off is said): any
    message but an empty one."""
    return bool(message.strip())


#: A message that ends by offering more ("Want me to roll search back too?", "Shall I also send
#: you a copy?", "Is there anything else I can do?"): its last question opens by asking leave to
#: do something ("What currency should I use?" and "May I ask ...?" ask for a word instead).
_OFFERS_MORE = re.compile(r"(?:^|[.!?:]\s+|\n)[\s*_-]*(?:(?:and|so|also|btw|fyi|oh),?\s+)?"
                          r"(?:want me to|shall i|should i|would you like me to|do you want me to|"
                          r"(?:can|may|could) i (?!ask\b)|is there anything else (?:i|we) can)"
                          r"(?:[^?.!]|(?<=\d)\.(?=\d))*\?"  # a version's dots end no sentence
                          r"(?:\s*\(?(?:yes or no|yes/no|y/n)\)?\??)?[\s*_)]*$", re.I)
#: What a user whose request is done says first to such an offer.
NO_THANKS = "No, thanks."


def signed_off(held: UserTurn, message: str) -> UserTurn:
    """The held sign-off as the reply to `message`: where the message ends by offering more, the
    offer is declined in words before it (the request is done; a person answers the question)."""
    if "?" in message and _OFFERS_MORE.search(message):
        return UserTurn(f"{NO_THANKS} {held.text}".strip(), held.end, held.now)
    return held


@dataclass(frozen=True, slots=True)
class WorldEvent:
    """A change a write tool made to the world, which the user may react to."""

    kind: str
    data: dict[str, Any]


class SimulatedUser(abc.ABC):
    """A deterministic, rule-based user.

    It draws only from the generator it is given (the episode's ``user`` stream, an
    `agentgym.core.seeding.Rng`, which offers the scalar `numpy.random.Generator` methods).
    """

    @abc.abstractmethod
    def opening(self) -> str:
        """The user's first message."""

    @abc.abstractmethod
    def reply(self, message: str, turn: int) -> UserTurn:
        """Answer an assistant message sent at `turn` (1-based)."""

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        """React to changes the agent's tool calls made to the world; None to stay silent."""
        return None

    def on_commit(self, turn: int) -> UserTurn | None:
        """A terminal tool committed the task at `turn`. None ends the episode (the default);
        a session of several tasks returns the user's next request and goes on."""
        return None

    def known_constraints(self) -> list[str]:
        """Ids of the goal constraints the user has stated so far, in the order stated."""
        return []

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        """Ids of stated constraints that a tool call's arguments contradict (goal consistency).

        Asked only for calls with arguments: a call without any states nothing to contradict.
        """
        return []

    def proposed_call(self, message: str) -> tuple[str, dict[str, Any]] | None:
        """The call an assistant message proposes, as this user reads it ("How about Harbor
        Grill?" stands for booking it at the wanted time), or None when the user reads no
        proposal in it (the default: a user that judges none).

        It changes nothing: goal consistency judges the proposal with it before `reply` reads the
        same message, so what counts as a proposal is exactly what the user hears as one.
        """
        return None

    # -- noise support: families implement what applies to them; None means "not applicable".
    def blur(self, rng: np.random.Generator) -> NoiseEvent | None:
        """Ambiguity: make the opening omit or blur one needed detail, which the user gives
        precisely when asked. Called before `opening()`. Returns what was blurred, or None."""
        return None

    def plan_goal_shift(self, rng: np.random.Generator, fire: Callable[[NoiseEvent], None]) -> bool:
        """Goal shift: schedule a change of one constraint mid-dialog; the task's gold must
        follow the new goal. Call `fire(event)` at the step the user announces it. Returns
        False when this task offers no shift."""
        return False

    def perturb_text(self, text: str, rng: np.random.Generator) -> tuple[str, list[str]]:
        """Typos: human-like character noise and paraphrase in one user message, keeping it
        understandable. Returns the new text and what changed (for the log). The default
        works for any family; a family may protect its own vocabulary."""
        from agentgym.core.typos import perturb

        return perturb(text, rng)


@dataclass(frozen=True, slots=True)
class NoiseEvent:
    """What a family-side injection did: the constraint or slot it touched and a description.

    `recoverable` is False when no agent could still succeed after it (e.g. a shift announced
    on the last turn); metrics leave such faults out of recovery statistics.
    """

    target: str
    detail: Any
    recoverable: bool = True


#: ``generate(seed, options) -> Task``; options hold ``difficulty``, ``domain`` and ``split``.
TaskGenerator = Callable[[int, dict[str, Any]], Task]
#: ``score(task, toolkit) -> Score``, computed on the final world state.
Scorer = Callable[[Task, Any], Score]
