"""Receiving a submission: limits, decode, verify, store. What the server and `submit --db` share."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping

from agentgym.bench.suites import SUITES, Suite
from agentgym.leaderboard.store import Entry, Store
from agentgym.leaderboard.submission import LIMITS, Limits, decode_submission
from agentgym.leaderboard.verify import verify_submission

__all__ = ["Receipt", "receive", "entry_status"]

log = logging.getLogger("agentgym.leaderboard")


@dataclass(frozen=True)
class Receipt:
    """The answer to an accepted submission."""

    entry: Entry
    #: ``ranked``, ``reference`` (a privileged agent), ``archived`` (an older suite version) or
    #: ``duplicate`` (this model, revision, suite and config are already on the board).
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.entry.id, "status": self.status, "suite": self.entry.suite,
                "records_sha256": self.entry.records_sha256, "verify_s": self.entry.verify_s,
                "summary": {k: self.entry.summary[k] for k in ("episodes", "primary", "success", "score")}}


def entry_status(entry: Entry, suites: Mapping[str, Suite] | None = None) -> str:
    """``ranked``, ``reference`` or ``archived``, by the suite registry as it is now."""
    suite = (SUITES if suites is None else suites).get(entry.suite)
    if suite is None or not suite.current:
        return "archived"
    return "reference" if entry.reference else "ranked"


def receive(body: bytes, store: Store, *, suites: Mapping[str, Suite] | None = None, limits: Limits = LIMITS,
            workers: int | None = None) -> Receipt:
    """Check, decode, verify and store one submission body.

    Raises:
        agentgym.leaderboard.submission.SubmissionError: any refusal (its ``status`` is the HTTP
            status, its fields name the first offending episode and step).
    """
    sub = decode_submission(body, limits)
    verified = verify_submission(sub, suites, workers=workers)
    entry, created = store.add(verified, body)
    status = entry_status(entry, suites) if created else "duplicate"
    log.info("submission %s: %s %s@%s on %s, %d episodes verified in %.2f s", entry.id, status,
             verified.manifest.agent, verified.manifest.model, verified.suite.id, len(verified.records),
             verified.verify_s)
    return Receipt(entry=entry, status=status)
