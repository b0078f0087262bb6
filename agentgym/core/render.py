"""Rendering of chat messages into observation text, and the caps that keep it bounded."""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring
from typing import Any

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


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
#: The C encoder behind `_ENCODER`, made once: `JSONEncoder.encode` builds a new one on every
#: call (a fixed ~2 us, most of the cost of a small result). No circular check (tool results
#: and calls are trees); the bytes are those of `_ENCODER.encode`.
_C_ENCODE = (
    c_make_encoder(None, _ENCODER.default, encode_basestring, None, ": ", ", ", False, False, False)
    if c_make_encoder is not None
    else None
)


def to_json(value: Any) -> str:
    """Serialise a tool result for the agent: stable key order as built, any Unicode kept."""
    if _C_ENCODE is None:  # pragma: no cover - CPython always has the C accelerator
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def error_text(code: str, message: str) -> str:
    """The text of an error the env reports to the agent."""
    return f"[error {code}] {message}"


def render_messages(messages: list[dict[str, Any]]) -> str:
    """Render chat messages as observation text, one message per line block."""
    parts = [_line(m) for m in messages]
    text = parts[0] if len(parts) == 1 else "\n".join(parts)
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
    return _PREFIX.get(role, f"[{role}] ") + m["content"]


def call_text(name: str, /, **arguments: Any) -> str:
    """A tool call as the JSON action string every agentgym env accepts."""
    return to_json({"name": name, "arguments": arguments})
