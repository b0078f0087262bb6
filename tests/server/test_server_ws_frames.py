"""S10: WebSocket peers that make the server parse one frame per byte (docs/RELIABILITY.md).

A message cut into one-byte continuation frames, one-byte messages sent without waiting for
their answers, ping floods, and frames sent after the server has closed the socket: each peer is
closed after a bounded number of frames (`agentgym.server.ws_limits`), while honest clients,
fragmenting ones included, are served as before. Then the figure: an honest client's p99 while
one peer sends 1 MB/s of one-byte frames, with a session and without one.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from server_support import (
    ECHO_ID,
    board_process,
    echo_registered,
    percentile,
    raw_websocket,
    running,
    server_process,
    timed_episodes,
)
from ws_attackers import KINDS, frame

from agentgym.server.ws_limits import (
    CLOSE_TIMEOUT_S,
    CONTROL_BURST,
    FRAMES_AFTER_CLOSE,
    FREE_FRAGMENTS,
    MAX_UNREAD_MESSAGES,
    MIN_FRAGMENT_BYTES,
)

ATTACKERS = Path(__file__).with_name("ws_attackers.py")
TEXT, CONT, CLOSE, PING, PONG = 0x1, 0x0, 0x8, 0x9, 0xA


def _read_frame(s: socket.socket) -> tuple[int, bytes] | None:
    """One frame the server sent (unmasked): ``(opcode, payload)``, or None once the server closed."""

    def exact(n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            chunk = s.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    head = exact(2)
    if head is None:
        return None
    n = head[1] & 0x7F
    if n == 126:
        n = int.from_bytes(exact(2) or b"\0\0", "big")
    elif n == 127:
        n = int.from_bytes(exact(8) or b"\0" * 8, "big")
    payload = exact(n) if n else b""
    return (head[0] & 0x0F, payload or b"")


def _until_close(s: socket.socket) -> tuple[list[tuple[int, bytes]], tuple[int, str] | None]:
    """Every frame before the server's close, and the close's (code, reason); None if none came."""
    frames = []
    while True:
        frame = _read_frame(s)
        if frame is None:
            return frames, None
        if frame[0] == CLOSE:
            return frames, (int.from_bytes(frame[1][:2], "big"), frame[1][2:].decode())
        frames.append(frame)


def _closed_by_server(s: socket.socket, limit_s: float) -> float:
    """Seconds until the server closes the TCP connection (reading and dropping what it sends)."""
    t0 = time.monotonic()
    s.settimeout(limit_s)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - t0


def _session(server: Any) -> str:
    import httpx

    return str(httpx.post(server.url + "/sessions", json={"env_id": ECHO_ID}, timeout=10).json()["session_id"])


@pytest.fixture
def server() -> Any:
    with echo_registered(length=1000), running((ECHO_ID,), idle_timeout_s=30) as srv:
        yield srv


def test_a_message_in_one_byte_frames_is_refused_after_a_few(server: Any) -> None:
    s = raw_websocket(server.url, _session(server))
    s.sendall(frame(TEXT, False) + frame(CONT, False) * 20_000)
    frames, close = _until_close(s)
    assert close is not None and close[0] == 1002 and "frame limit" in close[1], close
    assert _closed_by_server(s, 5) < 2
    assert frames == []
    assert server.guard.dropped.get("ws_flood") == 1


@pytest.mark.parametrize(("pieces", "size"), [(FREE_FRAGMENTS, 80), (64, 64 * MIN_FRAGMENT_BYTES)])
def test_honest_fragments_are_served(server: Any, pieces: int, size: int) -> None:
    """A message in a few tiny frames, or in 64 frames of 4 KiB (a client that fragments)."""
    s = raw_websocket(server.url, _session(server))
    s.sendall(frame(TEXT, True, b'{"op": "reset", "seed": 1}'))
    assert _read_frame(s)[0] == TEXT  # type: ignore[index]
    message = json.dumps({"op": "step", "action": "y" * (size - 30)}).encode()
    step = -(-len(message) // pieces)
    parts = [message[i:i + step] for i in range(0, len(message), step)]
    assert len(parts) == pieces
    wire = b"".join(_long_frame(TEXT if i == 0 else CONT, i == len(parts) - 1, p) for i, p in enumerate(parts))
    s.sendall(wire)
    opcode, payload = _read_frame(s)  # type: ignore[misc]
    assert opcode == TEXT and json.loads(payload)["obs"].startswith("yyy")
    assert not server.guard.dropped.get("ws_flood")


def _long_frame(opcode: int, fin: bool, payload: bytes) -> bytes:
    import os

    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    mask = os.urandom(4)
    key = (mask * (n // 4 + 1))[:n]
    return head + mask + (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")


def test_messages_sent_ahead_of_their_answers(server: Any) -> None:
    s = raw_websocket(server.url, _session(server))
    s.sendall(frame(TEXT, True, b'{"op": "reset"}') * MAX_UNREAD_MESSAGES)
    answers = [_read_frame(s) for _ in range(MAX_UNREAD_MESSAGES)]
    assert all(a is not None and a[0] == TEXT for a in answers)
    s2 = raw_websocket(server.url, _session(server))
    s2.sendall(frame(TEXT, True, b"x") * 2000)
    _, close = _until_close(s2)
    assert close is not None and close[0] == 1002 and "ahead of their answers" in close[1]


def test_pings_are_bounded(server: Any) -> None:
    s = raw_websocket(server.url, _session(server))
    s.sendall(frame(PING, True) * CONTROL_BURST)
    assert [_read_frame(s) for _ in range(CONTROL_BURST)] == [(PONG, b"x")] * CONTROL_BURST
    s.sendall(frame(PING, True) * 1000)
    frames, close = _until_close(s)
    assert close is not None and close[0] == 1002 and "pings" in close[1]
    assert len(frames) < 5


@pytest.mark.parametrize("keeps_sending", [False, True])
def test_after_the_servers_close_it_stops_reading(server: Any, keeps_sending: bool) -> None:
    """An unknown session is closed (4404); a peer that never answers the close, silent or still
    sending, is cut off within the close timeout, its frames after the close unparsed."""
    s = raw_websocket(server.url, "no-such-session")
    _, close = _until_close(s)
    assert close is not None and close[0] == 4404
    stop = threading.Event()

    def flood() -> None:
        try:
            while not stop.is_set():
                s.sendall(frame(TEXT, True) * 100)
                time.sleep(0.005)
        except OSError:
            pass

    sender = threading.Thread(target=flood, daemon=True)
    if keeps_sending:
        sender.start()
    took = _closed_by_server(s, 10)
    stop.set()
    assert took < CLOSE_TIMEOUT_S + 0.5
    if keeps_sending:
        assert server.guard.dropped.get("ws_flood") == 1, f"more than {FRAMES_AFTER_CLOSE} frames were parsed"


# ------------------------------------------------------------------------------------- the figures
def honest_steps(url: str, seconds: float) -> list[float]:
    """An honest client of the env server: heuristic episodes over one WebSocket; the time of each call."""
    out: list[float] = []
    errors: list[str] = []
    timed_episodes(url, "ws", time.monotonic() + seconds, out, errors)
    assert not errors, errors
    return out


def honest_reads(url: str, seconds: float) -> list[float]:
    """An honest client of the board: ``GET /leaderboard.json`` over one keep-alive connection."""
    import httpx

    out = []
    with httpx.Client(timeout=30) as client:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            t = time.perf_counter()
            assert client.get(url + "/leaderboard.json").status_code == 200
            out.append(time.perf_counter() - t)
    return out


def under_attack(url: str, path: str, seconds: float, kind: str, honest: Callable[[str, float], list[float]],
                 token: str | None = None) -> tuple[list[float], dict[str, int]]:
    """`honest`'s call times while one peer sends 1 MB/s of one-byte `kind` frames to `path`."""
    attacker = subprocess.Popen([sys.executable, str(ATTACKERS), kind, url, path, str(seconds + 1.0), "1000000",
                                 *([token] if token else [])], stdout=subprocess.PIPE)
    try:
        time.sleep(0.5)
        times = honest(url, seconds)
        out, _ = attacker.communicate(timeout=seconds + 30)
    finally:
        if attacker.poll() is None:
            attacker.kill()
            attacker.wait()
    return times, json.loads(out)


