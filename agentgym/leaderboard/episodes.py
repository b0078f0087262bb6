"""The episodes of a stored entry, read from the submission body the board keeps beside it.

An entry never changes once stored, so the list of its episodes (one
`agentgym.eval.timeline.episode_summary` row each, with the env, noise, seed and trial) is
made once, by streaming the body's records (one at a time in memory), and kept for the entries
viewed last. One episode's record is found by streaming the body again to its line. The body
was verified when it was stored (its size, its lines, its schema), so it is read as it is.
"""

from __future__ import annotations

import gzip
import io
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from agentgym.eval.timeline import episode_summary
from agentgym.leaderboard.store import Store

__all__ = ["Episode", "EpisodeIndex", "EPISODES_PER_PAGE", "KEPT_LISTS"]

#: Episodes on one page of an entry's list.
EPISODES_PER_PAGE = 50
#: Entries whose episode lists are kept (each is a few hundred bytes per episode).
KEPT_LISTS = 32


@dataclass(frozen=True)
class Episode:
    """One episode of an entry, as its list shows it."""

    #: Its place in the submitted records (0-based): its address on the board.
    index: int
    env: str
    noise: str
    seed: int
    trial: int
    #: `agentgym.eval.timeline.episode_summary` of its record.
    summary: Mapping[str, Any]


def _records(body: bytes) -> Iterator[bytes]:
    """The record lines of a submission body (the manifest line skipped)."""
    with gzip.GzipFile(fileobj=io.BytesIO(body)) as stream:
        stream.readline()
        for line in stream:
            if line.strip():
                yield line


def _episode(index: int, record: Mapping[str, Any]) -> Episode:
    env = record.get("env") or {}
    return Episode(index=index, env=str(env.get("id")), noise=str(env.get("noise") or "none"),
                   seed=int(record.get("seed", 0)), trial=int(record.get("trial", 0)),
                   summary=episode_summary(record))


class EpisodeIndex:
    """The episode lists of a board's entries, made on first view and kept for the last `capacity`.

    Args:
        store: the board.
        capacity: entries whose lists are kept.
    """

    def __init__(self, store: Store, capacity: int = KEPT_LISTS) -> None:
        self.store, self.capacity = store, capacity
        self._lists: OrderedDict[int, tuple[Episode, ...]] = OrderedDict()
        self._lock = threading.Lock()
        # One list is made at a time: a burst of first views costs one pass over a body at once.
        self._making = threading.Lock()

    def episodes(self, entry_id: int) -> tuple[Episode, ...] | None:
        """Every episode of an entry, in its records' order, or None (no such entry or body)."""
        with self._lock:
            if entry_id in self._lists:
                self._lists.move_to_end(entry_id)
                return self._lists[entry_id]
        with self._making:
            with self._lock:
                if entry_id in self._lists:
                    return self._lists[entry_id]
            body = self.store.payload(entry_id)
            if body is None:
                return None
            made = tuple(_episode(i, json.loads(line)) for i, line in enumerate(_records(body)))
            with self._lock:
                self._lists[entry_id] = made
                while len(self._lists) > self.capacity:
                    self._lists.popitem(last=False)
            return made

    def record(self, entry_id: int, index: int) -> dict[str, Any] | None:
        """The record of an entry's episode `index` (0-based), or None."""
        if index < 0:
            return None
        body = self.store.payload(entry_id)
        if body is None:
            return None
        for i, line in enumerate(_records(body)):
            if i == index:
                record: dict[str, Any] = json.loads(line)
                return record
        return None
