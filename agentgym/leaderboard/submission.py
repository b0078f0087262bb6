"""The submission wire format, its manifest, and the limits checked before anything is parsed.

Wire format (``agentgym-submission/1``): one gzip stream (a single member) holding

    line 1        the manifest, one JSON object, UTF-8
    lines 2 ...   the run's ``records.jsonl``, byte for byte as `agentgym bench` wrote it

so the manifest's ``records_sha256`` is the SHA-256 of exactly the bytes after the first newline,
and ``sha256sum runs/SUITE/AGENT/records.jsonl`` gives the same digest. JSON Lines rather than one
JSON document keeps each record a separately depth-checked, separately parsed value, and lets the
records file travel without being re-serialised.

Limits (docs/RELIABILITY.md, L4), in the order they are met:

- the compressed body is at most `Limits.max_body_bytes` (64 MiB);
- decompression streams in chunks and stops as soon as the output passes
  ``min(max_ratio * compressed size, max_decompressed_bytes)``: a compression bomb is refused
  having produced at most that much, never decompressed in full. The decompressed body is never
  held whole: a first pass checks its size, reads the manifest line and hashes the records; only
  when the digest is the manifest's does a second pass parse the records, a line at a time;
- the manifest line is at most 64 KiB and a record line at most 8 MiB (the largest honest
  record is about 33 KB);
- before a line is parsed, its skeleton (strings removed) is measured
  (`agentgym.leaderboard.bounded_json`): nesting depth at most 32, at most 500,000 values, and
  an upper bound on the memory its objects will take, which must fit, with every record parsed
  before it, in ``max_parse_ratio`` (1.5) times the decompressed cap. Tiny structures are what
  make JSON expand (``[],`` is 3 bytes of text and 64 of list): the check comes before a single
  object is built;
- every byte must be valid UTF-8 (records are ASCII already); NaN and Infinity are refused, and
  so is a key twice in one object (which one a reader keeps depends on the reader).

Honest records compress 12x to 21x (measured on the built-in agents: verbose random runs least,
terse oracle runs most), so the ratio cap is 200x: ten times the most compressible honest run, and
five times below a stream of zeros (about 1000x). The parse budget is 1.5x the decompressed cap,
300 bytes per compressed byte; the bound charges honest records 1.7x to 1.8x their true size, up
to 140 bytes per compressed byte (the oracle's core-v0 run), so an honest submission has a margin
of 2x, and a hostile one holds at most 1.5x the decompressed cap however it is shaped.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import re
import unicodedata
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from agentgym.core.seeding import MAX_SEED as _MAX_SEED
from agentgym.eval.record_budget import MAX_RECORD_BYTES
from agentgym.leaderboard.bounded_json import BoundedParser, Budget, Refused, json_depth

__all__ = [
    "FORMAT",
    "SUBMISSION_SUFFIX",
    "Limits",
    "LIMITS",
    "Manifest",
    "SealedRun",
    "RUN_ID_PATTERN",
    "check_manifest_text",
    "Submission",
    "SubmissionError",
    "LimitExceeded",
    "MalformedSubmission",
    "Rejected",
    "Unverifiable",
    "Duplicate",
    "Busy",
    "CLAIMABLE",
    "encode_submission",
    "manifest_line",
    "decode_submission",
    "peek_manifest",
    "gunzip_capped",
    "json_depth",
    "load_json_line",
]

FORMAT = "agentgym-submission/1"
#: The file name ending of a submission (`leaderboard render --from` reads a folder of them).
SUBMISSION_SUFFIX = ".agentgym.gz"
_MIB = 1024 * 1024

_Claimable = Literal["success", "score", "tool_f1", "recovery_share", "recovery_median", "goal_consistency",
                     "pass_hat_k"]
#: The summary numbers a manifest may claim; each must equal the number recomputed from the replay.
CLAIMABLE: tuple[str, ...] = get_args(_Claimable)


# ============================================================================ errors
class SubmissionError(Exception):
    """A submission that is not accepted; `status` is the HTTP status the server answers with.

    Attributes:
        code: a stable machine-readable reason (``too_large``, ``not_utf8``, ``replay_mismatch`` ...).
        episode: the first offending episode's key, when one is to blame.
        step: the first offending step (1-based; 0 for the reset), when one is to blame.
        field: the offending field, when one is to blame.
    """

    status = 400

    def __init__(self, code: str, message: str, *, episode: str | None = None, step: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        self.episode, self.step, self.field = episode, step, field

    def __reduce__(self) -> Any:
        # Picklable with its fields (it may be raised in a replay worker process).
        return (type(self), (self.code, self.message),
                {"episode": self.episode, "step": self.step, "field": self.field})

    def to_dict(self) -> dict[str, Any]:
        """The error as the server's JSON answer."""
        return {"error": self.code, "message": self.message, "episode": self.episode, "step": self.step,
                "field": self.field}

    def __str__(self) -> str:
        where = []
        if self.episode is not None:
            where.append(f"episode {self.episode}")
        if self.step is not None:
            where.append(f"step {self.step}")
        if self.field is not None:
            where.append(f"field {self.field}")
        return f"{self.message} ({', '.join(where)})" if where else self.message


