"""The submitter's side of a board: a run folder made into a submission, and sent to a board.

`build_submission` makes the wire body from an `agentgym bench` run folder, refusing here what
the board would refuse; `post_submission` sends it and reads the board's answer, capped, with
one clear error (`Unreachable`) when no answer comes. `agentgym submit` is built on both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym.errors import UserError

__all__ = ["Unreachable", "build_submission", "post_submission"]


def build_submission(run_dir: str | Path, *, model: str, revision: str, agent: str | None = None,
                     organisation: str = "", description: str = "") -> bytes:
    """The wire body (agentgym-submission/1) for an `agentgym bench` run folder.

    The manifest claims the run's success rate and mean score as its records state them; the
    leaderboard recomputes both from the replay and refuses the submission if they differ.
    """
    import hashlib

    import agentgym
    from agentgym.eval import metrics
    from agentgym.leaderboard.submission import FORMAT, MalformedSubmission, Manifest, encode_submission, read_run

    meta, records_bytes = read_run(run_dir)
    records = [json.loads(line) for line in records_bytes.splitlines() if line.strip()]
    comp = metrics.completion(records, n_boot=1) if records else None
    version = (records[0].get("provenance") or {}).get("agentgym") if records else None
    fields = {
        "format": FORMAT,
        "agent": agent or str(meta.get("agent", "")),
        "model": model,
        "revision": revision,
        "organisation": organisation,
        "description": description,
        "suite": str(meta.get("suite", "")),
        "package_version": str(version or agentgym.__version__),
        "records_sha256": hashlib.sha256(records_bytes).hexdigest(),
        "claimed": {"success": comp["success_rate"]["value"], "score": comp["mean_score"]["value"]} if comp else {},
    }
    # Parsed as the server parses it: what it would refuse is refused here (a clear message, no upload).
    try:
        manifest = Manifest.from_dict(fields)
    except MalformedSubmission as exc:
        raise ValueError(f"the manifest would be refused: {exc}") from exc
    return encode_submission(manifest, records_bytes)


#: The most of a server's answer read (an answer is a few hundred bytes of JSON).
_MAX_ANSWER_BYTES = 1024 * 1024


class Unreachable(UserError):
    """No answer from the leaderboard server: not reachable, timed out, or not an HTTP answer."""


def post_submission(url: str, body: bytes, timeout: float) -> tuple[int, dict[str, Any]]:
    """POST a submission; the status and the JSON answer (an error answer too).

    Raises:
        Unreachable: naming the server and why no answer came.
    """
    import httpx

    from agentgym.leaderboard.httpclient import ANSWER_HEADERS, NoAnswer, request_capped, why_no_answer

    target = url.rstrip("/")
    if not target.endswith("/submissions"):
        target += "/submissions"
    try:
        with httpx.Client(timeout=timeout) as client:
            response, raw = request_capped(client, "POST", target, _MAX_ANSWER_BYTES, content=body,
                                           headers={**ANSWER_HEADERS, "Content-Type": "application/gzip"})
    except NoAnswer as exc:
        why = why_no_answer(exc, timeout)
        raise Unreachable(f"cannot reach the leaderboard at {url}: {why}"
                          + (" (--timeout)" if isinstance(exc, httpx.TimeoutException) else "")) from exc
    try:
        answer = json.loads(raw or b"{}")
    except (ValueError, RecursionError):  # not JSON, cut at the cap, or nested past the parser's depth
        answer = None
    if not isinstance(answer, dict):
        return response.status_code, {"error": "http_error", "message": raw[:500].decode("utf-8", "replace")}
    return response.status_code, answer
