"""Several worker processes behind one port: each request goes to the worker that holds its session.

`agentgym serve` runs one worker per core (`agentgym.server.workers`); the kernel hands each new
connection to one of them. A WebSocket session lives on its connection (``WS /ws`` opens it
there), so it stays with the worker that accepted it. Everything else names its session by id,
and the id names its worker (``w3-...``, see `session_prefix`): a request that lands on another
worker is passed on over loopback to the owner's private port, and the answer comes back as it
was given. A WebSocket to ``/sessions/{id}/ws`` that lands on another worker is relayed, message
by message, to the owner. Requests that arrive on a worker's private port are always its own.

``GET /health`` and ``GET /metrics`` on the public port speak for the whole server: health sums
the workers' sessions, caps and peaks (``workers`` says how many); metrics carry every worker's
series with a ``worker`` label (sum them without it for the server's totals). On a private port
both answer for that worker alone.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SessionRouter", "WorkerPlan", "owner_of", "session_prefix"]

log = logging.getLogger("agentgym.server")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_OWNER = re.compile(r"w(\d{1,2})-")
_SESSION_PATH = re.compile(r"/sessions/(w\d{1,2}-[A-Za-z0-9_-]{1,60})(?:/[a-z]+)?")
#: Headers of a passed-on answer that the client needs; the rest is the transport's own.
_KEPT_HEADERS = ("content-type", "retry-after")


def session_prefix(index: int) -> str:
    """What the ids of worker `index`'s sessions begin with."""
    return f"w{index}-"


def owner_of(session_id: str) -> int | None:
    """The index of the worker that holds `session_id` (None: an id no worker named)."""
    found = _OWNER.match(session_id)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class WorkerPlan:
    """Where one worker stands among its siblings."""

    #: This worker's index, from 0.
    index: int
    #: The private loopback port of every worker, by index (this one's included).
    ports: tuple[int, ...]

    @property
    def count(self) -> int:
        """How many workers serve the port."""
        return len(self.ports)

    def url(self, index: int) -> str:
        """The private base URL of worker `index`."""
        return f"http://127.0.0.1:{self.ports[index]}"


