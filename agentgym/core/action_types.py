"""What parsing an assistant turn gives, and the limits every turn is held to.

`agentgym.core.protocol.parse_action` turns any action into a `ParsedAction`: a message, the
`ToolCall`s it makes, or an `ActionError` with a stable `ErrorCode`. The limits below bound what
one turn may be, whatever form it takes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "HOW_TO_CALL",
    "MAX_ACTION_BYTES",
    "MAX_CALLS_PER_TURN",
    "MAX_CALL_ID_CHARS",
    "MAX_JSON_DEPTH",
    "ActionError",
    "ErrorCode",
    "ParsedAction",
    "ToolCall",
]

MAX_ACTION_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32
MAX_CALL_ID_CHARS = 64
#: More calls than this in one turn make the whole turn an error (none of them runs): each call
#: costs a validation, a tool run and a record, and no task needs more at once.
MAX_CALLS_PER_TURN = 32
#: How a brief tells the agent to call tools, in the forms `agentgym.core.protocol` parses (the
#: OpenAI shapes too, unsaid: a client that sends them knows them).
HOW_TO_CALL = ('To call a tool, reply with JSON {"name": "<tool>", "arguments": {...}} (or <tool_call> tags); '
               "several calls per turn are allowed, as a JSON list of such objects or one tag each. Anything else "
               "is a message to the user.")


class ErrorCode(str, enum.Enum):
    """Stable error codes; the parser produces PARSE_ERROR, TOO_LARGE, TOO_DEEP, INVALID_ARGS."""

    PARSE_ERROR = "PARSE_ERROR"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_ARGS = "INVALID_ARGS"
    TOO_LARGE = "TOO_LARGE"
    TOO_DEEP = "TOO_DEEP"
    TOOL_ERROR = "TOOL_ERROR"
    POLICY_VIOLATION = "POLICY_VIOLATION"
    BLOCKED = "BLOCKED"


@dataclass(frozen=True, slots=True)
class ActionError:
    """A problem with a turn or with one call: a stable code and a readable message."""

    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call; ``arguments`` is None exactly when ``error`` is set."""

    name: str
    arguments: dict | None
    id: str | None = None
    error: ActionError | None = None


@dataclass(frozen=True, slots=True)
class ParsedAction:
    """A parsed turn: message text, the calls it makes, or a turn-level error.

    ``content`` is the whole (stripped) turn when there are no calls, the text
    outside the call blocks otherwise; on a turn-level error it is the stripped
    turn, except for TOO_LARGE where it is empty (so huge inputs are not carried on).
    """

    content: str
    calls: tuple[ToolCall, ...] = ()
    error: ActionError | None = None

    @property
    def is_message(self) -> bool:
        """True for a plain message: no turn-level error and no calls."""
        return self.error is None and not self.calls
