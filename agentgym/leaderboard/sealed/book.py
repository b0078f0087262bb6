"""The sealed runs of one board: opening them under a token's quota, their episodes, and their end.

A run is opened for a suite by a token (`open_run`); its seeds come from the board's secret and
its id (`agentgym.leaderboard.sealed.seeds`: tasks of its own for each cell), and its episodes are
the suite's jobs on them. The board hands the episodes out one at a time to the run's sessions, a
cell (env, noise, env arguments) at a time, in a secret order of the run's (`Run.take`), each
labelled by its place in that order only, appends each finished episode's record, written by the
harness's own `EpisodeState` (`agentgym.eval.episode`), to a file of the run's (flushed per
episode, in a folder only the board's user can read: the records hold the seeds), and ends the
run one of three ways:

- ``complete``: every episode played; the records are verified by replay like any submission
  (`verify_submission`, with the seeds in the manifest) and stored as an entry of the sealed
  track, whose body, the records with their seeds, is published (`finish`). The replay starts
  while the run plays: each record goes to a background worker as it is written
  (`agentgym.leaderboard.replay_ahead`), so the end waits only for the episodes it has not reached;
- ``incomplete``: an episode in play was lost (its session closed, reaped or timed out), nothing
  was asked of the run for the grace period, it ran past its longest duration, its token was
  revoked, or the board restarted. Never ranked, and its records are never published;
- ``rejected``: the records did not verify (a bug of the board's: they are its own).

A token has at most one run in play at a time. Every run row counts against its token's quota for
24 hours after it opened, whatever its end, except a run that closed incomplete before a single
episode was handed to it (the track was full while it waited for a session).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import agentgym
from agentgym.bench.suites import SUITES, Suite
from agentgym.eval.jobs import AgentSpec, EpisodeJob
from agentgym.eval.records import RecordWriter
from agentgym.leaderboard.dedupe import play_digest
from agentgym.leaderboard.replay_ahead import ReplayAhead, line_digest, warm_up
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.sealed.seeds import deal_order, new_run_id, run_seeds
from agentgym.leaderboard.store import BOARD_RESTARTED, Entry, Store
from agentgym.leaderboard.submission import (
    RUN_ID_PATTERN,
    LimitExceeded,
    MalformedSubmission,
    Manifest,
    SealedRun,
    Submission,
    SubmissionError,
    check_manifest_text,
    load_json_line,
    manifest_line,
)
from agentgym.leaderboard.tokens import Token
from agentgym.leaderboard.verify import config_hash, verify_submission

__all__ = ["DeclaredAgent", "Run", "RunBook", "RunRefused", "QuotaSpent", "Cell", "QUOTA_WINDOW_S", "RUN_PHASES",
           "RUN_STATES"]

log = logging.getLogger("agentgym.leaderboard")

#: A token's quota counts the runs it opened in the last this many seconds.
QUOTA_WINDOW_S = 24 * 3600.0
#: The agent's declared configuration, as JSON, at most (a built-in agent's is a few dozen bytes).
MAX_AGENT_CONFIG_BYTES = 16 * 1024
#: The phases of a run in memory, and the states of a run's row (open, then how it ended).
RUN_PHASES = ("playing", "verifying")
#: Seconds a played run waits, in all, for the replay-ahead batches in flight (at most two: the
#: rest are withdrawn). The worker runs only on CPU nothing else wants, so on a busy machine it
#: may not run for a while; its batches are then replayed with the rest rather than waited for.
REPLAY_AHEAD_WAIT_S = 2.0
RUN_STATES = ("open", "complete", "incomplete", "rejected")


class RunRefused(Exception):
    """A sealed request refused: ``status`` is the HTTP status, ``code`` a stable reason."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


class QuotaSpent(RunRefused):
    """The token opened its quota of runs in the last 24 hours (HTTP 429)."""


class RunTooLarge(Exception):
    """A run's records passed its cap (`SealedConfig.max_run_bytes`): it cannot be finished."""


class DeclaredAgent:
    """The agent of a sealed run as its client declared it. It acts elsewhere and never reads the
    env, so it is never privileged, whatever the client's agent is."""

    privileged = False

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._config = dict(config)

    def config(self) -> dict[str, Any]:
        return self._config