def _check(what: str, times: list[float], figures: dict[str, int], seconds: float, quiet: list[float]) -> None:
    p99 = percentile(times, 0.99)
    print(f"\nS10 {what}: quiet {len(quiet) / QUIET_S:.0f} calls/s; attacked {len(times) / seconds:.0f} calls/s, "
          f"p50 {percentile(times, 0.5) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms; the peer: {figures}")
    assert len(times) > 50 * seconds, f"{what}: only {len(times)} calls in {seconds} s"
    assert p99 < 0.05, f"{what}: p99 {p99 * 1e3:.1f} ms"
    assert figures["sent"] > 0.5e6 * seconds, figures  # the peer did send its megabyte a second


ENV_TARGETS = {"session": "/sessions/{session}/ws", "no_session": "/sessions/no-such-session/ws"}
#: Seconds of the honest client alone, for the figure beside the attacked one (the long runs only).
QUIET_S = 2.0
#: Seconds of each flood in the default run (the long runs, ``-m slow``, flood for 20 s each).
FLOOD_S = 2.0


def _env_server(seconds: float, kinds: tuple[str, ...], quiet_s: float = 0.0) -> None:
    with server_process("--workers", "1") as (url, _):  # the frame guard is per worker process
        quiet = honest_steps(url, quiet_s) if quiet_s else []
        for where, path in ENV_TARGETS.items():
            for kind in kinds:
                _check(f"env server, {where}, {kind}", *under_attack(url, path, seconds, kind, honest_steps), seconds,
                       quiet)


