"""Noise on the simulated user: ambiguous requests, goal shifts and typos.

Ambiguity and goal shifts are the family's to make (only it knows which detail can be blurred
and which constraint can change while the task stays solvable): the wrappers decide *whether*,
from their own stream, and ask the user through `SimulatedUser.blur` and `plan_goal_shift`. A
family that offers neither leaves those wrappers inert. Typos act on the text the agent reads.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agentgym.core.env import AgentEnv
from agentgym.core.render import cap, render_messages
from agentgym.core.task import NoiseEvent, SimulatedUser
from agentgym.noise._common import NoiseWrapper, check_rate, event_detail

__all__ = ["Ambiguity", "GoalShift", "Typos", "ENV_ERROR_PREFIX"]

#: User-role messages that start so are the env's error reports (`render.error_text`), not the
#: user's words: typos never touch them.
ENV_ERROR_PREFIX = "[error "


class Ambiguity(NoiseWrapper):
    """With probability `rate` per episode, the user's opening blurs one needed detail.

    ("somewhere near the usual place", "at my usual time"): the right move is a clarifying
    question, which the user answers precisely. The family picks the detail
    (`SimulatedUser.blur`); the log gets its target constraint, the family's description and
    ``recoverable``.

    Args:
        env: an agentgym env.
        rate: the chance that an episode's opening is blurred, in [0, 1].
    """

    def __init__(self, env: gym.Env, rate: float) -> None:
        super().__init__(env, **self.check(rate=rate))

    @classmethod
    def check(cls, rate: Any) -> dict[str, Any]:
        return {"rate": check_rate("Ambiguity rate", rate)}

    def _configure(self, rate: float) -> None:
        self._rate = rate

    def on_reset(self, env: AgentEnv, user: SimulatedUser) -> None:
        rng = env.noise_rng("ambiguity", once=True)
        if rng.random() >= self._rate:
            return
        event = user.blur(rng)
        if event is not None:
            env.log_noise("ambiguity", event.target, event_detail(event.detail, event.recoverable),
                          hits={"constraint": event.target})


class GoalShift(NoiseWrapper):
    """With probability `rate` per episode, the user changes one constraint mid-dialog.

    ("actually, can we make it Thursday evening instead?"); the gold follows the new goal. The
    family schedules the shift (`SimulatedUser.plan_goal_shift`) and the log gets it at the step
    the user announces it, with ``recoverable`` False when too few turns are left to act on it.
    A shift planned for a turn the episode never reaches is not logged: it never happened.

    Args:
        env: an agentgym env.
        rate: the chance that an episode has a goal shift, in [0, 1].
    """

    def __init__(self, env: gym.Env, rate: float) -> None:
        super().__init__(env, **self.check(rate=rate))

    @classmethod
    def check(cls, rate: Any) -> dict[str, Any]:
        return {"rate": check_rate("GoalShift rate", rate)}

    def _configure(self, rate: float) -> None:
        self._rate = rate

    def on_reset(self, env: AgentEnv, user: SimulatedUser) -> None:
        rng = env.noise_rng("goal_shift", once=True)
        if rng.random() >= self._rate:
            return

        def fire(event: NoiseEvent) -> None:
            env.log_noise("goal_shift", event.target, event_detail(event.detail, event.recoverable),
                          hits={"constraint": event.target})

        user.plan_goal_shift(rng, fire)


class Typos(NoiseWrapper):
    """With probability `rate` per user message that carries information, the agent reads it with
    typos and paraphrase.

    Typos land only where they can matter: on a message the agent still has a turn to act on,
    never in a step that ends the episode (the user's closing words come after the outcome is
    decided), and only where the family's user says the message carries something the agent
    needs: its `SimulatedUser.perturb_text` makes the change (a few letters swapped, dropped,
    doubled or mistyped, a stock phrase said another way; numbers kept) and returns a stock reply
    with nothing to read ("Please go ahead.") unchanged, which is then not logged. The message
    stays readable to a person. Only what the agent reads changes: the
    returned observation and ``info["messages"]`` (new objects; the env's own transcript keeps
    the clean text). Each changed message is logged with ``{"message", "changes",
    "recoverable": True}``, in that step's ``info["noise"]`` and in the episode's log;
    ``message`` is its index among the messages the observation renders (a step's
    ``info["messages"]`` less the assistant's turn that opens them).

    Args:
        env: an agentgym env.
        rate: the chance that one user message is perturbed, in [0, 1].
    """

    def __init__(self, env: gym.Env, rate: float) -> None:
        super().__init__(env, **self.check(rate=rate))

    @classmethod
    def check(cls, rate: Any) -> dict[str, Any]:
        return {"rate": check_rate("Typos rate", rate)}

    def _configure(self, rate: float) -> None:
        self._rate = rate
        self._episode_events: list[dict[str, Any]] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        self._stream = None
        obs, info = self.env.reset(seed=seed, options=options)
        self._episode_events = []
        perturbed = self._perturb(info)
        return (obs if perturbed is None else perturbed), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        _, reward, terminated, truncated, info = result
        if terminated or truncated:
            if self._episode_events:
                # In place: the summary is the env's own, which it hands out again when asked.
                _merge_events(info["episode_summary"], self._episode_events)
            return result
        perturbed = self._perturb(info)
        return result if perturbed is None else (perturbed, reward, terminated, truncated, info)

    def _perturb(self, info: dict[str, Any]) -> str | None:
        """Perturb the user messages of a step's (or reset's) `info`; the observation they now
        render, or None when none changed (`info` is then untouched)."""
        messages = info["messages"]
        changed: list[dict[str, Any]] | None = None
        events: list[dict[str, Any]] = []
        base = self._base
        for i, m in enumerate(messages):
            if m["role"] != "user" or m["content"].startswith(ENV_ERROR_PREFIX):
                continue
            rng = self._stream or self._first_draw("typos")
            if rng.random() >= self._rate:
                continue
            text, changes = base.user.perturb_text(m["content"], rng)
            if text == m["content"]:  # e.g. two equal letters swapped: nothing the agent could see
                continue
            if changed is None:
                changed = list(messages)
            changed[i] = {**m, "content": cap(text)}
            events.append((i, changes))
        if changed is None:
            return None
        # The assistant's own turn opens a step's messages; the observation renders the rest.
        first = 1 if messages[0]["role"] == "assistant" else 0
        # The same fields as `AgentEnv.log_noise` gives; a typo hits no gold step or constraint.
        logged = [{"step": base.turn, "kind": "typos", "target": "user",
                   "detail": {"message": i - first, "changes": changes, "recoverable": True}, "hits": None,
                   "at_ms": base.elapsed_ms} for i, changes in events]
        self._episode_events.extend(logged)
        # The env built this info for this call alone, so it is ours to amend; its lists are
        # replaced, never mutated, as the env keeps references to their items.
        info["messages"] = changed
        info["noise"] = [*info["noise"], *logged]
        return render_messages(changed[first:])


def _merge_events(episode: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Merge the typos events into the episode summary's noise log, in step order (a step's
    typos come after the env's own events of that step: they act on its output)."""
    episode["noise"] = sorted([*episode["noise"], *events], key=lambda e: e["step"])  # stable: env's first per step
