"""The submission wire format, its manifest, and the limits checked before anything is parsed.

Wire format (``agentgym-submission/1``): one gzip stream (a single member) holding

    line 1        the manifest, one JSON object, UTF-8
    lines 2 ...   the run's ``records.jsonl``, byte for byte as `agentgym bench` wrote it

so the manifest's ``records_sha256`` is the SHA-256 of exactly the bytes after the first newline,
and ``sha256sum runs/SUITE/AGENT/records.jsonl`` gives the same digest. JSON Lines rather than one
JSON document keeps each record a separately depth-checked, separately parsed value, and lets the
records file travel without being re-serialised.

Limits, all enforced before the body is parsed (docs/RELIABILITY.md, L4):

- the compressed body is at most `Limits.max_body_bytes` (64 MiB);
- decompression streams in chunks and stops as soon as the output passes
  ``min(max_ratio * compressed size, max_decompressed_bytes)``: a compression bomb is refused
  having produced at most that much, never decompressed in full;
- every line is scanned for its JSON nesting depth (at most 32) before `json.loads` sees it;
- every byte must be valid UTF-8 (records are ASCII already); NaN and Infinity are refused.

Honest records compress 14x to 21x (measured on the built-in agents: verbose random runs least,
terse oracle runs most), so the ratio cap is 100x: five times the most compressible honest run,
and ten times below a stream of zeros (about 1000x).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
import unicodedata
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "FORMAT",
    "Limits",
    "LIMITS",
    "Manifest",
    "Submission",
    "SubmissionError",
    "LimitExceeded",
    "MalformedSubmission",
    "Rejected",
    "Unverifiable",
    "CLAIMABLE",
    "encode_submission",
    "decode_submission",
    "gunzip_capped",
    "json_depth",
    "load_json_line",
]

FORMAT = "agentgym-submission/1"
_MIB = 1024 * 1024

#: The summary numbers a manifest may claim; each must equal the number recomputed from the replay.
CLAIMABLE = ("success", "score", "tool_f1", "recovery_share", "recovery_median", "goal_consistency", "pass_hat_k")


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
    max_ratio: float = 100.0
    #: Decompressed bytes in all, whatever the ratio.
    max_decompressed_bytes: int = 256 * _MIB
    #: JSON nesting depth of any line (the manifest or a record).
    max_depth: int = 32

    def decompressed_cap(self, compressed: int) -> int:
        """The most decompressed bytes a body of `compressed` bytes may produce."""
        return int(min(self.max_decompressed_bytes, self.max_ratio * max(compressed, 1)))


LIMITS = Limits()
_CHUNK = 1 * _MIB


def gunzip_capped(body: bytes, cap: int) -> bytearray:
    """Decompress one gzip member in chunks, refusing as soon as the output would pass `cap`.

    Raises:
        MalformedSubmission: not gzip, truncated, or data after the gzip member.
        LimitExceeded: more than `cap` bytes of output (at most ``cap + 1 MiB`` were produced).
    """
    if body[:2] != b"\x1f\x8b":
        raise MalformedSubmission("not_gzip", "the body is not gzip-compressed (see agentgym-submission/1)")
    d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    out = bytearray()
    data = body
    try:
        while True:
            chunk = d.decompress(data, _CHUNK)
            out += chunk
            if len(out) > cap:
                raise LimitExceeded("decompressed_too_large",
                                    f"the body decompresses to more than {cap} bytes (the limit for a body "
                                    f"of {len(body)} bytes); refused before decompressing the rest")
            if d.eof:
                break
            data = d.unconsumed_tail
            if not data and not chunk:
                break
    except zlib.error as exc:
        raise MalformedSubmission("bad_gzip", f"the gzip stream is corrupt: {exc}") from exc
    if not d.eof:
        raise MalformedSubmission("bad_gzip", "the gzip stream is truncated")
    if d.unused_data:
        raise MalformedSubmission("bad_gzip", "data follows the gzip stream (one member only)")
    return out


# A JSON string: a quote, then runs of plain characters or backslash escapes, then a quote.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def json_depth(line: bytes) -> int:
    """The deepest bracket nesting of a JSON text, without parsing it (strings are skipped).

    Linear time and no recursion, so a line nested 100,000 deep costs microseconds here
    instead of a RecursionError in the parser. For malformed text it may over-count; such a
    line is refused either way.
    """
    skeleton = _JSON_STRING.sub(b"", line)
    if not skeleton:
        return 0
    delta = _OPEN[np.frombuffer(skeleton, dtype=np.uint8)]
    return int(np.cumsum(delta, dtype=np.int64).max(initial=0))


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_json_line(line: bytes, what: str, max_depth: int = LIMITS.max_depth) -> Any:
    """One JSON value from one line: depth checked first, then strict UTF-8, then parsed.

    Raises:
        MalformedSubmission: too deep, not UTF-8 or not JSON, naming `what`.
    """
    depth = json_depth(line)
    if depth > max_depth:
        raise MalformedSubmission("too_deep", f"{what}: JSON nested {depth} deep (limit {max_depth})")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedSubmission("not_utf8", f"{what}: not valid UTF-8 at byte {exc.start}") from exc
    try:
        return json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        raise MalformedSubmission("bad_json", f"{what}: not valid JSON: {exc}") from exc


# ============================================================================ the manifest
_HEX64 = re.compile(r"[0-9a-f]{64}")
# Bidi controls reorder what a reader sees (names that display as someone else's).
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")

#: field -> (most characters, may be empty, newlines allowed)
_TEXT_FIELDS: dict[str, tuple[int, bool, bool]] = {
    "agent": (100, False, False),
    "model": (200, False, False),
    "revision": (100, False, False),
    "organisation": (100, True, False),
    "description": (2000, True, True),
    "suite": (100, False, False),
    "package_version": (50, False, False),
}


@dataclass(frozen=True)
class Manifest:
    """Who and what a submission is. Every text field is data: stored as sent, shown escaped."""

    #: The agent's display name.
    agent: str
    #: The model behind the agent (a Hugging Face id, an API model name, a checkpoint).
    model: str
    #: The model's revision (a commit, a date, a checkpoint step).
    revision: str
    #: Who submits it.
    organisation: str
    #: A free-text description (up to 2,000 characters).
    description: str
    #: The suite id the records are a run of.
    suite: str
    #: The agentgym version the run used.
    package_version: str
    #: SHA-256 of the records bytes (the part after the manifest line).
    records_sha256: str
    #: Optional summary numbers (see `CLAIMABLE`); each must equal the recomputed one.
    claimed: dict[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}

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
        known = {"format", "claimed", "records_sha256", *_TEXT_FIELDS}
        unknown = sorted(set(data) - known)
        if unknown:
            raise MalformedSubmission("bad_manifest", f"unknown manifest fields {unknown}", field=unknown[0])
        missing = sorted({"records_sha256", *_TEXT_FIELDS} - set(data))
        if missing:
            raise MalformedSubmission("bad_manifest", f"missing manifest fields {missing}", field=missing[0])
        for name, (max_len, may_be_empty, newlines) in _TEXT_FIELDS.items():
            _check_text(name, data[name], max_len, may_be_empty, newlines)
        digest = data["records_sha256"]
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
            raise MalformedSubmission("bad_manifest", "records_sha256 must be 64 lowercase hex digits",
                                      field="records_sha256")
        claimed = data.get("claimed", {})
        if not isinstance(claimed, dict):
            raise MalformedSubmission("bad_manifest", "claimed must be an object", field="claimed")
        for k, v in claimed.items():
            if k not in CLAIMABLE:
                raise MalformedSubmission("bad_manifest", f"claimed holds {k!r}; claimable: {', '.join(CLAIMABLE)}",
                                          field=f"claimed.{k}")
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
                raise MalformedSubmission("bad_manifest", f"claimed.{k} must be a number or null",
                                          field=f"claimed.{k}")
        return cls(**{k: data[k] for k in _TEXT_FIELDS}, records_sha256=digest,
                   claimed={k: (None if v is None else float(v)) for k, v in claimed.items()})


def _check_text(name: str, value: Any, max_len: int, may_be_empty: bool, newlines: bool) -> None:
    if not isinstance(value, str):
        raise MalformedSubmission("bad_manifest", f"{name} must be a string", field=name)
    if not value.strip() and not may_be_empty:
        raise MalformedSubmission("bad_manifest", f"{name} must not be empty", field=name)
    if len(value) > max_len:
        raise MalformedSubmission("bad_manifest", f"{name} is longer than {max_len} characters", field=name)
    for ch in value:
        if ch == "\n" and newlines:
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs") or ch in _BIDI:
            raise MalformedSubmission("bad_manifest", f"{name} holds the control character U+{ord(ch):04X}",
                                      field=name)


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
    head = json.dumps(manifest.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return gzip.compress(head + b"\n" + records_bytes, compresslevel=level, mtime=0)


def decode_submission(body: bytes, limits: Limits = LIMITS) -> Submission:
    """Check the limits, then decode the manifest and the records (no verification yet).

    Raises:
        LimitExceeded: the body or its decompressed size is over the limits.
        MalformedSubmission: bad gzip, UTF-8, JSON or depth, a torn records file, a bad manifest,
            or records whose digest is not the manifest's.
    """
    if len(body) > limits.max_body_bytes:
        raise LimitExceeded("too_large", f"the body is {len(body)} bytes; the limit is {limits.max_body_bytes}")
    raw = gunzip_capped(body, limits.decompressed_cap(len(body)))
    cut = raw.find(b"\n")
    if cut < 0:
        raise MalformedSubmission("bad_format", "no newline after the manifest line (see agentgym-submission/1)")
    manifest = Manifest.from_dict(load_json_line(raw[:cut], "manifest", limits.max_depth))
    # The records are read in place, one line at a time: no second copy of the decompressed body.
    view = memoryview(raw)
    digest = hashlib.sha256(view[cut + 1:]).hexdigest()
    if digest != manifest.records_sha256:
        raise MalformedSubmission("hash_mismatch", f"the records' SHA-256 is {digest}, the manifest says "
                                  f"{manifest.records_sha256}", field="records_sha256")
    if len(raw) > cut + 1 and not raw.endswith(b"\n"):
        raise MalformedSubmission("torn_records", "the records file does not end with a newline (a torn write)")
    records = []
    start, line_no = cut + 1, 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        line_no += 1
        if end == start:
            raise MalformedSubmission("bad_format", f"records line {line_no} is empty")
        rec = load_json_line(bytes(view[start:end]), f"records line {line_no}", limits.max_depth)
        if not isinstance(rec, dict):
            raise MalformedSubmission("bad_record", f"records line {line_no} is not a JSON object")
        records.append(rec)
        start = end + 1
    view.release()
    return Submission(manifest=manifest, records=records, records_sha256=digest, body_bytes=len(body),
                      records_bytes=len(raw) - cut - 1)


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
