"""uvicorn as every agentgym server runs it: `uvicorn_server` (the connection defences of
`agentgym.server.connections`) on a socket `listen_socket` binds first."""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

from agentgym.server.config import ConnectionLimits

__all__ = ["listen_socket", "uvicorn_server"]

#: Seconds uvicorn waits for open requests at shutdown before cancelling them: a peer that never
#: reads must not hold a shutdown for ever.
_GRACEFUL_SHUTDOWN_S = 5

#: The kernel's queue of connections not yet accepted (capped by the kernel's somaxconn).
_LISTEN_QUEUE = 4096


def uvicorn_server(app: Any, *, host: str, port: int, log_level: str, limits: ConnectionLimits | None = None,
                   ws_max_bytes: int | None = None, guard: Any = None, announce: bool = True) -> Any:
    """A ``uvicorn.Server`` with the connection defences of `agentgym.server.connections`.

    Every agentgym server runs uvicorn through here (the env server and ``agentgym leaderboard
    serve``), so both have the same header, body and send timeouts, the same connection limit
    and the same rate-limited logs. Call ``.run()`` on it, or ``.run(sockets=[...])``.

    Args:
        app: the ASGI app.
        host: the address to bind.
        port: the TCP port.
        log_level: uvicorn's log level.
        limits: the connection limits (default: `ConnectionLimits()`); ignored if `guard` is given.
        ws_max_bytes: the WebSocket message cap, enforced by the protocol while reading; None
            serves no WebSockets at all.
        guard: the `ConnectionGuard` to enforce the limits with (default: a new one), for a
            caller that watches it.
        announce: log the address once listening (a worker of several leaves it to its supervisor).
    """
    import uvicorn

    from agentgym.server.connections import ConnectionGuard
    from agentgym.server.logs import limit_server_logs
    from agentgym.server.monitoring import watch_connections

    guard = guard or ConnectionGuard(limits)
    watch_connections(app, guard)
    ws: dict[str, Any] = {"ws": "none"}
    if ws_max_bytes is not None:
        # The frame cap is the message cap, so a huge message is refused by the protocol layer;
        # no compression: it would cost a zlib state per connection and CPU per message.
        ws = {"ws": guard.ws_protocol, "ws_max_size": ws_max_bytes, "ws_per_message_deflate": False}
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, lifespan="on", http=guard.http_protocol, **ws,
        backlog=guard.accept_batch, timeout_keep_alive=guard.limits.keep_alive_s,
        h11_max_incomplete_event_size=guard.limits.max_header_bytes,
        timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_S,
    )
    limit_server_logs()  # after uvicorn.Config, which configures the loggers

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            # asyncio uses one number for the kernel's accept queue and for the connections it
            # accepts in one loop pass. The second must stay small (each is a descriptor before
            # the guard sees it), the first large: a full queue drops a new client's SYN, and
            # the client waits a second before it tries again.
            for server in getattr(self, "servers", ()):
                for listening in server.sockets:
                    with socket.socket(fileno=os.dup(listening.fileno())) as again:
                        again.listen(_LISTEN_QUEUE)
            if sockets and announce:
                # uvicorn names the address only for sockets it bound itself (`listen_socket` binds ours).
                host, port = sockets[0].getsockname()[:2]
                logging.getLogger("uvicorn.error").info("listening on http://%s:%d (Ctrl+C to stop)",
                                                        f"[{host}]" if ":" in host else host, port)

    return Server(config)


def listen_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A TCP socket bound to `host`:`port` for a server to listen on.

    Bound here, before uvicorn starts, so that a port in use or an address this machine does not
    have is one clear error instead of uvicorn's startup log and exit. With `reuse_port`, other
    sockets of this user may bind the same port (``SO_REUSEPORT``: the workers of one server).

    Raises:
        UserError: naming the address and what to do.
    """
    import errno

    from agentgym.errors import UserError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelt out: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every response waits 40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UserError(f"port {port} on {host} is in use (a server already running there?); "
                            "choose another with --port") from exc
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock
