"""Run the env server: `serve` blocks (the `agentgym serve` command), `ServerThread` runs one in
the background of this process (tests, examples, notebooks)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from agentgym.server.config import ServerConfig
from agentgym.server.gc_policy import tune_for_serving
from agentgym.server.listening import listen_socket, uvicorn_server

__all__ = ["serve", "ServerThread", "uvicorn_server", "listen_socket", "ENV_SERVER_PORT", "LEADERBOARD_PORT"]

#: The default ports of the env server (`agentgym serve`) and of the leaderboard (`agentgym
#: leaderboard serve`): apart from each other and from 8000, where vLLM and most model servers
#: listen, so an agent's model, the envs and a board can run on one machine.
ENV_SERVER_PORT = 8100
LEADERBOARD_PORT = 8200


def serve(config: ServerConfig | None = None, *, host: str = "127.0.0.1", port: int = ENV_SERVER_PORT,
          env_ids: Iterable[str] | None = None, log_level: str = "info") -> None:
    """Serve the envs with uvicorn until interrupted: one worker process per core by default
    (`agentgym.server.workers`), or this process alone with ``workers=1`` (and by default when an
    id is registered by this program only: a worker process would not know it).

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
    if cfg.worker_count() > 1 and env_ids is not None and _registered_here(env_ids):
        # A worker process imports agentgym, not this program: it would not know these ids.
        if cfg.workers:
            from agentgym.errors import UserError

            raise UserError(f"{', '.join(_registered_here(env_ids))} are registered by this program only, so "
                            "worker processes cannot make them: serve them with workers=1, or register them in "
                            "an importable module (module:NS/Name-vN)")
        cfg = replace(cfg, workers=1)
    if cfg.worker_count() > 1:
        from agentgym.server.workers import Supervisor

        if env_ids is not None:
            create_app(cfg, env_ids=env_ids)  # an unknown id is an error here, not in every worker
        Supervisor(cfg, host=host, port=port, env_ids=env_ids, log_level=log_level).run()
        return
    app = create_app(cfg, env_ids=env_ids)
    sock = listen_socket(host, port)
    tune_for_serving()
    uvicorn_server(app, host=host, port=port, log_level=log_level, limits=cfg.connection_limits(),
                   ws_max_bytes=cfg.max_body_bytes).run(sockets=[sock])


def _registered_here(env_ids: Iterable[str]) -> list[str]:
    """The ids a fresh process that imports agentgym would not know: neither agentgym's own
    (``AgentRL/*``) nor ``module:NS/Name-vN`` (whose module registers it on import)."""
    return [i for i in env_ids if not i.startswith("AgentRL/") and ":" not in i]


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