class SessionRouter:
    """Pure ASGI middleware of one worker: passes requests for other workers' sessions on to them,
    and answers ``/health`` and ``/metrics`` for the whole server.

    Args:
        app: the worker's app.
        plan: the worker's place among its siblings.
        timeout_s: how long a passed-on request may take (the step timeout and some).
    """

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], plan: WorkerPlan,
                 timeout_s: float) -> None:
        self.app = app
        self.plan = plan
        self.timeout_s = timeout_s
        self._client: Any = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan" or self._private(scope):
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if kind == "http" and scope["method"] == "GET" and path in ("/health", "/metrics"):
            await self._whole_server(path, send)
            return
        found = _SESSION_PATH.fullmatch(path)
        owner = owner_of(found.group(1)) if found else None
        if owner is None or owner == self.plan.index or owner >= self.plan.count:
            await self.app(scope, receive, send)
        elif kind == "http":
            await self._pass_on(owner, scope, receive, send)
        else:
            await _relay(owner, self.plan, scope, receive, send)

    def _private(self, scope: Scope) -> bool:
        server = scope.get("server")
        return bool(server) and server[1] == self.plan.ports[self.plan.index]

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            # Keep-alive connections to each sibling: a passed-on step costs a loopback round trip.
            self._client = httpx.AsyncClient(timeout=self.timeout_s, limits=httpx.Limits(max_keepalive_connections=32))
        return self._client

    # ------------------------------------------------------------------ passing requests on
    async def _pass_on(self, owner: int, scope: Scope, receive: Receive, send: Send) -> None:
        import httpx

        body = bytearray()
        while True:  # bounded: the body cap sits outside this middleware
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        url = self.plan.url(owner) + scope["path"]
        try:
            answer = await self._http().request(scope["method"], url, content=bytes(body),
                                                headers={"content-type": "application/json"})
        except httpx.HTTPError as exc:
            log.warning("worker %d could not reach worker %d: %s", self.plan.index, owner, exc)
            await _error(send, 404, "unknown_session", "the worker that held this session is gone")
            return
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()
                   if k.lower() in _KEPT_HEADERS]
        headers.append((b"content-length", str(len(answer.content)).encode()))
        await send({"type": "http.response.start", "status": answer.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": answer.content})

    # ------------------------------------------------------------------ the whole server's answers
    async def _whole_server(self, path: str, send: Send) -> None:
        client = self._http()
        answers = await asyncio.gather(*(client.get(self.plan.url(i) + path) for i in range(self.plan.count)),
                                       return_exceptions=True)
        texts = [a.text if not isinstance(a, BaseException) and a.status_code == 200 else None for a in answers]
        if path == "/health":
            status, media, body = 200, b"application/json", json.dumps(_health(texts)).encode()
        else:
            status, media, body = 200, b"text/plain; version=0.0.4; charset=utf-8", _metrics(texts).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", media), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _health(texts: list[str | None]) -> dict[str, Any]:
    """The workers' healths in one: sessions, caps and peaks summed (a worker that did not answer
    counts as none, and the status says so)."""
    total = {"status": "ok", "sessions": 0, "max_sessions": 0, "peak_sessions": 0, "workers": len(texts)}
    for text in texts:
        if text is None:
            total["status"] = "degraded"
            continue
        one = json.loads(text)
        for key in ("sessions", "max_sessions", "peak_sessions"):
            total[key] += int(one[key])
    return total


def _metrics(texts: list[str | None]) -> str:
    """Every worker's exposition as one, each sample labelled with its ``worker``."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families
    from prometheus_client.samples import Sample

    families: dict[str, Any] = {}
    for index, text in enumerate(texts):
        if text is None:
            continue
        for family in text_string_to_metric_families(text):
            merged = families.setdefault(family.name, family)
            labelled = [Sample(s.name, {**s.labels, "worker": str(index)}, s.value, s.timestamp, s.exemplar)
                        for s in family.samples]
            if merged is family:
                family.samples = labelled
            else:
                merged.samples.extend(labelled)

    class _Merged:
        def collect(self) -> Any:
            return list(families.values())

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged())
    return generate_latest(registry).decode()


async def _error(send: Send, status: int, code: str, message: str) -> None:
    from agentgym.server.wire import json_bytes

    body = json_bytes({"error": {"code": code, "message": message}})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


# -------------------------------------------------------------------------- WebSocket relay
async def _relay(owner: int, plan: WorkerPlan, scope: Scope, receive: Receive, send: Send) -> None:
    """Relay a session's WebSocket to the worker that holds the session, message by message, and
    its close (code and reason) back; the client's frames are parsed under this worker's limits."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidHandshake

    if (await receive())["type"] != "websocket.connect":
        return
    url = f"ws://127.0.0.1:{plan.ports[owner]}{scope['path']}"
    try:
        inner = await connect(url, compression=None, max_size=None, open_timeout=10, close_timeout=1)
    except (OSError, InvalidHandshake, TimeoutError):
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": 4404, "reason": "unknown session"})
        return
    await send({"type": "websocket.accept"})

    async def inward() -> None:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                await inner.close()
                return
            await inner.send(message["text"] if message.get("text") is not None else message.get("bytes") or b"")

    async def outward() -> None:
        try:
            async for message in inner:
                key = "text" if isinstance(message, str) else "bytes"
                await send({"type": "websocket.send", key: message})
        except ConnectionClosed:
            pass
        close = inner.close_rcvd
        await send({"type": "websocket.close", "code": close.code if close else 1011,
                    "reason": close.reason if close else "the session's worker went away"})

    tasks = [asyncio.ensure_future(inward()), asyncio.ensure_future(outward())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await inner.close()
