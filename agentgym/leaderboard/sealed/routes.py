"""The sealed track's routes on the board's app (``agentgym leaderboard serve --sealed``).

    POST   /sealed/runs                                 open a run (token, quota): 201 its id and cells
    GET    /sealed/runs/{run_id}                        its state, counts, sessions in play, its entry
    POST   /sealed/runs/{run_id}/sessions/{sid}/fail    the client's agent failed in the episode in play
    *      /sealed/runs/{run_id}/...                    the env server's protocol for the run's sessions
                                                        (`agentgym.leaderboard.sealed.host`)

Every route takes the run's token (``Authorization: Bearer``; 401 without a valid one). Errors
are the env server's: ``{"error": {"code", "message"}}``, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, Callable, Mapping

from fastapi import FastAPI, Request
from fastapi.responses import Response

from agentgym.bench.suites import Suite
from agentgym.leaderboard.sealed.book import RunBook, RunRefused, parse_open_body
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.sealed.host import SealedHost, refusal
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import MalformedSubmission, load_json_line
from agentgym.leaderboard.tokens import TokenBook, Unauthorized, bearer
from agentgym.server.app import create_app as create_env_app
from agentgym.server.monitoring import BoardMetrics
from agentgym.server.sessions import ApiError
from agentgym.server.wire import json_bytes

__all__ = ["add_sealed_track", "sealed_upkeep", "MAX_REQUEST_BYTES"]

#: The most a run-opening or failure report body may be.
MAX_REQUEST_BYTES = 64 * 1024

_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def _answer(payload: Any, status: int = 200) -> Response:
    return Response(json_bytes(payload), status_code=status, media_type="application/json", headers=_HEADERS)


def _error(exc: ApiError) -> Response:
    return Response(json_bytes({"error": {"code": exc.code, "message": exc.message}}), status_code=exc.status,
                    media_type="application/json", headers={**_HEADERS, **exc.headers})


async def _body(request: Request) -> bytes:
    """The request's body, refused (413) the moment it passes `MAX_REQUEST_BYTES`."""
    body = bytearray()
    async for chunk in request.stream():
        if len(body) + len(chunk) > MAX_REQUEST_BYTES:
            raise ApiError(413, "body_too_large", f"the body is over {MAX_REQUEST_BYTES} bytes")
        body += chunk
    return bytes(body)


def add_sealed_track(app: FastAPI, store: Store, secret: bytes, config: SealedConfig | None = None, *,
                     suites: Mapping[str, Suite] | None = None, workers: int | None = None,
                     run_ids: Callable[[], str] | None = None, metrics: BoardMetrics | None = None) -> SealedHost:
    """Add the sealed track's routes to a board's app; returns its host (`sealed_upkeep` runs it).

    Args:
        app: the board's FastAPI app.
        store: the board.
        secret: the board's secret (`agentgym.leaderboard.secret.load_or_create_secret`).
        config: the sealed track's limits.
        suites: the suites runs may be opened for (default: every current built-in suite).
        workers: replay processes when a complete run is verified (default: by suite size).
        run_ids: makes each run's id (default: random; `RunBook`).
        metrics: the board's metrics, where the sealed runs, their verifications and their
            sessions are counted (default: counted, and served by no one).
    """
    cfg = config or SealedConfig()
    tokens = TokenBook(store)
    book = RunBook(store, secret, cfg, suites=suites, workers=workers, **({"run_ids": run_ids} if run_ids else {}))
    board_metrics = metrics or BoardMetrics()
    host = SealedHost(book, tokens, board_metrics)
    env_ids = sorted({e for s in book.suites.values() if s.current for e in s.envs})
    env_app = create_env_app(cfg.server_config(), env_ids=env_ids, host=host, registry=board_metrics.registry)
    sessions = host.sessions = env_app.state.store
    host.session_metrics = env_app.state.metrics
    board_metrics.watch_sealed(book.by_phase, book.by_state)

    def token_of(request: Request) -> Any:
        try:
            return tokens.authenticate(bearer(request.headers.get("authorization")))
        except Unauthorized as exc:
            raise ApiError(401, "unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}) from None

    @app.post("/sealed/runs", include_in_schema=False)
    async def open_run(request: Request) -> Response:
        try:
            token = token_of(request)
            fields = parse_open_body(await _body(request))
            run = await asyncio.to_thread(book.open_run, token, fields)
        except ApiError as exc:
            return _error(exc)
        except RunRefused as exc:
            return _error(refusal(exc))
        return _answer(book.opened(run), 201)

    @app.get("/sealed/runs/{run_id}", include_in_schema=False)
    async def run_status(run_id: str, request: Request) -> Response:
        try:
            return _answer(book.status(run_id, token_of(request)))
        except ApiError as exc:
            return _error(exc)
        except RunRefused as exc:
            return _error(refusal(exc))

    @app.post("/sealed/runs/{run_id}/sessions/{session_id}/fail", include_in_schema=False)
    async def report_failure(run_id: str, session_id: str, request: Request) -> Response:
        try:
            host.admit(request)  # before the session is looked up: a stranger learns nothing of the ids
            session = sessions.get(session_id)
            host.check(request, session)
            report = _failure(await _body(request))
            async with session.lock:
                host.fail(session, report["type"], report["message"], report["traceback"])
        except ApiError as exc:
            return _error(exc)
        return _answer({"ended": "agent_error"})

    app.mount("/sealed/runs/{run_id}", env_app)
    return host


def _failure(body: bytes) -> dict[str, str]:
    try:
        report = load_json_line(body, "the body")
    except MalformedSubmission as exc:
        raise ApiError(422, "invalid_json", str(exc)) from None
    fields = {"type", "message", "traceback"}
    if not isinstance(report, dict) or set(report) != fields or not all(isinstance(v, str) for v in report.values()):
        raise ApiError(422, "invalid_request", f"a failure report is an object of strings {sorted(fields)}")
    return report


@contextlib.asynccontextmanager
async def sealed_upkeep(host: SealedHost) -> AsyncIterator[None]:
    """Run the sealed track's background work for the block (the board's lifespan; a mounted
    app's own lifespan never runs): the session reaper, whose every pass also closes idle,
    overlong and revoked runs (`SealedHost.upkeep`); at the end, every session is closed (their
    runs incomplete) and the runs being verified are finished."""
    assert host.sessions is not None
    sessions = host.sessions
    sessions.start_reaper()
    try:
        yield
    finally:
        await sessions.stop_reaper()
        await sessions.close_all()
        await host.drain()
