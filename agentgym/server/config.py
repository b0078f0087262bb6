"""The env server's limits, in one place: `create_app`, `serve` and `agentgym serve` read them here."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import Any

__all__ = ["ENV_CALLS", "MAX_WORKERS", "ConnectionLimits", "ServerConfig", "descriptor_budget", "usable_cores"]

#: Where env calls may run (see `ServerConfig.env_calls`).
ENV_CALLS = ("inline", "thread")
#: Worker processes at most (a session id names its worker in two digits at most).
MAX_WORKERS = 64


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the OS tells it, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _doc(default: Any, doc: str) -> Any:
    # The doc line is the field's documentation and its command-line help: one copy.
    return field(default=default, metadata={"doc": doc})


#: Descriptors kept for the process itself (stdio, the event loop, data files, log files, pipes).
_RESERVED_FDS = 64


def descriptor_budget() -> tuple[int, int]:
    """``(max_connections, accept_batch)`` that fit this process's descriptor limit.

    asyncio accepts up to ``accept_batch`` connections in one loop pass, and the guard sees them
    two passes later, when one it evicts still holds its descriptor for another pass: so four
    batches are kept free on top of the process's own reserve, and ``accept()`` never fails.
    """
    try:
        import resource
    except ImportError:  # not POSIX: no limit to read; assume the common default
        soft = 1024
    else:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft > 1 << 20:
            soft = 1 << 20
    batch = max(16, min(128, soft // 64))
    return max(16, soft - _RESERVED_FDS - 4 * batch), batch


@dataclass(frozen=True)
class ConnectionLimits:
    """What one client connection may cost a server (shared by the env server and the board)."""

    #: Seconds to deliver a request's headers, and the longest pause inside a request body.
    header_timeout_s: float = 10.0
    #: The slowest a request body may arrive on average, after `header_timeout_s` of grace.
    min_body_bytes_per_s: int = 1024
    #: Seconds a peer may leave our writes unread before its connection is aborted.
    send_timeout_s: float = 10.0
    #: Open connections at most; 0: as many as the descriptor limit allows (`descriptor_budget`).
    max_connections: int = 0
    #: Seconds an idle keep-alive connection stays open (uvicorn's ``timeout_keep_alive``).
    keep_alive_s: int = 5
    #: Bytes of request line and headers at most (h11's incomplete-event cap); more gets 400.
    max_header_bytes: int = 16 * 1024

    def __post_init__(self) -> None:
        for name in ("header_timeout_s", "send_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if isinstance(self.min_body_bytes_per_s, bool) or not isinstance(self.min_body_bytes_per_s, int) \
                or self.min_body_bytes_per_s < 1:
            raise ValueError(f"min_body_bytes_per_s must be a positive int, got {self.min_body_bytes_per_s!r}")
        if isinstance(self.max_connections, bool) or not isinstance(self.max_connections, int) \
                or self.max_connections < 0:
            raise ValueError(f"max_connections must be an int >= 0 (0: from the descriptor limit), "
                             f"got {self.max_connections!r}")

    def resolved(self) -> tuple[int, int]:
        """``(max_connections, accept_batch)``: the configured limit, never above what descriptors allow."""
        budget, batch = descriptor_budget()
        return (budget if self.max_connections == 0 else min(self.max_connections, budget)), batch


@dataclass(frozen=True)
class ServerConfig:
    """Limits of one env server. Every field is also an `agentgym serve` option.

    The defaults serve a trainer's load untuned: thousands of sessions, one worker process per
    core, env calls on each worker's event loop (no thread per session, so an idle session costs
    only its env and its connection)."""

    max_sessions: int = _doc(16384, "live sessions at most, over all workers (each holds its share); a create "
                                    "beyond the cap gets 429 with Retry-After")
    idle_timeout_s: float = _doc(300.0, "seconds a session may sit unused (no request, no WebSocket message) "
                                        "before the reaper closes it")
    unused_timeout_s: float = _doc(10.0, "seconds a new session may wait for its first reset, step or WebSocket "
                                         "before the reaper closes it (a client that died after creating it)")
    max_body_bytes: int = _doc(1 << 20, "request bodies and WebSocket messages over this many bytes get 413, "
                                        "counted while reading")
    step_timeout_s: float = _doc(30.0, "seconds one env call (make, reset, step) may run; a slower one gets 504 "
                                       "and its session is closed")
    env_calls: str = _doc("inline", "where env calls run: 'inline' (on the worker's event loop, no thread hop "
                                    "and no thread per session; a watchdog enforces the step timeout) or "
                                    "'thread' (each session's own thread: for envs that block in I/O or sleep)")
    workers: int = _doc(0, "worker processes sharing the port, each with its own event loop and its share of "
                           "the sessions (0: one per core this process may run on)")
    send_timeout_s: float = _doc(ConnectionLimits.send_timeout_s,
                                 "seconds a client may leave the server's replies unread (a WebSocket reply, an "
                                 "HTTP response) before its connection is dropped; a session is never held by it")
    header_timeout_s: float = _doc(ConnectionLimits.header_timeout_s,
                                   "seconds a client has to send a request's headers, and the longest pause "
                                   "inside a request body, before its connection is dropped")
    max_connections: int = _doc(ConnectionLimits.max_connections,
                                "open connections at most (0: as many as the descriptor limit allows); past it "
                                "a new connection evicts the one idle longest")

    def __post_init__(self) -> None:
        if isinstance(self.max_sessions, bool) or not isinstance(self.max_sessions, int) or self.max_sessions < 1:
            raise ValueError(f"max_sessions must be a positive int, got {self.max_sessions!r}")
        if (isinstance(self.max_body_bytes, bool) or not isinstance(self.max_body_bytes, int)
                or self.max_body_bytes < 1024):
            raise ValueError(f"max_body_bytes must be an int of at least 1024, got {self.max_body_bytes!r}")
        if self.env_calls not in ENV_CALLS:
            raise ValueError(f"env_calls must be one of {ENV_CALLS}, got {self.env_calls!r}")
        self.connection_limits()  # validates the connection fields
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or not 0 <= self.workers <= MAX_WORKERS:
            raise ValueError(f"workers must be an int from 0 (one per core) to {MAX_WORKERS}, got {self.workers!r}")
        for name in ("idle_timeout_s", "unused_timeout_s", "step_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")

    def connection_limits(self) -> ConnectionLimits:
        """The limits on each client connection (enforced by `agentgym.server.connections`)."""
        return ConnectionLimits(header_timeout_s=self.header_timeout_s, send_timeout_s=self.send_timeout_s,
                                max_connections=self.max_connections)

    @property
    def reap_interval_s(self) -> float:
        """How often the reaper looks: a quarter of the shorter timeout, between 50 ms and 1 s."""
        return min(1.0, max(0.05, min(self.idle_timeout_s, self.unused_timeout_s) / 4))

    def worker_count(self) -> int:
        """The worker processes `agentgym serve` runs: `workers`, or one per usable core."""
        return self.workers or usable_cores()

    def share(self, index: int, workers: int) -> ServerConfig:
        """The limits of worker `index` of `workers`: its share of the session cap (at least 1)."""
        base, extra = divmod(self.max_sessions, workers)
        return replace(self, max_sessions=max(1, base + (index < extra)), workers=1)

    @property
    def retry_after_s(self) -> int:
        """The Retry-After of a 429: a reaper pass, at least one second."""
        return max(1, math.ceil(self.reap_interval_s))

    @classmethod
    def options(cls) -> list[tuple[str, type, Any, str]]:
        """``(name, type, default, doc)`` of every field, for command-line options."""
        return [(f.name, type(f.default), f.default, f.metadata["doc"]) for f in fields(cls)]
