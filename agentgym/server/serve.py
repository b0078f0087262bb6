"""Run the env server: `serve` blocks (the `agentgym serve` command), `ServerThread` runs one in
the background of this process (tests, examples, notebooks)."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterable
from typing import Any

from agentgym.server.config import ConnectionLimits, ServerConfig
from agentgym.server.gc_policy import tune_for_serving

__all__ = ["serve", "ServerThread", "uvicorn_server", "listen_socket", "ENV_SERVER_PORT", "LEADERBOARD_PORT"]

#: The default ports of the env server (`agentgym serve`) and of the leaderboard (`agentgym
#: leaderboard serve`): apart from each other and from 8000, where vLLM and most model servers
#: listen, so an agent's model, the envs and a board can run on one machine.
ENV_SERVER_PORT = 8100
LEADERBOARD_PORT = 8200

#: Seconds uvicorn waits for open requests at shutdown before cancelling them: a peer that never
#: reads must not hold a shutdown for ever.
_GRACEFUL_SHUTDOWN_S = 5

#: The kernel's queue of connections not yet accepted (capped by the kernel's somaxconn).
_LISTEN_QUEUE = 4096


def uvicorn_server(app: Any, *, host: str, port: int, log_level: str, limits: ConnectionLimits | None = None,
                   ws_max_bytes: int | None = None, guard: Any = None) -> Any:
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
            if sockets:
                # uvicorn names the address only for sockets it bound itself (`listen_socket` binds ours).
                host, port = sockets[0].getsockname()[:2]
                logging.getLogger("uvicorn.error").info("listening on http://%s:%d (Ctrl+C to stop)",
                                                        f"[{host}]" if ":" in host else host, port)

    return Server(config)


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host`:`port` for a server to listen on.

    Bound here, before uvicorn starts, so that a port in use or an address this machine does not
    have is one clear error instead of uvicorn's startup log and exit.

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
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UserError(f"port {port} on {host} is in use (a server already running there?); "
                            "choose another with --port") from exc
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


def serve(config: ServerConfig | None = None, *, host: str = "127.0.0.1", port: int = ENV_SERVER_PORT,
          env_ids: Iterable[str] | None = None, log_level: str = "info") -> None:
    """Serve the envs with uvicorn until interrupted.

    Args:
        config: the limits (default: `ServerConfig()`).
        host: the address to bind; 127.0.0.1 keeps the server on this machine.
        port: the TCP port.
        env_ids: the ids to serve (default: every ``AgentRL/*`` id).
        log_level: uvicorn's log level.
    """
    import uvicorn  # noqa: F401  (without the server extra: ImportError before a socket is bound)

    from agentgym.server.app import create_app

    cfg = config or ServerConfig()
    app = create_app(cfg, env_ids=env_ids)
    sock = listen_socket(host, port)
    tune_for_serving()
    uvicorn_server(app, host=host, port=port, log_level=log_level, limits=cfg.connection_limits(),
                   ws_max_bytes=cfg.max_body_bytes).run(sockets=[sock])


class ServerThread:
    """An env server on a free loopback port, in a daemon thread of this process.

    Use as a context manager; ``url`` is set once the server accepts connections::

        with ServerThread(ServerConfig(max_sessions=8)) as server:
            env = RemoteEnv(server.url, "AgentRL/Dialog-v0")
    """

    def __init__(self, config: ServerConfig | None = None, *, env_ids: Iterable[str] | None = None,
                 host: str = "127.0.0.1", log_level: str = "warning") -> None:
        import uvicorn  # noqa: F401  (without the server extra: ImportError before a socket is bound)

        from agentgym.server.app import create_app

        self.config = config or ServerConfig()
        self.app = create_app(self.config, env_ids=env_ids)
        self._sock = listen_socket(host, 0)
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        from agentgym.server.connections import ConnectionGuard

        #: The connection limits in force; ``guard.live`` counts the open connections.
        self.guard = ConnectionGuard(self.config.connection_limits())
        self._server = uvicorn_server(self.app, host=host, port=self.port, log_level=log_level,
                                      ws_max_bytes=self.config.max_body_bytes, guard=self.guard)
        self._thread = threading.Thread(target=self._run, name="agentgym-server", daemon=True)

    def _run(self) -> None:
        self._server.run(sockets=[self._sock])

    def start(self, timeout_s: float = 10.0) -> ServerThread:
        """Start the server and wait until it accepts connections."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the env server did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask the server to shut down (closing every session) and wait for it."""
        self._server.should_exit = True
        self._thread.join(timeout_s)
        self._sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