class LimitExceeded(SubmissionError):
    """Over a size limit: refused before parsing (HTTP 413)."""

    status = 413


class MalformedSubmission(SubmissionError):
    """Not a well-formed submission: bad gzip, UTF-8, JSON, depth or schema (HTTP 400)."""

    status = 400


class Rejected(SubmissionError):
    """Well-formed but not accepted: unknown suite, incomplete, or the replay disagrees (HTTP 422)."""

    status = 422


class Duplicate(Rejected):
    """Records already on the board, or being verified now, under another name (HTTP 409).

    Refused before replay: one entry per records digest, and per play (the same actions in the
    same episodes, whatever the bytes).
    """

    status = 409


class Busy(SubmissionError):
    """Too many verifications are running or waiting: retry later (HTTP 503)."""

    status = 503


class Unverifiable(SubmissionError):
    """This server cannot replay the suite (an env id it cannot make): its fault, not the submitter's (HTTP 503)."""

    status = 503


# ============================================================================ limits
@dataclass(frozen=True)
class Limits:
    """What the server accepts before it parses anything."""

    #: The compressed body, in bytes.
    max_body_bytes: int = 64 * _MIB
    #: Decompressed bytes per compressed byte.
    max_ratio: float = 200.0
    #: Decompressed bytes in all, whatever the ratio.
    max_decompressed_bytes: int = 1024 * _MIB
    #: JSON nesting depth of any line (the manifest or a record).
    max_depth: int = 32
    #: The manifest line, in bytes.
    max_manifest_bytes: int = 64 * 1024
    #: One record line, in bytes (the cap the harness keeps every record under).
    max_line_bytes: int = MAX_RECORD_BYTES
    #: JSON values and keys in one line, counted before it is parsed.
    max_line_values: int = 500_000
    #: The memory the parsed records may hold, as a multiple of the decompressed cap (each line's
    #: share estimated before it is parsed, `agentgym.leaderboard.bounded_json`).
    max_parse_ratio: float = 1.5

    def decompressed_cap(self, compressed: int) -> int:
        """The most decompressed bytes a body of `compressed` bytes may produce."""
        return int(min(self.max_decompressed_bytes, self.max_ratio * max(compressed, 1)))

    def parse_budget(self, compressed: int) -> int:
        """The most memory the parsed records of a body of `compressed` bytes may hold."""
        return int(self.max_parse_ratio * self.decompressed_cap(compressed))


LIMITS = Limits()
_CHUNK = 256 * 1024


