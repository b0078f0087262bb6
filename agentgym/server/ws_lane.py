"""`WebSocketLane`: the env server's two WebSocket routes, straight to their handler.

A WebSocket's task runs inside every layer that routed it, and each time it wakes (every
message) it resumes through all of them: FastAPI's routing wraps an endpoint in a dozen (exit
stacks, dependency solving, telemetry spans, exception wrappers), which cost more than the
handler's own work on a session's opening. This pure ASGI middleware, the innermost of the
app's, hands ``/ws`` and ``/sessions/{session_id}/ws`` to the handler itself, with the same
`WebSocket` and path parameters the router would give it. Everything outside it (the body cap,
the worker router, admission) runs as before; an app mounted under a prefix (a ``root_path``)
is left to the router, which knows how the prefix is spelt.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.websockets import WebSocket

__all__ = ["WebSocketLane"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: Starlette's match for ``/sessions/{session_id}/ws`` (a str parameter: anything but a slash).
_SESSION_WS = re.compile(r"/sessions/([^/]+)/ws")


class WebSocketLane:
    """Pure ASGI middleware: ``handler(websocket, session_id)`` for the WebSocket routes
    (`session_id` None for ``/ws``); anything else goes on to `app`."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]],
                 handler: Callable[[WebSocket, str | None], Awaitable[None]]) -> None:
        self.app = app
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not scope.get("root_path"):
            path = scope["path"]
            if path == "/ws":
                await self.handler(WebSocket(scope, receive, send), None)
                return
            found = _SESSION_WS.fullmatch(path)
            if found is not None:
                scope["path_params"] = {**scope.get("path_params", {}), "session_id": found.group(1)}
                await self.handler(WebSocket(scope, receive, send), found.group(1))
                return
        await self.app(scope, receive, send)
