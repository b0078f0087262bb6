"""L9: what a sealed run costs the board is bounded (docs/RELIABILITY.md).

A turn over the env's cap is recorded as a bounded marker; a record is kept under
`SealedConfig.max_record_bytes` as it is written (past it the episode ends as an agent error),
a run's records under `max_run_bytes` (past it the run closes incomplete); a value JSON cannot
carry in a dict action is a PARSE_ERROR turn, never a 500; and the board's memory stays under
twice its idle size while a client sends 1 MiB turns on every session.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from pathlib import Path
from typing import Any

import lb_sealed_support as T
import lb_support as S
import pytest

from agentgym.eval.runner import AgentSpec
from agentgym.leaderboard.sealed.client import SealedError, SealedTarget, run_sealed
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.tokens import TokenBook


def _run(board: T.Board, agent: str, out: Path, token: str | None = None, **kw: Any) -> dict[str, Any]:
    target = SealedTarget(board.url, token or board.token(), "m", kw.pop("revision", "r1"))
    return run_sealed(S.SUITE.id, AgentSpec(agent), target, out, progress=False, concurrency=4, timeout_s=None, **kw)


def _published_lines(path: str) -> list[bytes]:
    return gzip.decompress(Path(path).read_bytes()).splitlines()[1:]


def test_one_mib_turns_are_recorded_as_markers(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path) as board:
        final = _run(board, "lb_sealed_support:LongTurnAgent", tmp_path / "out")
    assert final["state"] == "complete", final
    lines = _published_lines(final["records_file"])
    assert len(lines) == len(S.SUITE) and max(map(len, lines)) < 64 * 1024
    for rec in map(json.loads, lines):
        assert rec["actions"] and all(a["for"] == "text_over_cap" and a["chars"] == len(T.LongTurnAgent.text)
                                      for a in rec["actions"])
        assert all(step["errors"] == ["TOO_LARGE"] for step in rec["steps"])


def test_a_record_at_its_cap_ends_the_episode_as_an_agent_error(tmp_path: Path) -> None:
    config = SealedConfig(grace_s=30.0, max_record_bytes=1 << 20)
    with T.sealed_board(tmp_path, config) as board:
        final = _run(board, "lb_sealed_support:ControlCharAgent", tmp_path / "out")
    assert final["state"] == "complete", final  # every episode recorded, verified and stored
    lines = _published_lines(final["records_file"])
    assert max(map(len, lines)) <= config.max_record_bytes
    errors = [json.loads(line)["agent_error"] for line in lines]
    assert errors and all(e is not None and e["type"] == "RecordTooLarge" for e in errors)


def test_a_run_over_its_cap_closes_incomplete(tmp_path: Path) -> None:
    config = SealedConfig(grace_s=30.0, max_record_bytes=256 * 1024, max_run_bytes=300 * 1024)
    with T.sealed_board(tmp_path, config) as board:
        token = board.token()
        with pytest.raises(SealedError):
            _run(board, "lb_sealed_support:LargeTurnAgent", tmp_path / "out", token)
        run_id = json.loads((tmp_path / "out" / "sealed.json").read_text())["run_id"]
        status = T.wait_state(board, token, run_id)
    assert status["state"] == "incomplete" and "passed 307200 bytes" in status["reason"]
    assert not list((tmp_path / "board.sqlite.sealed").iterdir())  # its records are gone


def test_values_json_cannot_carry_are_parse_errors_never_500(tmp_path: Path) -> None:
    """NaN, Infinity and 1e400 in a dict action over HTTP and WebSocket: PARSE_ERROR turns, the
    episode recorded, and the run completes (12 of 103 fuzzed messages gave a 500 before)."""
    with T.sealed_board(tmp_path) as board:
        final = _run(board, "lb_sealed_support:NotJsonAgent", tmp_path / "out")
        assert final["state"] == "complete", final
        token = board.token()
        run = T.open_run(board, token, revision="http")
        sid = T.session(board, token, run["run_id"], run["cells"][0])
        prefix = f"/sealed/runs/{run['run_id']}/sessions/{sid}"
        assert T.http(board.url, "POST", f"{prefix}/reset", None, token)[0] == 200
        import httpx

        for literal in ("NaN", "Infinity", "-Infinity", "1e400", "1" * 400):
            body = ('{"action": {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": '
                    '"function", "function": {"name": "search", "arguments": {"q": %s}}}]}}' % literal)
            answer = httpx.post(board.url + f"{prefix}/step", content=body, timeout=30,
                                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            assert answer.status_code == 200, (literal, answer.text)
            assert answer.json()["info"]["errors"] == ["PARSE_ERROR"], literal
    lines = _published_lines(final["records_file"])
    stand_ins = [a for rec in map(json.loads, lines) for a in rec["actions"] if isinstance(a, dict)]
    assert stand_ins and all(a["role"] is None and "not a JSON number" in a["not_json"] for a in stand_ins)


# ------------------------------------------------------------------------------------- memory
def _rss(pid: int) -> int:
    import os

    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _flood(url: str, token: str, sessions: int, seconds: float) -> int:
    """`sessions` WebSockets of one sealed run sending a 1 MiB turn on every step for `seconds`; steps sent."""
    import httpx
    from websockets.sync.client import connect

    auth = {"Authorization": f"Bearer {token}"}
    run = httpx.post(url + "/sealed/runs", headers=auth, timeout=30, json={
        "suite": "smoke-v0", "agent": "long-turn", "model": "m", "revision": "memory"}).json()
    turn = json.dumps({"op": "step", "action": T.LongTurnAgent.text})
    sent = [0] * sessions
    until = time.monotonic() + seconds

    def one(k: int) -> None:
        cell = run["cells"][k % len(run["cells"])]
        sid = httpx.post(f"{url}/sealed/runs/{run['run_id']}/sessions", headers=auth, timeout=30, json={
            "env_id": cell["env_id"], "kwargs": cell["kwargs"], "noise": cell["noise"]}).json()["session_id"]
        ws_url = url.replace("http", "ws", 1) + f"/sealed/runs/{run['run_id']}/sessions/{sid}/ws"
        with connect(ws_url, additional_headers=auth, compression=None, max_size=None, open_timeout=30) as ws:
            ws.send('{"op": "reset"}')
            json.loads(ws.recv(timeout=30))
            while time.monotonic() < until:
                ws.send(turn)
                answer = json.loads(ws.recv(timeout=30))
                sent[k] += 1
                if answer.get("terminated") or answer.get("truncated"):
                    ws.send('{"op": "reset"}')
                    json.loads(ws.recv(timeout=30))

    threads = [threading.Thread(target=one, args=(k,), daemon=True) for k in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 60)
    return sum(sent)


def _memory(tmp_path: Path, sessions: int, seconds: float) -> None:
    db = tmp_path / "board.sqlite"
    token = TokenBook(Store(db)).add("memory", 100)[1]
    with T.board_process(db) as (url, proc):
        time.sleep(1.0)
        idle = _rss(proc.pid)
        peak = [idle]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _rss(proc.pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        steps = _flood(url, token, sessions, seconds)
        done.set()
        sampler.join()
    print(f"\nL9 memory: idle {idle / 2**20:.0f} MiB, peak {peak[0] / 2**20:.0f} MiB ({peak[0] / idle:.2f}x) over "
          f"{steps} 1 MiB turns on {sessions} sessions in {seconds:g} s")
    assert steps > 5 * sessions
    assert peak[0] < 2 * idle, f"peak {peak[0] / idle:.2f}x idle"


def test_board_memory_under_one_mib_turns(tmp_path: Path) -> None:
    _memory(tmp_path, 4, 6.0)


@pytest.mark.slow
def test_board_memory_under_one_mib_turns_long(tmp_path: Path) -> None:
    _memory(tmp_path, 16, 60.0)
