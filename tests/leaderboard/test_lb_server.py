"""The leaderboard's HTTP API (FastAPI TestClient; no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
import lb_support as S  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from agentgym.leaderboard.server import create_app  # noqa: E402
from agentgym.leaderboard.store import Store  # noqa: E402
from agentgym.leaderboard.submission import Limits  # noqa: E402


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Store(tmp_path / "board.sqlite"), suites=S.REGISTRY, workers=1,
                     public_url="https://board.example")
    with TestClient(app) as c:
        yield c


def test_submit_then_read_back(client: TestClient) -> None:
    body = S.body_for(S.records("heuristic"), **S.payload_fields(0))
    r = client.post("/submissions", content=body, headers={"Content-Type": "application/gzip"})
    assert r.status_code == 201, r.text
    answer = r.json()
    assert answer["status"] == "ranked" and answer["url"] == f"/submissions/{answer['id']}"
    again = client.post("/submissions", content=body)
    assert again.status_code == 200 and again.json()["status"] == "duplicate" and again.json()["id"] == answer["id"]

    entry = client.get(answer["url"]).json()
    assert entry["agent"] == S.payload_fields(0)["agent"]  # JSON carries the data as sent
    assert entry["summary"]["cells"] and entry["status"] == "ranked"
    board = client.get("/leaderboard.json").json()
    assert [e["id"] for e in board["suites"][0]["rows"]] == [answer["id"]]

    page = client.get("/leaderboard")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'sha256-" in csp and "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.text.count("<script") == 1 and "https://board.example/submissions" in page.text  # its own
    assert client.get("/", follow_redirects=False).status_code in (302, 307)


def test_rejections_name_the_episode(client: TestClient) -> None:
    recs = S.records("heuristic")
    recs[3]["steps"][0]["reward"] = 1.0
    r = client.post("/submissions", content=S.body_for(recs))
    assert r.status_code == 422
    err = r.json()
    assert err["error"] == "replay_mismatch" and err["episode"] == recs[3]["key"] and err["step"] == 1
    assert client.get("/leaderboard.json").json()["suites"] == []

    r = client.post("/submissions", content=S.body_for(S.records("heuristic"), suite="nope-v0"))
    assert r.status_code == 422 and r.json()["error"] == "unknown_suite"
    r = client.post("/submissions", content=b"not gzip at all")
    assert r.status_code == 400 and r.json()["error"] == "not_gzip"


def test_missing_ids(client: TestClient) -> None:
    assert client.get("/submissions/12345").status_code == 404
    assert client.get("/submissions/abc").status_code == 422
    # Past SQLite's integers: refused as no id, never an overflow in the query (a 500).
    for entry_id in ("0", "-1", str(2**63), "9" * 40):
        assert client.get(f"/submissions/{entry_id}").status_code == 422, entry_id
    assert client.get(f"/submissions/{2**63 - 1}").status_code == 404


def test_copies_are_answered_409_over_http(client: TestClient) -> None:
    first = client.post("/submissions", content=S.body_for(S.records("heuristic"), model="original"))
    assert first.status_code == 201
    r = client.post("/submissions", content=S.body_for(S.records("heuristic"), model="a copy"))
    assert r.status_code == 409 and r.json()["error"] == "duplicate_records"
    assert str(first.json()["id"]) in r.json()["message"]


def test_body_limits_over_http(tmp_path: Path) -> None:
    limits = Limits(max_body_bytes=64 * 1024)
    app = create_app(Store(tmp_path / "b.sqlite"), suites=S.REGISTRY, limits=limits, workers=1)
    with TestClient(app) as c:
        big = b"\x1f\x8b" + b"\0" * (limits.max_body_bytes + 1)
        r = c.post("/submissions", content=big)
        assert r.status_code == 413 and r.json()["error"] == "too_large"

        def chunks() -> Iterator[bytes]:  # no Content-Length: refused while streaming
            for _ in range(100):
                yield b"\0" * 8192

        r = c.post("/submissions", content=chunks())
        assert r.status_code == 413
        r = c.post("/submissions", content=b"x", headers={"Content-Length": "99999999999"})
        assert r.status_code == 413


def test_busy_server_answers_503(tmp_path: Path) -> None:
    app = create_app(Store(tmp_path / "b.sqlite"), suites=S.REGISTRY, workers=1, max_pending=0)
    with TestClient(app) as c:
        r = c.post("/submissions", content=S.body_for(S.records("heuristic")))
        assert r.status_code == 503 and r.json()["error"] == "busy"
