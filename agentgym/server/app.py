"""The env server: every registered agentgym env over HTTP and WebSocket (FastAPI).

Routes (the committed schema is `agentgym/server/openapi.json`):

    GET    /health                      liveness, live sessions, the cap (summed over the workers)
    GET    /envs                        the ids served, with their spaces
    POST   /sessions                    open a session: {env_id, kwargs, noise} -> session id
    POST   /sessions/{id}/reset         {seed, options} -> {obs, info}
    POST   /sessions/{id}/step          {action} -> {obs, reward, terminated, truncated, info}
    DELETE /sessions/{id}               close it
    WS     /sessions/{id}/ws            the same reset and step, one JSON message each way
    WS     /ws                          open a session over the socket itself ({"op": "open", env_id,
                                        kwargs, noise, and optionally reset: {seed, options} to reset it
                                        in the same exchange}), then reset and step; it closes with the socket
    GET    /metrics                     Prometheus metrics (`agentgym.server.monitoring`)

Bad input is always a 4xx with ``{"error": {"code", "message"}}``: 404 unknown session or env,
409 step after the episode ended (`ResetNeeded`), 413 body too large, 422 invalid JSON, wrong
types or arguments the env rejects, 429 over the session cap (with Retry-After). 504 means an env
call overran the step timeout. Responses never carry a traceback.

Who may use the sessions and what resets and steps do is the app's `SessionHost`
(`agentgym.server.host`); the default is the env server's own rules, and the leaderboard's
sealed track hosts its runs through the same app with rules of its own.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Coroutine, Iterable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Annotated, Any, Literal

import gymnasium as gym
from fastapi import Body, FastAPI, Path, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from prometheus_client import CollectorRegistry
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.websockets import WebSocketDisconnect

from agentgym.server.admission import AdmissionMiddleware, admits_anyone
from agentgym.server.answers import answer_bytes
from agentgym.server.config import ServerConfig
from agentgym.server.host import SessionHost
from agentgym.server.middleware import BodyLimitMiddleware
from agentgym.server.models import (
    SESSION_ID_PATTERN,
    CreateSession,
    EnvKwargs,
    EnvList,
    ErrorResponse,
    Health,
    ResetRequest,
    ResetResponse,
    SessionInfo,
    StepRequest,
    StepResponse,
)
from agentgym.server.monitoring import ServerMetrics, metrics_response
from agentgym.server.routing import SessionRouter, WorkerPlan, session_prefix
from agentgym.server.sessions import ApiError, Session, SessionStore
from agentgym.server.wire import json_bytes, space_spec
from agentgym.server.ws_lane import WebSocketLane

__all__ = ["API_VERSION", "create_app", "default_env_ids"]

log = logging.getLogger("agentgym.server")

#: The wire protocol's version (the OpenAPI ``info.version``); it changes only with the API.
API_VERSION = "1"

_STATUS_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 409: "conflict",
                 413: "body_too_large", 415: "unsupported_media_type", 422: "invalid_request"}

SessionId = Annotated[str, Path(pattern=SESSION_ID_PATTERN, description="the id POST /sessions returned")]


def default_env_ids() -> tuple[str, ...]:
    """Every family's id (`agentgym.ENV_IDS`), sorted; never the remote client (a server never dials out)."""
    import agentgym

    return tuple(sorted(agentgym.ENV_IDS))


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: {"model": ErrorResponse, "description": _STATUS_CODES.get(s, "error").replace("_", " ")}
            for s in statuses}


def _error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None,
                    issues: list[dict[str, Any]] | None = None) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if issues is not None:
        error["issues"] = issues
    return Response(json_bytes({"error": error}), status_code=status, media_type="application/json", headers=headers)


def _json(payload: Any, status: int = 200) -> Response:
    return Response(answer_bytes(payload), status_code=status, media_type="application/json")


#: What a refused env argument is told (pydantic's own words do not say what is allowed).
_NOT_AN_ENV_ARG = f"not an env argument a client may set (those are: {', '.join(EnvKwargs.model_fields)})"


