"""``GET /metrics`` of the env server: what is counted equals what was done, over HTTP and
WebSocket; each app counts apart; the label sets stay bounded whatever a client or an env sends;
the connection guard's drops are reported."""

from __future__ import annotations

import json
import random
import socket
import string
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import httpx
import pytest
from fastapi.testclient import TestClient
from server_support import ECHO_ID, EchoEnv, echo_registered, running
from starlette.websockets import WebSocketDisconnect

from agentgym.core.protocol import ErrorCode
from agentgym.server.app import create_app
from agentgym.server.monitoring import STEP_ERROR_CODES, ServerMetrics, read_metrics

DIALOG = "AgentRL/Dialog-v0"
GARBAGE_ID = "ServerTest/GarbageErrors-v0"


def value(samples: dict[str, Any], name: str, **labels: str) -> float:
    return samples[name][tuple(sorted(labels.items()))]


def metrics_of(client: TestClient) -> dict[str, Any]:
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return read_metrics(r.text)


class GarbageErrorsEnv(EchoEnv):
    """An env (not agentgym's) whose info["errors"] holds whatever the action says: any string,
    numbers, objects, a non-list."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._t += 1
        return "ok", 0.0, False, False, {"errors": json.loads(action)}


@contextmanager
def garbage_registered() -> Iterator[str]:
    gym.register(id=GARBAGE_ID, entry_point=GarbageErrorsEnv, kwargs={"length": 10**6}, disable_env_checker=True)
    try:
        yield GARBAGE_ID
    finally:
        gym.registry.pop(GARBAGE_ID, None)


@pytest.mark.parametrize("env_calls", ["thread", "inline"])
def test_counts_equal_what_was_done_over_http_and_websocket(env_calls: str) -> None:
    with echo_registered(length=3), TestClient(create_app(env_ids=[DIALOG, ECHO_ID], max_sessions=2,
                                                          env_calls=env_calls)) as client:
        before = metrics_of(client)
        assert value(before, "agentgym_sessions_live") == 0 and value(before, "agentgym_sessions_max") == 2
        assert all(value(before, "agentgym_step_errors_total", code=c) == 0 for c in STEP_ERROR_CODES)

        dialog = client.post("/sessions", json={"env_id": DIALOG}).json()["session_id"]
        echo = client.post("/sessions", json={"env_id": ECHO_ID}).json()["session_id"]
        assert client.post("/sessions", json={"env_id": ECHO_ID}).status_code == 429  # over the cap
        for seed in (1, 2):
            assert client.post(f"/sessions/{dialog}/reset", json={"seed": seed}).status_code == 200
        actions = ["Hello, what are you looking for?", {"role": None}, "x" * 100_000, "<tool_call>{</tool_call>"]
        errors: list[str] = []
        for action in actions:
            r = client.post(f"/sessions/{dialog}/step", json={"action": action})
            assert r.status_code == 200, r.text
            errors += r.json()["info"]["errors"]
        assert errors, "the bad actions were answered with the env's error codes"
        assert client.post("/sessions/nope/step", json={"action": "a"}).status_code == 404
        assert client.post(f"/sessions/{dialog}/step", content=b'{"action": ',
                           headers={"content-type": "application/json"}).status_code == 422
        assert client.post(f"/sessions/{dialog}/step", content=b"x" * (2 << 20)).status_code == 413
        with client.websocket_connect(f"/sessions/{echo}/ws") as ws:
            ws.send_text(json.dumps({"op": "reset", "seed": 0}))
            ws.receive_text()
            for i in range(3):
                ws.send_text(json.dumps({"op": "step", "action": f"a{i}"}))
                assert "error" not in json.loads(ws.receive_text())
            ws.send_text(json.dumps({"op": "step", "action": "past the end"}))
            assert json.loads(ws.receive_text())["error"]["code"] == "reset_needed"
            ws.send_text("not json")
            assert json.loads(ws.receive_text())["error"]["code"] == "invalid_json"
        with client.websocket_connect("/sessions/nope/ws") as ws:
            with pytest.raises(WebSocketDisconnect):
                ws.receive_text()
        # The socket's end closed the echo session.
        assert client.delete(f"/sessions/{dialog}").status_code == 204

        m = metrics_of(client)
        assert value(m, "agentgym_sessions_opened_total") == 2 and value(m, "agentgym_sessions_live") == 0
        assert value(m, "agentgym_sessions_closed_total", reason="closed") == 1
        assert value(m, "agentgym_sessions_closed_total", reason="disconnect") == 1
        assert value(m, "agentgym_resets_total", transport="http") == 2
        assert value(m, "agentgym_resets_total", transport="ws") == 1
        assert value(m, "agentgym_steps_total", transport="http") == len(actions)
        assert value(m, "agentgym_steps_total", transport="ws") == 3
        assert value(m, "agentgym_step_seconds_count") == len(actions) + 3
        assert value(m, "agentgym_step_seconds_bucket", le="+Inf") == len(actions) + 3
        assert 0 < value(m, "agentgym_step_seconds_sum") < 60
        for code in STEP_ERROR_CODES:
            assert value(m, "agentgym_step_errors_total", code=code) == errors.count(code), code
        assert {dict(k)["code"]: v for k, v in m["agentgym_errors_total"].items()} == {
            "too_many_sessions": 1, "unknown_session": 2, "invalid_json": 2, "body_too_large": 1, "reset_needed": 1}


def test_each_app_counts_in_a_registry_of_its_own() -> None:
    with echo_registered(), TestClient(create_app(env_ids=[ECHO_ID])) as one, \
            TestClient(create_app(env_ids=[ECHO_ID])) as two:
        sid = one.post("/sessions", json={"env_id": ECHO_ID}).json()["session_id"]
        one.post(f"/sessions/{sid}/reset", json={})
        one.post(f"/sessions/{sid}/step", json={"action": "a"})
        assert value(metrics_of(one), "agentgym_steps_total", transport="http") == 1
        assert value(metrics_of(two), "agentgym_steps_total", transport="http") == 0
        assert value(metrics_of(two), "agentgym_sessions_opened_total") == 0


def test_label_sets_stay_bounded_under_garbage() -> None:
    rng = random.Random(18)

    def junk(alphabet: str = string.printable) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))

    def path_junk() -> str:
        return junk(string.ascii_letters + string.digits + "-_.~%")

    with garbage_registered(), TestClient(create_app(env_ids=[GARBAGE_ID]), raise_server_exceptions=False) as c:
        sid = c.post("/sessions", json={"env_id": GARBAGE_ID}).json()["session_id"]
        c.post(f"/sessions/{sid}/reset", json={})
        steps = 0
        for i in range(60):
            # The env's own error lists: unknown strings, our codes in other cases, numbers, objects.
            errors: Any = [junk(), "parse_error", 7, None, {"code": junk()}, [junk()], ErrorCode.BLOCKED.value]
            payload = errors if i % 3 else {"not": "a list"}
            assert c.post(f"/sessions/{sid}/step", json={"action": json.dumps(payload)}).status_code == 200
            steps += 1
            # Requests the server refuses, with the client's strings everywhere they could go.
            c.post(f"/sessions/{path_junk()}/step", json={"action": junk()})
            c.post("/sessions", json={"env_id": junk(), "kwargs": {junk(): junk()}})
            c.post("/sessions", content=junk().encode())
            c.request(rng.choice(["PUT", "PATCH", "GET"]), f"/{path_junk()}")
        m = metrics_of(c)
    codes = {dict(k)["code"] for k in m["agentgym_step_errors_total"]}
    assert codes == set(STEP_ERROR_CODES)
    assert value(m, "agentgym_step_errors_total", code="BLOCKED") == 2 * steps // 3
    assert value(m, "agentgym_step_errors_total", code="other") == 6 * (2 * steps // 3)
    assert value(m, "agentgym_steps_total", transport="http") == steps
    refused = {dict(k)["code"] for k in m["agentgym_errors_total"]}
    assert refused <= {"unknown_session", "unknown_env", "invalid_env_args", "invalid_json", "invalid_request",
                       "not_found", "method_not_allowed", "bad_request"}, refused


class _FakeStore:
    """What the sessions collector reads of a `SessionStore`."""

    live, opened, closed_by = 0, 0, {}

    class config:
        max_sessions = 1


def test_server_error_codes_past_the_cap_or_not_identifiers_count_as_other() -> None:
    from agentgym.server.monitoring import _MAX_ERROR_CODES

    metrics = ServerMetrics(_FakeStore())  # type: ignore[arg-type]
    for i in range(3 * _MAX_ERROR_CODES):
        metrics.error(f"code_{i}")
    for odd in ("Not An Identifier", "x" * 100, "semi;colon", "new\nline"):
        metrics.error(odd)
    m = read_metrics(metrics.exposition().decode())
    labels = {dict(k)["code"]: v for k, v in m["agentgym_errors_total"].items()}
    assert len(labels) <= _MAX_ERROR_CODES + 1 and "other" in labels
    assert len(metrics._errors) <= _MAX_ERROR_CODES  # nor does what it keeps per code grow without bound
    assert all(label == "other" or label.startswith("code_") for label in labels)
    assert sum(labels.values()) == 3 * _MAX_ERROR_CODES + 4


def test_the_connection_guards_drops_are_reported_over_the_wire() -> None:
    with echo_registered(), running((ECHO_ID,), header_timeout_s=0.3) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as slow:
            slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # and never the end of its headers
            deadline = time.monotonic() + 10
            while server.guard.dropped.get("header_timeout", 0) < 1:
                assert time.monotonic() < deadline, "the guard never timed the connection out"
                time.sleep(0.05)
        with httpx.Client(base_url=server.url, timeout=10) as client:
            sid = client.post("/sessions", json={"env_id": ECHO_ID}).json()["session_id"]
            client.post(f"/sessions/{sid}/reset", json={})
            m = read_metrics(client.get("/metrics").text)
    assert value(m, "agentgym_connections_dropped_total", reason="header_timeout") == 1
    assert value(m, "agentgym_connections_dropped_total", reason="refused") == 0
    assert value(m, "agentgym_connections_open") >= 1 and value(m, "agentgym_connections_max") > 0
    assert value(m, "agentgym_sessions_live") == 1 and value(m, "agentgym_resets_total", transport="http") == 1


def test_an_idle_session_reaped_is_counted_as_idle() -> None:
    with echo_registered(), running((ECHO_ID,), idle_timeout_s=0.2) as server:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            client.post("/sessions", json={"env_id": ECHO_ID})
            deadline = time.monotonic() + 10
            while client.get("/health").json()["sessions"]:
                assert time.monotonic() < deadline, "the reaper never closed the idle session"
                time.sleep(0.05)
            m = read_metrics(client.get("/metrics").text)
    assert value(m, "agentgym_sessions_closed_total", reason="idle") == 1

