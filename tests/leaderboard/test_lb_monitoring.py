"""``GET /metrics`` of the leaderboard: verifications by track and outcome and their durations,
refused requests, and with the sealed track its runs and the steps of its sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
import lb_sealed_support as T  # noqa: E402
import lb_support as S  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from agentgym.eval.runner import AgentSpec  # noqa: E402
from agentgym.leaderboard.sealed.client import SealedTarget, run_sealed  # noqa: E402
from agentgym.leaderboard.server import create_app  # noqa: E402
from agentgym.leaderboard.store import Store  # noqa: E402
from agentgym.leaderboard.submission import Limits, decode_submission  # noqa: E402
from agentgym.server.monitoring import VERIFICATION_OUTCOMES, read_metrics  # noqa: E402


def value(samples: dict[str, Any], name: str, **labels: str) -> float:
    return samples[name][tuple(sorted(labels.items()))]


def test_open_track_verifications_are_counted_by_outcome(tmp_path: Path) -> None:
    app = create_app(Store(tmp_path / "board.sqlite"), suites=S.REGISTRY, workers=1,
                     limits=Limits(max_body_bytes=4 << 20))
    good = S.body_for(S.records("heuristic"), model="m1")
    tampered = S.records("heuristic")
    tampered[3]["steps"][0]["reward"] = 1.0
    with TestClient(app) as client:
        statuses = [client.post("/submissions", content=body).status_code for body in (
            good,                                                   # accepted
            good,                                                   # duplicate: the entry itself
            S.body_for(S.records("heuristic"), model="another"),    # copy: the same records, another name
            S.body_for(tampered, model="m2"),                       # rejected by the replay
            b"not gzip at all",                                     # malformed
        )]
        assert statuses == [201, 200, 409, 422, 400]
        assert client.post("/submissions", content=b"x", headers={"Content-Length": str(5 << 20)}).status_code == 413
        assert client.get("/submissions/999").status_code == 404
        m = read_metrics(client.get("/metrics").text)
    got = {o: value(m, "agentgym_board_verifications_total", track="open", outcome=o) for o in VERIFICATION_OUTCOMES}
    assert got == {**dict.fromkeys(VERIFICATION_OUTCOMES, 0), "accepted": 1, "duplicate": 1, "copy": 1,
                   "rejected": 1, "malformed": 1}
    # Durations: the accepted and the rejected one, each a real replay.
    assert value(m, "agentgym_board_verification_seconds_count", track="open") == 2
    assert value(m, "agentgym_board_verification_seconds_sum", track="open") > 0
    assert value(m, "agentgym_board_verification_seconds_count", track="sealed") == 0
    assert {dict(k)["code"]: v for k, v in m["agentgym_board_refused_total"].items()} == {"too_large": 1,
                                                                                          "not_found": 1}
    assert "agentgym_sessions_live" not in m  # no sealed track: no sessions


def test_sealed_runs_their_sessions_and_verifications_are_counted(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path) as board:
        token = board.token()
        # A run left with a bad action in play: the agent's error is counted from the board's own view.
        run = T.open_run(board, token, model="aborted")
        sid = T.session(board, token, run["run_id"], run["cells"][0])
        with T.ws(board, token, run["run_id"], sid) as sock:
            T.exchange(sock, {"op": "reset"})
            answer = T.exchange(sock, {"op": "step", "action": {"role": None}})
            assert answer["info"]["errors"] == ["PARSE_ERROR"]
        status, _, _ = T.http(board.url, "DELETE", f"/sealed/runs/{run['run_id']}/sessions/{sid}", token=token)
        assert status == 204
        T.wait_state(board, token, run["run_id"], until=("incomplete",))
        # A whole run, played by the sealed client.
        target = SealedTarget(board.url, token, "m", "r1")
        final = run_sealed(S.SUITE.id, AgentSpec("heuristic"), target, tmp_path / "out", progress=False, concurrency=2)
        assert final["state"] == "complete"
        status, text, _ = T.http(board.url, "GET", "/metrics")
    assert status == 200
    m = read_metrics(text.decode())
    records = decode_submission(Path(final["records_file"]).read_bytes()).records
    steps = [step for r in records for step in r["steps"]]
    assert value(m, "agentgym_board_sealed_runs", state="complete") == 1
    assert value(m, "agentgym_board_sealed_runs", state="incomplete") == 1
    assert value(m, "agentgym_board_sealed_runs", state="open") == 0
    assert value(m, "agentgym_board_sealed_runs_live", phase="playing") == 0
    assert value(m, "agentgym_board_verifications_total", track="sealed", outcome="accepted") == 1
    assert value(m, "agentgym_board_verification_seconds_count", track="sealed") == 1
    # Every reset and step over the sessions' sockets, the aborted run's one of each included.
    assert value(m, "agentgym_resets_total", transport="ws") == len(records) + 1
    assert value(m, "agentgym_steps_total", transport="ws") == len(steps) + 1
    assert value(m, "agentgym_step_seconds_count") == len(steps) + 1
    errors = [code for step in steps for code in step["errors"]] + ["PARSE_ERROR"]
    for code in {*errors, "BLOCKED"}:
        assert value(m, "agentgym_step_errors_total", code=code) == errors.count(code), code
    assert value(m, "agentgym_sessions_live") == 0
    assert value(m, "agentgym_sessions_closed_total", reason="closed") == value(m, "agentgym_sessions_opened_total")
