"""`ReplayAhead`: replay a run's records while the run is still playing.

A board verifies a sealed run by replaying every episode, as it verifies an upload. Done after
the last episode, that replay is the whole wait between the run's end and its entry. The board
writes the records itself, one at a time, so it can hand each to a background worker process as
it is written (`agentgym.leaderboard.verify.background_pool`: lowest CPU priority, so it uses
the cycles the board's event loop leaves free); at the end only the episodes the worker has not
reached are replayed, and verification is otherwise the same (`verify_submission(replayed=...)`).

A verdict counts only for the exact bytes it replayed: each is kept with the SHA-256 of the
record's line, and the line verified at the end must have the same digest. A worker that fails
or is gone leaves its episodes to be replayed at the end, as if they had never been handed over.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool

from agentgym.eval.jobs import EpisodeJob
from agentgym.leaderboard.verify import Mismatch, background_pool, drop_pool, replay_lines

__all__ = ["ReplayAhead", "line_digest", "warm_up"]

log = logging.getLogger("agentgym.leaderboard")

#: Episodes handed to the worker at once: one process round trip per batch, and the batch a run
#: ends with (fewer than this) is left to the final replay.
BATCH = 16
#: A batch is handed over sooner once its lines take this many bytes: what waits in the board's
#: memory, and what is pickled to the worker at once, stays small whatever the records' size.
BATCH_BYTES = 4 * 1024 * 1024


def line_digest(line: str | bytes) -> str:
    """The SHA-256 of a record's JSON line, without its newline."""
    data = line.encode("ascii") if isinstance(line, str) else line
    return hashlib.sha256(data.rstrip(b"\n")).hexdigest()


class ReplayAhead:
    """Replays records in a background process as they are added.

    Args:
        pool: makes the executor the replays run on (default: the process's background worker).
        batch: episodes per hand-over.
        batch_bytes: bytes of lines per hand-over at most (a batch goes sooner when they pass it).
    """

    def __init__(self, pool: Callable[[], Executor] = background_pool, batch: int = BATCH,
                 batch_bytes: int = BATCH_BYTES) -> None:
        self._pool = pool
        self._batch = batch
        self._batch_bytes = batch_bytes
        self._waiting: list[tuple[EpisodeJob, bytes]] = []
        self._waiting_bytes = 0
        self._sent: list[tuple[list[tuple[str, str]], Future[list[Mismatch | None]]]] = []
        self._lock = threading.Lock()
        self._cancelled = False

    def add(self, job: EpisodeJob, line: str) -> None:
        """Queue the record `line` (its JSON line as written) of episode `job` for replay."""
        with self._lock:
            if self._cancelled:
                return
            self._waiting.append((job, line.encode("ascii")))
            self._waiting_bytes += len(line)
            if len(self._waiting) < self._batch and self._waiting_bytes < self._batch_bytes:
                return
            items, self._waiting, self._waiting_bytes = self._waiting, [], 0
        pool = self._pool()
        try:
            future = pool.submit(replay_lines, items)
        except Exception as exc:  # noqa: BLE001 (a pool that is shut down or broken: replayed at the end instead)
            _forget_if_broken(pool, exc)
            log.warning("a replay-ahead batch could not be handed over (%s: %s); its episodes are replayed at "
                        "the end", type(exc).__name__, exc)
            return
        future.add_done_callback(lambda done: _forget_if_broken(pool, None if done.cancelled() else done.exception()))
        with self._lock:
            self._sent.append(([(j.key, line_digest(data)) for j, data in items], future))

    def verdicts(self, digests: Mapping[str, str], timeout_s: float | None = None) -> dict[str, Mismatch | None]:
        """The verdicts of the replays made, by episode key, for the records whose line still has
        the digest it had when it was handed over (`digests`: key -> `line_digest` of the line
        verified now).

        Batches the worker has not started are withdrawn (their episodes are left out, for the
        caller to replay beside the worker); it waits for those in flight (up to `timeout_s` in all).
        """
        with self._lock:
            sent, self._sent = self._sent, []
        # Newest first: the worker takes batches in order, so the last ones are the least likely begun.
        sent = [item for item in reversed(sent) if not item[1].cancel()][::-1]
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        out: dict[str, Mismatch | None] = {}
        for keys, future in sent:
            try:
                found = future.result(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                future.cancel()
                continue
            except Exception as exc:  # noqa: BLE001 (the worker failed: these episodes are replayed at the end)
                log.warning("a replay-ahead batch failed (%s: %s); its episodes are replayed at the end",
                            type(exc).__name__, exc)
                continue
            for (key, digest), verdict in zip(keys, found):
                if digests.get(key) == digest:
                    out[key] = verdict
        return out

    def cancel(self) -> None:
        """Drop what is queued and not started (the run ended without being verified)."""
        with self._lock:
            self._cancelled = True
            self._waiting, self._waiting_bytes = [], 0
            sent, self._sent = self._sent, []
        for _, future in sent:
            future.cancel()


def warm_up(pool: Callable[[], Executor] = background_pool) -> None:
    """Start the background worker now (it imports the envs), so a run's first batch finds it ready."""
    try:
        pool().submit(int)
    except Exception as exc:  # noqa: BLE001 (no worker: every run replays at its end, as without one)
        log.warning("no background replay worker: %s: %s", type(exc).__name__, exc)


def _forget_if_broken(pool: Executor, exc: BaseException | None) -> None:
    # A worker that died breaks its pool for good: the next run gets a new one.
    if isinstance(exc, BrokenProcessPool) and isinstance(pool, ProcessPoolExecutor):
        drop_pool(pool)
