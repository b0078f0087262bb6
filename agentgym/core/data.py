"""Strict reading of the JSON data files the task families ship: an unknown field is an error,
never silently dropped, and so is a duplicate key, a NaN or a file past the size budget.

One reader and one field check for every family, so a malformed file fails the same way
whichever family ships it.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from typing import Any

from agentgym.core.protocol import strict_json

__all__ = ["MAX_DATA_FILE_BYTES", "read_json", "read_json_file", "strict"]

#: A data file past this size is refused unread (the largest one shipped is under 4 KiB).
MAX_DATA_FILE_BYTES = 1 << 20


def read_json_file(entry: Traversable, where: str) -> Any:
    """The parsed JSON of a data file, read strictly (see the module docstring).

    Raises:
        ValueError: the file is too large, not UTF-8 or not strict JSON; `where` names it.
    """
    with entry.open("rb") as f:
        raw = f.read(MAX_DATA_FILE_BYTES + 1)
    if len(raw) > MAX_DATA_FILE_BYTES:
        raise ValueError(f"{where}: a data file is at most {MAX_DATA_FILE_BYTES} bytes")
    try:
        return strict_json(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is one too
        raise ValueError(f"{where}: {exc}") from None


def read_json(package: str, name: str) -> Any:
    """The parsed JSON of ``data/<name>`` in `package`, read strictly."""
    return read_json_file(resources.files(package).joinpath("data", name), name)


def strict(obj: Any, required: set[str], where: str) -> dict[str, Any]:
    """`obj` as a dict with exactly the `required` keys; ValueError naming what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object, got {type(obj).__name__}")
    unknown, missing = set(obj) - required, required - set(obj)
    if unknown or missing:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
    return obj
