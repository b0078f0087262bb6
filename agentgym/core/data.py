"""Strict reading of the JSON data files the task families ship: an unknown field is an error,
never silently dropped.

One reader and one field check for every family, so a malformed file fails the same way
whichever family ships it.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["read_json", "strict"]


def read_json(package: str, name: str) -> Any:
    """The parsed JSON of ``data/<name>`` in `package`."""
    return json.loads(resources.files(package).joinpath("data", name).read_text("utf-8"))


def strict(obj: Any, required: set[str], where: str) -> dict[str, Any]:
    """`obj` as a dict with exactly the `required` keys; ValueError naming what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object, got {type(obj).__name__}")
    unknown, missing = set(obj) - required, required - set(obj)
    if unknown or missing:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
    return obj
