"""The name of a value's JSON type, as the env's error messages say it."""

from __future__ import annotations

import math

__all__ = ["json_type_name"]


def json_type_name(value: object, *, schema_words: bool = False) -> str:
    """The JSON type of `value` for an error message.

    Two vocabularies, both part of the episodes' bytes: the action protocol's plain words (``bool``,
    ``number``, ``list``), and, with `schema_words`, JSON Schema's (``boolean``, ``integer`` or
    ``number``, ``array``; a non-finite float by its repr), as a tool's argument errors name the
    type its schema wants. A value JSON has no type for is named by its Python type.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean" if schema_words else "bool"
    if isinstance(value, (int, float)):
        if not schema_words:
            return "number"
        if isinstance(value, int):
            return "integer"
        return "number" if math.isfinite(value) else repr(value)  # 'nan', 'inf'
    if isinstance(value, str):
        return "string"
    if isinstance(value, list) or (schema_words and isinstance(value, tuple)):
        return "array" if schema_words else "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