#: One cell of a suite: the episodes that share an env id, a noise setting and env arguments.
Cell = tuple[str, str | None, tuple[tuple[str, Any], ...]]


def cell_of(job: EpisodeJob) -> Cell:
    return (job.env_id, job.noise, job.kwargs)


@dataclass(eq=False)
class Run:
    """A sealed run in play (in memory; its row in the database says who opened it and how it ended)."""

    run_id: str
    token: Token
    suite: Suite
    seeds: tuple[int, ...]
    agent_name: str
    agent: DeclaredAgent
    model: str
    revision: str
    organisation: str
    description: str
    records_path: Path
    jobs: list[EpisodeJob] = field(default_factory=list)
    #: ``playing``, then ``verifying`` once every episode is played (then the run leaves memory).
    phase: str = "playing"
    opened: float = field(default_factory=time.monotonic)
    last_active: float = field(default_factory=time.monotonic)
    #: The order the job indices are dealt in (`agentgym.leaderboard.sealed.seeds.deal_order`;
    #: empty: the suite's); an episode's label is its place in it.
    order: list[int] = field(default_factory=list)
    #: Job indices not handed out yet, per cell, in the deal order.
    pending: dict[Cell, deque[int]] = field(default_factory=dict)
    #: Job index -> the id of the session it is in play on.
    in_play: dict[int, str] = field(default_factory=dict)
    #: Job index -> when it was handed out (`time.monotonic`), for the episodes in play.
    taken_at: dict[int, float] = field(default_factory=dict)
    #: An episode has been handed out (a run that never had one spends no quota).
    started: bool = False
    #: Job indices in the order their records were written.
    written: list[int] = field(default_factory=list)
    #: The ids of the sessions open on this run.
    seats: set[str] = field(default_factory=set)
    #: Sessions being opened for this run now (counted against `SealedConfig.sessions_per_run`).
    opening: int = 0
    writer: RecordWriter | None = None
    #: Replays the records as they are written (None: all are replayed once the run is played).
    ahead: ReplayAhead | None = None
    #: The caps on one record's line and on all of them (`SealedConfig`), and the bytes written.
    max_record_bytes: int = SealedConfig.max_record_bytes
    max_run_bytes: int = SealedConfig.max_run_bytes
    bytes_written: int = 0

    def __post_init__(self) -> None:
        self.jobs = self.suite.jobs(self.seeds)
        self.order = self.order or list(range(len(self.jobs)))
        for job in self.jobs:  # the cells in suite order
            self.pending.setdefault(cell_of(job), deque())
        for i in self.order:
            self.pending[cell_of(self.jobs[i])].append(i)
        self._labels = {index: place for place, index in enumerate(self.order)}
        self.spec = AgentSpec(self.agent_name)

    @property
    def playing(self) -> bool:
        return self.phase == "playing"

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def cells(self) -> list[Cell]:
        """The run's cells, in suite order."""
        return list(self.pending)

    def label(self, job_index: int) -> int:
        """What the client is told of episode `job_index`: its place in the deal order, which says
        nothing of its task (two trials of a task have unrelated labels)."""
        return self._labels[job_index]

    def take(self, cell: Cell, session_id: str) -> int | None:
        """The next episode of `cell`, now in play on `session_id`; None when the cell has none left."""
        queue = self.pending[cell]
        if not queue:
            return None
        index = queue.popleft()
        self.in_play[index] = session_id
        self.taken_at[index] = time.monotonic()
        self.started = True
        return index

    def give_back(self, index: int) -> None:
        """An episode taken but never shown to the client (its reset failed) goes back to the front."""
        self.in_play.pop(index, None)
        self.taken_at.pop(index, None)
        self.pending[cell_of(self.jobs[index])].appendleft(index)

    def record(self, index: int, rec: dict[str, Any]) -> bool:
        """Append episode `index`'s record; True when it was the run's last episode.

        Raises:
            RunTooLarge: the record, or the run's records with it, passed their cap.
        """
        assert self.writer is not None and index in self.in_play
        line = self.writer.write(rec)
        del self.in_play[index]
        self.taken_at.pop(index, None)
        self.written.append(index)
        self.bytes_written += len(line)
        if len(line) > self.max_record_bytes or self.bytes_written > self.max_run_bytes:
            raise RunTooLarge(f"its records passed {self.max_run_bytes} bytes" if len(line) <= self.max_record_bytes
                              else f"a record of {len(line)} bytes passed the cap of {self.max_record_bytes}")
        if self.ahead is not None:
            self.ahead.add(self.jobs[index], line)
        return len(self.written) == len(self.jobs)

    def counts(self) -> dict[str, int]:
        return {"episodes": len(self.jobs), "done": len(self.written), "in_play": len(self.in_play),
                "pending": sum(len(q) for q in self.pending.values())}


