"""The leaderboard over HTTP (FastAPI): receive submissions, serve the board.

Routes:
    ``POST /submissions``       a gzip body (agentgym-submission/1); 201 with the new entry, 200
                                for a duplicate, 413 over a size limit, 400 malformed, 422
                                rejected (the answer names the first offending episode and step),
                                409 a copy of a run on the board or being verified now, 503 when
                                too many verifications are already running.
    ``GET /leaderboard``        the HTML board, with a strict Content-Security-Policy.
    ``GET /leaderboard.json``   the same as JSON.
    ``GET /submissions/{id}``   one entry with its per-cell numbers (JSON); for a browser (``Accept``
                                prefers ``text/html``) the entry's page: its numbers, a chart of
                                success against noise and its episodes, ``?page=N`` (from 1),
                                ``&env=ID&noise=SETTING`` to filter (`agentgym.leaderboard.entry_page`).
    ``GET /submissions/{id}/episodes/{n}``  the entry's n-th episode (from 0) as a timeline (HTML).
    ``GET /submissions/{id}/records``  a sealed entry's published records, with their seeds (a
                                submission body anyone can replay: ``agentgym leaderboard verify``).
    ``/sealed/...``             with ``sealed=``: the sealed track (`agentgym.leaderboard.sealed.routes`).
    ``GET /metrics``            Prometheus metrics: verifications by track and outcome, their
                                durations, refused requests, sealed runs and their sessions
                                (`agentgym.server.monitoring`).

The body is read in chunks and refused the moment it passes the size limit, or when the bodies
held at once would pass ``max_pending`` full-size bodies. A copy of a run already on the board is
answered from its manifest line, without a verification slot; verification runs in a worker
thread (and a process pool for large suites), at most ``max_pending`` at once, so the event loop
keeps serving.
fastapi and uvicorn are imported here only: ``pip install agentrl-gym[server]``.
"""

from __future__ import annotations

import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, AsyncIterator, Callable, Mapping

from fastapi import FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from agentgym.bench.suites import SUITES, Suite
from agentgym.eval.timeline import timeline
from agentgym.eval.transcript import replay_transcript
from agentgym.leaderboard.board import board_dict, build_board
from agentgym.leaderboard.entry_page import listing, render_entry_html, render_episode_html
from agentgym.leaderboard.episodes import EpisodeIndex
from agentgym.leaderboard.page import CSP, render_html
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.secret import load_or_create_secret
from agentgym.leaderboard.service import entry_status, outcome_of, receive
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import LIMITS, SUBMISSION_SUFFIX, Limits, SubmissionError
from agentgym.server.monitoring import BoardMetrics, metrics_response
from agentgym.server.serve import LEADERBOARD_PORT

__all__ = ["create_app", "serve", "wants_html"]

# SQLite's largest integer: an id past it is no id (422), not an overflow in the query (500).
_MAX_ENTRY_ID = 2**63 - 1
# More episodes than any suite file may hold (agentgym.bench.suites.MAX_SUITE_EPISODES).
_MAX_EPISODE = 10**6

_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def wants_html(accept: str | None) -> bool:
    """Whether an ``Accept`` header prefers ``text/html`` to JSON (a browser's does; ``*/*``,
    none at all or a tie gets JSON, the API's answer)."""
    html_q = json_q = 0.0
    for item in (accept or "").split(","):
        media, *params = (p.strip() for p in item.split(";"))
        q = 1.0
        for p in params:
            name, _, value = p.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        media = media.lower()
        if media == "text/html":
            html_q = max(html_q, q)
        elif media in ("application/json", "application/*", "*/*"):
            json_q = max(json_q, q)
    if not accept:
        return False
    return html_q > 0 and html_q > json_q


