"""`AdmissionMiddleware`: a host's say over every HTTP request, before anything else is read.

A `SessionHost` that refuses some callers (the sealed track: a token of the run) must refuse them
before the request's ids, body or session are looked at, or the answer would tell a stranger
which ids exist. So its `admit` runs as the app's outermost middleware, ahead of the body cap,
the router and every route; an app whose host admits anyone has no such layer at all.
WebSockets are admitted by the socket's handler (after its accept, so that the refusal can be a
close code).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import HTTPConnection

from agentgym.server.host import SessionHost
from agentgym.server.sessions import ApiError
from agentgym.server.wire import json_bytes

__all__ = ["AdmissionMiddleware", "admits_anyone"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def admits_anyone(host: SessionHost) -> bool:
    """Whether `host` keeps the env server's own `admit` (everyone is admitted)."""
    return type(host).admit is SessionHost.admit


class AdmissionMiddleware:
    """Pure ASGI middleware: `host.admit` on every HTTP request; a refusal is the env server's
    error answer, and `on_refused` is called with its code (the server's metrics)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], host: SessionHost,
                 on_refused: Callable[[str], None] | None = None) -> None:
        self.app = app
        self.host = host
        self.on_refused = on_refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                self.host.admit(HTTPConnection(scope))
            except ApiError as exc:
                if self.on_refused is not None:
                    self.on_refused(exc.code)
                body = json_bytes({"error": {"code": exc.code, "message": exc.message}})
                headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                           *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in exc.headers.items())]
                await send({"type": "http.response.start", "status": exc.status, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
