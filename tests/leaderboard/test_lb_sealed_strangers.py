"""L11: the sealed track tells a stranger nothing (docs/RELIABILITY.md).

Every sealed route authenticates before it looks anything up: without a valid token the answer
is the same 401, whatever run and session the path names (real, random or malformed), its body
included; a WebSocket is closed 4401 alike; another token's holder gets the same 404 for a real
session of a real run as for a random one. Before: ``/health`` answered the live session count
to anyone, and step, reset, fail and DELETE told a real session id (401) from a random one (404).
"""

from __future__ import annotations

from pathlib import Path

import lb_sealed_support as T
import pytest


@pytest.fixture
def board(tmp_path: Path) -> T.Board:
    with T.sealed_board(tmp_path) as b:
        yield b


def _routes(run_id: str, sid: str) -> list[tuple[str, str, object]]:
    prefix = f"/sealed/runs/{run_id}"
    return [("GET", f"{prefix}/health", None), ("GET", f"{prefix}/envs", None), ("GET", prefix, None),
            ("POST", f"{prefix}/sessions", {"env_id": "AgentRL/Dialog-v0"}), ("POST", f"{prefix}/sessions", "[["),
            ("POST", f"{prefix}/sessions/{sid}/reset", {}), ("POST", f"{prefix}/sessions/{sid}/step", {"action": "x"}),
            ("POST", f"{prefix}/sessions/{sid}/step", {"wrong": 1}),
            ("POST", f"{prefix}/sessions/{sid}/fail", {"type": "x", "message": "y", "traceback": ""}),
            ("DELETE", f"{prefix}/sessions/{sid}", None)]


def _answers(board: T.Board, run_id: str, sid: str, token: str | None) -> list[tuple[int, object]]:
    return [T.http(board.url, method, path, body, token)[:2] for method, path, body in _routes(run_id, sid)]


def test_a_stranger_gets_one_answer_whatever_the_ids(board: T.Board) -> None:
    token = board.token()
    run = T.open_run(board, token)
    sid = T.session(board, token, run["run_id"], run["cells"][0])
    targets = [(run["run_id"], sid), (run["run_id"], "no-such-session"), ("no-such-run", sid),
               ("no-such-run", "nothing"), ("%00bad", "%ff%fe")]
    for presented in (None, "agt_wrong"):
        answers = [_answers(board, r, s, presented) for r, s in targets]
        assert all(a == answers[0] for a in answers), presented
        assert {status for status, _ in answers[0]} == {401}
    # Another token's holder: one 404 for the run, whatever the session.
    other = board.token("other")
    real, random = _answers(board, run["run_id"], sid, other), _answers(board, run["run_id"], "nothing", other)
    assert real == random and {status for status, _ in real} == {404}


def test_a_strangers_websocket_is_closed_alike(board: T.Board) -> None:
    from websockets.exceptions import ConnectionClosed

    token = board.token()
    run = T.open_run(board, token)
    sid = T.session(board, token, run["run_id"], run["cells"][0])
    codes = {}
    for name, (run_id, session_id) in {"real": (run["run_id"], sid), "random": (run["run_id"], "nothing"),
                                       "no run": ("no-such-run", sid)}.items():
        with T.ws(board, None, run_id, session_id) as sock:
            with pytest.raises(ConnectionClosed) as closed:
                T.exchange(sock, {"op": "reset"})
            codes[name] = (closed.value.rcvd.code, closed.value.rcvd.reason)
    assert set(codes.values()) == {(4401, "unauthorized")}, codes
