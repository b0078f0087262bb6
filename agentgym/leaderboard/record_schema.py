"""Records against the committed record schema: the verifier's first stage.

The schema is `agentgym/eval/record.schema.json` (kept in sync with the runner by its own test),
checked whole by the `jsonschema` validator of the draft it declares, built once. A record that
breaks it is refused naming its episode, its step (for an action or a step) and the offending
field's name; the message gives the field's full path.

`agentgym.leaderboard.record_schema_fast.known_valid` answers the same question natively for
the records that pass (the plain validator costs more than replaying the episode); this module
is what decides, and what explains a refusal.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Mapping

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from agentgym.leaderboard.submission import MalformedSubmission

__all__ = ["RECORD_SCHEMA", "validator", "record_error", "check_record"]

#: The committed schema of one episode record.
RECORD_SCHEMA: dict[str, Any] = json.loads(
    resources.files("agentgym.eval").joinpath("record.schema.json").read_text("utf-8"))

#: The most characters of a value's text quoted in a refusal (a value may be megabytes).
_MAX_DETAIL = 300
#: Array fields whose items are turns: an error inside one names its step (1-based).
_TURN_ARRAYS = ("actions", "steps")


@functools.lru_cache(maxsize=1)
def validator() -> jsonschema.protocols.Validator:
    """The validator of the schema's declared draft, its schema checked first (once per process).

    Raises:
        jsonschema.exceptions.SchemaError: the committed schema is not a valid schema of its draft.
    """
    cls = jsonschema.validators.validator_for(RECORD_SCHEMA)
    cls.check_schema(RECORD_SCHEMA)
    return cls(RECORD_SCHEMA)


def _first_error(rec: Mapping[str, Any]) -> ValidationError | None:
    # In the schema's order (unknown and missing fields, then each field in turn), except that a
    # record of another schema version is told so first: its other differences follow from that.
    first = None
    for error in validator().iter_errors(rec):
        if list(error.absolute_path) == ["schema_version"]:
            return error
        if first is None:
            first = error
    # anyOf (metrics, agent_error, hits): the alternative that came closest says what is wrong.
    return None if first is None else best_match([first])


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL - 1] + "\u2026"


def _schema_version_message(value: Any) -> str:
    want = RECORD_SCHEMA["properties"]["schema_version"]["const"]
    older = isinstance(value, int) and not isinstance(value, bool) and value < want
    return (f"schema_version {_cut(repr(value))} is not {want}"
            + (" (records of an older agentgym: re-run the suite)" if older else ""))


def record_error(rec: Mapping[str, Any], line: int) -> MalformedSubmission | None:
    """Why the schema refuses record `rec` (line `line` of the records), or None if it accepts it."""
    error = _first_error(rec)
    if error is None:
        return None
    path = list(error.absolute_path)
    where = f"records line {line}"
    location = error.json_path.removeprefix("$").removeprefix(".")
    names = [p for p in path if isinstance(p, str)]
    field = names[-1] if names else None
    instance = error.instance
    if path == ["schema_version"]:
        message = _schema_version_message(instance)
    elif error.validator == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {})
        unknown = sorted(k for k in instance if k not in known)
        field = unknown[0]
        message = f"unknown fields {_cut(repr(unknown))}"
    elif error.validator == "required" and isinstance(instance, dict):
        missing = [k for k in error.validator_value if k not in instance]
        field = missing[0]
        message = f"missing fields {sorted(missing)}"
    else:
        message = _cut(error.message)
    step = path[1] + 1 if len(path) >= 2 and path[0] in _TURN_ARRAYS and isinstance(path[1], int) else None
    key = rec.get("key")
    return MalformedSubmission("bad_record", f"{where}: {location}: {message}" if location else f"{where}: {message}",
                               episode=key if isinstance(key, str) else None, step=step, field=field)


def check_record(rec: Mapping[str, Any], line: int) -> None:
    """Refuse record `rec` (line `line`) unless the committed schema accepts it.

    Raises:
        MalformedSubmission: ``bad_record``, naming the episode, step and field of the first error.
    """
    error = record_error(rec, line)
    if error is not None:
        raise error