def _cell_dict(cell: Cell, episodes: int) -> dict[str, Any]:
    env_id, noise, kwargs = cell
    return {"env_id": env_id, "kwargs": dict(kwargs), "noise": noise, "episodes": episodes}


class RunBook:
    """The sealed runs of one board.

    Args:
        store: the board (its database holds the runs' rows and the entries).
        secret: the board's secret (`agentgym.leaderboard.secret`).
        config: the sealed track's limits.
        suites: the suites runs may be opened for (default: `SUITES`; only current ones).
        workers: replay processes when a complete run is verified (default: by suite size).
        run_ids: makes each new run's id (default: `new_run_id`, 192 random bits); a fixed
            sequence makes a board's seeds reproducible (tests, benchmarks).
    """

    def __init__(self, store: Store, secret: bytes, config: SealedConfig | None = None, *,
                 suites: Mapping[str, Suite] | None = None, workers: int | None = None,
                 run_ids: Callable[[], str] = new_run_id) -> None:
        self.store = store
        self._new_id = run_ids
        self.config = config or SealedConfig()
        self.suites = SUITES if suites is None else suites
        self.workers = workers
        self._secret = secret
        self._live: dict[str, Run] = {}
        self._lock = threading.Lock()  # the live runs are read by finishing threads too
        if self.config.replay_ahead:
            warm_up()
        self.records_dir = Path(f"{store.path}.sealed")
        self.records_dir.mkdir(mode=0o700, exist_ok=True)
        os.chmod(self.records_dir, 0o700)  # mkdir's mode passes through the umask
        self._close_left_open()

    # ------------------------------------------------------------------ opening
    def open_run(self, token: Token, request: Any) -> Run:
        """Open a sealed run for `token`, as `request` (the parsed JSON body) asks.

        Raises:
            RunRefused: 422 a malformed request or an unknown or old suite, 403 another
                organisation's name, 409 the token has a run in play, or this agent and model
                already hold a sealed entry or an open run, 429 (`QuotaSpent`) the token's quota
                is spent.
        """
        fields = _parse_open(request, token)
        suite = self.suites.get(fields["suite"])
        if suite is None or not suite.current:
            known = sorted(s for s, v in self.suites.items() if v.current)
            raise RunRefused(422, "unknown_suite", f"suite {fields['suite']!r} cannot be run sealed here; current "
                             f"suites: {', '.join(known)}")
        agent = {"name": fields["agent"], "config": fields["agent_config"], "privileged": False}
        identity = (fields["model"], fields["revision"], suite.id, config_hash(agent))
        existing = self._sealed_entry(*identity)
        if existing is not None:
            raise RunRefused(409, "already_sealed", f"{fields['agent']} ({fields['model']}@{fields['revision']}) "
                             f"already has sealed entry {existing} on {suite.id}; a new revision makes a new entry")
        run_id = self._new_id()
        if not RUN_ID_PATTERN.fullmatch(run_id):
            raise ValueError(f"the board's run-id source made {run_id!r}, not a run id ({RUN_ID_PATTERN.pattern})")
        now = time.time()
        with self._lock:
            held = next((r for r in self._live.values() if r.token.id == token.id and r.playing), None)
            if held is not None:
                raise RunRefused(409, "token_has_run", f"this token's sealed run {held.run_id} is in play: a token "
                                 "plays one run at a time (finish it, or let it close)")
            if any((r.model, r.revision, r.suite.id, config_hash({"name": r.agent_name, "config": r.agent.config(),
                                                                   "privileged": False})) == identity
                   for r in self._live.values()):
                raise RunRefused(409, "run_in_play", "a sealed run of this agent, model and revision is in play now")
            self._insert_under_quota(token, run_id, suite, fields, now)
            run = Run(run_id=run_id, token=token, suite=suite, seeds=run_seeds(self._secret, run_id, suite),
                      agent_name=fields["agent"], agent=DeclaredAgent(fields["agent_config"]), model=fields["model"],
                      revision=fields["revision"], organisation=fields["organisation"],
                      description=fields["description"], records_path=self.records_dir / f"{run_id}.jsonl",
                      order=deal_order(self._secret, run_id, len(suite)),
                      max_record_bytes=self.config.max_record_bytes, max_run_bytes=self.config.max_run_bytes)
            run.writer = RecordWriter(run.records_path)
            run.ahead = ReplayAhead() if self.config.replay_ahead else None
            self._live[run_id] = run
        log.info("sealed run %s opened by token %d (%s) for %s on %s", run_id, token.id, token.organisation,
                 fields["agent"], suite.id)
        return run

    def _insert_under_quota(self, token: Token, run_id: str, suite: Suite, fields: dict[str, Any], now: float) -> None:
        with self.store.connect() as conn:
            conn.execute("BEGIN IMMEDIATE")  # the count and the insert are one step for concurrent opens
            try:
                since = now - QUOTA_WINDOW_S
                row = conn.execute("SELECT COUNT(*), MIN(opened_at) FROM sealed_runs WHERE token_id = ? AND "
                                   "opened_at > ? AND counted = 1", (token.id, since)).fetchone()
                if int(row[0]) >= token.quota_per_day:
                    wait = max(1, int(row[1] + QUOTA_WINDOW_S - now) + 1)
                    raise QuotaSpent(429, "quota_spent", f"this token has opened its {token.quota_per_day} sealed "
                                     f"runs of the last 24 hours; the next may open in {wait} s",
                                     headers={"Retry-After": str(wait)})
                conn.execute(
                    "INSERT INTO sealed_runs (run_id, token_id, suite, agent, agent_config, model, revision, "
                    "organisation, description, opened_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open')",
                    (run_id, token.id, suite.id, fields["agent"], json.dumps(fields["agent_config"], sort_keys=True),
                     fields["model"], fields["revision"], fields["organisation"], fields["description"], now))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _sealed_entry(self, model: str, revision: str, suite: str, agent_hash: str) -> int | None:
        with self.store.connect() as conn:
            row = conn.execute("SELECT id FROM submissions WHERE track = 'sealed' AND model = ? AND revision = ? AND "
                               "suite = ? AND config_hash = ?", (model, revision, suite, agent_hash)).fetchone()
        return int(row[0]) if row else None

    # ------------------------------------------------------------------ queries
    def live(self, run_id: str) -> Run | None:
        """The run `run_id` if it is in play or being verified, else None."""
        with self._lock:
            return self._live.get(run_id)

    def live_runs(self) -> list[Run]:
        with self._lock:
            return list(self._live.values())

    def by_phase(self) -> dict[str, int]:
        """The runs in memory, counted by phase (`RUN_PHASES`)."""
        counts = dict.fromkeys(RUN_PHASES, 0)
        for run in self.live_runs():
            counts[run.phase] = counts.get(run.phase, 0) + 1
        return counts

    def by_state(self) -> dict[str, int]:
        """Every run on the board's record, whichever process ran it, counted by state (`RUN_STATES`)."""
        with self.store.connect() as conn:
            rows = conn.execute("SELECT state, COUNT(*) FROM sealed_runs GROUP BY state").fetchall()
        return {**dict.fromkeys(RUN_STATES, 0), **{str(state): int(n) for state, n in rows}}

    def status(self, run_id: str, token: Token) -> dict[str, Any]:
        """What the owner of run `run_id` may know of it: its state, its counts, its sessions in play,
        and once complete its entry.

        Raises:
            RunRefused: 404 no such run of this token's.
        """
        run = self.live(run_id)
        if run is not None and run.token.id == token.id:
            sessions = [{"session_id": sid, "label": run.label(i), **_cell_dict(cell_of(run.jobs[i]), 0)}
                        for i, sid in sorted(run.in_play.items())]
            for s in sessions:
                del s["episodes"]
            return {"run_id": run_id, "suite": run.suite.id, "state": "open" if run.playing else "verifying",
                    "reason": None, **run.counts(), "cells": self._cells(run), "in_play_sessions": sessions,
                    "entry": None}
        with self.store.connect() as conn:
            row = conn.execute("SELECT suite, state, reason, submission_id FROM sealed_runs WHERE run_id = ? AND "
                               "token_id = ?", (run_id, token.id)).fetchone()
        if row is None:
            raise RunRefused(404, "unknown_run", f"no sealed run {run_id!r} of this token")
        suite_id, state, reason, entry_id = row
        entry = self.store.get(entry_id) if entry_id is not None else None
        return {"run_id": run_id, "suite": suite_id, "state": state, "reason": reason,
                "entry": None if entry is None else entry_link(entry)}

    def _cells(self, run: Run) -> list[dict[str, Any]]:
        sizes: dict[Cell, int] = {}
        for job in run.jobs:
            sizes[cell_of(job)] = sizes.get(cell_of(job), 0) + 1
        return [_cell_dict(c, n) for c, n in sizes.items()]

    def opened(self, run: Run) -> dict[str, Any]:
        """The answer to the run's opening: its id, its cells, and the limits its client must keep."""
        return {"run_id": run.run_id, "suite": run.suite.id, "organisation": run.organisation,
                "episodes": len(run.jobs), "cells": self._cells(run), "sessions_per_run": self.config.sessions_per_run,
                "grace_s": self.config.grace_s, "sessions_url": f"/sealed/runs/{run.run_id}"}

    # ------------------------------------------------------------------ ending
    def close(self, run: Run, state: str, reason: str) -> bool:
        """End a run that did not complete (``incomplete``); False if it had ended already."""
        with self._lock:
            if self._live.get(run.run_id) is not run or not run.playing:
                return False
            run.phase = state
            del self._live[run.run_id]
        # The records go before the state says so: whoever reads the state finds them gone.
        self._drop_records(run)
        self._set_state(run.run_id, state, reason, counted=run.started)
        log.info("sealed run %s closed %s: %s", run.run_id, state, reason)
        return True

    def _set_state(self, run_id: str, state: str, reason: str | None, conn: sqlite3.Connection | None = None,
                   entry_id: int | None = None, counted: bool = True) -> None:
        statement = ("UPDATE sealed_runs SET state = ?, reason = ?, closed_at = ?, submission_id = ?, counted = ? "
                     "WHERE run_id = ? AND state = 'open'")
        values = (state, reason, time.time(), entry_id, int(counted), run_id)
        if conn is not None:
            conn.execute(statement, values)
            return
        with self.store.connect() as own:
            own.execute(statement, values)

    def _drop_records(self, run: Run) -> None:
        if run.ahead is not None:
            run.ahead.cancel()
        if run.writer is not None:
            run.writer.close()
        run.records_path.unlink(missing_ok=True)

    def begin_verifying(self, run: Run) -> None:
        """Every episode is played: no more requests are served for the run."""
        run.phase = "verifying"

    def finish(self, run: Run, *, level: int = 6) -> Entry | None:
        """Verify a run whose every episode is played and store it as a sealed entry (blocking: a
        worker thread's job). Returns the entry, or None if the records did not verify.

        The records file is read a line at a time, each line's size checked before it is read,
        in the suite's order; it is never held whole, as bytes or joined."""
        assert run.writer is not None and not run.playing
        run.writer.close()
        try:
            spans = _spans(run.records_path, run.max_record_bytes, run.max_run_bytes)
            in_order = [spans[i] for i in sorted(range(len(spans)), key=run.written.__getitem__)]
            digest = hashlib.sha256()
            for line in _lines(run.records_path, in_order):
                digest.update(line)
            manifest = Manifest(agent=run.agent_name, model=run.model, revision=run.revision,
                                organisation=run.organisation, description=run.description, suite=run.suite.id,
                                package_version=agentgym.__version__, records_sha256=digest.hexdigest(),
                                sealed=SealedRun(run_id=run.run_id, seeds=run.seeds))
            # zlib lets go of the GIL while it compresses: the body is made beside the parsing below.
            with ThreadPoolExecutor(1, thread_name_prefix="agentgym-sealed-body") as compressing:
                making = compressing.submit(_gzip_body, manifest, run.records_path, in_order, level)
                # The body is the board's own, so its lines are parsed as they are (json.loads), not
                # through the bounded decoder that guards against hostile uploads; verification is the same.
                parsed, digests = [], {}
                for line in _lines(run.records_path, in_order):
                    rec = json.loads(line)
                    parsed.append(rec)
                    digests[rec["key"]] = line_digest(line)
                body = making.result()
            sub = Submission(manifest=manifest, records=parsed, records_sha256=manifest.records_sha256,
                             body_bytes=len(body), records_bytes=sum(n for _, n in spans))
            replayed = None
            if run.ahead is not None:
                replayed = run.ahead.verdicts(digests, timeout_s=REPLAY_AHEAD_WAIT_S)
            verified = verify_submission(sub, self.suites, workers=self.workers, replayed=replayed)

            def closed_with_entry(conn: sqlite3.Connection, entry_id: int) -> None:
                self._set_state(run.run_id, "complete", None, conn, entry_id)

            entry, _ = self.store.add(verified, body, play_sha256=play_digest(verified.records), track="sealed",
                                      in_transaction=closed_with_entry)
        except SubmissionError as exc:
            # The board's own records: a refusal is the board's bug (an env that is not deterministic).
            log.error("sealed run %s did not verify: %s", run.run_id, exc)
            self._set_state(run.run_id, "rejected", f"the board's records did not verify: {exc}")
            entry = None
        except Exception:  # noqa: BLE001 (the end of a background job: logged in full, and the run says so)
            log.exception("sealed run %s: verifying it failed", run.run_id)
            self._set_state(run.run_id, "rejected", "the board failed while verifying the run (its bug, logged)")
            entry = None
        finally:
            with self._lock:
                self._live.pop(run.run_id, None)
            run.records_path.unlink(missing_ok=True)
        if entry is not None:
            log.info("sealed run %s complete: entry %d, %d episodes verified in %.2f s", run.run_id, entry.id,
                     entry.episodes, entry.verify_s)
        return entry

    def overdue(self) -> list[tuple[Run, int, str]]:
        """The episodes in play past `SealedConfig.max_episode_s`: ``(run, job index, session id)``."""
        limit = time.monotonic() - self.config.max_episode_s
        return [(run, index, run.in_play[index]) for run in self.live_runs() if run.playing
                for index, since in list(run.taken_at.items()) if since < limit and index in run.in_play]

    def sweep(self, revoked: set[int]) -> list[tuple[Run, str]]:
        """The runs to close now: idle past the grace period, past their longest duration, or of a
        revoked token (in `revoked`); each with why."""
        now = time.monotonic()
        out = []
        for run in self.live_runs():
            if not run.playing:
                continue
            if run.token.id in revoked:
                out.append((run, "its token was revoked"))
            elif now - run.last_active > self.config.grace_s:
                out.append((run, f"no request for {self.config.grace_s:g} s (the grace period)"))
            elif now - run.opened > self.config.max_run_s:
                out.append((run, f"it ran past {self.config.max_run_s:g} s"))
        return out

    def _close_left_open(self) -> None:
        # The envs of a run's episodes in play lived in the board's previous process: gone.
        with self.store.connect() as conn:
            left = [r[0] for r in conn.execute("SELECT run_id FROM sealed_runs WHERE state = 'open'")]
            conn.execute("UPDATE sealed_runs SET state = 'incomplete', reason = ?, closed_at = ? WHERE state = 'open'",
                         (BOARD_RESTARTED, time.time()))
        for run_id in left:
            (self.records_dir / f"{run_id}.jsonl").unlink(missing_ok=True)


