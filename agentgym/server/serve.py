"""Run the env server: `serve` blocks (the `agentgym serve` command), `ServerThread` runs one in
the background of this process (tests, examples, notebooks)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterable
from typing import Any

from agentgym.server.config import ServerConfig

__all__ = ["serve", "ServerThread"]


def _uvicorn_config(app: Any, cfg: ServerConfig, host: str, port: int, log_level: str, **kw: Any) -> Any:
    import uvicorn

    # The WebSocket frame cap is the body cap, so a huge message is refused by the protocol layer.
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, ws="websockets-sansio",
                          ws_max_size=cfg.max_body_bytes, lifespan="on", **kw)


def serve(config: ServerConfig | None = None, *, host: str = "127.0.0.1", port: int = 8000,
          env_ids: Iterable[str] | None = None, log_level: str = "info") -> None:
    """Serve the envs with uvicorn until interrupted.

    Args:
        config: the limits (default: `ServerConfig()`).
        host: the address to bind; 127.0.0.1 keeps the server on this machine.
        port: the TCP port.
        env_ids: the ids to serve (default: every ``AgentRL/*`` id).
        log_level: uvicorn's log level.
    """
    import uvicorn

    from agentgym.server.app import create_app

    cfg = config or ServerConfig()
    uvicorn.Server(_uvicorn_config(create_app(cfg, env_ids=env_ids), cfg, host, port, log_level)).run()


class ServerThread:
    """An env server on a free loopback port, in a daemon thread of this process.

    Use as a context manager; ``url`` is set once the server accepts connections::

        with ServerThread(ServerConfig(max_sessions=8)) as server:
            env = RemoteEnv(server.url, "AgentRL/Dialog-v0")
    """

    def __init__(self, config: ServerConfig | None = None, *, env_ids: Iterable[str] | None = None,
                 host: str = "127.0.0.1", log_level: str = "warning") -> None:
        import uvicorn

        from agentgym.server.app import create_app

        self.config = config or ServerConfig()
        self.app = create_app(self.config, env_ids=env_ids)
        # IPPROTO_TCP spelt out: asyncio sets TCP_NODELAY only on sockets that say so, and without
        # it every response waits 40 ms for the client's delayed ACK.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, 0))
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        self._server = uvicorn.Server(_uvicorn_config(self.app, self.config, host, self.port, log_level))
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
