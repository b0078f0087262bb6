"""The env server's limits over real loopback sockets: the session cap under 200 concurrent
creates (S2), vanished clients reaped (S3), oversized and malformed bodies (S4)."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from server_support import (
    echo_registered,
    health,
    raw_http,
    raw_websocket,
    read_response,
    running,
    ws_frame,
)

DIALOG = "AgentRL/Dialog-v0"


# ------------------------------------------------------------------------------------- S2
async def _creates(url: str, n: int, env_id: str, peaks: list[int]) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        stop = asyncio.Event()

        async def watch() -> None:  # the live count, sampled all along
            while not stop.is_set():
                peaks.append((await client.get("/health")).json()["sessions"])
                await asyncio.sleep(0.005)

        watcher = asyncio.create_task(watch())
        replies = await asyncio.gather(*(client.post("/sessions", json={"env_id": env_id})
                                         for _ in range(n)))
        stop.set()
        await watcher
        return list(replies)


def test_s2_cap_holds_under_200_concurrent_creates() -> None:
    cap = 16
    # Each make takes 50 ms, so creates pile up while earlier ones are still being admitted.
    with echo_registered(make_delay_s=0.05) as env_id, running((env_id,), max_sessions=cap) as server:
        peaks: list[int] = []
        replies = asyncio.run(_creates(server.url, 200, env_id, peaks))
        statuses = [r.status_code for r in replies]
        h = health(server.url)
        print(f"\nS2 ({env_id}): {statuses.count(201)} created, {statuses.count(429)} refused with 429; "
              f"max live sampled {max(peaks)}, server peak {h['peak_sessions']}, cap {cap}")
        assert statuses.count(201) == cap and statuses.count(429) == 200 - cap
        assert all(int(r.headers["retry-after"]) >= 1 for r in replies if r.status_code == 429)
        assert h["peak_sessions"] <= cap and max(peaks) <= cap and h["sessions"] == cap
        for r in replies:
            if r.status_code == 201:
                httpx.delete(f"{server.url}/sessions/{r.json()['session_id']}")
        assert health(server.url)["sessions"] == 0


# ------------------------------------------------------------------------------------- S3
_VANISHING_CLIENT = """
import sys, os, time
from agentgym.server.client import RemoteEnv
env = RemoteEnv(sys.argv[1], "AgentRL/Dialog-v0", transport=sys.argv[2])
env.reset(seed=1)
print("mid-episode", flush=True)
while True:  # busy until killed: the session is live up to the moment its client vanishes
    obs, reward, terminated, truncated, info = env.step("Hello, what do you need?")
    if terminated or truncated:
        env.reset()
    time.sleep(0.05)
