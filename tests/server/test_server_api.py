"""The env server's HTTP API in process: routes, the error contract, the committed schema, the
body cap at the ASGI level, the WebSocket protocol, the step timeout and per-session locking."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from server_support import ECHO_ID, EchoEnv, echo_registered
from starlette.websockets import WebSocketDisconnect

from agentgym.server.app import create_app, default_env_ids
from agentgym.server.config import ServerConfig

DIALOG = "AgentRL/Dialog-v0"
OPENAPI = Path(__file__).resolve().parents[2] / "agentgym" / "server" / "openapi.json"


@pytest.fixture
def client() -> Any:
    with TestClient(create_app(max_sessions=4), raise_server_exceptions=False) as c:
        yield c


def _session(client: TestClient, env_id: str = DIALOG, **kwargs: Any) -> str:
    r = client.post("/sessions", json={"env_id": env_id, "kwargs": kwargs})
    assert r.status_code == 201, r.text
    return r.json()["session_id"]


def _assert_error(r: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    assert "Traceback" not in r.text and 'File "' not in r.text
    if code is not None:
        assert body["error"]["code"] == code, body
    return body["error"]


def test_openapi_schema_is_committed() -> None:
    committed = json.loads(OPENAPI.read_text())
    assert committed == create_app().openapi(), (
        "agentgym/server/openapi.json is stale; regenerate it with "
        "`python -m agentgym.server --print-openapi > agentgym/server/openapi.json`")


def test_health_and_envs(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "ok", "sessions": 0, "max_sessions": 4, "peak_sessions": 0,
                                         "workers": 1}
    envs = client.get("/envs").json()["envs"]
    assert [e["id"] for e in envs] == list(default_env_ids())
    assert DIALOG in default_env_ids() and not any(i.startswith("AgentRL/Remote") for i in default_env_ids())
    for e in envs:
        assert e["observation_space"]["type"] == e["action_space"]["type"] == "UnicodeText"


def test_session_lifecycle(client: TestClient) -> None:
    sid = _session(client, difficulty="easy")
    assert client.get("/health").json()["sessions"] == 1
    r = client.post(f"/sessions/{sid}/reset", json={"seed": 7})
    assert r.status_code == 200 and set(r.json()) == {"obs", "info"} and r.json()["info"]["seed"] == 7
    r = client.post(f"/sessions/{sid}/step", json={"action": "Hello! What are you looking for?"})
    out = r.json()
    assert r.status_code == 200 and set(out) == {"obs", "reward", "terminated", "truncated", "info"}
    assert type(out["reward"]) is float and type(out["terminated"]) is bool and type(out["truncated"]) is bool
    # An OpenAI assistant message is an action too.
    r = client.post(f"/sessions/{sid}/step", json={"action": {"role": "assistant", "content": "Which area?"}})
    assert r.status_code == 200
    assert client.delete(f"/sessions/{sid}").status_code == 204
    _assert_error(client.post(f"/sessions/{sid}/step", json={"action": "hi"}), 404, "unknown_session")
    _assert_error(client.delete(f"/sessions/{sid}"), 404, "unknown_session")
    assert client.get("/health").json()["sessions"] == 0


def test_reset_body_is_optional(client: TestClient) -> None:
    sid = _session(client)
    assert client.post(f"/sessions/{sid}/reset").status_code == 200
    assert isinstance(client.post(f"/sessions/{sid}/reset", json={}).json()["info"]["seed"], int)


def test_step_after_the_end_is_409(client: TestClient) -> None:
    with echo_registered(length=1):
        c = TestClient(create_app(env_ids=[ECHO_ID]), raise_server_exceptions=False)
        sid = _session(c, ECHO_ID)
        _assert_error(c.post(f"/sessions/{sid}/step", json={"action": "x"}), 409, "reset_needed")  # before reset
        c.post(f"/sessions/{sid}/reset", json={"seed": 1})
        assert c.post(f"/sessions/{sid}/step", json={"action": "x"}).json()["terminated"] is True
        _assert_error(c.post(f"/sessions/{sid}/step", json={"action": "x"}), 409, "reset_needed")
        assert c.post(f"/sessions/{sid}/reset", json={"seed": 1}).status_code == 200


BAD_CREATES = [
    ({"env_id": "AgentRL/Nope-v0"}, 404, "unknown_env"),
    ({"env_id": "AgentRL/Remote-v0"}, 404, "unknown_env"),
    ({"env_id": "AgentRL/Remote-v0", "kwargs": {"url": "http://example.com", "env_id": DIALOG}}, 422,
     "invalid_env_args"),
    ({"env_id": "CartPole-v1"}, 404, "unknown_env"),
    ({"env_id": DIALOG, "kwargs": {"env_entry_point": "os:system"}}, 422, "invalid_env_args"),
    ({"env_id": DIALOG, "kwargs": {"max_episode_steps": "x"}}, 422, "invalid_env_args"),
    ({"env_id": DIALOG, "kwargs": {"no_such_arg": 1}}, 422, "invalid_env_args"),
    ({"env_id": DIALOG, "kwargs": {"difficulty": "impossible"}}, 422, "invalid_env_args"),
    ({"env_id": DIALOG, "noise": "no_such_noise=2"}, 422, "invalid_env_args"),
    ({"env_id": DIALOG, "noise": "typos=0.1", "kwargs": {"noise": "typos=0.1"}}, 422, "invalid_env_args"),
    ({"env_id": 5}, 422, "invalid_request"),
    ({"env_id": DIALOG, "kwargs": []}, 422, "invalid_request"),
    ({"env_id": DIALOG, "extra": 1}, 422, "invalid_request"),
    ({}, 422, "invalid_request"),
    ([], 422, "invalid_request"),
]


@pytest.mark.parametrize(("body", "status", "code"), BAD_CREATES)
def test_bad_creates(client: TestClient, body: Any, status: int, code: str) -> None:
    _assert_error(client.post("/sessions", json=body), status, code)
    assert client.get("/health").json()["sessions"] == 0


BAD_BODIES = [
    (b'{"seed": 1', "invalid_json"),
    (b"\xff\xfe\x00", "invalid_json"),
    (b"[" * 100_000 + b"]" * 100_000, "invalid_json"),
    (b'{"seed": ' + b"9" * 5000 + b"}", "invalid_json"),
    (b'{"seed": "1"}', "invalid_request"),
    (b'{"seed": 1.0}', "invalid_request"),
    (b'{"seed": true}', "invalid_request"),
    (b'{"seed": -1}', "invalid_request"),
    (b'{"seed": 9223372036854775808}', "invalid_request"),
    (b'{"seed": NaN}', "invalid_request"),
    (b'{"seed": 1, "x": 2}', "invalid_request"),
    (b'{"options": []}', "invalid_request"),
    (b"[1, 2]", "invalid_request"),
    (b'{"options": {"no_such_option": 1}}', "invalid_reset"),
    (b'{"options": {"domain": [1]}}', "invalid_reset"),
    (b'{"options": {"trial": -1}}', "invalid_reset"),
]


@pytest.mark.parametrize(("body", "code"), BAD_BODIES, ids=lambda v: v[:24] if isinstance(v, bytes) else v)
def test_bad_reset_bodies(client: TestClient, body: bytes, code: str) -> None:
    sid = _session(client)
    _assert_error(client.post(f"/sessions/{sid}/reset", content=body, headers={"content-type": "application/json"}),
                  422, code)
    assert client.post(f"/sessions/{sid}/reset", json={"seed": 1}).status_code == 200  # the session survives


@pytest.mark.parametrize("body", [b'{"action": 5}', b'{"action": null}', b'{"action": ["a"]}', b'{}',
                                  b'{"action": "a", "more": 1}', b'"a"'])
def test_bad_step_bodies(client: TestClient, body: bytes) -> None:
    sid = _session(client)
    client.post(f"/sessions/{sid}/reset", json={"seed": 1})
    _assert_error(client.post(f"/sessions/{sid}/step", content=body, headers={"content-type": "application/json"}),
                  422, "invalid_request")


@pytest.mark.parametrize("env_calls", ["thread", "inline"])
def test_an_env_bug_is_a_500_without_a_traceback(env_calls: str) -> None:
    with echo_registered(length=100):
        with TestClient(create_app(env_ids=[ECHO_ID], env_calls=env_calls), raise_server_exceptions=False) as c:
            sid = _session(c, ECHO_ID)
            c.post(f"/sessions/{sid}/reset", json={"seed": 0})
            for action in ("crash", "exit"):  # a bug, and an env that calls sys.exit
                err = _assert_error(c.post(f"/sessions/{sid}/step", json={"action": action}), 500, "internal_error")
                assert "KeyError" not in err["message"] and "bug" not in err["message"]
            assert c.post(f"/sessions/{sid}/step", json={"action": "still here"}).json()["obs"] == "still here"
            with c.websocket_connect(f"/sessions/{sid}/ws") as ws:
                ws.send_text(json.dumps({"op": "step", "action": "crash"}))
                assert json.loads(ws.receive_text())["error"]["code"] == "internal_error"
                ws.send_text(json.dumps({"op": "step", "action": "fine"}))
                assert json.loads(ws.receive_text())["obs"] == "fine"


def test_bad_paths_and_methods(client: TestClient) -> None:
    _assert_error(client.post("/sessions/not%20an%20id/step", json={"action": "a"}), 422, "invalid_request")
    _assert_error(client.post("/sessions/" + "a" * 65 + "/step", json={"action": "a"}), 422, "invalid_request")
    _assert_error(client.post("/sessions/abc/step", json={"action": "a"}), 404, "unknown_session")
    _assert_error(client.get("/nowhere"), 404, "not_found")
    _assert_error(client.put("/health"), 405, "method_not_allowed")
    _assert_error(client.post("/sessions", content=b'{"env_id": "x"}', headers={"content-type": "text/plain"}),
                  422, "invalid_request")


def test_session_cap_answers_429_with_retry_after(client: TestClient) -> None:
    for _ in range(4):
        _session(client)
    err = _assert_error(r := client.post("/sessions", json={"env_id": DIALOG}), 429, "too_many_sessions")
    assert int(r.headers["retry-after"]) >= 1 and "cap of 4" in err["message"]
    assert client.get("/health").json() == {"status": "ok", "sessions": 4, "max_sessions": 4, "peak_sessions": 4,
                                         "workers": 1}


def test_unknown_kwargs_free_their_slot(client: TestClient) -> None:
    for _ in range(10):
        _assert_error(client.post("/sessions", json={"env_id": DIALOG, "kwargs": {"bad": 1}}), 422)
    for _ in range(4):
        _session(client)


# ------------------------------------------------------------------------------------- body cap
async def _asgi(app: Any, chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes, int]:
    """Drive the app with a body in `chunks`; return (status, body, chunks the app pulled)."""
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if pulled < len(chunks):
            pulled += 1
            return {"type": "http.request", "body": chunks[pulled - 1], "more_body": pulled < len(chunks)}
        await asyncio.sleep(3600)  # a client that never says more
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/sessions", "raw_path": b"/sessions", "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"), *headers], "client": ("127.0.0.1", 1),
             "server": ("127.0.0.1", 80)}
    await asyncio.wait_for(app(scope, receive, send), 10)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body, pulled


def test_body_cap_counts_streamed_bytes() -> None:
    app = create_app(max_body_bytes=4096)
    # Chunked (no Content-Length): 100 chunks of 1 KiB; the answer comes after the 5th.
    status, body, pulled = asyncio.run(_asgi(app, [b" " * 1024] * 100, [(b"transfer-encoding", b"chunked")]))
    assert status == 413 and json.loads(body)["error"]["code"] == "body_too_large" and pulled == 5
    # A Content-Length that lies low does not help.
    status, _, pulled = asyncio.run(_asgi(app, [b" " * 1024] * 100, [(b"content-length", b"10")]))
    assert status == 413 and pulled == 5
    # A declared length over the cap is refused before a byte is read.
    status, _, pulled = asyncio.run(_asgi(app, [b" " * 1024] * 100, [(b"content-length", b"999999")]))
    assert status == 413 and pulled == 0
    # Within the cap, in pieces, the body reaches the app whole.
    body_bytes = json.dumps({"env_id": DIALOG}).encode()
    pieces = [body_bytes[i:i + 3] for i in range(0, len(body_bytes), 3)]
    status, body, _ = asyncio.run(_asgi(app, pieces, []))
    assert status == 201, body


def test_body_cap_through_the_client(client: TestClient) -> None:
    _assert_error(client.post("/sessions", content=b" " * (ServerConfig().max_body_bytes + 1),
                              headers={"content-type": "application/json"}), 413, "body_too_large")


# ------------------------------------------------------------------------------------- WebSocket
def test_websocket_steps_a_session(client: TestClient) -> None:
    sid = _session(client)
    with client.websocket_connect(f"/sessions/{sid}/ws") as ws:
        ws.send_text(json.dumps({"op": "reset", "seed": 3}))
        reset = json.loads(ws.receive_text())
        assert reset["info"]["seed"] == 3
        ws.send_text(json.dumps({"op": "step", "action": "Hi, what do you need?"}))
        assert set(json.loads(ws.receive_text())) == {"obs", "reward", "terminated", "truncated", "info"}
        for bad, code in [("{", "invalid_json"), ('{"op": "jump"}', "invalid_request"),
                          ('{"op": "step", "action": 1}', "invalid_request"), ("[]", "invalid_request"),
                          ('{"op": "reset", "seed": "1"}', "invalid_request"),
                          ('{"op": "reset", "options": {"bad": 1}}', "invalid_reset")]:
            ws.send_text(bad)
            assert json.loads(ws.receive_text())["error"]["code"] == code, bad
        ws.send_bytes(json.dumps({"op": "reset", "seed": 3}).encode())  # binary frames work too
        assert json.loads(ws.receive_text()) == reset
        # The same session over HTTP meanwhile: the lock serialises, the state is shared.
        assert client.post(f"/sessions/{sid}/reset", json={"seed": 3}).json() == reset
    # A disconnect closes the session.
    deadline = time.monotonic() + 5
    while client.get("/health").json()["sessions"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client.get("/health").json()["sessions"] == 0
    _assert_error(client.post(f"/sessions/{sid}/reset", json={}), 404, "unknown_session")


def test_websocket_refusals(client: TestClient) -> None:
    with client.websocket_connect("/sessions/nope/ws") as ws:
        with pytest.raises(WebSocketDisconnect) as exc:
            ws.receive_text()
        assert exc.value.code == 4404
    sid = _session(client)
    with client.websocket_connect(f"/sessions/{sid}/ws"):
        with client.websocket_connect(f"/sessions/{sid}/ws") as second:
            with pytest.raises(WebSocketDisconnect) as exc:
                second.receive_text()
            assert exc.value.code == 4409


def test_websocket_message_cap() -> None:
    with TestClient(create_app(max_body_bytes=4096)) as c:
        sid = _session(c)
        with c.websocket_connect(f"/sessions/{sid}/ws") as ws:
            ws.send_text(json.dumps({"op": "step", "action": "x" * 5000}))
            assert json.loads(ws.receive_text())["error"]["code"] == "body_too_large"
            with pytest.raises(WebSocketDisconnect) as exc:
                ws.receive_text()
            assert exc.value.code == 1009


def test_delete_closes_the_websocket(client: TestClient) -> None:
    sid = _session(client)
    with client.websocket_connect(f"/sessions/{sid}/ws") as ws:
        ws.send_text(json.dumps({"op": "reset", "seed": 1}))
        ws.receive_text()
        assert client.delete(f"/sessions/{sid}").status_code == 204
        with pytest.raises(WebSocketDisconnect) as exc:
            ws.receive_text()
        assert exc.value.code == 4410


# ------------------------------------------------------------------------------------- timeouts and locking
def test_step_timeout_closes_the_session_and_frees_its_slot() -> None:
    with echo_registered(step_delay_s=0.6):
        with TestClient(create_app(env_ids=[ECHO_ID], max_sessions=1, step_timeout_s=0.2, env_calls="thread"),
                        raise_server_exceptions=False) as c:
            sid = _session(c, ECHO_ID)
            c.post(f"/sessions/{sid}/reset", json={"seed": 0})
            t = time.monotonic()
            _assert_error(c.post(f"/sessions/{sid}/step", json={"action": "a"}), 504, "step_timeout")
            assert time.monotonic() - t < 0.5
            _assert_error(c.post(f"/sessions/{sid}/step", json={"action": "a"}), 404, "unknown_session")
            # The timed-out step still runs in its thread and holds the only slot until it ends.
            _assert_error(c.post("/sessions", json={"env_id": ECHO_ID}), 429, "too_many_sessions")
            time.sleep(0.6)
            assert c.post("/sessions", json={"env_id": ECHO_ID}).status_code == 201


def test_inline_step_timeout_interrupts_a_runaway_step() -> None:
    busy = "ServerTest/BusyEcho-v0"
    with echo_registered(), echo_registered(busy, busy_s=3600.0):  # spins for an hour unless interrupted
        with TestClient(create_app(env_ids=[ECHO_ID, busy], max_sessions=1, step_timeout_s=0.2, env_calls="inline"),
                        raise_server_exceptions=False) as c:
            sid = _session(c, busy)
            c.post(f"/sessions/{sid}/reset", json={"seed": 0})
            t = time.monotonic()
            _assert_error(c.post(f"/sessions/{sid}/step", json={"action": "a"}), 504, "step_timeout")
            assert time.monotonic() - t < 2.0
            _assert_error(c.post(f"/sessions/{sid}/step", json={"action": "a"}), 404, "unknown_session")
            # The step was unwound, so its slot is free at once, and the server carries on.
            sid = _session(c, ECHO_ID)
            c.post(f"/sessions/{sid}/reset", json={"seed": 0})
            assert c.post(f"/sessions/{sid}/step", json={"action": "b"}).json()["obs"] == "b"


@pytest.mark.parametrize("env_calls", ["thread", "inline"])
def test_slow_make_times_out(env_calls: str) -> None:
    slow = "ServerTest/SlowEcho-v0"
    with echo_registered(), echo_registered(slow, make_delay_s=0.5):
        with TestClient(create_app(env_ids=[ECHO_ID, slow], max_sessions=1, step_timeout_s=0.2, env_calls=env_calls),
                        raise_server_exceptions=False) as c:
            _assert_error(c.post("/sessions", json={"env_id": slow}), 504, "step_timeout")
            time.sleep(0.5)
            assert c.post("/sessions", json={"env_id": ECHO_ID}).status_code == 201


def test_concurrent_steps_on_one_session_are_serialised() -> None:
    async def run() -> list[int]:
        app = create_app(env_ids=[ECHO_ID])
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            r = await c.post("/sessions", json={"env_id": ECHO_ID})
            sid = r.json()["session_id"]
            await c.post(f"/sessions/{sid}/reset", json={"seed": 0})
            replies = await asyncio.gather(*(c.post(f"/sessions/{sid}/step", json={"action": str(i)})
                                             for i in range(40)))
            return sorted(r.json()["info"]["t"] for r in replies)

    with echo_registered(length=1000, step_delay_s=0.005):
        EchoEnv.max_overlap = 0
        assert asyncio.run(run()) == list(range(1, 41))
        assert EchoEnv.max_overlap == 1


def test_reaper_closes_idle_sessions() -> None:
    with TestClient(create_app(idle_timeout_s=0.3, max_sessions=3)) as c:
        for _ in range(3):
            _session(c)
        keep = _session_after_free(c)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            c.post(f"/sessions/{keep}/reset", json={"seed": 1})  # an active session is never idle
            if c.get("/health").json()["sessions"] == 1:
                break
            time.sleep(0.05)
        assert c.get("/health").json()["sessions"] == 1
        assert c.post(f"/sessions/{keep}/reset", json={"seed": 1}).status_code == 200


def _session_after_free(c: TestClient) -> str:
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        r = c.post("/sessions", json={"env_id": DIALOG})
        if r.status_code == 201:
            return r.json()["session_id"]
        time.sleep(0.05)
    raise AssertionError("no slot freed by the reaper")


def test_config_is_validated() -> None:
    for bad in ({"max_sessions": 0}, {"max_sessions": True}, {"idle_timeout_s": 0}, {"step_timeout_s": float("nan")},
                {"max_body_bytes": 10}, {"env_calls": "fork"}):
        with pytest.raises(ValueError):
            ServerConfig(**bad)
    with pytest.raises(TypeError):
        create_app(max_sesions=3)  # a misspelt limit is an error, never ignored
    with pytest.raises(ValueError):
        create_app(env_ids=["NotRegistered-v0"])
