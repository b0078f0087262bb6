"""Opening a run for the commands that read one: a run folder (holding ``records.jsonl``) or a
records file, its records, and whether its last line was torn.

Every problem a person can cause here (a path that is not there, a folder that is not a run, a
records file of an older schema, a malformed line) is a `RunError` or the `ValueError` of
`agentgym.eval.records.read_records`, each one line, so the command line prints it without a
traceback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.eval.records import read_records

__all__ = ["RunError", "Run", "open_run", "records_path", "run_name"]

#: The records file of a run folder.
RECORDS_FILE = "records.jsonl"


class RunError(ValueError):
    """A run that cannot be read: the message is one line naming the path and what is wrong."""


@dataclass(frozen=True)
class Run:
    """The records of one run, read in order.

    Attributes:
        path: the records file.
        name: the run's name: its folder's name (or the records file's stem when the file is
            not a run folder's ``records.jsonl``).
        records: every complete record.
        torn_tail: the file's last line had no newline (a run killed mid-write) and was left out.
    """

    path: Path
    name: str
    records: list[dict[str, Any]]
    torn_tail: bool


def records_path(path: str | os.PathLike[str]) -> Path:
    """The records file of a run folder or records file.

    Raises:
        RunError: nothing is at `path`, or it is a folder without ``records.jsonl``.
    """
    p = Path(path)
    if p.is_dir():
        f = p / RECORDS_FILE
        if not f.is_file():
            raise RunError(f"{p} is not a run folder: it holds no {RECORDS_FILE}")
        return f
    if not p.exists():
        raise RunError(f"no run at {p}: give a run folder (it holds {RECORDS_FILE}) or a records file")
    if not p.is_file():
        raise RunError(f"{p} is neither a run folder nor a records file")
    return p


def run_name(records_file: Path) -> str:
    """A run's name: its folder's name for ``DIR/records.jsonl``, else the file's stem."""
    if records_file.name == RECORDS_FILE and records_file.parent.name:
        return records_file.parent.name
    return records_file.stem


def _torn(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def open_run(path: str | os.PathLike[str]) -> Run:
    """Read a run folder or records file.

    A torn last line is left out and reported in `Run.torn_tail` (the run that was writing it
    was killed; resuming the run plays that episode again).

    Raises:
        RunError: no run at `path`.
        ValueError: a record of another schema version, or a malformed line before the last
            (one line naming the file and line).
    """
    f = records_path(path)
    try:
        records = list(read_records(f))
    except OSError as exc:
        raise RunError(f"cannot read {f}: {exc.strerror or exc}") from exc
    return Run(f, run_name(f), records, _torn(f))
