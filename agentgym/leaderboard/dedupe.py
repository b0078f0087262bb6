"""One entry per run: what identifies a run's records, and the runs being verified right now.

A board holds a run once, by either of two digests:

- the records digest (the manifest's ``records_sha256``): the same bytes. It is on the manifest
  line, so a copy is refused before replay, having decompressed one line;
- the play digest (`play_digest`): the same episodes played with the same actions, whatever the
  bytes (records re-serialised or reordered, the agent's name or config relabelled). Replay
  derives every other field of a record from these, so two runs with one play digest have the
  same numbers: the second is a copy under another name. It is checked after replay, so that a
  copy with edited numbers is refused as tampered.

`InFlight` holds the records digests of the submissions being verified in this process, so a
copy sent while its original is still replaying is refused at once too, instead of replaying twice.
"""

from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from agentgym.eval.records import canonical_json
from agentgym.leaderboard.submission import Duplicate

__all__ = ["play_digest", "InFlight"]


def play_digest(records: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 of what a run played: each episode's key, its actions and whether the agent failed, by key.

    Defined for any decoded records (a malformed record gives a digest no valid run has).
    """
    played = sorted(([rec.get("key"), rec.get("actions"), rec.get("agent_error") is not None] for rec in records),
                    key=lambda item: canonical_json(item[0]))
    return hashlib.sha256(canonical_json(played).encode()).hexdigest()


class InFlight:
    """The digests of the submissions being verified now; a second holder of one is refused."""

    def __init__(self) -> None:
        self._held: set[str] = set()
        self._lock = threading.Lock()

    @contextmanager
    def hold(self, digest: str, what: str) -> Iterator[None]:
        """Hold `digest` for the block.

        Raises:
            Duplicate: another submission holds it (``duplicate_in_flight``); `what` names the digest.
        """
        with self._lock:
            if digest in self._held:
                raise Duplicate("duplicate_in_flight", f"a submission with the same {what} is being verified now; "
                                "one entry per run (its answer will say where it is)")
            self._held.add(digest)
        try:
            yield
        finally:
            with self._lock:
                self._held.discard(digest)