def _board_target(url: str, token: str, where: str) -> tuple[str, str | None]:
    """The sealed path the peer floods, and the token it presents."""
    import httpx

    if where == "stranger":
        return "/sealed/runs/nobody/sessions/nothing/ws", None
    auth = {"Authorization": f"Bearer {token}"}
    run = httpx.post(url + "/sealed/runs", json={"suite": "smoke-v0", "agent": "flood", "model": "m",
                                                  "revision": where}, headers=auth, timeout=30).json()
    if where == "no_session":
        return f"/sealed/runs/{run['run_id']}/sessions/nothing/ws", token
    cell = run["cells"][0]
    opened = httpx.post(f"{url}/sealed/runs/{run['run_id']}/sessions", headers=auth, timeout=30,
                        json={"env_id": cell["env_id"], "kwargs": cell["kwargs"], "noise": cell["noise"]}).json()
    return f"/sealed/runs/{run['run_id']}/sessions/{opened['session_id']}/ws", token


def _board(tmp_path: Path, wheres: tuple[str, ...], seconds: float, kinds: tuple[str, ...], quiet_s: float = 0.0) -> None:
    from agentgym.leaderboard.store import Store
    from agentgym.leaderboard.tokens import TokenBook

    db = tmp_path / "board.sqlite"
    tokens = TokenBook(Store(db))
    with board_process(str(db), "--sealed") as (url, _):
        quiet = honest_reads(url, quiet_s) if quiet_s else []
        for where in wheres:
            # A token of its own for each: a token plays one run at a time.
            path, presented = _board_target(url, tokens.add(f"flooders-{where}", 100)[1], where)
            for kind in kinds:
                _check(f"board, {where}, {kind}", *under_attack(url, path, seconds, kind, honest_reads, presented),
                       seconds, quiet)


def test_honest_p99_under_a_frame_flood() -> None:
    _env_server(FLOOD_S, ("fragments",))


def test_board_reads_under_a_frame_flood(tmp_path: Path) -> None:
    _board(tmp_path, ("session", "stranger"), FLOOD_S, ("fragments",))


@pytest.mark.slow
def test_honest_p99_under_a_frame_flood_long() -> None:
    _env_server(20.0, KINDS, QUIET_S)


@pytest.mark.slow
def test_board_reads_under_a_frame_flood_long(tmp_path: Path) -> None:
    _board(tmp_path, ("session", "no_session", "stranger"), 20.0, KINDS, QUIET_S)
