"""`ActionConstraint`: a policy on which calls an agent may make (not a fault: refusals count)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from agentgym.core.env import AgentEnv
from agentgym.core.hooks import Intercept
from agentgym.core.protocol import ErrorCode, ToolCall
from agentgym.core.render import error_text
from agentgym.noise._common import NoiseWrapper

__all__ = ["ActionConstraint"]

_BLOCKED = ErrorCode.BLOCKED.value


def _strings(label: str, values: Any) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise ValueError(f"{label} must be a list of strings, got {values!r}")
    out = list(values)
    bad = [v for v in out if not isinstance(v, str) or not v]
    if bad:
        raise ValueError(f"{label} must hold non-empty strings, got {bad!r}")
    return out


def _compiled(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"ActionConstraint forbid pattern {pattern!r} is not a valid regular expression: {exc}") from exc


class ActionConstraint(NoiseWrapper):
    """Blocks tool calls outside an allowed set or matching a forbidden pattern.

    A blocked call never runs: the agent reads ``[error BLOCKED] ...`` saying why, and the call
    record has error ``BLOCKED`` with ``injected`` False, so it counts against the agent (it is
    the agent's to respect the policy, unlike an injected fault). Each refusal is logged (kind
    ``action_constraint``) with ``{"reason", "pattern", "injected": False, "recoverable": True}``.
    The check is the env's policy point (`agentgym.core.hooks`): it runs before any noise layer
    acts on the call, wherever the constraint sits in the stack (a refused call is not sent, so
    it neither fails nor takes time).

    Args:
        env: an agentgym env.
        allowed_tools: the only tools the agent may call (None: every tool).
        forbid: regular expressions; a call is refused when one matches (``re.search``) its
            name followed by its arguments as sorted-key JSON, e.g. ``cancel_booking`` or
            ``"day": "sunday"``.
    """

    def __init__(self, env: gym.Env, allowed_tools: Sequence[str] | None = None, forbid: Sequence[str] = ()) -> None:
        super().__init__(env, **self.check(allowed_tools=allowed_tools, forbid=forbid))

    @classmethod
    def check(cls, allowed_tools: Any = None, forbid: Any = ()) -> dict[str, Any]:
        allowed = None if allowed_tools is None else _strings("ActionConstraint allowed_tools", allowed_tools)
        patterns = _strings("ActionConstraint forbid", forbid)
        for p in patterns:
            _compiled(p)
        return {"allowed_tools": allowed, "forbid": patterns}

    def _configure(self, allowed_tools: list[str] | None, forbid: list[str]) -> None:
        self._allowed = None if allowed_tools is None else frozenset(allowed_tools)
        self._allowed_text = "" if allowed_tools is None else ", ".join(sorted(self._allowed)) or "none"
        self._forbid = tuple(_compiled(p) for p in forbid)

    def policy(self, env: AgentEnv, call: ToolCall, turn: int) -> Intercept | None:
        if self._allowed is not None and call.name not in self._allowed:
            return self._refuse(env, call, "not_allowed", None,
                                f"{call.name} is not allowed in this session; allowed tools: {self._allowed_text}")
        if self._forbid:
            text = call.name + json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)
            for p in self._forbid:
                if p.search(text) is not None:
                    return self._refuse(env, call, "forbidden", p.pattern,
                                        f"this {call.name} call is forbidden by policy (matches {p.pattern!r})")
        return None

    @staticmethod
    def _refuse(env: AgentEnv, call: ToolCall, reason: str, pattern: str | None, message: str) -> Intercept:
        env.log_noise("action_constraint", call.name,
                      {"reason": reason, "pattern": pattern, "injected": False, "recoverable": True})
        return Intercept(error_text(_BLOCKED, message), error=_BLOCKED, injected=False)
