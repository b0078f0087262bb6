"""Connection-level defences for uvicorn: header and body timeouts, a write-stall timeout and a
connection limit that drops the longest-idle connection first.

uvicorn alone keeps a connection that never completes its headers for ever (its keep-alive
timer starts only after a response), waits for ever on a peer that stops reading, and accepts
connections until the descriptor limit is hit, after which it can accept none at all. Its
``limit_concurrency`` does not help here: it answers requests with 503 once the count of
connections reaches it, so the half-open sockets of a slowloris attack would make every honest
request a 503. `ConnectionGuard` closes these gaps from uvicorn's own protocol classes, with the
limits of `agentgym.server.config.ConnectionLimits`:

- a connection has ``header_timeout_s`` to deliver a request's headers, counted from the connect
  or from the end of the previous response and never reset by trickled bytes;
- a request body may pause at most ``header_timeout_s`` between two pieces, and must keep up
  ``min_body_bytes_per_s`` on average after a first ``header_timeout_s`` of grace (a slow POST);
- a peer that leaves our writes unread for ``send_timeout_s`` (the transport stays paused above
  its high-water mark, or a closing transport cannot flush) is aborted, so its descriptor comes
  back;
- a WebSocket peer may make the server parse only so much per byte it sends, and nothing much
  after the server's close (`agentgym.server.ws_limits`); past that it is closed;
- at most ``max_connections`` are open: a new one first evicts the connection that has waited
  longest for a request, else the slowest request body; when every connection is busy otherwise,
  the new one is closed at once. The default limit is what the descriptor limit allows, less a
  reserve for the process's own files and a few accept bursts, so ``accept()`` never runs out of
  descriptors.

Every drop is logged, at most a few lines a minute of each kind (`agentgym.server.logs`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from agentgym.server.config import ConnectionLimits
from agentgym.server.ws_limits import CLOSE_TIMEOUT_S, MeteredProtocol

__all__ = ["ConnectionGuard", "DROP_REASONS"]

log = logging.getLogger("agentgym.server")

#: Why the guard refuses or drops a connection (the keys of `ConnectionGuard.dropped`).
DROP_REASONS = ("refused", "evicted", "header_timeout", "body_timeout", "body_too_slow", "send_timeout", "ws_flood")

_REQUEST_TIMEOUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"content-length: 15\r\nconnection: close\r\n\r\nRequest Timeout")


class _Conn:
    """What the guard knows about one open connection (keyed by its transport)."""

    __slots__ = ("protocol", "idle", "body_start", "body_last", "body_bytes", "paused_at", "closing_at")

    def __init__(self, protocol: Any, now: float) -> None:
        self.protocol = protocol
        #: Waiting for a request since this time (None while a request or a WebSocket runs).
        self.idle: float | None = now
        #: A request body is arriving: since when, its last piece when, and how many bytes so far.
        self.body_start: float | None = None
        self.body_last = 0.0
        self.body_bytes = 0
        #: Our writes have been paused (the peer does not read) since this time.
        self.paused_at: float | None = None
        #: First seen closing with data still unsent, at this time.
        self.closing_at: float | None = None

    def body_rate(self, now: float) -> float:
        """Bytes per second the body has arrived at so far."""
        assert self.body_start is not None
        return self.body_bytes / max(1e-3, now - self.body_start)


class ConnectionGuard:
    """The connection limits of one server, enforced from its protocol classes.

    Pass `http_protocol` and `ws_protocol` to ``uvicorn.Config(http=..., ws=...)``
    (`agentgym.server.serve.uvicorn_config` does); the guard then sees every connection of that
    server, and a WebSocket keeps the entry of the HTTP connection it upgraded. Everything runs on
    the server's event loop.

    Args:
        limits: the limits (default: `ConnectionLimits()`).
    """

    def __init__(self, limits: ConnectionLimits | None = None) -> None:
        self.limits = limits or ConnectionLimits()
        self.max_connections, self.accept_batch = self.limits.resolved()
        self._open: dict[Any, _Conn] = {}
        #: Connections waiting for a request, the longest-waiting first (the eviction order).
        self._idle: OrderedDict[Any, None] = OrderedDict()
        self._sweeping: asyncio.TimerHandle | None = None
        self._tick = min(1.0, max(0.05, min(self.limits.header_timeout_s, self.limits.send_timeout_s) / 4))
        #: Connections dropped so far, by reason.
        self.dropped: dict[str, int] = {}
        self.http_protocol: type[H11Protocol] = type("GuardedH11Protocol", (_GuardedH11,), {"guard": self})
        self.ws_protocol: type[WebSocketsSansIOProtocol] = type(
            "GuardedWebSocketProtocol", (_GuardedWebSocket,), {"guard": self})

    @property
    def live(self) -> int:
        """Connections open now."""
        return len(self._open)

    # ------------------------------------------------------------------ events from the protocols
    def opened(self, transport: Any, protocol: Any, loop: asyncio.AbstractEventLoop) -> None:
        """A new connection: admit it, evicting another if the limit is reached."""
        if len(self._open) >= self.max_connections and not self._evict():
            self._count("refused")
            log.warning("the connection limit (%d) is reached and every connection is busy: refused a new one",
                        self.max_connections)
            transport.abort()
            return
        self._open[transport] = _Conn(protocol, time.monotonic())
        self._idle[transport] = None
        if self._sweeping is None:
            self._sweeping = loop.call_later(self._tick, self._sweep, loop)

    def received(self, transport: Any, state: Any, nbytes: int) -> None:
        """`nbytes` arrived and h11 parsed them: the peer's side is now in `state`."""
        if state is h11.IDLE:
            return  # still waiting for (the rest of) a request's headers: the clock keeps running
        conn = self._open.get(transport)
        if conn is None:
            return
        if conn.idle is not None:
            conn.idle = None
            self._idle.pop(transport, None)
        if state is h11.SEND_BODY:
            now = time.monotonic()
            if conn.body_start is None:
                conn.body_start, conn.body_bytes = now, 0
            conn.body_last = now
            conn.body_bytes += nbytes
        else:
            conn.body_start = None

    def waiting(self, transport: Any) -> None:
        """The connection waits for its next request (a response is complete)."""
        conn = self._open.get(transport)
        if conn is not None and conn.idle is None:
            conn.idle = time.monotonic()
            conn.body_start = None
            self._idle[transport] = None

    def upgraded(self, transport: Any, protocol: Any) -> None:
        """The connection is a WebSocket now: busy until it closes, never evicted."""
        conn = self._open.get(transport)
        if conn is None:
            return
        conn.protocol = protocol
        conn.body_start = None
        if conn.idle is not None:
            conn.idle = None
            self._idle.pop(transport, None)

    def writing_paused(self, transport: Any, paused: bool) -> None:
        """The transport's write buffer passed its high-water mark (or came back under it)."""
        conn = self._open.get(transport)
        if conn is not None:
            conn.paused_at = time.monotonic() if paused else None

    def flooded(self, kind: str) -> None:
        """A WebSocket peer passed a frame limit of `agentgym.server.ws_limits` (its protocol closes it)."""
        self._count("ws_flood")
        log.warning("a WebSocket client sent past the frame limits (%s): connection closed", kind)

    def lost(self, transport: Any) -> None:
        """The connection is gone."""
        if self._open.pop(transport, None) is not None:
            self._idle.pop(transport, None)

    # ------------------------------------------------------------------ enforcement
    def _evict(self) -> bool:
        """Make room: drop the connection idle longest, else the slowest request body."""
        if self._idle:
            victim, _ = self._idle.popitem(last=False)
            self._drop(victim, "evicted", "the connection limit (%d) is reached: dropped the connection idle "
                       "longest", self.max_connections)
            return True
        now = time.monotonic()
        bodies = [(conn.body_rate(now), t) for t, conn in self._open.items() if conn.body_start is not None]
        if not bodies:
            return False
        _, victim = min(bodies, key=lambda rate_transport: rate_transport[0])
        self._drop(victim, "evicted", "the connection limit (%d) is reached: dropped the slowest request body",
                   self.max_connections)
        return True

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        now = time.monotonic()
        limits = self.limits
        header_deadline = now - limits.header_timeout_s
        while self._idle:  # the longest-waiting first: stop at the first that still has time
            transport = next(iter(self._idle))
            conn = self._open.get(transport)
            if conn is not None and conn.idle is not None and conn.idle > header_deadline:
                break
            self._idle.popitem(last=False)
            if conn is None or conn.idle is None:
                continue
            conn.idle = None
            self._count("header_timeout")
            log.warning("a client sent no complete request headers within %g s: connection closed",
                        limits.header_timeout_s)
            conn.protocol.request_timed_out()
        send_deadline = now - limits.send_timeout_s
        for transport, conn in list(self._open.items()):
            if conn.body_start is not None and conn.body_last < header_deadline:
                self._drop(transport, "body_timeout", "a request body paused for over %g s: connection dropped",
                           limits.header_timeout_s)
            elif conn.body_start is not None and (
                    now > conn.body_start + limits.header_timeout_s + conn.body_bytes / limits.min_body_bytes_per_s):
                self._drop(transport, "body_too_slow", "a request body arrived at under %d bytes/s: connection "
                           "dropped", limits.min_body_bytes_per_s)
            elif conn.paused_at is not None and conn.paused_at < send_deadline:
                self._drop(transport, "send_timeout", "a client left our writes unread for over %g s: connection "
                           "dropped", limits.send_timeout_s)
            elif transport.is_closing() and transport.get_write_buffer_size():
                if conn.closing_at is None:
                    conn.closing_at = now
                elif conn.closing_at < send_deadline:
                    self._drop(transport, "send_timeout", "a closing connection could not flush for over %g s: "
                               "connection dropped", limits.send_timeout_s)
        self._sweeping = loop.call_later(self._tick, self._sweep, loop) if self._open else None

    def _drop(self, transport: Any, reason: str, message: str, *args: Any) -> None:
        self._count(reason)
        log.warning(message, *args)
        self.lost(transport)
        transport.abort()

    def _count(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


class _Reporting:
    """What both protocols tell the guard: a connection lost, writes paused and resumed."""

    guard: ConnectionGuard
    transport: Any

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)  # type: ignore[misc]
        self.guard.lost(self.transport)

    def pause_writing(self) -> None:
        super().pause_writing()  # type: ignore[misc]
        self.guard.writing_paused(self.transport, True)

    def resume_writing(self) -> None:
        super().resume_writing()  # type: ignore[misc]
        self.guard.writing_paused(self.transport, False)


class _GuardedH11(_Reporting, H11Protocol):
    """uvicorn's h11 protocol, reporting to its server's `ConnectionGuard`."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
        super().connection_made(transport)  # type: ignore[arg-type]
        self.guard.opened(transport, self, self.loop)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.get_protocol() is self:  # not handed to a WebSocket meanwhile
            self.guard.received(self.transport, self.conn.their_state, len(data))

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete):
            self.guard.waiting(self.transport)

    def request_timed_out(self) -> None:
        """The header timeout ran out: say 408 if no response has begun, and close."""
        if self.transport.is_closing():
            return
        if self.conn.our_state is h11.IDLE:
            self.transport.write(_REQUEST_TIMEOUT)
        self.transport.close()


class _GuardedWebSocket(_Reporting, WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol, reporting to its server's `ConnectionGuard`, on websockets'
    protocol with frame limits (`MeteredProtocol`) and a short closing handshake."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = MeteredProtocol.adopt(self.conn, waiting=self.queue.qsize, on_flood=self.guard.flooded)
        # uvicorn waits 10 s for the peer's close frame, reading (and parsing) all the while.
        self.close_timeout = CLOSE_TIMEOUT_S

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.guard.upgraded(transport, self)
