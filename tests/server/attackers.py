"""Hostile clients for the server tests, bounded in count and time; run as a child process so that
their work does not share a GIL with the client whose latency a test measures.

``python attackers.py slowloris HOST PORT N SECONDS HOLD`` holds N half-open sockets for SECONDS:
a third connect and stay silent, a third send a request line and then one header line every
half second (never the blank line that ends the headers), a third send the headers of a 1 MB
POST and then trickle its body a byte at a time. A socket the server closes is opened again on
the next round, as slowloris does. Then it prints one JSON line (sockets opened, how many the
server closed) and leaves its sockets open and silent for HOLD seconds more.

``python attackers.py env HOST PORT SECONDS MAX_BODY`` and ``python attackers.py board HOST PORT
SECONDS`` are every other kind of bad client of the env server and of the leaderboard in turn:
bodies over the cap (declared, chunked), bad JSON, bombs, forbidden kwargs, wrong types, clients
that vanish mid-body or mid-episode, WebSockets that never read, silent sockets. They print one
JSON line: the statuses each kind got.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import select
import socket
import struct
import sys
import time
from collections.abc import Callable
from typing import Any

from server_support import raw_websocket, ws_frame

#: What each kind of half-open socket sends first, and then every round.
_FIRST = (b"", b"GET /health HTTP/1.1\r\nHost: attacker\r\n",
          b"POST /sessions HTTP/1.1\r\nHost: attacker\r\nContent-Type: application/json\r\n"
          b"Content-Length: 1000000\r\n\r\n{")
_TRICKLE = (b"", b"X-Slow: 1\r\n", b" ")


def _open(host: str, port: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    err = s.connect_ex((host, port))
    if err not in (0, errno.EINPROGRESS):
        s.close()
        raise OSError(err, "connect failed")
    return s


def _send(s: socket.socket, data: bytes) -> bool:
    """Whether `data` went out (False while the connect is still in progress or our buffer is full)."""
    try:
        return s.send(data) == len(data)
    except OSError:
        return False


def _gone(poller: select.poll, socks: dict[int, int], conns: list[socket.socket | None]) -> set[int]:
    """Indices of the sockets the server has closed (EOF or reset; a last answer is read and dropped)."""
    out = set()
    for fd, event in poller.poll(0):
        i = socks[fd]
        s = conns[i]
        if s is None:
            continue
        if event & (select.POLLERR | select.POLLHUP):
            out.add(i)
            continue
        try:
            if s.recv(65536) == b"":
                out.add(i)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            out.add(i)
    return out


def slowloris(host: str, port: int, n: int, seconds: float, hold_s: float = 0.0,
              round_s: float = 0.5) -> dict[str, int]:
    """Hold `n` half-open sockets for `seconds`, re-opening what the server closes each round;
    then print the figures, and keep the open ones, silent, for `hold_s` more before closing them
    (so a test sees the server let go of them by itself)."""
    conns: list[socket.socket | None] = [None] * n
    unsent = [b""] * n  # what a socket still has to send of its first bytes
    kinds = [i % 3 for i in range(n)]
    poller = select.poll()
    by_fd: dict[int, int] = {}
    opened = closed = failed = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.monotonic()
        for i in _gone(poller, by_fd, conns):
            s = conns[i]
            assert s is not None
            poller.unregister(s)
            del by_fd[s.fileno()]
            s.close()
            conns[i] = None
            closed += 1
        for i in range(n):
            s = conns[i]
            if s is None:
                try:
                    s = conns[i] = _open(host, port)
                except OSError:
                    failed += 1
                    continue
                opened += 1
                poller.register(s, select.POLLIN)
                by_fd[s.fileno()] = i
                unsent[i] = _FIRST[kinds[i]]
            if unsent[i]:
                if _send(s, unsent[i]):
                    unsent[i] = b""
            elif _TRICKLE[kinds[i]]:
                _send(s, _TRICKLE[kinds[i]])
        time.sleep(max(0.0, round_s - (time.monotonic() - started)))
    figures = {"opened": opened, "closed_by_server": closed, "connect_failed": failed}
    print(json.dumps(figures), flush=True)
    time.sleep(hold_s)
    for s in conns:
        if s is not None:
            s.close()
    return figures


# ------------------------------------------------------------------------------------- mixed hostile clients
def _exchange(host: str, port: int, request: bytes, *, read: bool = True, timeout_s: float = 10.0) -> int:
    """Send raw `request` on a fresh socket; the answer's status (0: closed without one, -1: not read)."""
    with socket.create_connection((host, port), timeout=timeout_s) as s:
        try:
            s.sendall(request)
        except OSError:
            pass  # refused mid-body (a 413 before the whole body was sent): read the answer
        if not read:
            return -1
        try:
            head = s.recv(65536)
        except OSError:
            return 0
    return int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0


