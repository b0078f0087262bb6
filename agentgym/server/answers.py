"""The JSON of the server's reset and step answers: `answer_bytes`.

A reset's answer carries the env's tool schemas (``info["tools"]``), the same for every episode
of an env and most of the answer's encoding work. `answer_bytes` keeps their JSON, keyed by
their `marshal` bytes: equal bytes are equal values of equal types (``1``, ``1.0`` and
``True`` differ there, as they do in JSON), so a kept text is exactly what encoding them again
would give, and the answer's bytes are the same as `agentgym.server.wire.json_bytes`'s.
"""

from __future__ import annotations

import marshal
from json.encoder import encode_basestring_ascii
from typing import Any

from agentgym.server.wire import json_bytes, json_text

__all__ = ["answer_bytes", "MAX_KEPT"]

#: Tool-schema texts kept at most (a server serves a few dozen ids; past this the memo starts over).
MAX_KEPT = 256

_kept: dict[bytes, str] = {}


def answer_bytes(payload: Any) -> bytes:
    """`payload` as `json_bytes` would encode it (bytes pass as they are: a host may hand back
    its answer encoded already)."""
    if isinstance(payload, bytes):
        return payload
    info = payload.get("info") if type(payload) is dict else None
    tools = info.get("tools") if type(info) is dict else None
    if type(tools) is not list or not _str_keys(payload) or not _str_keys(info):
        return json_bytes(payload)
    try:
        key = marshal.dumps(tools)
    except ValueError:  # not plain data (an env's numpy value): no key, encoded as it comes
        return json_bytes(payload)
    text = _kept.get(key)
    if text is None:
        text = json_text(tools)
        if len(_kept) >= MAX_KEPT:
            _kept.clear()
        _kept[key] = text
    inner = _object(info, "tools", text)
    return _object(payload, "info", inner).encode("ascii")


def _str_keys(d: dict[Any, Any]) -> bool:
    return all(type(k) is str for k in d)


def _object(d: dict[str, Any], key: str, text: str) -> str:
    """`json_text` of `d` (whose keys are all str), with `text` as the encoding of ``d[key]``."""
    return "{" + ",".join(f"{encode_basestring_ascii(k)}:{text if k == key else json_text(v)}"
                          for k, v in d.items()) + "}"
