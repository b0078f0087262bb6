"""The clients' HTTP to a board (httpx): an answer is read up to its cap however much the server
sends, compressed or not, and no answer at all is one line naming the board."""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from agentgym.leaderboard.httpclient import request_capped
from agentgym.leaderboard.sealed.client import Refused, _Board
from agentgym.leaderboard.submitting import Unreachable, post_submission

#: The longest a capped read of an endless answer may take on loopback.
TIME_LIMIT_S = 20.0


@contextlib.contextmanager
def answering(head: bytes, body: Iterator[bytes]) -> Iterator[str]:
    """A loopback server that reads a request's headers, then sends `head` and `body` until the
    client hangs up; yields its URL."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    sent = [0]

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.settimeout(TIME_LIMIT_S)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            try:
                conn.sendall(head)
                for chunk in body:
                    conn.sendall(chunk)
                    sent[0] += len(chunk)
            except OSError:
                pass  # the client stopped reading and hung up: what the test wants

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        thread.join(TIME_LIMIT_S)
        srv.close()
        assert not thread.is_alive()


def endless(piece: bytes = b"[" * 65536) -> Iterator[bytes]:
    """A chunked body without end."""
    while True:
        yield b"%x\r\n%s\r\n" % (len(piece), piece)


CHUNKED_JSON = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"


def test_an_endless_answer_is_read_up_to_the_cap() -> None:
    started = time.monotonic()
    with answering(CHUNKED_JSON, endless()) as url, httpx.Client(timeout=10) as client:
        response, raw = request_capped(client, "GET", url + "/x", 100_000)
    assert response.status_code == 200 and raw == b"[" * 100_000
    assert time.monotonic() - started < TIME_LIMIT_S


def test_a_compressed_answer_is_not_expanded_past_the_cap() -> None:
    bomb = gzip.compress(b"0" * (64 << 20))  # 64 MiB of zeros in about 64 KiB
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            b"Content-Length: %d\r\n\r\n" % len(bomb))
    with answering(head, iter([bomb])) as url, httpx.Client(timeout=10) as client:
        response, raw = request_capped(client, "GET", url + "/x", 4096)
    assert raw == bomb[:4096]


def test_submit_to_a_board_that_answers_without_end_stops_at_the_cap() -> None:
    with answering(CHUNKED_JSON, endless()) as url:
        status, answer = post_submission(url, b"body", timeout=10)
    assert status == 200 and answer["error"] == "http_error" and len(answer["message"]) <= 500


def test_no_answer_is_one_line_naming_the_board() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"  # closed when the block ends: nothing listens there
    with pytest.raises(Unreachable) as submit:
        post_submission(url, b"body", timeout=2)
    with _Board(url, "token", 2) as board, pytest.raises(ConnectionError) as sealed:
        board.request("GET", "/sealed/runs/x")
    for error in (submit.value, sealed.value):
        assert url in str(error) and "\n" not in str(error) and "Connection refused" in str(error)


def test_the_sealed_client_takes_an_endless_answer_as_a_refusal_not_a_crash() -> None:
    with answering(CHUNKED_JSON, endless()) as url, _Board(url, "token", 10) as board, \
            pytest.raises(Refused) as refused:
        board.json("GET", "/sealed/runs/x")
    assert "is not JSON" in str(refused.value) and refused.value.status == 200