class _Buffered:
    """Bytes of request bodies held at once, across requests (used on the event loop only)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.held = limit, 0

    def take(self, n: int) -> bool:
        """Count `n` more bytes held, unless that would pass the limit."""
        if self.held + n > self.limit:
            return False
        self.held += n
        return True

    def give(self, n: int) -> None:
        self.held -= n


def create_app(store: Store | str | Path, *, suites: Mapping[str, Suite] | None = None, limits: Limits = LIMITS,
               workers: int | None = None, max_pending: int = 4, public_url: str = "URL",
               sealed: SealedConfig | None = None, secret: bytes | None = None,
               run_ids: Callable[[], str] | None = None) -> FastAPI:
    """The FastAPI app of a leaderboard.

    Args:
        store: the `Store`, or the path of its SQLite file.
        suites: the suite registry (default: `agentgym.bench.suites.SUITES`).
        limits: what a body may be before it is parsed.
        workers: replay processes per verification (default: by suite size).
        max_pending: verifications running at once, full-size bodies held at once, and entry or episode
            pages made at once; more get 503.
        public_url: the base URL shown in the how-to-submit sentence.
        sealed: host the sealed track with these limits (None: the open track only).
        secret: the sealed track's secret (default: the file beside the database, made on first
            start; `agentgym.leaderboard.secret`).
        run_ids: makes each sealed run's id (default: random); a fixed sequence, with a fixed
            `secret`, makes the sealed seeds reproducible (tests, benchmarks).

    Raises:
        SecretError: the secret file is unsafe (its mode is looser than 0600, or it is a link).
    """
    db = store if isinstance(store, Store) else Store(store)
    registry = SUITES if suites is None else suites
    submit_url = public_url.rstrip("/") + "/submissions" if public_url != "URL" else "URL"
    slots = threading.BoundedSemaphore(max_pending)
    # Entry and episode pages read a stored body (and an episode page replays one episode): at
    # most this many at once, more get 503, so page views cannot crowd out verification.
    views = threading.BoundedSemaphore(max_pending)
    episodes = EpisodeIndex(db)
    buffered = _Buffered(max_pending * limits.max_body_bytes)
    host: Any = None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if host is None:
            yield
            return
        from agentgym.leaderboard.sealed.routes import sealed_upkeep

        async with sealed_upkeep(host):
            yield

    app = FastAPI(title="agentgym leaderboard", docs_url=None, redoc_url=None, lifespan=lifespan)
    metrics = app.state.metrics = BoardMetrics()
    if sealed is not None:
        from agentgym.leaderboard.sealed.routes import add_sealed_track

        host = add_sealed_track(app, db, secret if secret is not None else load_or_create_secret(db.path), sealed,
                                suites=registry, workers=workers, run_ids=run_ids, metrics=metrics)
    app.state.sealed = host

    def error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
        metrics.refused(code)
        return JSONResponse({"error": code, "message": message, **extra}, status_code=status,
                            headers=_SECURITY_HEADERS)

    @app.post("/submissions")
    async def post_submission(request: Request) -> JSONResponse:
        declared = request.headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                return error(400, "bad_length", "Content-Length is not a number")
            if int(declared) > limits.max_body_bytes:
                return error(413, "too_large", f"the body is {declared} bytes; the limit is {limits.max_body_bytes}")
        body, taken = bytearray(), 0
        try:
            async for chunk in request.stream():
                if taken + len(chunk) > limits.max_body_bytes:
                    return error(413, "too_large", f"the body passed the limit of {limits.max_body_bytes} bytes")
                if not buffered.take(len(chunk)):
                    return error(503, "busy", "too many submissions are being received; retry in a minute")
                taken += len(chunk)
                body += chunk
            data = bytes(body)
            del body[:]  # one copy held while it is verified, not two
            started = time.perf_counter()
            receipt = await run_in_threadpool(receive, data, db, suites=registry, limits=limits, workers=workers,
                                              slots=slots)
        except SubmissionError as exc:
            metrics.verified("open", outcome_of(exc), time.perf_counter() - started)
            return JSONResponse(exc.to_dict(), status_code=exc.status, headers=_SECURITY_HEADERS)
        finally:
            buffered.give(taken)
        metrics.verified("open", outcome_of(receipt), time.perf_counter() - started)
        answer = receipt.to_dict()
        answer["url"] = f"/submissions/{receipt.entry.id}"
        return JSONResponse(answer, status_code=200 if receipt.status == "duplicate" else 201,
                            headers=_SECURITY_HEADERS)

    def html(page: str, status: int = 200, **headers: str) -> HTMLResponse:
        return HTMLResponse(page, status_code=status, headers={
            "Content-Security-Policy": CSP + "; frame-ancestors 'none'", **_SECURITY_HEADERS, **headers})

    def busy() -> JSONResponse:
        answer = error(503, "busy", "too many entry pages are being made; retry in a few seconds")
        answer.headers["Retry-After"] = "5"
        return answer

    @app.get("/leaderboard", response_class=HTMLResponse)
    def get_board_html() -> HTMLResponse:
        return html(render_html(build_board(db.entries(), registry, db.sealed_run_counts()), submit_url=submit_url,
                                csp_meta=False))

    @app.get("/leaderboard.json")
    def get_board_json() -> JSONResponse:
        return JSONResponse(board_dict(build_board(db.entries(), registry, db.sealed_run_counts())),
                            headers=_SECURITY_HEADERS)

    @app.get("/submissions/{entry_id}")
    def get_submission(request: Request, entry_id: Annotated[int, PathParam(ge=1, le=_MAX_ENTRY_ID)],
                       page: Annotated[int, Query(ge=1, le=_MAX_EPISODE)] = 1,
                       env: Annotated[str | None, Query(max_length=200)] = None,
                       noise: Annotated[str | None, Query(max_length=200)] = None) -> Response:
        entry = db.get(entry_id)
        if entry is None:
            return error(404, "not_found", f"no submission {entry_id}")
        vary = {"Vary": "Accept"}
        if not wants_html(request.headers.get("accept")):
            return JSONResponse({**entry.to_dict(), "status": entry_status(entry, registry)},
                                headers={**_SECURITY_HEADERS, **vary})
        if not views.acquire(blocking=False):
            return busy()
        try:
            listed = episodes.episodes(entry_id)
        finally:
            views.release()
        suite = registry.get(entry.suite)
        return html(render_entry_html(entry, entry_status(entry, registry), suite.noise if suite else (),
                                      None if listed is None else listing(listed, page, env, noise)), **vary)

    @app.get("/submissions/{entry_id}/episodes/{index}", response_class=HTMLResponse)
    def get_episode(entry_id: Annotated[int, PathParam(ge=1, le=_MAX_ENTRY_ID)],
                    index: Annotated[int, PathParam(ge=0, le=_MAX_EPISODE)]) -> Response:
        entry = db.get(entry_id)
        if entry is None:
            return error(404, "not_found", f"no submission {entry_id}")
        if not views.acquire(blocking=False):
            return busy()
        try:
            listed = episodes.episodes(entry_id) or ()
            if index >= len(listed):
                return error(404, "not_found", f"entry {entry_id} has {len(listed)} episodes (from 0); no {index}")
            record = episodes.record(entry_id, index) or {}
            events = timeline(record, replay_transcript(record))
        finally:
            views.release()
        return html(render_episode_html(entry, listed[index], record, events, len(listed)))

    @app.get("/submissions/{entry_id}/records")
    def get_records(entry_id: Annotated[int, PathParam(ge=1, le=_MAX_ENTRY_ID)]) -> Response:
        entry = db.get(entry_id)
        if entry is None or entry.track != "sealed":
            return error(404, "not_found", f"no sealed entry {entry_id} (the records of the open track are their "
                                           "submitter's)")
        body = db.payload(entry_id) or b""
        return Response(body, media_type="application/gzip", headers={
            "Content-Disposition": f'attachment; filename="sealed-{entry_id}{SUBMISSION_SUFFIX}"', **_SECURITY_HEADERS})

    @app.get("/")
    def root() -> RedirectResponse:
        return RedirectResponse("/leaderboard")

    @app.get("/metrics")
    def get_metrics() -> Response:
        return metrics_response(metrics)

    return app


def serve(db: str | Path, host: str = "127.0.0.1", port: int = LEADERBOARD_PORT, *, public_url: str | None = None,
          workers: int | None = None, log_level: str = "info", sealed: SealedConfig | None = None) -> None:
    """Run the leaderboard with uvicorn until interrupted, with the env server's connection
    defences (header, body and send timeouts, a connection limit, rate-limited logs); with
    `sealed`, it hosts the sealed track's sessions over HTTP and WebSocket too.

    Raises:
        UserError: the port is in use or the address cannot be listened on.
    """
    from agentgym.server.gc_policy import tune_for_serving
    from agentgym.server.serve import listen_socket, uvicorn_server

    sock = listen_socket(host, port)
    url = public_url or f"http://{host}:{port}"
    app = create_app(db, public_url=url, workers=workers, sealed=sealed)
    tune_for_serving()
    if sealed is None:
        uvicorn_server(app, host=host, port=port, log_level=log_level).run(sockets=[sock])
        return
    server = sealed.server_config()
    uvicorn_server(app, host=host, port=port, log_level=log_level, limits=server.connection_limits(),
                   ws_max_bytes=server.max_body_bytes).run(sockets=[sock])
