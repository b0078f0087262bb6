"""The connection guard (`agentgym.server.connections`) over real loopback sockets: header and body
timeouts, the connection limit and its eviction order, the header-size cap. The slowloris run at a
lowered descriptor limit is `test_server_slowloris.py`; clients that stop reading are
`test_server_backpressure.py`."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
import time

import httpx
import pytest
from server_support import raw_http, raw_websocket, running, ws_frame

from agentgym.server.config import ConnectionLimits, ServerConfig, descriptor_budget

HEADER_TIMEOUT_S = 1.0


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _closed_within(s: socket.socket, limit_s: float) -> tuple[float, bytes]:
    """(seconds until the server closed `s`, what it said before) or (inf, ...) if it did not."""
    start = time.monotonic()
    said = b""
    while time.monotonic() - start < limit_s:
        ready, _, _ = select.select([s], [], [], 0.05)
        if ready:
            try:
                chunk = s.recv(65536)
            except OSError:
                return time.monotonic() - start, said
            if not chunk:
                return time.monotonic() - start, said
            said += chunk
    return float("inf"), said


def test_silent_and_trickling_clients_get_408_within_the_header_timeout() -> None:
    with running(header_timeout_s=HEADER_TIMEOUT_S) as server:
        silent = _connect(server.url)
        trickler = _connect(server.url)
        start = time.monotonic()
        trickler.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n")
        while not select.select([trickler], [], [], 0.2)[0] and time.monotonic() - start < 5 * HEADER_TIMEOUT_S:
            trickler.sendall(b"X-Slow: 1\r\n")  # a header line every 0.2 s, never the blank line
        _, said_trickler = _closed_within(trickler, 5)
        took = time.monotonic() - start
        _, said_silent = _closed_within(silent, 5)
        print(f"\nheader timeout {HEADER_TIMEOUT_S:g} s: the trickler was closed after {took:.2f} s; "
              f"guard {server.guard.dropped}")
        for said in (said_silent, said_trickler):
            assert said.startswith(b"HTTP/1.1 408 "), said
        assert took < HEADER_TIMEOUT_S + 1.0
        assert server.guard.dropped == {"header_timeout": 2}
        assert httpx.get(server.url + "/health").status_code == 200  # others are served all along
        silent.close()
        trickler.close()


def test_a_body_that_pauses_or_crawls_is_dropped() -> None:
    with running(header_timeout_s=HEADER_TIMEOUT_S) as server:
        head = (b"POST /sessions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000\r\n\r\n")
        paused = _connect(server.url)
        paused.sendall(head + b'{"env_id": ')
        crawler = _connect(server.url)
        crawler.sendall(head)
        start = time.monotonic()
        while time.monotonic() - start < 3 * HEADER_TIMEOUT_S:
            try:
                crawler.sendall(b" ")  # 10 bytes a second: alive, but far below the minimum rate
            except OSError:
                break
            time.sleep(0.1)
        took_paused, _ = _closed_within(paused, 5)
        took_crawler, _ = _closed_within(crawler, 5)
        print(f"\nbodies: guard {server.guard.dropped}")
        assert took_paused < float("inf") and took_crawler < float("inf")
        assert server.guard.dropped == {"body_timeout": 1, "body_too_slow": 1}
        paused.close()
        crawler.close()


def test_at_the_limit_the_connection_idle_longest_is_evicted() -> None:
    limit = 8
    with running(max_connections=limit, header_timeout_s=30.0) as server:
        silent = []
        for _ in range(limit):
            silent.append(_connect(server.url))
            time.sleep(0.01)  # an order the guard can see
        keep = httpx.Client(base_url=server.url)
        for _ in range(3):
            # The keep-alive client's connection evicts the oldest silent socket, each fresh one
            # the next oldest (it is closed after its answer, so it needs one slot only); the
            # keep-alive connection, idle for a moment between requests, is never the one to go.
            assert keep.get("/health").status_code == 200
            assert httpx.get(server.url + "/health").status_code == 200
        gone = [i for i, s in enumerate(silent) if _closed_within(s, 0.2)[0] < float("inf")]
        print(f"\nlimit {limit}: evicted silent sockets {gone}; guard {server.guard.dropped}, live {server.guard.live}")
        assert gone == [0, 1] and server.guard.dropped == {"evicted": 2}
        assert server.guard.live <= limit
        keep.close()
        for s in silent:
            s.close()


def test_when_every_connection_is_busy_a_new_one_is_refused() -> None:
    limit = 4
    with running(max_connections=limit, max_sessions=limit) as server:
        sids = [httpx.post(f"{server.url}/sessions", json={"env_id": "AgentRL/Dialog-v0"}).json()["session_id"]
                for _ in range(limit)]
        sockets = [raw_websocket(server.url, sid) for sid in sids]  # a WebSocket is never evicted
        try:
            deadline = time.monotonic() + 5
            while server.guard.live < limit and time.monotonic() < deadline:
                time.sleep(0.02)
            with pytest.raises(httpx.TransportError):
                httpx.get(server.url + "/health", timeout=5)
            assert server.guard.dropped.get("refused", 0) >= 1
            for s in sockets:  # the busy ones are untouched
                s.sendall(ws_frame(json.dumps({"op": "reset", "seed": 1}).encode()))
                assert s.recv(65536)
        finally:
            for s in sockets:
                s.close()


def test_headers_far_over_the_cap_get_400() -> None:
    # h11 caps what it buffers of an unfinished head; a head that arrives whole in one read of the
    # socket is parsed at once, so the bound is the cap or one read, whichever is larger.
    with running() as server:
        big = b"GET /health HTTP/1.1\r\nHost: t\r\n" + b"X-Big: " + b"a" * (16 * ConnectionLimits.max_header_bytes)
        status, _ = raw_http(server.url, big + b"\r\n\r\n")
        assert status == 400


def test_the_default_limit_fits_the_descriptor_limit() -> None:
    script = ("import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024)); "
              "from agentgym.server.config import descriptor_budget; print(*descriptor_budget())")
    limit, batch = map(int, subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                           check=True).stdout.split())
    # Room for the connections, four accept batches in flight and the process's own files.
    assert limit + 4 * batch + 64 <= 1024 and limit >= 768
    assert ServerConfig(max_connections=10**6).connection_limits().resolved()[0] == descriptor_budget()[0]


def test_connection_limits_are_validated() -> None:
    for bad in ({"header_timeout_s": 0}, {"send_timeout_s": float("inf")}, {"max_connections": -1},
                {"max_connections": True}, {"min_body_bytes_per_s": 0}):
        with pytest.raises(ValueError):
            ConnectionLimits(**bad)
        with pytest.raises(ValueError):
            ServerConfig(**{k: v for k, v in bad.items() if k != "min_body_bytes_per_s"} or {"max_connections": -1})
