"""WebSocket peers that make a server parse as much as they can for each byte they send; run as a
child process, so that their work does not share a GIL with the client whose latency a test measures.

``python ws_attackers.py KIND URL PATH SECONDS RATE [TOKEN]`` opens a WebSocket to ``URL`` +
``PATH`` (with ``Authorization: Bearer TOKEN`` when given; a ``{session}`` in ``PATH`` is a new
env-server session of Dialog-v0 for each connection) and sends ``RATE`` bytes a second of
one-byte frames for ``SECONDS``, in bursts every 10 ms:

- ``fragments``: one message that never ends, one byte per continuation frame;
- ``messages``: complete one-byte text messages;
- ``pings``: one-byte pings;
- ``mixed``: the three in turn, a burst each.

The peer never sends a close frame and goes on sending after the server's; it reads and drops
whatever the server sends (so the server's writes never stall, and only its reading is tested).
A socket the server drops is opened again at once. At the end it prints one JSON line: bytes
sent, connections opened, and connections the server closed.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import sys
import time
import urllib.parse

KINDS = ("fragments", "messages", "pings", "mixed")
_BURST_S = 0.01


def frame(opcode: int, fin: bool, payload: bytes = b"x") -> bytes:
    """One masked frame of at most 125 bytes, as a client sends it."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([(0x80 if fin else 0) | opcode, 0x80 | len(payload)]) + mask + masked


def _burst(kind: str, nbytes: int, started: bool) -> bytes:
    """About `nbytes` of frames of `kind`; `started`: a fragmented message is under way."""
    if kind == "messages":
        one = frame(0x1, True)
    elif kind == "pings":
        one = frame(0x9, True)
    else:
        one = frame(0x0, False)
    count = max(1, nbytes // len(one))
    if kind == "fragments" and not started:
        return frame(0x1, False) + one * (count - 1)
    return one * count


def _new_session(url: str) -> str:
    import http.client

    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    try:
        conn.request("POST", "/sessions", json.dumps({"env_id": "AgentRL/Dialog-v0"}),
                     {"Content-Type": "application/json"})
        answer = conn.getresponse()
        body = answer.read()
    finally:
        conn.close()
    if answer.status != 201:
        raise ConnectionError(f"no session: {answer.status}")
    return str(json.loads(body)["session_id"])


def _connect(url: str, path: str, token: str | None) -> socket.socket:
    parts = urllib.parse.urlsplit(url)
    if "{session}" in path:
        path = path.replace("{session}", _new_session(url))
    s = socket.create_connection((parts.hostname, parts.port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{auth}\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed during the handshake")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(head.split(b"\r\n", 1)[0].decode("latin-1"))
    s.setblocking(False)
    return s


def _drain(s: socket.socket) -> bool:
    """Read and drop what the server sent; False once it has closed the connection."""
    try:
        while True:
            data = s.recv(65536)
            if not data:
                return False
    except (BlockingIOError, InterruptedError):
        return True
    except OSError:
        return False


def attack(kind: str, url: str, path: str, seconds: float, rate: int, token: str | None = None) -> dict[str, int]:
    """Send `rate` bytes a second of `kind` frames for `seconds`; the figures."""
    kinds = ("fragments", "messages", "pings") if kind == "mixed" else (kind,)
    sent = opened = dropped = refused = 0
    s: socket.socket | None = None
    started = False
    k = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        if s is None:
            try:
                s = _connect(url, path, token)
                opened += 1
                started = False
            except OSError:
                refused += 1
                time.sleep(_BURST_S)
                continue
        this = kinds[k % len(kinds)]
        k += 1
        data = _burst(this, int(rate * _BURST_S), started and this == "fragments")
        started = started or this == "fragments"
        try:
            sent += s.send(data)
        except (BlockingIOError, InterruptedError):
            pass  # the server stopped reading us: the kernel's buffers are full
        except OSError:
            s.close()
            s, dropped = None, dropped + 1
            continue
        if not _drain(s):
            s.close()
            s, dropped = None, dropped + 1
            continue
        time.sleep(max(0.0, _BURST_S - (time.monotonic() - t0)))
    if s is not None:
        s.close()
    return {"sent": sent, "opened": opened, "dropped": dropped, "refused": refused}


if __name__ == "__main__":
    kind_, url_, path_, seconds_, rate_ = sys.argv[1:6]
    if kind_ not in KINDS:
        raise SystemExit(f"unknown kind {kind_!r}; one of {KINDS}")
    print(json.dumps(attack(kind_, url_, path_, float(seconds_), int(rate_), sys.argv[6] if len(sys.argv) > 6 else None)),
          flush=True)
