"""One env-server process per core on one port: `Supervisor` starts the workers and keeps them.

One process serves one core: its event loop runs every env call of its sessions. So `agentgym
serve` binds the port once per worker with ``SO_REUSEPORT`` (the kernel spreads new connections
over the workers' queues; where the option is missing the workers share one socket), gives each
worker a private loopback port too, and starts the workers as child processes of this one
(``python -m agentgym.server.workers PLAN``), each with its socket descriptors and its share of the
session cap. How a request finds the worker that holds its session is `agentgym.server.routing`.

With one worker per core (the default) each worker is pinned to its own core (Linux): left to
the scheduler, two workers and their clients' processes on a small machine migrate and queue
behind each other, and the workers together served barely more steps than one
(benchmarks/server/RESULTS.md measures both).

The supervisor holds no session and runs no event loop. A worker that dies is started again on
the same sockets (its sessions are lost: their ids answer 404); a worker whose supervisor dies
is told to stop (Linux: the parent-death signal; elsewhere it watches its parent), so no worker
outlives the server. SIGINT or SIGTERM stops every worker (each closes its sessions) and then
the supervisor.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, fields
from typing import Any

from agentgym.server.config import ServerConfig
from agentgym.server.routing import WorkerPlan

__all__ = ["Supervisor", "public_sockets"]

log = logging.getLogger("agentgym.server")

#: Restarts of crashed workers allowed per minute before the supervisor gives up.
_RESTARTS_PER_MINUTE = 5
#: Seconds the workers get to close their sessions when told to stop.
_STOP_S = 10.0


def public_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` sockets bound to `host`:`port` with ``SO_REUSEPORT``, one per worker (the first
    resolves port 0); one socket for all where the option is missing.

    Raises:
        UserError: the port is in use or the address is not this machine's.
    """
    from agentgym.server.listening import listen_socket

    first = listen_socket(host, port, reuse_port=hasattr(socket, "SO_REUSEPORT"))
    if not hasattr(socket, "SO_REUSEPORT"):
        return [first] * count
    bound = first.getsockname()[1]
    return [first, *(listen_socket(host, bound, reuse_port=True) for _ in range(count - 1))]