def _spans(path: Path, max_line: int, max_total: int) -> list[tuple[int, int]]:
    """``(offset, length)`` of each line of a records file, in file order; nothing past the caps is read.

    Raises:
        LimitExceeded: the file, or one of its lines, is over its cap.
    """
    total = path.stat().st_size
    if total > max_total:
        raise LimitExceeded("too_large", f"the run's records are {total} bytes, over the cap of {max_total}")
    spans = []
    offset = 0
    with open(path, "rb") as fh:
        while True:
            line = fh.readline(max_line + 1)
            if not line:
                return spans
            if len(line) > max_line or not line.endswith(b"\n"):
                raise LimitExceeded("line_too_long", f"a record line is over {max_line} bytes (or unterminated)")
            spans.append((offset, len(line)))
            offset += len(line)


def _lines(path: Path, spans: list[tuple[int, int]]) -> Iterator[bytes]:
    """The lines at `spans` of `path`, one at a time, in that order (each with its newline)."""
    with open(path, "rb") as fh:
        for offset, length in spans:
            fh.seek(offset)
            yield fh.read(length)


def _gzip_body(manifest: Manifest, path: Path, spans: list[tuple[int, int]], level: int) -> bytes:
    """The submission body (`agentgym-submission/1`) of `manifest` and the lines at `spans`, made a line at a time."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=level, mtime=0) as gz:
        gz.write(manifest_line(manifest))
        for line in _lines(path, spans):
            gz.write(line)
    return out.getvalue()


def entry_link(entry: Entry) -> dict[str, Any]:
    """A sealed entry as a run's status names it, with the URL of its published records."""
    s = entry.summary
    return {"id": entry.id, "url": f"/submissions/{entry.id}", "records_url": f"/submissions/{entry.id}/records",
            "episodes": entry.episodes, "summary": {k: s.get(k) for k in ("primary", "success", "score")}}