"""


def _half_open_websocket(url: str, session_id: str) -> socket.socket:
    """A WebSocket that does its handshake and one reset, then never speaks again (and never
    closes: the TCP connection stays up, as with a client whose machine dropped off the net)."""
    s = raw_websocket(url, session_id)
    s.sendall(ws_frame(json.dumps({"op": "reset", "seed": 1}).encode()))
    s.recv(65536)  # the reset's answer (part of it is enough)
    return s


def test_s3_vanished_clients_are_reaped_within_idle_timeout_plus_5s() -> None:
    idle = 2.0
    with running(idle_timeout_s=idle, max_sessions=32) as server:
        url = server.url
        # 4 client processes (2 HTTP, 2 WebSocket), to be killed mid-episode with SIGKILL.
        procs = [subprocess.Popen([sys.executable, "-c", _VANISHING_CLIENT, url, t], stdout=subprocess.PIPE)
                 for t in ("http", "ws", "http", "ws")]
        sockets: list[socket.socket] = []
        try:
            for p in procs:
                assert p.stdout is not None and p.stdout.readline().strip() == b"mid-episode"
            with httpx.Client(base_url=url) as client:
                # 8 HTTP clients that stop mid-episode and never say goodbye.
                sids = [client.post("/sessions", json={"env_id": DIALOG}).json()["session_id"] for _ in range(8)]
                for i, sid in enumerate(sids):
                    client.post(f"/sessions/{sid}/reset", json={"seed": i})
                # 4 half-open WebSockets: connected, silent, never closed.
                for _ in range(4):
                    sid = client.post("/sessions", json={"env_id": DIALOG}).json()["session_id"]
                    sockets.append(_half_open_websocket(url, sid))
                for sid in sids:  # the last word of each HTTP client
                    client.post(f"/sessions/{sid}/step", json={"action": "Hi!"})
            assert health(url)["sessions"] == 16
            for p in procs:
                p.send_signal(signal.SIGKILL)
                p.wait()
            vanished = time.monotonic()
            while health(url)["sessions"] and time.monotonic() - vanished < idle + 5:
                time.sleep(0.05)
            took = time.monotonic() - vanished
            print(f"\nS3: 16 vanished sessions (8 HTTP, 4 half-open WS, 4 killed processes) reaped in {took:.2f} s "
                  f"(idle timeout {idle} s)")
            assert health(url)["sessions"] == 0 and took <= idle + 5
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            for s in sockets:
                s.close()


# ------------------------------------------------------------------------------------- S4
def _post(path: str, body: bytes, *, extra: str = "", chunked: bool = False) -> bytes:
    if chunked:
        framed = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (body[i:i + 4096] for i in range(0, len(body), 4096)))
        return (f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                f"{extra}\r\n").encode() + framed + b"0\r\n\r\n"
    return (f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"{extra}\r\n").encode() + body


def test_s4_oversized_and_malformed_bodies_over_sockets() -> None:
    cap = 16 * 1024
    with running(max_body_bytes=cap) as server:
        url = server.url
        sid = httpx.post(f"{url}/sessions", json={"env_id": DIALOG}).json()["session_id"]
        step = f"/sessions/{sid}/step"
        big = json.dumps({"action": "x" * (cap + 10)}).encode()
        cases = [
            ("declared over the cap", _post(step, big), 413),
            ("chunked over the cap", _post(step, big, chunked=True), 413),
            ("chunked under the cap", _post(f"/sessions/{sid}/reset", b'{"seed": 4}', chunked=True), 200),
            ("invalid JSON", _post(step, b'{"action": '), 422),
            ("not UTF-8", _post(step, b'{"action": "\xff"}'), 422),
            ("wrong type", _post(step, b'{"action": 42}'), 422),
            ("unknown field", _post(step, b'{"action": "a", "b": 1}'), 422),
            ("5000-deep JSON", _post(step, b'{"action": ' + b"[" * 5000 + b"]" * 5000 + b"}"), 422),
        ]
        results = {name: raw_http(url, request)[0] for name, request, _ in cases}
        print(f"\nS4: {results}")
        assert results == {name: status for name, _, status in cases}
        assert not [s for s in results.values() if s >= 500]


def test_s4_chunked_body_is_refused_before_it_ends() -> None:
    cap = 16 * 1024
    with running(max_body_bytes=cap) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"POST /sessions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            chunk = b" " * 4096
            for _ in range(5):  # 20 KiB, over the cap, and the body never ends
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            status, body = read_response(s)
        assert status == 413 and json.loads(body)["error"]["code"] == "body_too_large"
        assert health(server.url)["sessions"] == 0


def test_s4_websocket_frame_over_the_cap_is_refused() -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with running(max_body_bytes=4096) as server:
        sid = httpx.post(f"{server.url}/sessions", json={"env_id": DIALOG}).json()["session_id"]
        with connect(f"ws://{server.url.removeprefix('http://')}/sessions/{sid}/ws", compression=None) as ws:
            ws.send(json.dumps({"op": "step", "action": "x" * 10_000}))
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        deadline = time.monotonic() + 5
        while health(server.url)["sessions"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert health(server.url)["sessions"] == 0
