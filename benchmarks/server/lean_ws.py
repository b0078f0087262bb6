"""A WebSocket client for load generation at the least CPU per message: `LeanSocket`.

On a machine where the load generator shares the cores with the server, every microsecond the
client spends per message is one the server cannot: with the `websockets` library the clients
took about as much CPU per step as the server itself (benchmarks/server/RESULTS.md), so they,
not the server, set the ceiling. This client is an ``asyncio.Protocol`` that does only what a
benchmark needs: an upgrade with a fixed key, text frames masked with the all-zero key (valid
framing: the server unmasks with it like any other; unpredictable keys protect proxies, and
there are none on loopback), the server's unmasked frames read off a buffer, pings answered,
and each reply handed to the one waiting request. No extensions, no fragmentation (the server
sends neither), no UTF-8 check.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

__all__ = ["LeanSocket", "connect", "frame"]

_UPGRADE = ("GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
_ZERO_MASK = b"\0\0\0\0"
_CLOSE, _PING, _PONG = 0x8, 0x9, 0xA


def frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """A final client frame of `payload` (text by default), masked with the all-zero key."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    return head + _ZERO_MASK + payload


class LeanSocket(asyncio.Protocol):
    """One client WebSocket: `ask` sends a prepared frame and returns the next message's payload."""

    def __init__(self, path: str, host: str) -> None:
        self._upgrade = _UPGRADE.format(path=path, host=host).encode("ascii")
        self._buf = bytearray()
        self._open = False
        self._waiter: asyncio.Future[Any] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._gone: asyncio.Future[None] | None = None
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._close_sent = False

    # ------------------------------------------------------------------ asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._ready = asyncio.get_running_loop().create_future()
        self._gone = asyncio.get_running_loop().create_future()
        transport.write(self._upgrade)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self._buf += data
        if not self._open:
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._buf[:end])
            del self._buf[:end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                status = head.split(b"\r\n", 1)[0].decode("latin-1")
                self._fail(ConnectionError(f"upgrade refused: {status}"))
                return
            self._open = True
            if self._ready is not None and not self._ready.done():
                self._ready.set_result(None)
        self._read_frames()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(exc or ConnectionError("connection closed"))
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(None)

    # ------------------------------------------------------------------ use
    async def opened(self) -> None:
        """Wait for the upgrade's answer."""
        assert self._ready is not None
        await self._ready

    async def ask(self, data: bytes) -> bytes:
        """Send the frame `data` and return the payload of the next message."""
        if self.closed or self.transport is None:
            raise ConnectionError("connection closed")
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return await self._waiter

    async def shutdown(self, timeout_s: float = 5.0) -> None:
        """The closing handshake: a close frame (1000), then wait for the server's (or the
        connection's end), at most `timeout_s`, then drop the connection. A client that waits
        leaves no unread data behind, so neither side resets the connection."""
        self._send_close()
        if self._gone is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._gone), timeout_s)
            except TimeoutError:
                pass
        self.close()

    def close(self) -> None:
        """Send a close frame (1000) unless one was sent, and drop the connection."""
        self._send_close()
        if self.transport is not None and not self.closed:
            self.transport.close()
        self.closed = True

    def _send_close(self) -> None:
        if self.transport is not None and not self.closed and not self._close_sent:
            self._close_sent = True
            self.transport.write(frame(b"\x03\xe8", _CLOSE))

    # ------------------------------------------------------------------ frames
    def _read_frames(self) -> None:
        buf = self._buf
        while len(buf) >= 2:
            opcode, n = buf[0] & 0x0F, buf[1] & 0x7F
            start = 2
            if n == 126:
                if len(buf) < 4:
                    return
                n, start = struct.unpack_from("!H", buf, 2)[0], 4
            elif n == 127:
                if len(buf) < 10:
                    return
                n, start = struct.unpack_from("!Q", buf, 2)[0], 10
            if len(buf) < start + n:
                return
            payload = bytes(buf[start:start + n])
            del buf[:start + n]
            if opcode == _PING and self.transport is not None:
                self.transport.write(frame(payload, _PONG))
            elif opcode == _CLOSE:
                self.close()
                if self._gone is not None and not self._gone.done():
                    self._gone.set_result(None)
                self._fail(ConnectionError(f"closed by the server: {payload[2:].decode('utf-8', 'replace')}"))
            elif opcode != _PONG:
                waiter, self._waiter = self._waiter, None
                if waiter is not None and not waiter.done():
                    waiter.set_result(payload)

    def _fail(self, exc: BaseException) -> None:
        for future in (self._waiter, self._ready):
            if future is not None and not future.done():
                future.set_exception(exc)
        self._waiter = None


async def connect(host: str, port: int, path: str) -> LeanSocket:
    """A `LeanSocket` to ``ws://host:port/path``, upgraded."""
    loop = asyncio.get_running_loop()
    _, sock = await loop.create_connection(lambda: LeanSocket(path, f"{host}:{port}"), host, port)
    await sock.opened()
    return sock
