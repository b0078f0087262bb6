"""A turn as plain JSON: what an episode records and steps, and what a remote client sends.

`agentgym.core.protocol.parse_action` reads any string or dict, but a record is JSON, and so is
what travels to an env server. JSON cannot carry NaN, infinities, integers past a double, sets,
bytes or keys that are not strings; it would carry a tuple as a list (a valid turn, where the
tuple was an error); and a turn over the size cap would make the record as large as the turn.
So every turn is first made plain (`recorded_turn`), and what is stepped is read from that
(`stepped_turn`), in play and in every replay, so the two always agree:

- a string of at most MAX_ACTION_BYTES characters is itself (over the cap in UTF-8 bytes, it
  stays bounded: the env's refusal names its size, so it is kept to replay the same);
- an assistant message that JSON carries exactly is its plain copy (the protocol's own walk);
- an assistant message holding a value JSON cannot carry is ``{"role": None, "not_json": WHY}``:
  stepped as it is, it is a PARSE_ERROR turn (a dict without the assistant's role);
- a dict of another role is ``{"role": ROLE}``: all the env reads of it;
- a string longer than the cap, a message over it, or one nested too deep is recorded as a
  stand-in marker, ``{"role": STAND_IN_ROLE, "for": ...}`` (a string's with its length, SHA-256
  and first characters), and stepped as a turn just past the limit, which the env refuses with
  the same error code and message as the original (its refusal of a turn that long does not
  depend on what the turn says); a marker is bounded whatever the turn was.
"""

from __future__ import annotations

import hashlib
from typing import Any

from agentgym.core.protocol import MAX_ACTION_BYTES, MAX_JSON_DEPTH, ActionError, ErrorCode, read_message

__all__ = ["STAND_IN_ROLE", "OVER_CAP_TEXT", "OVER_CAP_MESSAGE", "TOO_DEEP_MESSAGE", "NOT_A_MESSAGE", "recorded_turn",
           "stepped_turn"]

#: The role of a stand-in marker (no model writes it: the env reads such a dict as a PARSE_ERROR).
STAND_IN_ROLE = "agentgym/stand-in"
#: Characters of an over-cap string kept in its marker.
_HEAD_CHARS = 200

#: Turns just past a limit, each refused by the env as any turn past it (TOO_LARGE, TOO_DEEP,
#: PARSE_ERROR): what a marker is stepped as, and what `RemoteEnv` sends for a turn JSON cannot carry.
OVER_CAP_TEXT = "x" * (MAX_ACTION_BYTES + 1)
OVER_CAP_MESSAGE = {"role": "assistant", "content": OVER_CAP_TEXT}
_NESTED: Any = []
for _ in range(MAX_JSON_DEPTH + 1):
    _NESTED = [_NESTED]
TOO_DEEP_MESSAGE = {"role": "assistant", "content": "", "tool_calls": _NESTED}
NOT_A_MESSAGE = {"role": None}
_STEPPED = {"text_over_cap": OVER_CAP_TEXT, "message_over_cap": OVER_CAP_MESSAGE, "message_too_deep": TOO_DEEP_MESSAGE}
#: A role the env names by its type only: the plain value of that type (a set or bytes: None).
_ROLE_OF_TYPE = {int: 0, float: 0.0, bool: False, list: [], dict: {}}


def recorded_turn(action: str | dict[str, Any]) -> str | dict[str, Any]:
    """`action` as plain JSON data, as an episode records it (see the module).

    Args:
        action: the agent's turn: a string or an assistant-message dict (a subclass of either too).

    Returns:
        A str, or a dict of JSON values that shares nothing with `action`.
    """
    if isinstance(action, str):
        if len(action) <= MAX_ACTION_BYTES:
            return action if type(action) is str else str(action)
        text = action if type(action) is str else str(action)
        return {"role": STAND_IN_ROLE, "for": "text_over_cap", "chars": len(text),
                "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
                "head": text[:_HEAD_CHARS]}
    role = action.get("role")
    if not (isinstance(role, str) and role == "assistant"):
        return {"role": _plain_role(role)}
    plain = read_message(action)
    if not isinstance(plain, ActionError):
        return plain
    if plain.code is ErrorCode.TOO_LARGE:
        return {"role": STAND_IN_ROLE, "for": "message_over_cap"}
    if plain.code is ErrorCode.TOO_DEEP:
        return {"role": STAND_IN_ROLE, "for": "message_too_deep"}
    return {"role": None, "not_json": plain.message}


def stepped_turn(recorded: Any) -> Any:
    """What to step for a recorded turn: the turn itself, or for a stand-in marker, the turn it stands for."""
    if type(recorded) is dict and recorded.get("role") == STAND_IN_ROLE:
        stand_in = _STEPPED.get(recorded.get("for"))  # type: ignore[arg-type]
        if stand_in is not None:
            return stand_in
    return recorded


def _plain_role(role: object) -> object:
    """A plain role the env names as it names `role` (the first 40 characters of a string)."""
    if isinstance(role, str):
        return str(role[:41])
    if role is None:
        return None
    return _ROLE_OF_TYPE.get(type(role))