def _gunzip_chunks(body: bytes, cap: int) -> Iterator[bytes]:
    """The decompressed chunks of one gzip member, refusing as soon as their total would pass `cap`.

    Raises (while iterating):
        MalformedSubmission: not gzip, truncated, or data after the gzip member.
        LimitExceeded: more than `cap` bytes of output (at most one chunk more was produced).
    """
    if body[:2] != b"\x1f\x8b":
        raise MalformedSubmission("not_gzip", "the body is not gzip-compressed (see agentgym-submission/1)")
    d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    data, total = body, 0
    while True:
        try:
            chunk = d.decompress(data, _CHUNK)
        except zlib.error as exc:
            raise MalformedSubmission("bad_gzip", f"the gzip stream is corrupt: {exc}") from exc
        total += len(chunk)
        if total > cap:
            raise LimitExceeded("decompressed_too_large",
                                f"the body decompresses to more than {cap} bytes (the limit for a body "
                                f"of {len(body)} bytes); refused before decompressing the rest")
        if chunk:
            yield chunk
        if d.eof:
            break
        data = d.unconsumed_tail
        if not data and not chunk:
            break
    if not d.eof:
        raise MalformedSubmission("bad_gzip", "the gzip stream is truncated")
    if d.unused_data:
        raise MalformedSubmission("bad_gzip", "data follows the gzip stream (one member only)")


def gunzip_capped(body: bytes, cap: int) -> bytearray:
    """Decompress one gzip member in chunks, refusing as soon as the output would pass `cap`.

    Raises:
        MalformedSubmission: not gzip, truncated, or data after the gzip member.
        LimitExceeded: more than `cap` bytes of output.
    """
    out = bytearray()
    for chunk in _gunzip_chunks(body, cap):
        out += chunk
    return out


# The codes of `Refused` as a submission names them (a limit's code says what was over it).
_LIMIT_CODES = {"too_long": "line_too_long", "too_many_values": "too_many_values", "over_memory": "over_parse_budget"}


def _refusal(exc: Refused, what: str) -> SubmissionError:
    message = f"{what}: {exc.message}"
    if exc.over_limit:
        return LimitExceeded(_LIMIT_CODES[exc.code], message)
    if exc.code == "duplicate_key":
        return MalformedSubmission("duplicate_key", message, field=exc.key[:100] if exc.key else None)
    return MalformedSubmission(exc.code, message)


def load_json_line(line: bytes, what: str, max_depth: int = LIMITS.max_depth) -> Any:
    """One JSON value from one line, on its own: depth checked first, then strict UTF-8, then parsed.

    A key twice in one object, NaN and Infinity are refused. No size budget: `decode_submission`
    parses its lines within one (`agentgym.leaderboard.bounded_json.BoundedParser`).

    Raises:
        MalformedSubmission: too deep, not UTF-8, not JSON or a duplicate key, naming `what`.
    """
    unbounded = 1 << 62
    try:
        return BoundedParser(Budget(unbounded, max_depth, unbounded, unbounded)).parse(bytes(line))
    except Refused as exc:
        raise _refusal(exc, what) from exc


# ============================================================================ the manifest
# The manifest is a pydantic model: strict types (no "1" for 1, no true for a number), unknown
# fields refused, and every bound declared on its field. `Manifest.from_dict` turns pydantic's
# errors into the `MalformedSubmission` a client sees, one per manifest, naming the field.

# Bidi controls reorder what a reader sees (names that display as someone else's).
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")

#: A sealed run's id: URL-safe, 16 to 64 characters (the board's are 32).
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,64}")
#: A sealed manifest's seeds at most (a suite's seeds per cell; core-v0 has 200).
MAX_SEALED_SEEDS = 10_000


def _plain_text(value: str, may_be_empty: bool, newlines: bool) -> str:
    """`value` unless it is blank (where it may not be) or holds a control or bidi character."""
    if not value.strip() and not may_be_empty:
        raise ValueError("must not be empty")
    for ch in value:
        if ch == "\n" and newlines:
            continue
        if unicodedata.category(ch) in ("Cc", "Cs") or ch in _BIDI:
            raise ValueError(f"holds the control character U+{ord(ch):04X}")
    return value


