"""What one WebSocket peer may make a server parse: frames per message, messages not yet read,
control frames, and anything after the server's close.

websockets parses frame by frame in Python, and a frame may carry a single byte: the event loop's
work grows with the number of frames, not of bytes, so a message cut into one-byte continuation
frames, up to the message cap, costs it as many frame parses as the message has bytes, where
the same bytes in one frame cost one. uvicorn parses every byte a peer sends, messages the app
never asked for and frames after the app closed the socket included, until the peer closes. So
a peer sending one-byte frames, with or without a session, starves every other client of the
server. `MeteredProtocol` is websockets' server protocol with a budget on what the peer sends,
checked as each frame is parsed:

- a message may arrive in at most `FREE_FRAGMENTS` frames, then one more per `MIN_FRAGMENT_BYTES`
  it has delivered: a peer gets a frame's parse only for a frame's worth of bytes;
- at most `MAX_UNREAD_MESSAGES` complete messages may wait for the app to read them (uvicorn
  stops reading a peer while one waits; more arrive only in the same read, sent unasked);
- ping and pong frames come from a bucket of `CONTROL_BURST`, refilled at `CONTROL_PER_S`;
- once the server has sent its close, at most `FRAMES_AFTER_CLOSE` frames before the peer's.

Past any of them the peer is answered with a close frame (1002, naming the limit) and no more
of what it sent is parsed: websockets' parser discards the rest, and the socket is closed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from websockets.exceptions import ProtocolError
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

__all__ = ["MeteredProtocol", "FrameFlood", "FREE_FRAGMENTS", "MIN_FRAGMENT_BYTES", "MAX_UNREAD_MESSAGES",
           "CONTROL_BURST", "CONTROL_PER_S", "FRAMES_AFTER_CLOSE", "CLOSE_TIMEOUT_S"]

#: Frames any message may arrive in, whatever their size.
FREE_FRAGMENTS = 8
#: Past `FREE_FRAGMENTS`, a message earns one more frame per this many bytes it has delivered
#: (clients that fragment, such as Go's with its 4 KiB write buffer, stay well inside it).
MIN_FRAGMENT_BYTES = 4096
#: Complete messages that may wait for the app at once.
MAX_UNREAD_MESSAGES = 16
#: Ping and pong frames at once, and the rate the allowance comes back at (a client pings
#: every 20 s by default).
CONTROL_BURST = 16
CONTROL_PER_S = 1.0
#: Frames a peer may still send after the server's close, before its own close frame.
FRAMES_AFTER_CLOSE = 8
#: Seconds a peer has to answer the server's close before the socket is closed anyway.
CLOSE_TIMEOUT_S = 1.0

# Looked up once: an enum member read off its class costs more than the check it serves.
_TEXT, _BINARY, _CONT, _CLOSE = Opcode.TEXT, Opcode.BINARY, Opcode.CONT, Opcode.CLOSE
_PING, _PONG = Opcode.PING, Opcode.PONG
_CLOSING = State.CLOSING


class FrameFlood(ProtocolError):
    """The peer sent past one of the limits (websockets' parser fails the connection with 1002)."""


class MeteredProtocol(ServerProtocol):
    """websockets' `ServerProtocol` with the limits of this module.

    Args:
        *args: as `ServerProtocol`.
        waiting: how many messages wait for the app now (the server's queue of them).
        on_flood: called with a short reason when the peer passes a limit (before the close).
        **kwargs: as `ServerProtocol`.
    """

    def __init__(self, *args: object, waiting: Callable[[], int] = lambda: 0,
                 on_flood: Callable[[str], None] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._meter(waiting, on_flood)

    @classmethod
    def adopt(cls, protocol: ServerProtocol, *, waiting: Callable[[], int] = lambda: 0,
              on_flood: Callable[[str], None] | None = None) -> MeteredProtocol:
        """Make `protocol`, a `ServerProtocol` that has parsed nothing yet, one of this class in
        place: the server that holds it parses under the limits from then on, and no second
        protocol is built beside the one the server made (uvicorn makes one per connection)."""
        if type(protocol) is not ServerProtocol:
            raise TypeError(f"can only adopt a websockets ServerProtocol, not {type(protocol).__name__}")
        protocol.__class__ = cls
        adopted: MeteredProtocol = protocol  # type: ignore[assignment]
        adopted._meter(waiting, on_flood)
        return adopted

    def _meter(self, waiting: Callable[[], int], on_flood: Callable[[str], None] | None) -> None:
        self.waiting = waiting
        self.on_flood = on_flood
        # Messages parsed from the data being received now: the server queues them for the app
        # only once all of it is parsed.
        self._parsed = 0
        self._frames = 0  # of the message under way
        self._bytes = 0
        self._after_close = 0
        self._tokens = float(CONTROL_BURST)
        self._refilled = time.monotonic()

    def receive_data(self, data: bytes | bytearray) -> None:
        self._parsed = 0
        self.reader.feed_data(data)  # ServerProtocol.receive_data, inline: it runs for every read
        next(self.parser)

    def recv_frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if self._state is _CLOSING and opcode is not _CLOSE:
            self._after_close += 1
            if self._after_close > FRAMES_AFTER_CLOSE:
                self._flood("after_close", f"more than {FRAMES_AFTER_CLOSE} frames after the server's close")
        if opcode is _TEXT or opcode is _CONT or opcode is _BINARY:
            self._frames += 1
            self._bytes += len(frame.data)
            if self._frames > FREE_FRAGMENTS and self._frames > FREE_FRAGMENTS + self._bytes // MIN_FRAGMENT_BYTES:
                self._flood("fragments", f"a message in {self._frames} frames of {self._bytes} bytes (frames after "
                            f"the first {FREE_FRAGMENTS} must average {MIN_FRAGMENT_BYTES} bytes)")
            if frame.fin:
                self._frames = self._bytes = 0
                self._parsed += 1
                if self._parsed + self.waiting() > MAX_UNREAD_MESSAGES:
                    self._flood("unread", f"more than {MAX_UNREAD_MESSAGES} messages sent ahead of their answers")
        elif opcode is _PING or opcode is _PONG:
            now = time.monotonic()
            self._tokens = min(float(CONTROL_BURST), self._tokens + (now - self._refilled) * CONTROL_PER_S)
            self._refilled = now
            if self._tokens < 1.0:
                self._flood("control", f"more than {CONTROL_BURST} pings or pongs at once")
            self._tokens -= 1.0
        super().recv_frame(frame)

    def _flood(self, kind: str, message: str) -> None:
        if self.on_flood is not None:
            self.on_flood(kind)
        raise FrameFlood(f"frame limit: {message}")
