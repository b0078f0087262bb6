"""What travels between the env server and `RemoteEnv`: JSON bytes and text-space descriptions.

No FastAPI or pydantic here: the client imports this module too.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring_ascii
from typing import Any

from gymnasium import spaces

from agentgym.core.spaces import UnicodeText

__all__ = ["json_bytes", "json_text", "space_spec", "space_from_spec", "step_payload", "reset_payload"]


def _plain(value: Any) -> Any:
    # numpy scalars and arrays that slipped into an info dict become plain Python values; anything
    # else is not JSON-able, which is a bug of the env, never something to stringify quietly.
    import numpy as np

    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-able")


def json_bytes(obj: Any) -> bytes:
    """Compact JSON as bytes. ASCII escapes keep any string exact, lone surrogates included."""
    return json_text(obj).encode("ascii")


def json_text(obj: Any) -> str:
    """`json_bytes` as ASCII text."""
    if c_make_encoder is None:  # a Python without json's C accelerator
        return json.dumps(obj, separators=(",", ":"), default=_plain)
    # The C encoder that json.dumps would use, with the same settings (a fresh circular-reference
    # memo each call), made here: with these arguments dumps builds a JSONEncoder per call first,
    # which costs as much again as encoding a step's answer.
    return "".join(c_make_encoder({}, _plain, encode_basestring_ascii, None, ":", ",", False, False, True)(obj, 0))


def reset_payload(obs: str, info: dict[str, Any]) -> dict[str, Any]:
    """The JSON object of a reset: ``{"obs", "info"}``."""
    return {"obs": obs, "info": info}


def step_payload(obs: str, reward: Any, terminated: Any, truncated: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The JSON object of a step, with a plain float and plain bools."""
    return {"obs": obs, "reward": float(reward), "terminated": bool(terminated), "truncated": bool(truncated),
            "info": info}


def space_spec(space: spaces.Space) -> dict[str, Any]:
    """A JSON description of a text space (the only kind agentgym envs have)."""
    if isinstance(space, UnicodeText):
        return {"type": "UnicodeText", "min_length": int(space.min_length), "max_length": int(space.max_length)}
    if isinstance(space, spaces.Text):
        return {"type": "Text", "min_length": int(space.min_length), "max_length": int(space.max_length),
                "charset": "".join(sorted(space.character_set))}
    return {"type": type(space).__name__}


def space_from_spec(spec: dict[str, Any]) -> spaces.Space:
    """The space a `space_spec` describes.

    Raises:
        ValueError: the server described a space this client cannot rebuild.
    """
    kind = spec.get("type")
    if kind == "UnicodeText":
        return UnicodeText(int(spec["max_length"]), min_length=int(spec["min_length"]))
    if kind == "Text":
        return spaces.Text(int(spec["max_length"]), min_length=int(spec["min_length"]), charset=spec["charset"])
    raise ValueError(f"the server's env has a {kind} space; RemoteEnv handles text spaces only")
