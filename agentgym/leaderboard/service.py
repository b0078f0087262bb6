"""Receiving a submission: limits, decode, verify, store. What the server and `submit --db` share."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from agentgym.bench.suites import SUITES, Suite
from agentgym.leaderboard.dedupe import play_digest
from agentgym.leaderboard.store import Entry, Store, duplicate_of
from agentgym.leaderboard.submission import (
    LIMITS,
    Busy,
    Duplicate,
    LimitExceeded,
    Limits,
    MalformedSubmission,
    Manifest,
    Rejected,
    SubmissionError,
    Unverifiable,
    decode_submission,
    peek_manifest,
)
from agentgym.leaderboard.verify import verify_submission

__all__ = ["Receipt", "receive", "entry_status", "outcome_of"]

log = logging.getLogger("agentgym.leaderboard")


@dataclass(frozen=True)
class Receipt:
    """The answer to an accepted submission."""

    entry: Entry
    #: ``ranked``, ``reference`` (a privileged agent), ``archived`` (an older suite version) or
    #: ``duplicate`` (this model, revision, suite and config are already on the board; nothing was added).
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


#: A refusal's outcome on the server's metrics (`agentgym.server.monitoring.VERIFICATION_OUTCOMES`),
#: the most specific kind first.
_OUTCOMES: tuple[tuple[type[SubmissionError], str], ...] = (
    (Duplicate, "copy"), (Rejected, "rejected"), (LimitExceeded, "too_large"), (MalformedSubmission, "malformed"),
    (Busy, "busy"), (Unverifiable, "unverifiable"))


def outcome_of(answer: Receipt | SubmissionError) -> str:
    """How a submission ended, as the board's metrics count it: ``accepted`` or ``duplicate`` when
    received, else the kind of refusal (``copy``, ``rejected``, ``too_large``, ``malformed``, ``busy``,
    ``unverifiable``)."""
    if isinstance(answer, Receipt):
        return "duplicate" if answer.status == "duplicate" else "accepted"
    return next((outcome for kind, outcome in _OUTCOMES if isinstance(answer, kind)), "rejected")


def _resubmission(known: Entry, manifest: Manifest) -> Receipt:
    # The same records (so the same agent) under the same model and revision are the entry itself
    # (idempotent); under any other name they are a copy.
    if (known.model, known.revision) == (manifest.model, manifest.revision):
        return Receipt(entry=known, status="duplicate")
    raise duplicate_of(known)


@contextmanager
def _slot(slots: threading.Semaphore | None) -> Iterator[None]:
    if slots is not None and not slots.acquire(blocking=False):
        raise Busy("busy", "too many submissions are being verified; retry in a minute")
    try:
        yield
    finally:
        if slots is not None:
            slots.release()


def receive(body: bytes, store: Store, *, suites: Mapping[str, Suite] | None = None, limits: Limits = LIMITS,
            workers: int | None = None, slots: threading.Semaphore | None = None) -> Receipt:
    """Check, decode, verify and store one submission body.

    Records already on the board are answered from the manifest line alone, before anything
    else is decoded: under their own model and revision they are the existing entry, under any
    other name a copy (refused); records being verified now are refused the same way. A run
    whose bytes differ but whose episodes and actions are those of an entry (re-serialised,
    reordered, relabelled) is refused when it is stored (`agentgym.leaderboard.dedupe`).

    Args:
        body: the gzip body (agentgym-submission/1).
        store: the board.
        suites: the suite registry (default: `agentgym.bench.suites.SUITES`).
        limits: what a body may be before it is parsed.
        workers: replay processes (default: by suite size).
        slots: verifications that may run at once; none free refuses with `Busy` (a copy is
            answered without one).

    Raises:
        agentgym.leaderboard.submission.SubmissionError: any refusal (its ``status`` is the HTTP
            status, its fields name the first offending episode and step).
    """
    manifest = peek_manifest(body, limits)
    if manifest.sealed is not None:
        # Seeds of the submitter's choosing would be no seal at all: sealed entries are the board's own.
        raise Rejected("sealed_upload", "a sealed run is stored by the board that stepped it; upload a run of "
                       "the suite's own episodes (agentgym bench SUITE), or run the sealed track with "
                       "agentgym bench SUITE --sealed URL", field="sealed")
    known = store.find(manifest.suite, records_sha256=manifest.records_sha256)
    if known is not None:
        return _resubmission(known, manifest)
    with store.in_flight.hold(manifest.records_sha256, "records"), _slot(slots):
        sub = decode_submission(body, limits)
        verified = verify_submission(sub, suites, workers=workers)
        # After replay, so that a copy whose numbers were edited is refused as what it is: tampered.
        entry, created = store.add(verified, body, play_sha256=play_digest(verified.records))
    status = entry_status(entry, suites) if created else "duplicate"
    log.info("submission %s: %s %s@%s on %s, %d episodes verified in %.2f s", entry.id, status,
             verified.manifest.agent, verified.manifest.model, verified.suite.id, len(verified.records),
             verified.verify_s)
    return Receipt(entry=entry, status=status)