def _post(path: str, body: bytes, *, length: int | None = None, content_type: str = "application/json") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: h\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode() + body


def _chunked(path: str, body: bytes) -> bytes:
    framed = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (body[i:i + 65536] for i in range(0, len(body), 65536)))
    return (f"POST {path} HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n").encode() + framed + b"0\r\n\r\n"


def _vanish(host: str, port: int, request: bytes) -> int:
    """Send part of `request` and vanish with a reset (no FIN, no goodbye)."""
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(request[: max(1, len(request) // 2)])
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    return -1


def _session(host: str, port: int, env_id: str) -> str | None:
    import http.client

    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("POST", "/sessions", json.dumps({"env_id": env_id}), {"Content-Type": "application/json"})
        answer = conn.getresponse()
        body = answer.read()
    finally:
        conn.close()
    return json.loads(body)["session_id"] if answer.status == 201 else None


class _Held:
    """Sockets a hostile client leaves open (silent, unread) for a while, then drops."""

    def __init__(self, keep_s: float) -> None:
        self.keep_s = keep_s
        self._socks: list[tuple[float, socket.socket]] = []

    def add(self, s: socket.socket) -> None:
        self._socks.append((time.monotonic(), s))

    def prune(self, everything: bool = False) -> None:
        while self._socks and (everything or time.monotonic() - self._socks[0][0] > self.keep_s):
            self._socks.pop(0)[1].close()


def _non_reading_websocket(host: str, port: int, held: _Held) -> int:
    """A session whose WebSocket resets episodes as fast as it can and never reads an answer; the
    socket is kept (open, silent) for a while, as a stuck client would."""
    sid = _session(host, port, "AgentRL/ToolUse-v0")
    if sid is None:
        return 429
    s = raw_websocket(f"http://{host}:{port}", sid, rcvbuf=4096)
    s.settimeout(0.2)
    frame = ws_frame(b'{"op": "reset"}')
    try:
        for _ in range(5000):
            s.sendall(frame)
    except OSError:
        pass  # the server stopped reading (or dropped us): we are the stuck client now
    held.add(s)
    return 101


def hostile_env(host: str, port: int, seconds: float, max_body: int) -> dict[str, Any]:
    """Every kind of bad client of the env server in turn, until `seconds` have passed."""
    dialog = "AgentRL/Dialog-v0"
    big = b'{"env_id": "' + b"x" * max_body + b'"}'
    acts: list[tuple[str, Callable[[], int]]] = [
        ("declared_too_large", lambda: _exchange(host, port, _post("/sessions", b"{}", length=max_body + 1))),
        ("chunked_too_large", lambda: _exchange(host, port, _chunked("/sessions", big))),
        ("bad_json", lambda: _exchange(host, port, _post("/sessions", b'{"env_id": '))),
        ("not_utf8", lambda: _exchange(host, port, _post("/sessions", b'{"env_id": "\xff"}'))),
        ("deep_json", lambda: _exchange(host, port, _post("/sessions/abc/step",
                                                           b'{"action": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"))),
        ("forbidden_kwargs", lambda: _exchange(host, port, _post("/sessions", json.dumps(
            {"env_id": dialog, "kwargs": {"scorer": "os:system", "max_turns": 10**9}}).encode()))),
        ("wrong_types", lambda: _exchange(host, port, _post("/sessions", b'{"env_id": 5, "kwargs": []}'))),
        ("vanish_mid_body", lambda: _vanish(host, port, _post("/sessions", json.dumps({"env_id": dialog}).encode()))),
        ("vanish_mid_episode", lambda: _vanish_mid_episode(host, port, dialog)),
    ]
    held = _Held(keep_s=5.0)

    def stuck_clients() -> int:
        for _ in range(10):  # silent sockets, until the server drops them
            held.add(_open(host, port))
        return _non_reading_websocket(host, port, held)

    return _run(acts, ("non_reading_websocket", stuck_clients), seconds, held)


def _vanish_mid_episode(host: str, port: int, env_id: str) -> int:
    """Open a session, start an episode, and vanish without deleting it (the reaper's job)."""
    import http.client

    sid = _session(host, port, env_id)
    if sid is None:
        return 429
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request("POST", f"/sessions/{sid}/reset", b'{"seed": 1}', {"Content-Type": "application/json"})
    status = conn.getresponse().status
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
    return status


def hostile_board(host: str, port: int, seconds: float) -> dict[str, Any]:
    """Every kind of bad client of the leaderboard in turn, until `seconds` have passed."""
    gz = gzip.compress(b'{"not": "a manifest"}\n')
    acts: list[tuple[str, Callable[[], int]]] = [
        ("declared_too_large", lambda: _exchange(host, port, _post("/submissions", b"x", length=(64 << 20) + 1,
                                                                   content_type="application/gzip"))),
        ("not_gzip", lambda: _exchange(host, port, _post("/submissions", os.urandom(2048),
                                                         content_type="application/gzip"))),
        ("gzip_of_garbage", lambda: _exchange(host, port, _post("/submissions", gz, content_type="application/gzip"))),
        ("bomb", lambda: _exchange(host, port, _post("/submissions", gzip.compress(b"[]," * 2_000_000),
                                                     content_type="application/gzip"))),
        ("bad_length", lambda: _exchange(host, port, b"POST /submissions HTTP/1.1\r\nHost: h\r\n"
                                                     b"Content-Length: abc\r\n\r\n")),
        ("vanish_mid_body", lambda: _vanish(host, port, _post("/submissions", os.urandom(200_000),
                                                              content_type="application/gzip"))),
        ("unknown_entry", lambda: _exchange(host, port, b"GET /submissions/999999 HTTP/1.1\r\nHost: h\r\n\r\n")),
        ("bad_entry_id", lambda: _exchange(host, port, b"GET /submissions/%00%ff HTTP/1.1\r\nHost: h\r\n\r\n")),
    ]
    held = _Held(keep_s=5.0)

    def half_open() -> int:
        for _ in range(10):
            held.add(_open(host, port))
        return -1

    return _run(acts, ("half_open", half_open), seconds, held)


def _run(acts: list[tuple[str, Callable[[], int]]], each_round: tuple[str, Callable[[], int]], seconds: float,
         held: _Held) -> dict[str, dict[str, int]]:
    """Every act in turn (`each_round` first in each round) until `seconds` have passed; the
    statuses each act got, by act (0: closed without an answer, -1: no answer awaited)."""
    statuses: dict[str, dict[str, int]] = {}
    deadline = time.monotonic() + seconds
    k = 0
    while time.monotonic() < deadline:
        name, act = each_round if k % (len(acts) + 1) == 0 else acts[k % (len(acts) + 1) - 1]
        k += 1
        try:
            status = act()
        except OSError as exc:
            status = -2 if isinstance(exc, TimeoutError) else 0
        by = statuses.setdefault(name, {})
        by[str(status)] = by.get(str(status), 0) + 1
        held.prune()
        time.sleep(0.01)
    held.prune(everything=True)
    return statuses


def _enough_descriptors(n: int) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))


if __name__ == "__main__":
    attack, host_, port_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if attack == "slowloris":
        n_, seconds_, hold_ = int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
        _enough_descriptors(n_)
        slowloris(host_, port_, n_, seconds_, hold_)
    elif attack == "env":
        print(json.dumps(hostile_env(host_, port_, float(sys.argv[4]), int(sys.argv[5]))), flush=True)
    elif attack == "board":
        print(json.dumps(hostile_board(host_, port_, float(sys.argv[4]))), flush=True)
    else:
        raise SystemExit(f"unknown attack {attack!r}")
