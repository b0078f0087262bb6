"""A WebSocket client that reads its own socket: one message out, its answer back, one thread.

The clients of the env server and of a board's sealed sessions (`agentgym.server.client.RemoteEnv`,
`agentgym.leaderboard.sealed.client`) send a message and wait for its answer. websockets' own
sync client gives every connection a thread that reads the socket and hands each message to the
caller through a queue: two thread switches a message, and with a thread per session, a client
of many sessions spends more on those switches and on the lock they share than on its agent.

`BlockingWebSocket` reads the socket in the caller's thread instead, until the answer is whole.
The framing (masking, fragments, pings, the closing handshake, size limits) is websockets'
sans-I/O protocol, the one its own clients and uvicorn run; only the I/O is here. Its errors
are websockets' (`ConnectionClosed`, `InvalidStatus`, `InvalidHandshake`), socket errors
(`OSError`) and `TimeoutError`, as its sync client raises them.
"""

from __future__ import annotations

import socket
import ssl
import time
from typing import Any

from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

__all__ = ["BlockingWebSocket"]

_READ = 65536
#: Seconds `close` waits for the server's side of the closing handshake.
_CLOSE_WAIT_S = 2.0


class BlockingWebSocket:
    """An open WebSocket connection to `url` (``ws://`` or ``wss://``).

    Args:
        url: the WebSocket URL.
        headers: extra handshake headers (an ``Authorization``).
        open_timeout: seconds for the TCP connection and the handshake together.
        max_size: the largest message accepted (None: no limit).

    Raises:
        OSError: the server cannot be reached.
        TimeoutError: no handshake within `open_timeout`.
        websockets.exceptions.InvalidHandshake: the server refused the upgrade (``InvalidStatus``
            carries its HTTP answer).
    """

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, open_timeout: float = 10.0,
                 max_size: int | None = 2**20) -> None:
        uri = parse_uri(url)
        deadline = time.monotonic() + open_timeout
        sock = socket.create_connection((uri.host, uri.port), timeout=open_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a message is one small write
            if uri.secure:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=uri.host)
            self._sock = sock
            self._protocol = ClientProtocol(uri, max_size=max_size)
            self._events: list[Any] = []
            request = self._protocol.connect()
            for name, value in (headers or {}).items():
                request.headers[name] = value
            self._protocol.send_request(request)
            self._flush()
            while True:
                event = self._next_event(deadline)
                if isinstance(event, Response):
                    if self._protocol.handshake_exc is not None:
                        raise self._protocol.handshake_exc
                    break
        except BaseException:
            sock.close()
            raise

    # ------------------------------------------------------------------ messages
    def send(self, text: str) -> None:
        """Send one text message.

        Raises:
            ConnectionClosed: the connection is closed.
        """
        if self._protocol.state is not State.OPEN:
            raise self._closed()
        self._protocol.send_text(text.encode("utf-8"))
        self._flush()

    def recv(self, timeout: float | None = None) -> str:
        """The next text message (a binary one is decoded as UTF-8).

        Raises:
            TimeoutError: none arrived within `timeout` seconds.
            ConnectionClosed: the connection closed first.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        parts: list[bytes] = []
        while True:
            frame = self._next_event(deadline)
            opcode = frame.opcode
            if opcode is Opcode.TEXT or opcode is Opcode.BINARY or opcode is Opcode.CONT:
                parts.append(frame.data)
                if frame.fin:
                    return b"".join(parts).decode("utf-8")
            elif opcode is Opcode.CLOSE:
                raise self._closed()
            # A ping was answered by the protocol (its pong went out in `_next_event`); a pong needs nothing.

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the connection (the closing handshake, waiting briefly for the server's part)."""
        try:
            if self._protocol.state is State.OPEN:
                self._protocol.send_close(code, reason)
                self._flush()
                deadline = time.monotonic() + _CLOSE_WAIT_S
                while self._protocol.state is not State.CLOSED:
                    self._read(deadline)
        except Exception:  # noqa: BLE001 (a peer that is gone or slow: the socket is closed below either way)
            pass
        finally:
            self._sock.close()

    def __enter__(self) -> BlockingWebSocket:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ I/O
    def _flush(self) -> None:
        for data in self._protocol.data_to_send():
            if data:
                self._sock.sendall(data)
            else:  # the protocol's end of stream: half-close
                try:
                    self._sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

    def _next_event(self, deadline: float | None) -> Any:
        """The next event the protocol parsed, reading the socket until there is one."""
        while not self._events:
            if self._protocol.state is State.CLOSED:
                raise self._protocol.close_exc
            self._read(deadline)
        return self._events.pop(0)

    def _read(self, deadline: float | None) -> None:
        if deadline is None:
            self._sock.settimeout(None)
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no WebSocket message in time")
            self._sock.settimeout(left)
        try:
            data = self._sock.recv(_READ)
        except TimeoutError:
            raise TimeoutError("no WebSocket message in time") from None
        if data:
            self._protocol.receive_data(data)
        else:
            self._protocol.receive_eof()
        self._flush()  # pongs, the echo of a close
        self._events.extend(self._protocol.events_received())

    def _closed(self) -> ConnectionClosed:
        """The error for a close frame received: once the server has ended the TCP stream, which
        it does right after (a peer that does not, within `_CLOSE_WAIT_S`, is taken as done)."""
        deadline = time.monotonic() + _CLOSE_WAIT_S
        try:
            while self._protocol.state is not State.CLOSED:
                self._read(deadline)
        except (TimeoutError, OSError):
            self._protocol.receive_eof()
        return self._protocol.close_exc

