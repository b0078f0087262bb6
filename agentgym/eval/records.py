"""Episode records: one self-describing JSON line per episode, schema version first, with provenance.

A record holds everything needed to trust a number later: the schema version first, provenance
(package, git commit, Python and Gymnasium versions, the env spec with its wrapper stack, the
suite), the seed and trial, the agent and its config, every action it sent, per-step summaries
and the episode's metric inputs. Metrics are pure functions of records (`metrics.py`); the
leaderboard replays the actions to check them.

Records are written with ``ensure_ascii=True`` so any string (lone surrogates included)
survives, appended and flushed one line per episode, so a killed run loses at most the line it
was writing, and `read_records` tells a torn last line from a complete one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Iterable, Iterator

from agentgym.eval.canonical_fast import canonical_bytes
from agentgym.eval.jobs import episode_key
from agentgym.registration import entry_point_text

__all__ = [
    "SCHEMA_VERSION",
    "provenance",
    "episode_key",
    "spec_dict",
    "step_summary",
    "trajectory_digest",
    "RecordWriter",
    "NotARecordsFile",
    "check_records_file",
    "read_records",
    "canonical_json",
]

#: Version 2: noise events carry ``hits`` (the gold step or constraint a fault affects), ``at_ms``
#: and ``call``; episode metrics carry ``commitments``, ``max_turns`` and ``time_budget_ms``;
#: steps carry ``elapsed_ms`` once simulated time was charged. Version-1 files are refused
#: (their faults are not tied to what they hit, so their recovery cannot be computed): re-run them.
SCHEMA_VERSION = 2


@functools.lru_cache(maxsize=1)
def _git() -> dict[str, Any]:
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=5, check=True).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": None, "git_dirty": None}
    return {"git_commit": commit, "git_dirty": dirty}


@functools.lru_cache(maxsize=1)
def provenance() -> dict[str, Any]:
    """Versions and commit of the code that produced a record (git fields None when unknown)."""
    import gymnasium

    import agentgym

    return {
        "agentgym": agentgym.__version__,
        **_git(),
        "python": platform.python_version(),
        "gymnasium": gymnasium.__version__,
        "platform": platform.platform(terse=True),
    }


def spec_dict(env: Any) -> dict[str, Any]:
    """The env spec with its wrapper stack, as plain JSON-able data (``max_episode_steps`` only
    when a `TimeLimit` set it, since it caps the env's turn budget)."""
    spec = env.spec
    if spec is None:
        return {}
    out = {
        "id": spec.id,
        "entry_point": entry_point_text(spec.entry_point),
        "kwargs": {k: v for k, v in spec.kwargs.items() if _jsonable(v)},
        "additional_wrappers": [
            {"name": w.name, "entry_point": w.entry_point, "kwargs": {k: v for k, v in (w.kwargs or {}).items() if _jsonable(v)}}
            for w in spec.additional_wrappers
        ],
    }
    if spec.max_episode_steps is not None:
        out["max_episode_steps"] = spec.max_episode_steps
    return out


def _jsonable(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool, list, tuple, dict))


#: One encoder for every record, built once: `json.dumps` with options builds a new encoder per
#: call. Without the circular-reference check (a dict of the ids of every container, kept while
#: encoding: about 15% of a record's encoding); records are trees of JSON data, and a cycle
#: would end in RecursionError instead of ValueError. The bytes are the same.
_ENCODER = json.JSONEncoder(ensure_ascii=True, sort_keys=True, allow_nan=False, separators=(",", ":"),
                            check_circular=False)