def _issues(errors: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    # Only where and what: pydantic's "input" and "ctx" may hold anything, including the payload.
    out = []
    for e in errors:
        loc = [p if isinstance(p, int) else str(p) for p in e.get("loc", ())]
        msg = _NOT_AN_ENV_ARG if e.get("type") == "extra_forbidden" and loc[:2] == ["body", "kwargs"] else e.get("msg")
        out.append({"loc": loc, "msg": str(msg or "")})
    return out


def _issue_text(issues: list[dict[str, Any]]) -> str:
    return "; ".join(f"{'.'.join(map(str, i['loc'])) or 'body'}: {i['msg']}" for i in issues[:10])


# -------------------------------------------------------------------------- WebSocket messages
class _WsReset(ResetRequest):
    op: Literal["reset"]


class _WsStep(StepRequest):
    op: Literal["step"]


class _WsOpen(CreateSession):
    op: Literal["open"]
    #: Reset the new session in the same exchange: the answer carries the reset's under "reset".
    reset: ResetRequest | None = None


class _WsClose(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    op: Literal["close"]


_WS_MESSAGE: TypeAdapter[Any] = TypeAdapter(Annotated[_WsReset | _WsStep | _WsClose, Field(discriminator="op")])


def create_app(config: ServerConfig | None = None, /, *, env_ids: Iterable[str] | None = None,
               host: SessionHost | None = None, registry: CollectorRegistry | None = None,
               worker: WorkerPlan | None = None, **limits: Any) -> FastAPI:
    """The env server as an ASGI app.

    Args:
        config: the limits (default: `ServerConfig()`).
        env_ids: the ids to serve (default: every ``AgentRL/*`` id, see `default_env_ids`).
        host: who may use sessions and what resets and steps do (default: `SessionHost()`,
            the env server's own rules).
        registry: a prometheus_client registry to count the server's metrics in,
            left to its owner to serve (the board that hosts sealed sessions does); default: one
            of the app's own, served at ``GET /metrics``.
        worker: this app's place among the worker processes of one port (`agentgym.server.workers`):
            its session ids name it, and requests for its siblings' sessions are passed on to them.
        **limits: `ServerConfig` fields overriding ``config``'s, e.g. ``max_sessions=16``.

    Returns:
        The FastAPI app; run it with uvicorn (`agentgym.server.serve`) or any ASGI server.
    """
    cfg = replace(config or ServerConfig(), **limits)
    ids = tuple(default_env_ids() if env_ids is None else env_ids)
    unknown = [i for i in ids if i not in gym.registry]
    if unknown:
        raise ValueError(f"cannot serve unregistered ids {unknown}")
    rules = host or SessionHost()
    store = SessionStore(cfg, ids, on_retire=rules.retired, upkeep=rules.upkeep,
                         id_prefix=session_prefix(worker.index) if worker else "")
    metrics = ServerMetrics(store, registry)
    env_list: list[dict[str, Any]] = []

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store.start_reaper()
        try:
            yield
        finally:
            await store.stop_reaper()
            await store.close_all()

    app = FastAPI(
        title="agentgym env server",
        version=API_VERSION,
        description="agentgym environments over HTTP: sessions, reset and step, with the same determinism "
                    "as in process. A WebSocket at /sessions/{session_id}/ws steps one session with "
                    "JSON messages {\"op\": \"reset\" | \"step\", ...}.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.store = store
    app.state.config = cfg
    app.state.host = rules
    app.state.metrics = metrics

    def refuse(status: int, code: str, message: str, headers: dict[str, str] | None = None,
               issues: list[dict[str, Any]] | None = None) -> Response:
        metrics.error(code)
        return _error_response(status, code, message, headers, issues)

    # ---------------------------------------------------------------------- errors
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return refuse(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
        issues = _issues(exc.errors())
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            return refuse(422, "invalid_json", f"the body is not valid JSON: {_issue_text(issues)}")
        if issues and all(i["loc"][:2] == ["body", "kwargs"] and len(i["loc"]) > 2 for i in issues):
            return refuse(422, "invalid_env_args", _issue_text(issues), issues=issues)
        return refuse(422, "invalid_request", _issue_text(issues) or "invalid request", issues=issues)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400 and isinstance(exc.__cause__, (ValueError, RecursionError)):
            # FastAPI's answer to a body json.loads cannot read (not UTF-8, too deep, huge ints).
            why = exc.__cause__.__class__.__name__
            return refuse(422, "invalid_json", f"the body is not valid JSON: {why}")
        code = _STATUS_CODES.get(exc.status_code, "http_error")
        return refuse(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _internal_error(request: Request, exc: Exception) -> Response:
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
        return refuse(500, "internal_error", "internal server error (logged on the server)")

    # ---------------------------------------------------------------------- routes
    @app.get("/health", response_model=Health, tags=["server"])
    async def health() -> Response:
        """Liveness, the live session count and the cap."""
        return _json({"status": "ok", "sessions": store.live, "max_sessions": cfg.max_sessions,
                      "peak_sessions": store.peak, "workers": 1})

    @app.get("/envs", response_model=EnvList, tags=["server"])
    async def envs() -> Response:
        """The env ids served here, with the spaces of each made with default arguments."""
        if not env_list:
            described = await asyncio.to_thread(_describe, ids)
            if not env_list:
                env_list.extend(described)
        return _json({"envs": env_list})

    @app.post("/sessions", response_model=SessionInfo, status_code=201, tags=["sessions"],
              responses=_errors(404, 413, 422, 429, 504))
    async def create_session(body: CreateSession, request: Request) -> Response:
        """Open a session on a served env: ``gym.make(env_id, **kwargs, noise=noise)``."""
        session = await rules.open(request, body, store)
        env = session.env
        return _json({"session_id": session.id, "env_id": session.env_id,
                      "observation_space": space_spec(env.observation_space),
                      "action_space": space_spec(env.action_space)}, status=201)

    @app.post("/sessions/{session_id}/reset", response_model=ResetResponse, tags=["sessions"],
              responses=_errors(404, 413, 422, 504))
    async def reset(session_id: SessionId, request: Request,
                    body: Annotated[ResetRequest | None, Body()] = None) -> Response:
        """Start an episode: ``env.reset(seed=seed, options=options)``."""
        session = store.get(session_id)
        rules.check(request, session)
        req = body or ResetRequest()
        async with session.lock:
            answer = _json(await rules.reset(store, session, req))
        metrics.reset("http")
        return answer

    @app.post("/sessions/{session_id}/step", response_model=StepResponse, tags=["sessions"],
              responses=_errors(404, 409, 413, 422, 504))
    async def step(session_id: SessionId, body: StepRequest, request: Request) -> Response:
        """Take one turn: ``env.step(action)``. 409 once the episode has ended (reset first)."""
        session = store.get(session_id)
        rules.check(request, session)
        async with session.lock:
            started = time.perf_counter()
            stepped = await rules.step(store, session, body)
            answer = _json(stepped)
            metrics.stepped(stepped, started, "http")
        return answer

    @app.delete("/sessions/{session_id}", status_code=204, tags=["sessions"], responses=_errors(404, 422))
    async def delete_session(session_id: SessionId, request: Request) -> Response:
        """Close a session and its env."""
        session = store.get(session_id)
        rules.check(request, session)
        await store.close(session)
        return Response(status_code=204)

    async def serve_ws(websocket: WebSocket, session_id: str | None) -> None:
        # /ws: the session lives on this connection from its first message, so there is no
        # moment where it exists without a client, and no second connection that could reach
        # another worker.
        await _serve_websocket(websocket, store, rules, session_id, metrics)

    # Served by `WebSocketLane` (below), and by these routes where the app is mounted under a prefix.
    @app.websocket("/sessions/{session_id}/ws")
    async def session_ws(websocket: WebSocket, session_id: str) -> None:
        await serve_ws(websocket, session_id)

    @app.websocket("/ws")
    async def open_ws(websocket: WebSocket) -> None:
        await serve_ws(websocket, None)

    if registry is None:
        @app.get("/metrics", tags=["server"], response_class=Response,
                 responses={200: {"content": {"text/plain": {}}, "description": "Prometheus' text format"}})
        def get_metrics() -> Response:
            """Prometheus metrics: sessions, resets and steps, step latency, errors by code, connections."""
            return metrics_response(metrics)

    app.add_middleware(WebSocketLane, handler=serve_ws)
    if worker is not None and worker.count > 1:
        app.add_middleware(SessionRouter, plan=worker, timeout_s=cfg.step_timeout_s + 10)
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=cfg.max_body_bytes, on_refused=metrics.error)
    if not admits_anyone(rules):
        # Outermost: a refused caller is answered before its body, its ids or its session are read.
        app.add_middleware(AdmissionMiddleware, host=rules, on_refused=metrics.error)
    return app


# -------------------------------------------------------------------------- env descriptions
def _describe(ids: Iterable[str]) -> list[dict[str, Any]]:
    out = []
    for env_id in ids:
        try:
            env = gym.make(env_id)
        except (TypeError, ValueError, gym.error.Error):  # an id that needs arguments to be made
            log.warning("cannot make %s with default arguments to describe its spaces", env_id, exc_info=True)
            out.append({"id": env_id, "observation_space": {"type": "unknown"}, "action_space": {"type": "unknown"}})
            continue
        try:
            out.append({"id": env_id, "observation_space": space_spec(env.observation_space),
                        "action_space": space_spec(env.action_space)})
        finally:
            env.close()
    return out


# -------------------------------------------------------------------------- WebSocket
#: Close codes: 1009 message too big; 4404 unknown session; 4409 session already has a socket;
#: 4408 closed by the idle reaper; 4410 closed otherwise (DELETE, step timeout, shutdown);
#: 4411 taken over by a newer socket (a resumable host); 4000 + status for a host's refusal (4401).
_WS_CLOSE = {"idle": 4408, "closed": 4410, "shutdown": 1001, "replaced": 4411}


async def _serve_websocket(websocket: WebSocket, store: SessionStore, host: SessionHost, session_id: str | None,
                           metrics: ServerMetrics) -> None:
    """One session's reset and step over one socket (`session_id` None: the first message opens
    it); a disconnect closes the session (unless the host's sessions are resumable: then it waits
    for a new socket, or the reaper)."""
    await websocket.accept()
    try:
        host.admit(websocket)
    except ApiError as exc:
        metrics.error(exc.code)
        await websocket.close(code=4000 + exc.status, reason=exc.code)
        return
    max_bytes = store.config.max_body_bytes
    conn = _Connection(websocket, store.config.send_timeout_s)
    if session_id is None:
        try:
            session = await _ws_open(websocket, conn, store, host, metrics, max_bytes)
        except (WebSocketDisconnect, OSError, _SendTimeout):
            session = None
        if session is None or session.closed:  # refused, or its reset ran over the step timeout
            await conn.close(_WS_CLOSE["closed"], "no session" if session is None else "session closed")
            return
    else:
        found = store.find(session_id)
        if found is None:
            metrics.error("unknown_session")
            await conn.close(4404, "unknown session")
            return
        session = found
        try:
            host.check(websocket, session)
        except ApiError as exc:
            metrics.error(exc.code)
            await conn.close(4000 + exc.status, exc.code)
            return
        if session.on_close is not None:
            if not host.resumable:
                metrics.error("session_has_websocket")
                await conn.close(4409, "the session already has a WebSocket")
                return
            session.on_close("replaced")  # a client that reconnects takes its session over
    session.used = True
    session.last_used = time.monotonic()
    session.on_close = conn.close_soon
    try:
        # One message at a time: the next is read only once this reply is sent, and uvicorn stops
        # reading the socket while a message waits, so a client that sends without reading
        # fills its own buffers, not the server's memory.
        while not conn.closed:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = _ws_text(message, max_bytes)
            if text is None:
                await conn.send(_ws_error(metrics, "body_too_large", f"messages are limited to {max_bytes} bytes"))
                await conn.close(1009, "message too big")
                break
            async with session.lock:
                if session.closed:
                    break
                reply = await _ws_reply(store, host, session, text, metrics)
            if reply is None:  # {"op": "close"}: closed before the answer, so a client that heard it knows
                await store.close(session, "closed")
                await conn.send(b'{"closed":true}')
                await conn.close(1000, "session closed")
                break
            # Sent without the lock: a stalled send holds only this socket, never the session.
            await conn.send(reply)
            if session.closed:
                await conn.close(_WS_CLOSE["closed"], "session closed")
    except (WebSocketDisconnect, OSError):
        pass  # The client is gone: the session goes below.
    except _SendTimeout:
        log.warning("the client of session %s left a reply unread for %g s: closed", session.id,
                    store.config.send_timeout_s)
    finally:
        if session.on_close == conn.close_soon:  # not a newer socket's
            session.on_close = None
        if not host.resumable:
            await store.close(session, "disconnect")
        await conn.close(_WS_CLOSE["closed"], "session closed")


async def _ws_open(websocket: WebSocket, conn: _Connection, store: SessionStore, host: SessionHost,
                   metrics: ServerMetrics, max_bytes: int) -> Session | None:
    """Open the session the socket's first message asks for, and answer with its id and spaces;
    None (the refusal sent) when the message is not an open or the host refuses it."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        return None
    text = _ws_text(message, max_bytes)
    if text is None:
        await conn.send(_ws_error(metrics, "body_too_large", f"messages are limited to {max_bytes} bytes"))
        return None
    try:
        body = _WsOpen.model_validate(json.loads(text))
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, ValidationError):
            issues = _issues(exc.errors())
            code = "invalid_env_args" if issues and all(i["loc"][:1] == ["kwargs"] and len(i["loc"]) > 1
                                                         for i in issues) else "invalid_request"
            await conn.send(_ws_error(metrics, code, _issue_text(issues), issues))
        else:
            await conn.send(_ws_error(metrics, "invalid_json", f"the message is not valid JSON: {exc.__class__.__name__}"))
        return None
    try:
        session = await host.open(websocket, body, store)
    except ApiError as exc:
        await conn.send(_ws_error(metrics, exc.code, exc.message, retry_after=exc.headers.get("Retry-After")))
        return None
    env = session.env
    opened = json_bytes({"session_id": session.id, "env_id": session.env_id,
                         "observation_space": space_spec(env.observation_space),
                         "action_space": space_spec(env.action_space)})
    try:
        if body.reset is not None:
            # One exchange for open and reset: the reset's answer (or its error) joins the open's.
            async with session.lock:
                reset = await _ws_answer(store, host, session, body.reset, metrics)
            opened = opened[:-1] + b',"reset":' + reset + b"}"
        await conn.send(opened)
    except BaseException:
        await store.close(session, "disconnect")  # its client is gone before it heard of it
        raise
    return session


def _ws_text(message: dict[str, Any], max_bytes: int) -> str | None:
    """The message as text ("" if its bytes are not UTF-8), or None if it is over `max_bytes`."""
    text = message.get("text")
    if text is None:
        data = message.get("bytes") or b""
        if len(data) > max_bytes:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return ""
    # A character is 1 to 4 bytes: count the bytes only where the characters leave it open.
    if len(text) > max_bytes or (4 * len(text) > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes):
        return None
    return text


async def _ws_reply(store: SessionStore, host: SessionHost, session: Session, text: str,
                    metrics: ServerMetrics) -> bytes | None:
    """The answer to one message; None for ``{"op": "close"}`` (the caller closes the session)."""
    try:
        request = _WS_MESSAGE.validate_python(json.loads(text))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, non-JSON, too deep, huge ints
        if isinstance(exc, ValidationError):
            issues = _issues(exc.errors())
            return _ws_error(metrics, "invalid_request", _issue_text(issues), issues)
        return _ws_error(metrics, "invalid_json", f"the message is not valid JSON: {exc.__class__.__name__}")
    if request.op == "close":
        return None
    return await _ws_answer(store, host, session, request, metrics)


async def _ws_answer(store: SessionStore, host: SessionHost, session: Session, request: ResetRequest | StepRequest,
                     metrics: ServerMetrics) -> bytes:
    """The answer to a reset or a step (an error answer for a refused one); the caller holds the lock."""
    try:
        if isinstance(request, ResetRequest):
            answer = answer_bytes(await host.reset(store, session, request))
            metrics.reset("ws")
            return answer
        started = time.perf_counter()
        stepped = await host.step(store, session, request)
        answer = answer_bytes(stepped)
        metrics.stepped(stepped, started, "ws")
        return answer
    except ApiError as exc:
        return _ws_error(metrics, exc.code, exc.message)
    except Exception:  # noqa: BLE001 (an env bug: logged in full, answered as over HTTP, never a traceback)
        log.exception("internal error on the WebSocket of session %s", session.id)
        return _ws_error(metrics, "internal_error", "internal server error (logged on the server)")


def _ws_error(metrics: ServerMetrics, code: str, message: str, issues: list[dict[str, Any]] | None = None,
              retry_after: str | None = None) -> bytes:
    metrics.error(code)
    error: dict[str, Any] = {"code": code, "message": message}
    if issues is not None:
        error["issues"] = issues
    if retry_after is not None:
        error["retry_after_s"] = float(retry_after)
    return json_bytes({"error": error})


class _SendTimeout(Exception):
    """The client left a message unread for longer than the send timeout."""


class _Connection:
    """A WebSocket that closes once, from any task, without racing a reply, and whose sends give
    up after `send_timeout_s` (whatever ASGI server runs the app: uvicorn's own stall guard
    aborts such a socket too, see `agentgym.server.connections`)."""

    def __init__(self, websocket: WebSocket, send_timeout_s: float) -> None:
        self.websocket = websocket
        self.send_timeout_s = send_timeout_s
        self.closed = False
        self._tasks: set[asyncio.Task[None]] = set()
        # One watch per connection, not a timer per send: a send almost never waits, and a
        # timer armed and cancelled around each would cost more than the rest of the send.
        self._loop = asyncio.get_running_loop()
        self._sending: dict[asyncio.Task[Any], float] = {}  # task -> when its send began
        self._expired: set[asyncio.Task[Any]] = set()
        self._watch = self._loop.call_later(send_timeout_s / 2, self._check)

    async def send(self, data: bytes) -> None:
        """Send `data`; `_SendTimeout` (and the socket counts as closed) if it stalls."""
        if self.closed:
            return
        if not await self._bounded(self.websocket.send_text(data.decode("ascii"))):
            self.closed = True  # No closing handshake with a peer that does not read.
            raise _SendTimeout()

    async def close(self, code: int, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self._bounded(self.websocket.close(code=code, reason=reason))
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass  # The peer is gone already: nothing left to say.
        finally:
            self._watch.cancel()

    async def _bounded(self, sending: Coroutine[Any, Any, None]) -> bool:
        """Await `sending`; False if `_check` found it stalled past the send timeout."""
        task = asyncio.current_task()
        assert task is not None
        self._sending[task] = self._loop.time()
        try:
            await sending
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            self._expired.discard(task)
            task.uncancel()
            return False
        finally:
            self._sending.pop(task, None)
        return True

    def _check(self) -> None:
        deadline = self._loop.time() - self.send_timeout_s
        for task, since in list(self._sending.items()):
            if since < deadline and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        if not self.closed or self._sending:
            self._watch = self._loop.call_later(self.send_timeout_s / 2, self._check)

    def close_soon(self, why: str) -> None:
        # Called by the store (under no lock of ours): close in a task of its own, so a reaper
        # pass never waits on a client's closing handshake.
        task = asyncio.get_running_loop().create_task(self.close(_WS_CLOSE.get(why, 4410), f"session {why}"))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