def _text(max_len: int, may_be_empty: bool = False, newlines: bool = False) -> Any:
    """A manifest text field: at most `max_len` characters, no control or bidi characters."""
    return Annotated[str, StringConstraints(max_length=max_len),
                     AfterValidator(functools.partial(_plain_text, may_be_empty=may_be_empty, newlines=newlines))]


_Name = _text(100)
_ModelName = _text(200)
_Organisation = _text(100, may_be_empty=True)
_Description = _text(2000, may_be_empty=True, newlines=True)
_Version = _text(50)
_Seed = Annotated[int, Field(ge=0, le=_MAX_SEED)]


def _distinct(seeds: tuple[int, ...]) -> tuple[int, ...]:
    if len(set(seeds)) != len(seeds):
        raise ValueError("holds a seed twice")
    return seeds


def _not_null(value: Any) -> Any:
    # An upload leaves `sealed` out; a null in its place is a malformed manifest, not an upload.
    if value is None:
        raise ValueError("is null")
    return value


class SealedRun(BaseModel):
    """The part of a manifest that only a board writes: the run it stepped itself, and its seeds.

    Published with the records once the run is complete, so that anyone can replay it
    (`agentgym leaderboard verify`); an upload that carries one is refused (the open track plays
    the suite's public seeds).
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    #: The board's id of the run (random, unguessable while the run was open).
    run_id: Annotated[str, Field(pattern=f"^{RUN_ID_PATTERN.pattern}$")]
    #: The task seeds in place of the suite's public ones, one per seed of the suite, in order
    #: (a JSON array; the items are strict integers).
    seeds: Annotated[tuple[_Seed, ...], Field(strict=False, min_length=1, max_length=MAX_SEALED_SEEDS),
                     AfterValidator(_distinct)]

    @classmethod
    def from_dict(cls, data: Any) -> "SealedRun":
        """Parse strictly.

        Raises:
            MalformedSubmission: naming the field.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise _sealed_error(exc.errors()) from None


