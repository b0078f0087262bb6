"""S8: clients that stop reading. Their sessions are reaped on the idle timeout like any other
(the session lock is never held across a send), and their connections are dropped once a send
has stalled for the send timeout, so N such clients cannot hold the session cap or descriptors."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import uvicorn
from server_support import echo_registered, free_port, health, raw_websocket, running, ws_frame

from agentgym.server.app import create_app

#: A step action whose echo is a large reply: a few unread ones fill every buffer on the way.
BIG = "x" * (256 * 1024)


def _flood(s: socket.socket, request: bytes, *, most: int = 64) -> int:
    """Send `request` until the server stops reading (our send stalls) or `most` times; never read."""
    s.settimeout(0.5)
    sent = 0
    try:
        for _ in range(most):
            s.sendall(request)
            sent += 1
    except (TimeoutError, OSError):
        pass
    return sent


def _wait(condition: object, limit_s: float) -> float:
    """Seconds until ``condition()`` held (polled), or `limit_s` if it never did."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        if condition():  # type: ignore[operator]
            return time.monotonic() - start
        time.sleep(0.05)
    return limit_s


def _dropped(s: socket.socket) -> bool:
    """Whether the server has reset or closed `s`, seen without reading from it (reading would
    unblock the server's sends)."""
    poller = select.poll()
    poller.register(s, select.POLLRDHUP | select.POLLERR | select.POLLHUP)
    return any(event & (select.POLLRDHUP | select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))


def _flood_all(socks: list[socket.socket], request: bytes) -> list[int]:
    """`_flood` every socket at once (one thread each), as N independent clients would."""
    with ThreadPoolExecutor(len(socks)) as pool:
        return list(pool.map(lambda s: _flood(s, request), socks))


@pytest.mark.parametrize(("idle", "send_timeout"), [pytest.param(2.0, 3.0, id="reaped-on-idle"),
                                                    pytest.param(30.0, 2.0, id="closed-on-send-timeout")])
def test_s8_websocket_clients_that_stop_reading_are_reaped_and_dropped(idle: float, send_timeout: float) -> None:
    cap = 4
    with echo_registered(length=10**6) as env_id, running(
            (env_id,), idle_timeout_s=idle, send_timeout_s=send_timeout, max_sessions=cap) as server:
        url = server.url
        sids = [httpx.post(f"{url}/sessions", json={"env_id": env_id}).json()["session_id"] for _ in range(cap)]
        socks = [raw_websocket(url, sid, rcvbuf=4096) for sid in sids]
        try:
            step = ws_frame(json.dumps({"op": "step", "action": BIG}).encode())
            for s in socks:
                s.sendall(ws_frame(json.dumps({"op": "reset", "seed": 0}).encode()))
            sent = _flood_all(socks, step)
            stopped = time.monotonic()
            assert health(url)["sessions"] == cap  # they hold the whole cap now
            reaped = _wait(lambda: health(url)["sessions"] == 0, min(idle, send_timeout) + 10)
            _wait(lambda: all(_dropped(s) for s in socks) and server.guard.live == 0, send_timeout + 10)
            took = time.monotonic() - stopped
            print(f"\nS8: {cap} WebSocket clients stopped reading after {sent} big steps; their sessions reaped "
                  f"{reaped:.2f} s later (idle timeout {idle:g} s), their connections dropped {took:.2f} s after "
                  f"they stopped (send timeout {send_timeout:g} s); guard: {server.guard.dropped}")
            assert max(sent) < 64, "the server never stopped reading: nothing stalled"
            assert reaped <= min(idle, send_timeout) + 5
            assert took <= send_timeout + 5 and all(_dropped(s) for s in socks) and server.guard.live == 0
            # The cap is free again for honest clients.
            for _ in range(cap):
                assert httpx.post(f"{url}/sessions", json={"env_id": env_id}).status_code == 201
        finally:
            for s in socks:
                s.close()


def test_s8_an_http_client_that_pipelines_without_reading_is_dropped() -> None:
    idle, send_timeout = 2.0, 3.0
    with echo_registered(length=10**6) as env_id, running(
            (env_id,), idle_timeout_s=idle, send_timeout_s=send_timeout, max_sessions=2) as server:
        url = server.url
        sid = httpx.post(f"{url}/sessions", json={"env_id": env_id}).json()["session_id"]
        httpx.post(f"{url}/sessions/{sid}/reset", json={"seed": 0})
        host, port = url.removeprefix("http://").split(":")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((host, int(port)))
        try:
            body = json.dumps({"action": BIG}).encode()
            request = (f"POST /sessions/{sid}/step HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n").encode() + body
            sent = _flood(s, request)
            stopped = time.monotonic()
            dropped = _wait(lambda: _dropped(s) and server.guard.live == 0, send_timeout + 10)
            _wait(lambda: health(url)["sessions"] == 0, idle + 10)
            took = time.monotonic() - stopped
            print(f"\nS8 (HTTP): a pipelining client stopped reading after {sent} big steps; its connection dropped "
                  f"{dropped:.2f} s later (send timeout {send_timeout:g} s), its session reaped {took:.2f} s after "
                  f"it stopped (idle timeout {idle:g} s); guard: {server.guard.dropped}")
            assert sent < 64, "the server never stopped reading: nothing stalled"
            assert dropped <= send_timeout + 5 and server.guard.dropped.get("send_timeout") == 1
            assert took <= max(idle, send_timeout) + 5
        finally:
            s.close()


def test_s8_the_app_closes_a_stalled_session_on_any_asgi_server() -> None:
    # Plain uvicorn, without agentgym's connection guard: the app's own send timeout still
    # closes the session of a client that stops reading (its socket is then the server's to drop).
    send_timeout = 1.5
    with echo_registered(length=10**6) as env_id:
        app = create_app(env_ids=[env_id], idle_timeout_s=300.0, send_timeout_s=send_timeout, max_sessions=2)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                               ws="websockets-sansio", lifespan="on"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{port}"
        try:
            _wait(lambda: server.started, 10)
            sid = httpx.post(f"{url}/sessions", json={"env_id": env_id}).json()["session_id"]
            s = raw_websocket(url, sid, rcvbuf=4096)
            s.sendall(ws_frame(json.dumps({"op": "reset", "seed": 0}).encode()))
            sent = _flood(s, ws_frame(json.dumps({"op": "step", "action": BIG}).encode()))
            closed = _wait(lambda: health(url)["sessions"] == 0, send_timeout + 10)
            print(f"\nS8 (plain uvicorn): stalled after {sent} big steps; session closed {closed:.2f} s later "
                  f"(send timeout {send_timeout:g} s, idle timeout 300 s)")
            assert sent < 64 and closed <= send_timeout + 5
            s.close()
        finally:
            server.should_exit = True
            thread.join(15)
