"""Rendering of chat messages into observation text, and the caps that keep it bounded."""

from __future__ import annotations

import json
from typing import Any

from agentgym.core._fast import tree_encoder

__all__ = [
    "call_text",
    "MESSAGE_MAX_CHARS",
    "OBS_MAX_CHARS",
    "cap",
    "to_json",
    "render_messages",
    "answer_messages",
    "error_text",
]

#: One message (a tool result, a user reply) is cut past this many characters, with a marker.
MESSAGE_MAX_CHARS = 16_384
#: The observation space's bound; a rendered observation never exceeds it.
OBS_MAX_CHARS = 262_144

_PREFIX = {"system": "[system] ", "user": "[user] ", "assistant": "[assistant] "}


def cap(text: str, limit: int = MESSAGE_MAX_CHARS) -> str:
    """Cut `text` to at most `limit` characters, ending with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    marker = f" ...[truncated {len(text) - limit} chars]"
    return text[: max(0, limit - len(marker))] + marker


#: Tool results and calls are sent with any Unicode kept, and never hold NaN or infinities.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_encode = tree_encoder(_ENCODER)


def to_json(value: Any) -> str:
    """Serialise a tool result for the agent: stable key order as built, any Unicode kept."""
    return _encode(value)


def error_text(code: str, message: str) -> str:
    """The text of an error the env reports to the agent."""
    return f"[error {code}] {message}"


def render_messages(messages: list[dict[str, Any]]) -> str:
    """Render chat messages as observation text, one message per line block."""
    text = _line(messages[0]) if len(messages) == 1 else "\n".join([_line(m) for m in messages])
    return text if len(text) <= OBS_MAX_CHARS else cap(text, OBS_MAX_CHARS)


def answer_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the env answered in a step: its ``info["messages"]`` without the assistant's turn
    that opens them (what the observation renders). A reset's messages come back whole."""
    if messages and messages[0].get("role") == "assistant":
        return messages[1:]
    return messages


def _line(m: dict[str, Any]) -> str:
    role = m["role"]
    if role == "tool":
        return f"[tool {m.get('name', '')}] {m['content']}"
    prefix = _PREFIX.get(role)
    return (f"[{role}] " if prefix is None else prefix) + m["content"]


def call_text(name: str, /, **arguments: Any) -> str:
    """A tool call as the JSON action string every agentgym env accepts."""
    return to_json({"name": name, "arguments": arguments})