class Manifest(BaseModel):
    """Who and what a submission is. Every text field is data: stored as sent, shown escaped."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    #: The agent's display name.
    agent: _Name
    #: The model behind the agent (a Hugging Face id, an API model name, a checkpoint).
    model: _ModelName
    #: The model's revision (a commit, a date, a checkpoint step).
    revision: _Name
    #: Who submits it.
    organisation: _Organisation
    #: A free-text description (up to 2,000 characters).
    description: _Description
    #: The suite id the records are a run of.
    suite: _Name
    #: The agentgym version the run used.
    package_version: _Version
    #: SHA-256 of the records bytes (the part after the manifest line).
    records_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    #: Optional summary numbers (see `CLAIMABLE`); each must equal the recomputed one.
    claimed: dict[_Claimable, Annotated[float, Field(allow_inf_nan=False)] | None] = {}
    #: A run the board stepped itself on its own seeds (the sealed track); None for an upload.
    sealed: Annotated[SealedRun | None, BeforeValidator(_not_null)] = None

    def to_dict(self) -> dict[str, Any]:
        data = {"format": FORMAT, **self.model_dump(exclude={"sealed"})}
        if self.sealed is not None:  # an upload's manifest is what it always was
            data["sealed"] = {"run_id": self.sealed.run_id, "seeds": list(self.sealed.seeds)}
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "Manifest":
        """Parse strictly: unknown or missing fields, wrong types and control characters are errors.

        Raises:
            MalformedSubmission: naming the field.
        """
        if not isinstance(data, dict):
            raise MalformedSubmission("bad_manifest", "the manifest must be a JSON object", field="manifest")
        if data.get("format") != FORMAT:
            raise MalformedSubmission("bad_manifest", f"manifest format must be {FORMAT!r}", field="format")
        try:
            return cls.model_validate({k: v for k, v in data.items() if k != "format"})
        except ValidationError as exc:
            raise _manifest_error(exc.errors()) from None


def check_manifest_text(name: str, value: Any) -> str:
    """`value` as the manifest's text field `name` accepts it (length, control and bidi characters).

    Raises:
        MalformedSubmission: naming the field.
    """
    try:
        return _field_adapter(name).validate_python(value)
    except ValidationError as exc:
        raise _manifest_error([{**e, "loc": (name, *e["loc"])} for e in exc.errors()]) from None


@functools.lru_cache(maxsize=None)
def _field_adapter(name: str) -> TypeAdapter[Any]:
    info = Manifest.model_fields[name]
    return TypeAdapter(Annotated[(info.annotation, *info.metadata)], config=ConfigDict(strict=True))


def _manifest_error(errors: list[Any]) -> MalformedSubmission:
    """The one refusal a client sees for pydantic's `errors` of a manifest: unknown fields first,
    then missing ones, then the first field in the manifest's order that is wrong."""
    top = [e for e in errors if len(e["loc"]) == 1]
    unknown = sorted(str(e["loc"][0]) for e in top if e["type"] == "extra_forbidden")
    if unknown:
        return MalformedSubmission("bad_manifest", f"unknown manifest fields {unknown}", field=unknown[0])
    missing = sorted(str(e["loc"][0]) for e in top if e["type"] == "missing")
    if missing:
        return MalformedSubmission("bad_manifest", f"missing manifest fields {missing}", field=missing[0])
    error = errors[0]
    name, rest = str(error["loc"][0]), error["loc"][1:]
    if name == "records_sha256":
        return MalformedSubmission("bad_manifest", "records_sha256 must be 64 lowercase hex digits", field=name)
    if name == "claimed":
        return _claimed_error(error, rest)
    if name == "sealed":
        return _sealed_error([{**e, "loc": e["loc"][1:]} for e in errors if e["loc"][:1] == ("sealed",)])
    kind = error["type"]
    if kind == "string_too_long":
        message = f"{name} is longer than {error['ctx']['max_length']} characters"
    elif kind == "value_error":
        message = f"{name} {error['ctx']['error']}"
    elif kind == "string_unicode":  # a lone surrogate (a JSON escape can spell one)
        ch = next(c for c in error["input"] if unicodedata.category(c) == "Cs")
        message = f"{name} holds the control character U+{ord(ch):04X}"
    else:
        message = f"{name} must be a string"
    return MalformedSubmission("bad_manifest", message, field=name)


def _claimed_error(error: Any, rest: tuple[Any, ...]) -> MalformedSubmission:
    if not rest:
        return MalformedSubmission("bad_manifest", "claimed must be an object", field="claimed")
    key = str(rest[0])
    if rest[-1] == "[key]":
        return MalformedSubmission("bad_manifest", f"claimed holds {key!r}; claimable: {', '.join(CLAIMABLE)}",
                                   field=f"claimed.{key}")
    return MalformedSubmission("bad_manifest", f"claimed.{key} must be a number or null", field=f"claimed.{key}")


def _sealed_error(errors: list[Any]) -> MalformedSubmission:
    """The refusal for pydantic's `errors` of a sealed part (locations relative to it)."""
    if any(not e["loc"] or e["type"] in ("extra_forbidden", "missing") for e in errors):
        return MalformedSubmission("bad_manifest", "sealed must be an object with exactly run_id and seeds",
                                   field="sealed")
    loc, kind = errors[0]["loc"], errors[0]["type"]
    if loc[0] == "run_id":
        return MalformedSubmission("bad_manifest", "sealed.run_id must be 16 to 64 URL-safe characters",
                                   field="sealed.run_id")
    if loc == ("seeds",) and kind == "value_error":
        return MalformedSubmission("bad_manifest", "sealed.seeds holds a seed twice", field="sealed.seeds")
    return MalformedSubmission("bad_manifest", f"sealed.seeds must be 1 to {MAX_SEALED_SEEDS} seeds in "
                               f"[0, {_MAX_SEED}]", field="sealed.seeds")