class Supervisor:
    """The workers of one `agentgym serve`.

    Args:
        config: the server's limits (the session cap is shared out among the workers).
        host: the address to bind.
        port: the TCP port.
        env_ids: the ids to serve (default: every ``AgentRL/*`` id).
        log_level: uvicorn's log level in the workers.
    """

    def __init__(self, config: ServerConfig, *, host: str, port: int, env_ids: Iterable[str] | None = None,
                 log_level: str = "info") -> None:
        self.config = config
        self.count = config.worker_count()
        self.host = host
        self.public = public_sockets(host, port, self.count)
        self.port: int = self.public[0].getsockname()[1]
        self.private = [socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
                        for _ in range(self.count)]
        for sock in self.private:
            sock.bind(("127.0.0.1", 0))
        self.plan_ports = tuple(s.getsockname()[1] for s in self.private)
        self.env_ids = None if env_ids is None else list(env_ids)
        self.log_level = log_level
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * self.count
        self._stopping = threading.Event()
        self._restarts: list[float] = []

    @property
    def url(self) -> str:
        """The server's public URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> Supervisor:
        """Start every worker (returns at once; `wait_ready` waits for them)."""
        for index in range(self.count):
            self._spawn(index)
        return self

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        """Wait until every worker answers on its private port.

        A worker killed by a signal while it starts (the OOM killer, an operator) is started again
        as one that dies later would be; one that exits by itself cannot start (an import or
        configuration error) and starting it again would only fail the same way.

        Raises:
            RuntimeError: a worker exited, kept being killed, or did not answer in time.
        """
        deadline = time.monotonic() + timeout_s
        for index, port in enumerate(self.plan_ports):
            while not _answers(port):
                proc = self.procs[index]
                if proc is not None and proc.poll() is not None:
                    if proc.returncode >= 0 or not self._restart(index):
                        raise RuntimeError(f"env-server worker {index} exited with {proc.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"env-server worker {index} did not start within {timeout_s:g} s")
                time.sleep(0.05)

    def run(self) -> None:
        """Start the workers, keep them running until SIGINT or SIGTERM, then stop them."""
        import logging.config

        from uvicorn.config import LOGGING_CONFIG

        # The workers log as uvicorn does; the supervisor's own lines go the same way.
        logging.config.dictConfig(LOGGING_CONFIG)
        logging.getLogger("uvicorn.error").setLevel(self.log_level.upper())
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.start()
            self.wait_ready()
            logging.getLogger("uvicorn.error").info("listening on %s with %d workers (Ctrl+C to stop)", self.url,
                                                    self.count)
            self._keep()
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def stop(self) -> None:
        """Stop every worker (each closes its sessions) and close the sockets."""
        self._stopping.set()
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + _STOP_S
        for proc in self.procs:
            if proc is None:
                continue
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for sock in {*self.public, *self.private}:
            sock.close()

    def core_of(self, index: int) -> int | None:
        """The core worker `index` is pinned to: one core each when the server runs one worker per
        core (the default), so no two workers ever queue on one core while another idles and a
        worker keeps its caches; None (any core) with an explicit worker count, or where the OS
        cannot pin."""
        if self.config.workers or not hasattr(os, "sched_setaffinity"):
            return None
        cores = sorted(os.sched_getaffinity(0))
        return cores[index] if len(cores) == self.count else None

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._stopping.set()

    def _keep(self) -> None:
        while not self._stopping.wait(0.5):
            for index, proc in enumerate(self.procs):
                if proc is None or proc.poll() is None or self._stopping.is_set():
                    continue
                if not self._restart(index):
                    self._stopping.set()
                    break

    def _restart(self, index: int) -> bool:
        """Start worker `index` again, unless workers have died too often this minute (False)."""
        now = time.monotonic()
        self._restarts = [t for t in self._restarts if now - t < 60] + [now]
        if len(self._restarts) > _RESTARTS_PER_MINUTE:
            log.error("env-server workers keep dying (%d restarts in a minute): stopping", len(self._restarts))
            return False
        proc = self.procs[index]
        log.warning("env-server worker %d exited with %s; starting it again (its sessions are lost)",
                    index, None if proc is None else proc.returncode)
        self._spawn(index)
        return True

    def _spawn(self, index: int) -> None:
        public, private = self.public[index], self.private[index]
        plan = {"index": index, "ports": self.plan_ports, "public_fd": public.fileno(),
                "private_fd": private.fileno(), "config": asdict(self.config), "env_ids": self.env_ids,
                "log_level": self.log_level, "host": self.host, "port": self.port, "core": self.core_of(index)}
        self.procs[index] = subprocess.Popen(
            [sys.executable, "-m", "agentgym.server.workers", json.dumps(plan)],
            pass_fds=(public.fileno(), private.fileno()), preexec_fn=_die_with_parent if sys.platform == "linux" else None)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: worker\r\nConnection: close\r\n\r\n")
            return s.recv(12).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the supervisor dies, however it dies (Linux)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _watch_parent(parent: int) -> None:
    """Stop this worker once its supervisor is gone (where there is no parent-death signal)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)


def worker_main(argv: list[str]) -> None:
    """A worker: its share of the sessions on the sockets its supervisor handed down (``argv[0]``,
    the plan as JSON)."""
    from agentgym.server.app import create_app
    from agentgym.server.gc_policy import tune_for_serving
    from agentgym.server.listening import uvicorn_server

    plan = json.loads(argv[0])
    names = {f.name for f in fields(ServerConfig)}
    config = ServerConfig(**{k: v for k, v in plan["config"].items() if k in names})
    index, ports = int(plan["index"]), tuple(plan["ports"])
    public = socket.socket(fileno=int(plan["public_fd"]))
    private = socket.socket(fileno=int(plan["private_fd"]))
    share = config.share(index, len(ports))
    app = create_app(share, env_ids=plan["env_ids"], worker=WorkerPlan(index=index, ports=ports))
    threading.Thread(target=_watch_parent, args=(os.getppid(),), name="agentgym-parent-watch", daemon=True).start()
    tune_for_serving()
    if plan.get("core") is not None:
        os.sched_setaffinity(0, {int(plan["core"])})
    uvicorn_server(app, host=plan["host"], port=int(plan["port"]), log_level=plan["log_level"],
                   limits=share.connection_limits(), ws_max_bytes=share.max_body_bytes,
                   announce=False).run(sockets=[public, private])


if __name__ == "__main__":
    worker_main(sys.argv[1:])
