"""What a careful agent does about faults, as layers around a policy that knows none of it.

`RetryTransient` sends a call again when the service failed for a passing reason (an error, a
timeout, a rate limit), and `RecheckIds` reads a result again when an id it returned does not
resolve when used. Each shows the policy inside only what it would have seen had the fault not
happened, so the policy's own logic stays the same. The heuristic agent is its strategy inside
both; the defect agents of `agentgym.testing.defects` are the heuristic with one of them removed
or changed.

A layer has the policy interface: ``reset(obs, info)`` and ``act(obs, info) -> str``.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from agentgym.agents.turns import Call, StepView, action_of, calls_of, is_transient, results_of

__all__ = ["RetryTransient", "RecheckIds", "HOLD"]

#: What an agent says while it waits before a retry: a message the user has nothing to answer to.
HOLD = "One moment, please."
_QUOTED = re.compile(r"'([^']{1,64})'")


class RetryTransient:
    """Retries every call that failed transiently, `delay` turns later, up to `retries` times.

    While it waits it tells the user to hold on (`HOLD`); the user's replies meanwhile reach the
    policy with the retried results, as one step.

    Args:
        inner: the policy.
        retries: attempts after the first, per call (0: never retry).
        delay: turns to wait before each retry (0: at once).
    """

    def __init__(self, inner: Any, retries: int = 3, delay: int = 0) -> None:
        self.inner, self.retries, self.delay = inner, retries, delay
        self._view: StepView | None = None
        self._sent: list[int] = []
        self._due: list[int] = []
        self._tries: list[int] = []
        self._wait = 0

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._view, self._sent, self._due, self._tries, self._wait = None, [], [], [], 0
        self.inner.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        view = self._view
        if view is not None:
            answered, self._sent = self._sent, []
            view.absorb(info, answered)
            if any(view.slots[i] is None for i in answered):
                self._due = []  # the turn was refused whole (no result per call): nothing to retry
            for i in answered:
                slot = view.slots[i]
                if slot is not None and is_transient(slot[0]) and self._tries[i] < self.retries:
                    view.slots[i] = None
                    self._due.append(i)
                    self._wait = max(self._wait, self.delay)
            if self._due:
                if self._wait:
                    self._wait -= 1
                    return HOLD
                self._sent, self._due = self._due, []
                for i in self._sent:
                    self._tries[i] += 1
                return action_of([view.calls[i] for i in self._sent])
            info = view.info()
            self._view = None
        action = self.inner.act(obs, info)
        calls = calls_of(action)
        if calls and self.retries:
            self._view = StepView(calls)
            self._sent = list(range(len(calls)))
            self._tries = [0] * len(calls)
        return action


class RecheckIds:
    """Reads a result again when an id it just returned does not resolve when used.

    When a call fails with an error that quotes one of its argument values, and that value came
    from the result the policy was shown last, the layer sends that read again. If the fresh
    result differs (the first one was corrupted), the policy is rewound: made anew and shown its
    steps again with the fresh result in place of the old, and its next move is sent; else the
    failure reaches it as it was. It never rewinds past a write or past the user's words, so a
    rewound policy never redoes a commitment or forgets what it was told.

    Args:
        make: builds a fresh policy (the rewind replays every step into a new one).
    """

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self.inner: Any = None
        self._start: tuple[str, dict[str, Any]] | None = None
        self._history: list[tuple[str, dict[str, Any]]] = []
        self._last: list[Call] = []
        self._checked: set[int] = set()
        self._held: tuple[str, dict[str, Any], int, int] | None = None

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self.inner = self._make()
        self.inner.reset(obs, info)
        self._start, self._history, self._last, self._checked, self._held = (obs, info), [], [], set(), None

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._held is not None:
            return self._after_recheck(obs, info)
        recheck = self._source_to_recheck(info)
        if recheck is not None:
            message_index, call = recheck
            self._held = (obs, info, len(self._history) - 1, message_index)
            self._checked.add(len(self._history) - 1)
            return action_of([call])
        return self._feed(obs, info)

    def _feed(self, obs: str, info: dict[str, Any]) -> str:
        self._history.append((obs, info))
        action = self.inner.act(obs, info)
        self._last = calls_of(action)
        return action

    def _source_to_recheck(self, info: dict[str, Any]) -> tuple[int, Call] | None:
        """(index of the tool message, the read that made it) when a failure quotes an id the last
        step's result returned; None otherwise."""
        if not self._history or len(self._history) - 1 in self._checked:
            return None
        # The failing step is dropped by a rewind: it must hold nothing the policy must see
        # (a write that took effect, the user's reaction to one).
        if any(r.get("kind") == "write" and r.get("error") is None for r in info.get("calls", ())) or any(
                m.get("role") == "user" and not str(m.get("content", "")).startswith("[error")
                for m in info.get("messages", ())):
            return None
        _, last = self._history[-1]
        sources = results_of(last)
        records = {r.get("id"): r for r in last.get("calls", ())}
        for call, msg in zip(self._last, results_of(info)):
            text = str(msg.get("content", ""))
            if not text.startswith("[error TOOL_ERROR]") or is_transient(msg):
                continue
            values = {v for v in _QUOTED.findall(text) if _among(call.arguments, v)}
            for j, source in enumerate(sources):
                record = records.get(source.get("tool_call_id"))
                content = str(source.get("content", ""))
                if record is None or record.get("kind") != "read" or content.startswith("[error"):
                    continue
                if any(f'"{v}"' in content for v in values):
                    return j, Call(record["name"], record.get("arguments") or {})
        return None

    def _after_recheck(self, obs: str, info: dict[str, Any]) -> str:
        held_obs, held_info, step, message_index = self._held  # type: ignore[misc]
        self._held = None
        fresh = results_of(info)
        old = results_of(self._history[step][1])[message_index]
        if not fresh or fresh[0].get("content", "").startswith("[error") or fresh[0]["content"] == old["content"]:
            return self._feed(held_obs, held_info)
        return self._rewind(step, message_index, fresh[0]["content"])

    def _rewind(self, step: int, message_index: int, content: str) -> str:
        """Make the policy anew and replay its steps, step `step` with the fresh result."""
        assert self._start is not None
        self.inner = self._make()
        self.inner.reset(*self._start)
        for obs, info in self._history[:step]:
            self.inner.act(obs, info)
        obs, info = self._history[step]
        messages = list(info["messages"])
        tools = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
        messages[tools[message_index]] = {**messages[tools[message_index]], "content": content}
        corrected = {**info, "messages": messages}
        self._history = self._history[:step]
        return self._feed(obs, corrected)


def _among(value: Any, text: str) -> bool:
    """Whether `text` is one of the string leaves of a call's arguments."""
    if isinstance(value, dict):
        return any(_among(v, text) for v in value.values())
    if isinstance(value, list):
        return any(_among(v, text) for v in value)
    return isinstance(value, str) and value == text
