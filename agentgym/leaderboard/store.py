"""Verified entries in SQLite: a file created on first use, versioned, migrated forward.

Every statement that carries data is parameterised (``?``); no SQL text is ever built from a
submission. The schema version lives in the ``meta`` table and each migration runs in its own
transaction with the version bump, so an interrupted upgrade leaves the previous version.

An entry's identity is (track, model, revision, suite, config hash): a resubmission of the same
returns the existing entry and adds no row. The track is ``open`` (an uploaded run, replayed) or
``sealed`` (a run the board stepped itself, `agentgym.leaderboard.sealed`); the same model may
hold one entry in each. The board's tokens and its sealed runs live in the same file
(`agentgym.leaderboard.tokens`, `agentgym.leaderboard.sealed.book`). A run is on the board once: no two entries share a
records digest or a play digest (`agentgym.leaderboard.dedupe`); a copy under another identity
is refused (`add` raises `Duplicate`, and `find` lets the caller refuse it before replaying).
Entries stored before schema 2 have no play digest: they are matched by records digest only.
The gzip body of each accepted submission is kept beside its entry, so the board can always be
re-verified from the store.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from agentgym.leaderboard.dedupe import InFlight
from agentgym.leaderboard.submission import Duplicate
from agentgym.leaderboard.verify import Verified

__all__ = ["Store", "Entry", "SCHEMA_VERSION", "MIGRATIONS", "TRACKS", "duplicate_of", "BOARD_RESTARTED"]

#: The board's two tracks: uploads replayed (``open``) and runs the board stepped itself (``sealed``).
TRACKS = ("open", "sealed")
#: Why a board closes the sealed runs left open by its previous process (not the client's doing).
BOARD_RESTARTED = "the board restarted while the run was open"

# The columns of schema 1 (schema 3 rebuilds the table with them).
_V1_COLUMNS = """id              INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at      TEXT    NOT NULL,
            agent           TEXT    NOT NULL,
            model           TEXT    NOT NULL,
            revision        TEXT    NOT NULL,
            organisation    TEXT    NOT NULL,
            description     TEXT    NOT NULL,
            suite           TEXT    NOT NULL,
            package_version TEXT    NOT NULL,
            records_sha256  TEXT    NOT NULL,
            config_hash     TEXT    NOT NULL,
            agent_config    TEXT    NOT NULL,
            reference       INTEGER NOT NULL,
            episodes        INTEGER NOT NULL,
            summary         TEXT    NOT NULL,
            verify_s        REAL    NOT NULL"""
_V2_NAMES = ("id, created_at, agent, model, revision, organisation, description, suite, package_version, "
             "records_sha256, config_hash, agent_config, reference, episodes, summary, verify_s, play_sha256")

#: One tuple of statements per schema version; version N is reached by running MIGRATIONS[N-1].
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE submissions (
            {_V1_COLUMNS},
            UNIQUE (model, revision, suite, config_hash)
        )""",
        "CREATE INDEX submissions_suite ON submissions (suite)",
        """CREATE TABLE payloads (
            submission_id INTEGER PRIMARY KEY REFERENCES submissions (id),
            body          BLOB    NOT NULL
        )""",
    ),
    (
        # Not UNIQUE: a board of schema 1 may hold copies already; `add` refuses new ones.
        "ALTER TABLE submissions ADD COLUMN play_sha256 TEXT",
        "CREATE INDEX submissions_records ON submissions (records_sha256)",
        "CREATE INDEX submissions_play ON submissions (play_sha256)",
    ),
    (
        # The track joins the identity: SQLite changes a UNIQUE constraint only by rebuilding the
        # table (its documented procedure, run with foreign keys off by `migrate`).
        f"""CREATE TABLE submissions_v3 (
            {_V1_COLUMNS},
            play_sha256     TEXT,
            track           TEXT    NOT NULL DEFAULT 'open' CHECK (track IN ('open', 'sealed')),
            UNIQUE (track, model, revision, suite, config_hash)
        )""",
        f"INSERT INTO submissions_v3 ({_V2_NAMES}) SELECT {_V2_NAMES} FROM submissions",
        "DROP TABLE submissions",
        "ALTER TABLE submissions_v3 RENAME TO submissions",
        "CREATE INDEX submissions_suite ON submissions (suite)",
        "CREATE INDEX submissions_records ON submissions (records_sha256)",
        "CREATE INDEX submissions_play ON submissions (play_sha256)",
        """CREATE TABLE tokens (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            organisation  TEXT    NOT NULL,
            sha256        TEXT    NOT NULL UNIQUE,
            quota_per_day INTEGER NOT NULL,
            created_at    TEXT    NOT NULL,
            revoked_at    TEXT
        )""",
        """CREATE TABLE sealed_runs (
            run_id        TEXT    PRIMARY KEY,
            token_id      INTEGER NOT NULL REFERENCES tokens (id),
            suite         TEXT    NOT NULL,
            agent         TEXT    NOT NULL,
            agent_config  TEXT    NOT NULL,
            model         TEXT    NOT NULL,
            revision      TEXT    NOT NULL,
            organisation  TEXT    NOT NULL,
            description   TEXT    NOT NULL,
            opened_at     REAL    NOT NULL,
            state         TEXT    NOT NULL CHECK (state IN ('open', 'complete', 'incomplete', 'rejected')),
            closed_at     REAL,
            reason        TEXT,
            submission_id INTEGER REFERENCES submissions (id)
        )""",
        "CREATE INDEX sealed_runs_token ON sealed_runs (token_id, opened_at)",
    ),
    (
        # A run that never got an episode to play (the track was full) spends no quota.
        "ALTER TABLE sealed_runs ADD COLUMN counted INTEGER NOT NULL DEFAULT 1",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class Entry:
    """One verified submission as stored."""

    id: int
    created_at: str
    agent: str
    model: str
    revision: str
    organisation: str
    description: str
    suite: str
    package_version: str
    records_sha256: str
    config_hash: str
    agent_config: dict[str, Any]
    reference: bool
    episodes: int
    summary: dict[str, Any]
    verify_s: float
    #: What the run played (`agentgym.leaderboard.dedupe.play_digest`); None for entries older than schema 2.
    play_sha256: str | None = None
    #: ``open`` (an uploaded run, replayed; privilege is the submitter's word) or ``sealed`` (stepped by the board).
    track: str = "open"

    def to_dict(self) -> dict[str, Any]:
        """The entry as plain JSON data (strings exactly as submitted)."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


_COLUMNS = ("id", "created_at", "agent", "model", "revision", "organisation", "description", "suite",
            "package_version", "records_sha256", "config_hash", "agent_config", "reference", "episodes", "summary",
            "verify_s", "play_sha256", "track")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM submissions"  # fixed column names, no data


def _entry(row: tuple[Any, ...]) -> Entry:
    d = dict(zip(_COLUMNS, row))
    d["agent_config"] = json.loads(d["agent_config"])
    d["summary"] = json.loads(d["summary"])
    d["reference"] = bool(d["reference"])
    return Entry(**d)


class Store:
    """The leaderboard's SQLite database.

    Args:
        path: the database file; created (with its folder) and migrated on first use.

    Raises:
        ValueError: the file holds a newer schema than this agentgym knows.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        #: The digests of the submissions being verified for this board now.
        self.in_flight = InFlight()
        self.migrate()

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A short connection to the board's file (autocommit; foreign keys enforced).

        One per operation: safe from any thread, nothing held between requests. The board's
        other tables (tokens, sealed runs) are read and written through it.
        """
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        finally:
            conn.close()

    def schema_version(self) -> int:
        """The schema version of the file (0 for a new one)."""
        with self.connect() as conn:
            return self._version(conn)

    @staticmethod
    def _version(conn: sqlite3.Connection) -> int:
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = conn.execute("SELECT value FROM meta WHERE key = ?", ("schema_version",)).fetchone()
        return int(row[0]) if row else 0

    def migrate(self) -> int:
        """Bring the file to `SCHEMA_VERSION`; return the version it had."""
        with self._lock, self.connect() as conn:
            before = self._version(conn)
            if before > SCHEMA_VERSION:
                raise ValueError(f"{self.path} has leaderboard schema {before}; this agentgym knows up to "
                                 f"{SCHEMA_VERSION} (upgrade agentgym)")
            # A table rebuild drops a table that others reference: foreign keys are off while
            # migrating (a pragma that only takes effect outside a transaction) and checked
            # before each commit instead.
            conn.execute("PRAGMA foreign_keys = OFF")
            for version in range(before + 1, SCHEMA_VERSION + 1):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    # Another process may have migrated while this one waited for the lock.
                    if self._version(conn) >= version:
                        conn.execute("ROLLBACK")
                        continue
                    for statement in MIGRATIONS[version - 1]:
                        conn.execute(statement)
                    broken = conn.execute("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise ValueError(f"migrating {self.path} to schema {version} broke foreign keys: {broken[:3]}")
                    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                 ("schema_version", str(version)))
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            return before

    def add(self, verified: Verified, body: bytes, play_sha256: str | None = None, *, track: str = "open",
            in_transaction: Any = None) -> tuple[Entry, bool]:
        """Store a verified submission, unless its identity is already here.

        Args:
            verified: from `agentgym.leaderboard.verify.verify_submission`.
            body: the submitted gzip body, kept beside the entry.
            play_sha256: the records' play digest (`agentgym.leaderboard.dedupe.play_digest`).
            track: ``open`` or ``sealed``.
            in_transaction: ``fn(conn, entry_id)`` run in the transaction that inserts the entry (a
                sealed run's row is closed with it, so the two never disagree).

        Returns:
            ``(entry, created)``: the new entry and True, or the existing one and False.

        Raises:
            Duplicate: another entry holds the same records or play under another identity.
        """
        if track not in TRACKS:
            raise ValueError(f"track must be one of {TRACKS}, got {track!r}")
        m = verified.manifest
        identity = (track, m.model, m.revision, m.suite, verified.config_hash)
        row = (
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
            m.agent, m.model, m.revision, m.organisation, m.description, m.suite, m.package_version,
            m.records_sha256, verified.config_hash, json.dumps(verified.agent, sort_keys=True),
            int(verified.reference), len(verified.records), json.dumps(verified.summary, sort_keys=True),
            round(verified.verify_s, 3), play_sha256, track,
        )
        with self._lock, self.connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                found = conn.execute(
                    "SELECT id FROM submissions WHERE track = ? AND model = ? AND revision = ? AND suite = ? "
                    "AND config_hash = ?", identity).fetchone()
                if found is not None:
                    conn.execute("ROLLBACK")
                    existing = self.get(int(found[0]))
                    assert existing is not None
                    return existing, False
                copy = self._find(conn, m.suite, m.records_sha256, play_sha256)
                if copy is not None:
                    raise duplicate_of(copy)  # another process stored the run while this one replayed it
                cur = conn.execute(
                    "INSERT INTO submissions (created_at, agent, model, revision, organisation, description, suite, "
                    "package_version, records_sha256, config_hash, agent_config, reference, episodes, summary, "
                    "verify_s, play_sha256, track) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
                new_id = int(cur.lastrowid)
                conn.execute("INSERT INTO payloads (submission_id, body) VALUES (?, ?)", (new_id, body))
                if in_transaction is not None:
                    in_transaction(conn, new_id)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        entry = self.get(new_id)
        assert entry is not None
        return entry, True

    @staticmethod
    def _find(conn: sqlite3.Connection, suite: str, records_sha256: str | None,
              play_sha256: str | None) -> Entry | None:
        for column, digest in (("records_sha256", records_sha256), ("play_sha256", play_sha256)):
            if digest is not None:
                # The column name is one of the two above, never data.
                row = conn.execute(f"{_SELECT} WHERE {column} = ? AND suite = ? ORDER BY id LIMIT 1",
                                   (digest, suite)).fetchone()
                if row is not None:
                    return _entry(row)
        return None

    def find(self, suite: str, *, records_sha256: str | None = None, play_sha256: str | None = None) -> Entry | None:
        """The oldest entry of `suite` with this records digest or play digest, or None.

        Scoped to a suite because a record names its suite: the same records cannot verify under another.
        """
        with self.connect() as conn:
            return self._find(conn, suite, records_sha256, play_sha256)

    def get(self, entry_id: int) -> Entry | None:
        """The entry with this id, or None."""
        with self.connect() as conn:
            row = conn.execute(f"{_SELECT} WHERE id = ?", (int(entry_id),)).fetchone()
        return _entry(row) if row else None

    def entries(self) -> list[Entry]:
        """Every entry, oldest first."""
        with self.connect() as conn:
            rows = conn.execute(f"{_SELECT} ORDER BY id").fetchall()
        return [_entry(r) for r in rows]

    def payload(self, entry_id: int) -> bytes | None:
        """The submitted gzip body of an entry, or None."""
        with self.connect() as conn:
            row = conn.execute("SELECT body FROM payloads WHERE submission_id = ?", (int(entry_id),)).fetchone()
        return bytes(row[0]) if row else None

    def sealed_run_counts(self) -> dict[tuple[str, str, str], dict[str, int]]:
        """Every sealed run on record, counted by (organisation, model, suite): ``opened``,
        ``complete``, ``abandoned`` (closed incomplete, but not by a board restart) and ``in_play``."""
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT organisation, model, suite, COUNT(*), SUM(state = 'complete'), "
                "SUM(state = 'incomplete' AND COALESCE(reason, '') != ?), SUM(state = 'open') "
                "FROM sealed_runs GROUP BY organisation, model, suite", (BOARD_RESTARTED,)).fetchall()
        return {(org, model, suite): {"opened": int(n), "complete": int(c), "abandoned": int(a), "in_play": int(p)}
                for org, model, suite, n, c, a, p in rows}

    def count(self) -> int:
        """How many entries there are."""
        with self.connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0])


def duplicate_of(entry: Entry) -> Duplicate:
    """The refusal of a copy of `entry`'s run under another identity."""
    return Duplicate("duplicate_records", f"this run is already on the board as entry {entry.id} ({entry.agent}, "
                     f"{entry.model}@{entry.revision} on {entry.suite}): one entry per run, whatever its name",
                     field="records_sha256")
