"""Reading and writing agent turns: the tool calls of an action, the results of a step, and one
step's view made of several.

An agent built in layers (the heuristic's retries, the defect agents of `agentgym.testing`) sends
the env more turns than its inner policy made, or changes the calls of a turn, and then shows the
inner policy one step as if its own action had been answered at once. These helpers keep that
bookkeeping in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgym.agents.transcript import ToolResult, transient
from agentgym.core.protocol import parse_action
from agentgym.core.render import to_json

__all__ = ["Call", "calls_of", "action_of", "results_of", "is_transient", "decoded", "StepView"]



@dataclass(frozen=True)
class Call:
    """One tool call of an action: its name and arguments (None when they did not parse)."""

    name: str
    arguments: dict[str, Any] | None

    def wire(self, call_id: str | None = None) -> dict[str, Any]:
        """The call in the OpenAI ``tool_calls`` form."""
        out: dict[str, Any] = {"type": "function", "function": {"name": self.name, "arguments": self.arguments or {}}}
        if call_id is not None:
            out["id"] = call_id
        return out


def calls_of(action: Any) -> list[Call]:
    """The tool calls an action makes, in order (empty for a message to the user)."""
    parsed = parse_action(action)
    if parsed.error is not None:
        return []
    return [Call(c.name, c.arguments) for c in parsed.calls]


def action_of(calls: list[Call], ids: list[str] | None = None) -> str:
    """One action making `calls` (a single call without an id as ``{"name", "arguments"}``)."""
    if len(calls) == 1 and ids is None:
        return to_json({"name": calls[0].name, "arguments": calls[0].arguments or {}})
    return to_json({"tool_calls": [c.wire(ids[i] if ids else None) for i, c in enumerate(calls)]})


def results_of(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool messages of a step, in the order of the calls that made them."""
    return [m for m in info.get("messages", ()) if m.get("role") == "tool"]


def is_transient(message: dict[str, Any]) -> bool:
    """Whether a tool message reports a failure that a retry may clear (not a refusal)."""
    return transient(str(message.get("content", "")))


def decoded(message: dict[str, Any]) -> Any:
    """A tool message's content as JSON, or its text when it is not JSON (an error)."""
    result = ToolResult.of(message)
    return result.text if result.data is None else result.data


@dataclass
class StepView:
    """One step as an inner policy should see it, assembled from the env steps it took.

    `slots` holds, per call of the inner policy's action, the tool message and call record that
    answer it (None until they came); every other message (the user's words) and the list-valued
    extras of each step are kept in order; the scalar keys come from the latest step. The env
    steps' own assistant turns are replaced by one: the inner policy's calls, with the ids of the
    tool messages that answer them, so the assembled messages are a conversation slice as well.
    """

    calls: list[Call]
    slots: list[tuple[dict[str, Any], dict[str, Any] | None] | None] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    lists: dict[str, list[Any]] = field(default_factory=dict)
    latest: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.slots:
            self.slots = [None] * len(self.calls)

    def absorb(self, info: dict[str, Any], filled: list[int]) -> None:
        """Take in an env step that answered the slots `filled` (in the order they were sent)."""
        tool_msgs = results_of(info)
        records = {r.get("id"): r for r in info.get("calls", ())}
        for slot, msg in zip(filled, tool_msgs):
            self.slots[slot] = (msg, records.get(msg.get("tool_call_id")))
        self.others += [m for m in info.get("messages", ()) if m.get("role") not in ("tool", "assistant")]
        for key in ("errors", "segment_switch"):
            if isinstance(info.get(key), list):
                self.lists.setdefault(key, []).extend(info[key])
        self.latest = info

    def pending(self) -> list[int]:
        return [i for i, s in enumerate(self.slots) if s is None]

    def info(self) -> dict[str, Any]:
        """The assembled step: the inner policy's turn, the slots' results in call order, then the
        other messages."""
        out = dict(self.latest)
        answered = [(self.calls[i], s) for i, s in enumerate(self.slots) if s is not None]
        turn = {"role": "assistant", "content": "", "tool_calls": [
            {"id": msg.get("tool_call_id"), "type": "function",
             "function": {"name": call.name,
                          "arguments": to_json(call.arguments) if call.arguments is not None else "null"}}
            for call, (msg, _) in answered]}
        out["messages"] = [turn] + [msg for _, (msg, _) in answered] + self.others
        out["calls"] = [rec for _, (_, rec) in answered if rec is not None]
        out.update(self.lists)
        return out