def _one_encoder() -> Any:
    """`_ENCODER`'s C encoder, built once (None where the C accelerator is missing).

    `json.JSONEncoder.encode` builds this same C encoder anew on every call (a float closure
    and the encoder object, paid per record and per turn); it keeps no state between calls when
    the circular-reference check is off, so one serves every call.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    e = _ENCODER
    return make(None, e.default, json.encoder.encode_basestring_ascii, None, e.key_separator, e.item_separator,
                e.sort_keys, e.skipkeys, e.allow_nan)


_C_ENCODE = _one_encoder()
_ASCII_STRING = json.encoder.encode_basestring_ascii
_sha256 = hashlib.sha256


def canonical_json(obj: Any) -> str:
    """Canonical JSON: sorted keys, ASCII only (any string survives), no NaN."""
    if type(obj) is str:
        return _ASCII_STRING(obj)
    if _C_ENCODE is None:
        return _ENCODER.encode(obj)
    return "".join(_C_ENCODE(obj, 0))


#: The name `canonical_json` had before it said what it returns (text; the env server's
#: `agentgym.server.wire.json_bytes` returns bytes).
dumps = canonical_json


def step_summary(turn: int, reward: float, obs: str, info: dict[str, Any]) -> dict[str, Any]:
    """What a record keeps of one step: errors, calls, noise events, reward and an obs digest,
    and the simulated time so far once any was charged (for recovery times in milliseconds)."""
    calls = info.get("calls", ())
    out = {
        "turn": turn,
        "reward": reward,
        "obs_sha256": _sha256(obs.encode("utf-8", "surrogatepass")).hexdigest(),
        "errors": list(info.get("errors", ())),
        "calls": list(map(dict, calls)) if calls else [],
        "noise": list(info.get("noise", ())),
    }
    if "elapsed_ms" in info:
        out["elapsed_ms"] = info["elapsed_ms"]
    return out


def trajectory_digest(steps: Iterable[dict[str, Any]], reset_obs: str) -> str:
    """A digest of the observations and rewards of an episode, for quick replay comparison."""
    h = _sha256(reset_obs.encode("utf-8", "surrogatepass"))
    # One update of the joined steps digests the same bytes as one update per step, for less.
    h.update("".join([f"|{s['obs_sha256']}|{s['reward']!r}" for s in steps]).encode())
    return h.hexdigest()


#: How every record line begins (the schema version leads the line).
_RECORD_START = b'{"schema_version":'


class NotARecordsFile(ValueError):
    """A path to write records to that is not a records file (a link, a folder, a file of other lines)."""


def _is_record_start(line: bytes) -> bool:
    # A torn last line may be cut anywhere, even inside the key that begins every record.
    return line.startswith(_RECORD_START) or (len(line) < len(_RECORD_START) and _RECORD_START.startswith(line))


def check_records_file(path: Path) -> None:
    """Refuse a path that is not a records file, or an existing file that holds other lines.

    Raises:
        NotARecordsFile: `path` is a symbolic link or not a regular file, or a line of it (a torn
            last line included) does not begin as a record does.
    """
    if path.is_symlink():
        raise NotARecordsFile(f"{path} is a symbolic link: records are written to a plain file only (give "
                              "another --out)")
    if not path.exists():
        return
    if not path.is_file():
        raise NotARecordsFile(f"{path} is not a regular file: give --out a records file (records.jsonl)")
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip() and not _is_record_start(line):
                raise NotARecordsFile(f"{path}:{number} is not a record (records files are written by agentgym eval "
                                      "and agentgym bench): refusing to append to or repair it; give another --out")


class RecordWriter:
    """Appends records to a JSONL file, one flushed line per episode.

    Each line is one unbuffered write call, so once `write` returns it is in the kernel's page
    cache: a SIGKILL of the run loses nothing written.
    Only a machine crash can; pass ``fsync=True`` to guard against that too (it costs a disk
    sync per episode). The writer repairs (cuts a torn last line of) and appends to records
    files only: anything else, symbolic links included, is refused (`check_records_file`).

    Args:
        path: the records file; created with its parent folder at the first record.
        fsync: fsync after each line (default False).

    Raises:
        NotARecordsFile: `path` is not a records file.
    """

    def __init__(self, path: str | os.PathLike[str], fsync: bool = False) -> None:
        self.path = Path(path)
        check_records_file(self.path)
        self._repair_torn_tail()
        # Opened at the first record: a run that fails before its first episode ends (an agent
        # that cannot be built, a server that is not there) leaves no empty file behind.
        self._fd: int | None = None
        self._fsync = fsync

    def _repair_torn_tail(self) -> None:
        # A run killed mid-write leaves a last line without its newline: cut it off, so the
        # episode is re-run and the file always parses.
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data.endswith(b"\n"):
                return
            cut = data.rfind(b"\n") + 1
            fh.truncate(cut)

    def write(self, record: dict[str, Any]) -> str:
        """Append one record (its `schema_version` is set first); returns the line written."""
        # The schema version leads the line (a reader can dispatch on it before parsing the
        # rest); the other keys follow sorted, so equal records are equal bytes.
        if "schema_version" in record:
            record = {k: v for k, v in record.items() if k != "schema_version"}
        rest = canonical_bytes(record) or canonical_json(record).encode("ascii")
        data = b"".join((_RECORD_START, b"%d" % SCHEMA_VERSION, b"," if rest != b"{}" else b"", rest[1:], b"\n"))
        fd = self._fd
        if fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # O_NOFOLLOW: a link put in the file's place since it was checked is refused, not followed.
            fd = self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                                    0o666)
        # The line goes to the file in one write call, with no buffer in between: once it
        # returns, the line is in the kernel's page cache.
        done = os.write(fd, data)
        while done < len(data):  # a short write (a full disk, a signal): write the rest
            done += os.write(fd, memoryview(data)[done:])
        if self._fsync:
            os.fsync(fd)
        return data.decode("ascii")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RecordWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_records(path: str | os.PathLike[str], *, strict: bool = False) -> Iterator[dict[str, Any]]:
    """The records of a JSONL file, in order.

    A torn last line (a run killed mid-write) is skipped, unless `strict`, where it raises
    ValueError; a malformed line elsewhere, a record of another schema version or one without
    the fields every record has (the committed schema's ``required``) raises ValueError naming
    its line number.
    """
    p = Path(path)
    if not p.exists():
        return
    with open(p, "rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    required = _required_fields()
    torn_tail = bool(lines) and lines[-1] != b""
    for i, raw in enumerate(lines):
        if not raw:
            continue
        last = i == len(lines) - 1
        try:
            rec = json.loads(raw.decode("ascii"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if last and torn_tail and not strict and _is_record_start(raw):
                return
            raise ValueError(f"{p}:{i + 1}: not a valid record line: {exc}") from exc
        if last and torn_tail:
            if strict:
                raise ValueError(f"{p}:{i + 1}: the last line has no newline (torn write)")
            if not _is_record_start(raw):
                raise ValueError(f"{p}:{i + 1}: not a record line")
            return
        if not isinstance(rec, dict) or rec.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(_version_error(p, i + 1, rec))
        if not required <= rec.keys():
            missing = sorted(required.difference(rec.keys()))
            raise ValueError(f"{p}:{i + 1}: not an episode record (no {', '.join(missing)}); records files are "
                             "written by `agentgym eval` and `agentgym bench`")
        yield rec


@functools.lru_cache(maxsize=1)
def _required_fields() -> frozenset[str]:
    """The fields every record has: the committed schema's ``required`` list."""
    from importlib import resources

    schema = json.loads(resources.files("agentgym.eval").joinpath("record.schema.json").read_text("utf-8"))
    return frozenset(schema["required"])


def _version_error(path: Path, line: int, rec: Any) -> str:
    """The one-line refusal of a record of another schema version."""
    version = rec.get("schema_version") if isinstance(rec, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version < SCHEMA_VERSION:
        return (f"{path}:{line}: a schema-{version} record (written by an older agentgym); schema "
                f"{SCHEMA_VERSION} ties every fault to what it hits, which old records lack: re-run the episodes")
    return f"{path}:{line}: not a schema-{SCHEMA_VERSION} record (schema_version {version!r})"
