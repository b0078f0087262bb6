"""A request-body cap that counts bytes as they arrive, chunked bodies included.

A declared Content-Length over the cap is refused before a byte is read; otherwise the body is
read into memory up to the cap and then handed on, so the app never sees a byte more than the
cap allows, whatever the headers claimed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentgym.server.wire import json_bytes

__all__ = ["BodyLimitMiddleware"]

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyLimitMiddleware:
    """Pure ASGI middleware: 413 for HTTP request bodies over `max_body_bytes`; `on_refused` is
    called with the error code of each refusal (the server's metrics)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], max_body_bytes: int,
                 on_refused: Callable[[str], None] | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.on_refused = on_refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._too_large(send, f"the body declares {declared} bytes")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # The client left mid-body: nobody to answer.
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await self._too_large(send, f"the body runs past {self.max_body_bytes} bytes")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # Only http.disconnect can follow a finished body.

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send, what: str) -> None:
        if self.on_refused is not None:
            self.on_refused("body_too_large")
        body = json_bytes({"error": {"code": "body_too_large",
                                "message": f"{what}; the limit is {self.max_body_bytes} bytes"}})
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # The server rejects a malformed length before we run; count the bytes.
    return None
