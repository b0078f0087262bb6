"""`BlockingWebSocket`: the clients' WebSocket that reads its own socket, against a WebSocket peer
built on websockets' sans-I/O server (fragments, pings, close codes, refusals) and against the env
server itself."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol

from agentgym.server.ws_blocking import BlockingWebSocket


class _Peer:
    """One connection's server side: `script(peer)` runs after the handshake."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.protocol = ServerProtocol(max_size=None)
        self.request: Request | None = None
        self.pending: list[Any] = []

    def flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                self.conn.sendall(data)
            else:
                # The end of the server's side; a client that has closed already has seen it.
                with suppress(OSError):
                    self.conn.shutdown(socket.SHUT_WR)

    def read_event(self, timeout: float = 5.0) -> Any:
        self.conn.settimeout(timeout)
        while True:
            self.pending.extend(self.protocol.events_received())
            if self.pending:
                return self.pending.pop(0)
            data = self.conn.recv(65536)
            if not data:
                self.protocol.receive_eof()
                return None
            self.protocol.receive_data(data)
            self.flush()

    def handshake(self, status: int = 101) -> None:
        request = self.read_event()
        assert isinstance(request, Request)
        self.request = request
        response = self.protocol.accept(request) if status == 101 else self.protocol.reject(status, "go away\n")
        self.protocol.send_response(response)
        self.flush()

    def send_frames(self, *frames: Frame) -> None:
        # Raw frames as one write: the client must split and join them itself.
        self.conn.sendall(b"".join(f.serialize(mask=False, extensions=[]) for f in frames))


@contextmanager
def _peer(script: Callable[[_Peer], None]) -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    failures: list[BaseException] = []

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            script(_Peer(conn))
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            failures.append(exc)
        finally:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"ws://127.0.0.1:{port}/sessions/s/ws"
    finally:
        thread.join(10)
        listener.close()
    if failures:
        raise failures[0]


def test_fragments_are_joined_pings_answered_and_headers_sent() -> None:
    seen: dict[str, Any] = {}

    def script(peer: _Peer) -> None:
        peer.handshake()
        seen["auth"] = peer.request.headers.get("Authorization") if peer.request else None
        message = peer.read_event()
        seen["message"] = message.data.decode()
        peer.send_frames(Frame(Opcode.PING, b"are you there"), Frame(Opcode.TEXT, b'{"obs": "he', fin=False),
                         Frame(Opcode.CONT, b'llo"}', fin=True))
        pong = peer.read_event()
        seen["pong"] = (pong.opcode, pong.data)
        peer.protocol.send_close(1000, "bye")
        peer.flush()
        peer.read_event()  # the client's close

    with _peer(script) as url:
        ws = BlockingWebSocket(url, headers={"Authorization": "Bearer t0k"}, open_timeout=5)
        ws.send(json.dumps({"op": "reset"}))
        assert json.loads(ws.recv(timeout=5)) == {"obs": "hello"}
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        ws.close()
    assert closed.value.rcvd is not None and (closed.value.rcvd.code, closed.value.rcvd.reason) == (1000, "bye")
    assert seen == {"auth": "Bearer t0k", "message": '{"op": "reset"}', "pong": (Opcode.PONG, b"are you there")}


def test_a_close_code_of_the_server_reaches_the_caller_and_sends_then_fail() -> None:
    def script(peer: _Peer) -> None:
        peer.handshake()
        peer.protocol.send_close(4404, "unknown session")
        peer.flush()
        # Reading the client's close flushes the server's end of the TCP connection (the server
        # closes first): a second shutdown here would race the client's own close.
        peer.read_event()

    with _peer(script) as url:
        ws = BlockingWebSocket(url, open_timeout=5)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
        with pytest.raises(ConnectionClosed):
            ws.send("{}")
        ws.close()


def test_a_refused_upgrade_is_invalid_status_with_the_answer() -> None:
    with _peer(lambda peer: peer.handshake(status=403)) as url:
        with pytest.raises(InvalidStatus) as refused:
            BlockingWebSocket(url, open_timeout=5)
    assert refused.value.response.status_code == 403


def test_recv_times_out_and_the_connection_stays_usable() -> None:
    release = threading.Event()

    def script(peer: _Peer) -> None:
        peer.handshake()
        release.wait(10)
        peer.protocol.send_text(b"late")
        peer.flush()
        peer.read_event()

    with _peer(script) as url:
        with BlockingWebSocket(url, open_timeout=5) as ws:
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                ws.recv(timeout=0.2)
            assert time.monotonic() - started < 2
            release.set()
            assert ws.recv(timeout=5) == "late"


def test_a_peer_that_drops_the_connection_is_connection_closed() -> None:
    def script(peer: _Peer) -> None:
        peer.handshake()
        peer.conn.shutdown(socket.SHUT_RDWR)

    with _peer(script) as url:
        ws = BlockingWebSocket(url, open_timeout=5)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd is None
        ws.close()


def test_no_server_is_an_os_error_and_a_silent_one_a_timeout() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(OSError):
        BlockingWebSocket(f"ws://127.0.0.1:{port}/x", open_timeout=2)
    with socket.create_server(("127.0.0.1", 0)) as silent:
        with pytest.raises(TimeoutError):
            BlockingWebSocket(f"ws://127.0.0.1:{silent.getsockname()[1]}/x", open_timeout=0.3)


def test_round_trips_with_the_env_server() -> None:
    from agentgym.server.client import RemoteEnv
    from agentgym.server.serve import ServerThread

    with ServerThread() as server:
        env = RemoteEnv(server.url, "AgentRL/Dialog-v0", transport="ws")
        try:
            obs, info = env.reset(seed=3)
            assert isinstance(obs, str) and obs
            for _ in range(3):
                obs, reward, terminated, truncated, info = env.step("hello")
                if terminated or truncated:
                    break
            assert isinstance(obs, str)
        finally:
            env.close()
