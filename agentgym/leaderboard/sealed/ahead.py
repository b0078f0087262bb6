"""Replaying a sealed run's records while it plays, so that verifying it at the end replays nothing twice.

The board verifies a complete run like any submission (`verify_submission`), and the replay is
most of that work: done after the last episode, it is time the submitter waits for. A run of at
least `SealedConfig.replay_ahead_from` episodes hands its records, in batches as they are
written, to a replay process of the board's (one per board process, spawned at the first such
run and kept, since the board runs threads and a start-up costs seconds); `verify_submission`
then takes the verdicts from it (`ReplayAhead.replayer`) and replays in the board's own process
only what it lacks: batches left out while the replay process lagged behind (so that records
waiting for it stay few), or whose process died.

A replay checks a record as the board wrote it; the published records are those records, so
its verdict is the one a replay of the published records gives (which anyone can check:
``agentgym leaderboard verify``).
"""

from __future__ import annotations

import atexit
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from agentgym.eval.runner import EpisodeJob
from agentgym.leaderboard.verify import Mismatch, Replayer, replay_episode

__all__ = ["ReplayAhead", "BATCH", "MAX_WAITING_BATCHES"]

#: Records handed to the replay process at once (one hand-off per batch, not per record).
BATCH = 16
#: Batches of one run that may wait for the replay process; past them, a batch is left for the
#: end (its records are not kept in memory for a process that lags behind).
MAX_WAITING_BATCHES = 8

_POOL: ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()

Verdict = tuple[dict[str, Any], Mismatch | None]


def _replay_batch(items: list[tuple[EpisodeJob, dict[str, Any]]]) -> list[tuple[str, Verdict]]:
    # In the replay process: every record's verdict, by episode key.
    return [(job.key, replay_episode(job, rec)) for job, rec in items]


def _pool() -> ProcessPoolExecutor:
    global _POOL
    import multiprocessing as mp

    with _POOL_LOCK:
        if _POOL is None:
            # spawn, not fork: the board runs threads. One process keeps up with a board's
            # sessions: a replay costs about a third of playing the episode on the board.
            _POOL = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
        return _POOL


def _drop_pool(pool: ProcessPoolExecutor) -> None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is pool:
            _POOL = None
    pool.shutdown(wait=False, cancel_futures=True)


@atexit.register
def _shutdown_pool() -> None:
    if _POOL is not None:
        _POOL.shutdown(wait=False, cancel_futures=True)


class ReplayAhead:
    """The replays of one run's records, made while the run plays."""

    def __init__(self) -> None:
        self._batch: list[tuple[EpisodeJob, dict[str, Any]]] = []
        self._sent: list[Future[list[tuple[str, Verdict]]]] = []
        #: Records replayed in the board's own process at the end (left out, or their process died).
        self.replayed_here = 0

    def add(self, job: EpisodeJob, record: dict[str, Any]) -> None:
        """Queue a record just written (the board's event loop: a batch is handed off, never waited for)."""
        self._batch.append((job, record))
        if len(self._batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Hand off the records queued so far (or, while the replay process lags, leave them for the end)."""
        batch, self._batch = self._batch, []
        if not batch or sum(not f.done() for f in self._sent) >= MAX_WAITING_BATCHES:
            return
        try:
            self._sent.append(_pool().submit(_replay_batch, batch))
        except (BrokenProcessPool, RuntimeError):  # a dead pool, or one shut down at exit: left for the end
            pass

    def cancel(self) -> None:
        """Drop what is queued (the run ended incomplete)."""
        self._batch = []
        for future in self._sent:
            future.cancel()

    def replayer(self) -> Replayer:
        """For `verify_submission`: the verdicts made ahead, and a replay here of what they lack."""

        def replay(pairs: list[tuple[EpisodeJob, dict[str, Any]]]) -> list[dict[str, Any]]:
            self.flush()
            verdicts: dict[str, Verdict] = {}
            for future in self._sent:
                try:
                    verdicts.update(future.result())
                except BrokenProcessPool:  # its records are replayed below; the next run gets a new process
                    if _POOL is not None:
                        _drop_pool(_POOL)
            out = []
            for job, rec in pairs:
                verdict = verdicts.get(job.key)
                if verdict is None:
                    verdict = replay_episode(job, rec)
                    self.replayed_here += 1
                metrics, mismatch = verdict
                if mismatch is not None:
                    raise mismatch.error()
                out.append(metrics)
            return out

        return replay