# ============================================================================ the body
@dataclass
class Submission:
    """A decoded submission: the manifest, the records and the digest of their bytes."""

    manifest: Manifest
    records: list[dict[str, Any]]
    records_sha256: str
    body_bytes: int
    records_bytes: int


def encode_submission(manifest: Manifest, records_bytes: bytes, level: int = 6) -> bytes:
    """The wire body for `manifest` and the bytes of a records file.

    Raises:
        ValueError: the manifest's ``records_sha256`` is not the digest of `records_bytes`.
    """
    if hashlib.sha256(records_bytes).hexdigest() != manifest.records_sha256:
        raise ValueError("manifest.records_sha256 is not the SHA-256 of the records")
    return gzip.compress(manifest_line(manifest) + records_bytes, compresslevel=level, mtime=0)


def manifest_line(manifest: Manifest) -> bytes:
    """The first line of a submission: the manifest as compact JSON, UTF-8, with its newline."""
    head = json.dumps(manifest.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return head + b"\n"


@dataclass
class _Scan:
    """What the first pass over a decompressed body learns, holding only the manifest line."""

    manifest_line: bytes
    #: The manifest line passed `Limits.max_manifest_bytes` (only its start is kept).
    manifest_too_long: bool
    #: A newline ends the manifest line.
    has_records_part: bool
    records_sha256: str
    records_bytes: int
    #: The body's last byte is a newline (or there is no records part).
    ends_with_newline: bool


def _scan(body: bytes, limits: Limits) -> _Scan:
    head = bytearray()
    cut_found = too_long = False
    digest = hashlib.sha256()
    size, last = 0, b"\n"
    for chunk in _gunzip_chunks(body, limits.decompressed_cap(len(body))):
        rest = chunk
        if not cut_found:
            at = chunk.find(b"\n")
            part = chunk if at < 0 else chunk[:at]
            if len(head) + len(part) > limits.max_manifest_bytes:
                too_long = True
                head += part[:max(0, limits.max_manifest_bytes + 1 - len(head))]
            else:
                head += part
            if at < 0:
                continue
            cut_found, rest = True, chunk[at + 1:]
        if rest:
            digest.update(rest)
            size += len(rest)
            last = rest[-1:]
    return _Scan(manifest_line=bytes(head), manifest_too_long=too_long, has_records_part=cut_found,
                 records_sha256=digest.hexdigest(), records_bytes=size, ends_with_newline=last == b"\n")


def _manifest_from(scan: _Scan, limits: Limits) -> Manifest:
    if scan.manifest_too_long:
        raise LimitExceeded("manifest_too_large", f"the manifest line is longer than {limits.max_manifest_bytes} bytes")
    if not scan.has_records_part:
        raise MalformedSubmission("bad_format", "no newline after the manifest line (see agentgym-submission/1)")
    return Manifest.from_dict(load_json_line(scan.manifest_line, "manifest", limits.max_depth))


def _record_lines(body: bytes, limits: Limits) -> Iterator[bytes]:
    """The record lines of a body already scanned (so complete and newline-terminated), one at a time."""
    pending = bytearray()
    in_manifest = True
    for chunk in _gunzip_chunks(body, limits.decompressed_cap(len(body))):
        start = 0
        if in_manifest:
            at = chunk.find(b"\n")
            if at < 0:
                continue
            in_manifest, start = False, at + 1
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end
            if len(pending) + stop - start > limits.max_line_bytes:
                raise LimitExceeded("line_too_long", f"a record line is longer than {limits.max_line_bytes} bytes")
            if end < 0:
                pending += chunk[start:]
                break
            if pending:
                pending += chunk[start:end]
                yield bytes(pending)
                pending.clear()
            else:
                yield chunk[start:end]
            start = end + 1


def peek_manifest(body: bytes, limits: Limits = LIMITS) -> Manifest:
    """The manifest of a body, decompressing no more than its first line (nothing else is checked).

    What a server needs to refuse a submission it already has before reading the rest.

    Raises:
        LimitExceeded: the body is over the size limit, or its manifest line is.
        MalformedSubmission: not gzip, or the manifest line is not a valid manifest.
    """
    if len(body) > limits.max_body_bytes:
        raise LimitExceeded("too_large", f"the body is {len(body)} bytes; the limit is {limits.max_body_bytes}")
    head = bytearray()
    chunks = _gunzip_chunks(body, limits.decompressed_cap(len(body)))
    try:
        for chunk in chunks:
            at = chunk.find(b"\n")
            head += chunk if at < 0 else chunk[:at]
            if len(head) > limits.max_manifest_bytes:
                raise LimitExceeded("manifest_too_large",
                                    f"the manifest line is longer than {limits.max_manifest_bytes} bytes")
            if at >= 0:
                return Manifest.from_dict(load_json_line(bytes(head), "manifest", limits.max_depth))
    finally:
        chunks.close()
    raise MalformedSubmission("bad_format", "no newline after the manifest line (see agentgym-submission/1)")


def decode_submission(body: bytes, limits: Limits = LIMITS) -> Submission:
    """Check the limits, then decode the manifest and the records (no verification yet).

    Raises:
        LimitExceeded: the body, its decompressed size, a line, a line's values or the parsed
            records' memory is over the limits.
        MalformedSubmission: bad gzip, UTF-8, JSON, depth or keys, a torn records file, a bad
            manifest, or records whose digest is not the manifest's.
    """
    if len(body) > limits.max_body_bytes:
        raise LimitExceeded("too_large", f"the body is {len(body)} bytes; the limit is {limits.max_body_bytes}")
    scan = _scan(body, limits)
    manifest = _manifest_from(scan, limits)
    if scan.records_sha256 != manifest.records_sha256:
        raise MalformedSubmission("hash_mismatch", f"the records' SHA-256 is {scan.records_sha256}, the manifest says "
                                  f"{manifest.records_sha256}", field="records_sha256")
    if not scan.ends_with_newline:
        raise MalformedSubmission("torn_records", "the records file does not end with a newline (a torn write)")
    parser = BoundedParser(Budget(max_bytes=limits.max_line_bytes, max_depth=limits.max_depth,
                                  max_values=limits.max_line_values, memory=limits.parse_budget(len(body))))
    records = []
    for line_no, line in enumerate(_record_lines(body, limits), start=1):
        what = f"records line {line_no}"
        if not line:
            raise MalformedSubmission("bad_format", f"{what} is empty")
        try:
            rec = parser.parse(line)
        except Refused as exc:
            raise _refusal(exc, what) from exc
        if not isinstance(rec, dict):
            raise MalformedSubmission("bad_record", f"{what} is not a JSON object")
        records.append(rec)
    return Submission(manifest=manifest, records=records, records_sha256=scan.records_sha256, body_bytes=len(body),
                      records_bytes=scan.records_bytes)


def read_run(run_dir: str | Path) -> tuple[dict[str, Any], bytes]:
    """The ``run.json`` and the raw ``records.jsonl`` bytes of an `agentgym bench` run folder.

    Raises:
        ValueError: the folder lacks either file.
    """
    from agentgym.bench.run import RECORDS, RUN_META

    run = Path(run_dir)
    meta_path, records_path = run / RUN_META, run / RECORDS
    if not meta_path.is_file() or not records_path.is_file():
        raise ValueError(f"{run} is not a bench run folder (it needs {RUN_META} and {RECORDS}); "
                         "make one with `agentgym bench SUITE --agent NAME --out DIR`")
    return json.loads(meta_path.read_text("utf-8")), records_path.read_bytes()
