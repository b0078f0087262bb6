"""The candidate builder's contract: what it may read, its config, and the base class.

A builder reads only `public_view` of each info (`PUBLIC_KEYS`) and the agent's own actions, so
two tasks that differ only in their hidden goals get the same lists for the same transcript.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, fields
from typing import Any, Mapping

from agentgym.agents.transcript import decode_json
from agentgym.core.render import answer_messages

__all__ = ["CandidateBuilder", "CandidateConfig", "PLAIN_REPLIES", "PUBLIC_KEYS", "decode_json", "public_view"]


#: The only info keys a builder may read. `episode_summary` (the gold), `noise` (where faults were
#: injected) and `calls` (checked against the user's goal) never reach it. `segment` and
#: `segment_switch` are a cross-task session's public sub-task boundaries.
PUBLIC_KEYS = ("messages", "tools", "task", "turn", "max_turns", "segment", "segment_switch")


@dataclass(frozen=True)
class CandidateConfig:
    """How candidate lists are built; stored with a trained policy, so it plays as it trained."""

    max_entities: int = 8
    """Entities (places, records) seen in tool results that get actions, most recent first."""
    max_candidates: int = 64
    """The longest list handed out; later candidates are cut."""
    proposals: bool = True
    """Dialog: offer "How about X?" messages for seen entities, besides tool calls."""
    values_per_argument: int = 4
    """Tool chains (and generic): values tried per required argument (most relevant first)."""
    calls_per_tool: int = 8
    """Tool chains (and generic): argument combinations offered per tool."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("int", int) and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"CandidateConfig.{f.name} must be a positive int, got {value!r}")

    @classmethod
    def of(cls, value: "CandidateConfig | Mapping[str, Any] | None") -> "CandidateConfig":
        """A config from itself, a mapping of its fields (unknown keys are an error) or None."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        known = {f.name for f in fields(cls)}
        unknown = set(value) - known
        if unknown:
            raise ValueError(f"unknown CandidateConfig fields {sorted(unknown)}; known: {sorted(known)}")
        return cls(**dict(value))


def public_view(info: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an info a candidate builder may read (see `PUBLIC_KEYS`)."""
    return {k: info[k] for k in PUBLIC_KEYS if k in info}


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [x for x in items if not (x in seen or seen.add(x))]


class CandidateBuilder(abc.ABC):
    """Builds candidate actions from the public transcript of one episode at a time.

    Call `reset` with what `env.reset` returned, then `step` with each action taken and what
    `env.step` returned; `candidates()` is the list for the next action.
    """

    #: The task family this builder is made for (``"*"``: any).
    family: str = "*"

    def __init__(self, config: CandidateConfig | Mapping[str, Any] | None = None) -> None:
        self.config = CandidateConfig.of(config)

    def reset(self, obs: str, info: Mapping[str, Any]) -> None:
        """Start an episode from the reset's public info."""
        view = public_view(info)
        self._start(view)
        self._observe(view.get("messages", ()))

    def step(self, action: Any, obs: str, info: Mapping[str, Any]) -> None:
        """Fold in the action just taken and the public part of what the env returned."""
        view = public_view(info)
        self._acted(action)
        # A step's messages open with the action itself: the builder folds in only the answer.
        self._step_view({**view, "messages": answer_messages(view.get("messages", []))})

    def _step_view(self, view: dict[str, Any]) -> None:
        """Fold in a step's public view (default: its messages)."""
        self._observe(view.get("messages", ()))

    def candidates(self) -> list[str]:
        """The candidate actions for the next step: distinct, in a fixed order, never empty."""
        out = _dedupe(self._build())
        return out[: self.config.max_candidates] or [PLAIN_REPLIES[0]]

    @abc.abstractmethod
    def _start(self, view: dict[str, Any]) -> None:
        """Clear the episode state; `view` is the reset's public info."""

    @abc.abstractmethod
    def _observe(self, messages: Any) -> None:
        """Fold in new chat messages (user, tool, system)."""

    def _acted(self, action: Any) -> None:
        """Fold in the agent's own action (default: nothing)."""

    @abc.abstractmethod
    def _build(self) -> list[str]:
        """The raw candidate list (duplicates allowed, cut to size by `candidates`)."""


#: Plain replies every builder offers: moving the dialog on without a tool.
PLAIN_REPLIES = (
    "Okay, let me look into that.",
    "Is there anything else I should know?",
    "Done. Is there anything else you need?",
)
