"""Strict reading of the tool-use data files: unknown or missing fields are errors."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from agentgym.core.data import read_json as core_read_json
from agentgym.core.data import strict
from agentgym.users.understanding import Lexicon, parse_lexicon

__all__ = ["read_json", "strict", "str_list", "domain_split", "Lexicon", "load_lexicon"]


def read_json(name: str) -> Any:
    """The parsed JSON of this family's ``data/<name>``."""
    return core_read_json(__package__, name)


def str_list(value: Any, where: str, min_len: int = 1) -> tuple[str, ...]:
    """A non-empty list of distinct strings, as a tuple."""
    if not isinstance(value, list) or len(value) < min_len or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: expected a list of at least {min_len} non-empty strings")
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: duplicate entries")
    return tuple(value)


def domain_split(d: dict[str, Any], name: str) -> str:
    """The split a domain file puts its domain in, checking the file names the right domain."""
    if d["name"] != name:
        raise ValueError(f"{name}.json: name is {d['name']!r}, expected {name!r}")
    if d["split"] not in ("train", "test"):
        raise ValueError(f"{name}.json: split must be 'train' or 'test', got {d['split']!r}")
    return d["split"]


@lru_cache(maxsize=None)
def load_lexicon() -> Lexicon:
    """The words the tool-use user recognises per detail (``data/lexicon.json``, parsed strictly)."""
    return parse_lexicon(read_json("lexicon.json"), "lexicon.json")