_OPEN_FIELDS = {"suite", "agent", "agent_config", "model", "revision", "organisation", "description"}


def _parse_open(request: Any, token: Token) -> dict[str, Any]:
    if not isinstance(request, dict):
        raise RunRefused(422, "invalid_request", "the body must be a JSON object")
    unknown = sorted(set(request) - _OPEN_FIELDS)
    missing = sorted({"suite", "agent", "model", "revision"} - set(request))
    if unknown or missing:
        raise RunRefused(422, "invalid_request", f"unknown fields {unknown}, missing fields {missing}; a run is "
                         f"opened with {sorted(_OPEN_FIELDS)}")
    out: dict[str, Any] = {"description": "", "organisation": token.organisation, "agent_config": {}}
    out.update(request)
    try:
        for name in ("suite", "agent", "model", "revision", "organisation", "description"):
            check_manifest_text(name, out[name])
    except MalformedSubmission as exc:
        raise RunRefused(422, "invalid_request", str(exc)) from None
    if out["organisation"] != token.organisation:
        raise RunRefused(403, "wrong_organisation", f"this token is {token.organisation!r}'s; its runs are shown "
                         "under that name (leave --org out, or ask the board's admin for a token of yours)")
    config = out["agent_config"]
    if not isinstance(config, dict):
        raise RunRefused(422, "invalid_request", "agent_config must be a JSON object")
    encoded = json.dumps(config, sort_keys=True, allow_nan=False)
    if len(encoded) > MAX_AGENT_CONFIG_BYTES:
        raise RunRefused(422, "invalid_request", f"agent_config is over {MAX_AGENT_CONFIG_BYTES} bytes of JSON")
    out["agent_config"] = json.loads(encoded)
    return out


def parse_open_body(body: bytes) -> Any:
    """The JSON of a run-opening body, depth-checked before it is parsed.

    Raises:
        RunRefused: 422 not JSON (or too deep, a key twice, NaN).
    """
    try:
        return load_json_line(body, "the body")
    except MalformedSubmission as exc:
        raise RunRefused(422, "invalid_json", str(exc)) from None
