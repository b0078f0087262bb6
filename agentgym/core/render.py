"""Rendering of chat messages into observation text, and the caps that keep it bounded."""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "call_text",
    "MESSAGE_MAX_CHARS",
    "OBS_MAX_CHARS",
    "cap",
    "to_json",
    "render_messages",
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


#: One encoder for every tool result: json.dumps with options builds a new one per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def to_json(value: Any) -> str:
    """Serialise a tool result for the agent: stable key order as built, any Unicode kept."""
    return _ENCODE(value)


def error_text(code: str, message: str) -> str:
    """The text of an error the env reports to the agent."""
    return f"[error {code}] {message}"


def render_messages(messages: list[dict[str, Any]]) -> str:
    """Render chat messages as observation text, one message per line block."""
    parts = []
    for m in messages:
        role = m["role"]
        if role == "tool":
            parts.append(f"[tool {m.get('name', '')}] {m['content']}")
        else:
            parts.append(_PREFIX.get(role, f"[{role}] ") + m["content"])
    return cap("\n".join(parts), OBS_MAX_CHARS)


def call_text(name: str, /, **arguments: Any) -> str:
    """A tool call as the JSON action string every agentgym env accepts."""
    return _ENCODE({"name": name, "arguments": arguments})
