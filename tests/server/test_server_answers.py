"""The server's cheaper paths say exactly what the plain ones said: answers encoded byte for byte
as ``json.dumps`` would (`agentgym.server.wire`, `agentgym.server.answers`), the WebSocket lane
serving what the router serves (`agentgym.server.ws_lane`), and a protocol adopted in place
metering as one built for it (`agentgym.server.ws_limits`)."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from fastapi import FastAPI
from starlette.testclient import TestClient
from websockets.server import ServerProtocol

import agentgym
from agentgym.server import answers
from agentgym.server.answers import answer_bytes
from agentgym.server.app import create_app
from agentgym.server.wire import _plain, json_bytes, reset_payload, step_payload
from agentgym.server.ws_limits import MeteredProtocol

DIALOG = "AgentRL/Dialog-v0"


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), default=_plain).encode("ascii")


_VALUES = ["x", "é\ud800\u2028", 1, 10**30, 1.5, float("nan"), float("-inf"), -0.0, True, None, [], {}, (1, "a"),
           {"a": [1, {"b": "ü"}]}, {1: 2, 2.5: 3, False: 4, None: 5}, {"n": np.int64(3), "f": np.float32(1.5)},
           {"a": np.arange(3)}]


@pytest.mark.parametrize("value", _VALUES, ids=range(len(_VALUES)))
def test_json_bytes_is_json_dumps(value: Any) -> None:
    assert json_bytes(value) == _dumps(value)


def test_json_bytes_refuses_what_json_dumps_refuses() -> None:
    looped: list[Any] = []
    looped.append(looped)
    for bad in ({"x": object()}, {(1, 2): 3}, looped):
        with pytest.raises((TypeError, ValueError)) as ours:
            json_bytes(bad)
        with pytest.raises((TypeError, ValueError)) as theirs:
            _dumps(bad)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


@pytest.mark.parametrize("env_id", sorted(agentgym.ENV_IDS))
def test_reset_and_step_answers_are_json_dumps(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        for seed in range(3):  # the second and third resets find their tools kept
            obs, info = env.reset(seed=seed)
            answer = reset_payload(obs, info)
            assert answer_bytes(answer) == _dumps(answer)
            stepped = step_payload(*env.step("Hello, how can I help?"))
            assert answer_bytes(stepped) == _dumps(stepped)
    finally:
        env.close()


def test_kept_tools_never_stand_for_tools_of_other_types() -> None:
    # Equal in Python, not in JSON: each gets its own text.
    for tools in ([{"default": 1}], [{"default": 1.0}], [{"default": True}], [{"default": 1}]):
        answer = {"obs": "o", "info": {"turn": 0, "tools": tools, "seed": 3}}
        assert answer_bytes(answer) == _dumps(answer)


def test_answers_the_memo_does_not_fit_are_encoded_as_they_come() -> None:
    odd = [{"obs": "o", "info": {"tools": [{"n": np.int64(2)}]}},  # not marshal-able
           {"obs": "o", "info": {"tools": [], 3: "int key"}},
           {"obs": "o", "info": {"tools": ({"a": 1},)}},
           {"obs": "o", "info": {"messages": []}}]
    for answer in odd:
        assert answer_bytes(answer) == _dumps(answer)
    assert answer_bytes(b'{"kept":1}') == b'{"kept":1}'


def test_the_memo_stays_bounded() -> None:
    for n in range(answers.MAX_KEPT + 10):
        answer_bytes({"obs": "o", "info": {"tools": [{"n": n}]}})
    assert len(answers._kept) <= answers.MAX_KEPT


# ------------------------------------------------------------------ the WebSocket lane
def _episode(client: TestClient, path: str, opens: bool) -> list[Any]:
    said = []
    with client.websocket_connect(path) as ws:
        if opens:
            ws.send_text(json.dumps({"op": "open", "env_id": DIALOG}))
            opened = json.loads(ws.receive_text())
            said.append({k: v for k, v in opened.items() if k != "session_id"})
        for message in ({"op": "reset", "seed": 7}, {"op": "step", "action": "Hello"}, {"op": "bogus"}):
            ws.send_text(json.dumps(message))
            said.append(ws.receive_text())
    return said


def test_the_lane_and_the_router_answer_alike() -> None:
    direct = create_app(env_ids=[DIALOG])
    mounted = FastAPI()  # under a prefix: the router serves the socket, not the lane
    mounted.mount("/prefix", create_app(env_ids=[DIALOG]))
    with TestClient(direct) as a, TestClient(mounted) as b:
        assert _episode(a, "/ws", True) == _episode(b, "/prefix/ws", True)
        session = a.post("/sessions", json={"env_id": DIALOG}).json()["session_id"]
        other = b.post("/prefix/sessions", json={"env_id": DIALOG}).json()["session_id"]
        assert _episode(a, f"/sessions/{session}/ws", False) == _episode(b, f"/prefix/sessions/{other}/ws", False)
        with a.websocket_connect("/sessions/no-such-session/ws") as ws:
            with pytest.raises(Exception) as closed:
                ws.receive_text()
        assert getattr(closed.value, "code", None) == 4404


# ------------------------------------------------------------------ an adopted protocol
def test_an_adopted_protocol_meters_as_a_built_one() -> None:
    # What it parses under the limits is test_server_ws_frames' (the server's protocols are adopted).
    floods: list[str] = []
    adopted = MeteredProtocol.adopt(ServerProtocol(max_size=1 << 20), on_flood=floods.append)
    assert isinstance(adopted, MeteredProtocol) and adopted._tokens > 0
    with pytest.raises(TypeError):
        MeteredProtocol.adopt(adopted)


# ------------------------------------------------------------------ open and reset in one exchange
def test_an_open_with_a_reset_answers_as_the_two_exchanges() -> None:
    with TestClient(create_app(env_ids=[DIALOG])) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"op": "open", "env_id": DIALOG}))
            opened = json.loads(ws.receive_text())
            ws.send_text(json.dumps({"op": "reset", "seed": 7}))
            reset = json.loads(ws.receive_text())
            ws.send_text(json.dumps({"op": "step", "action": "Hello"}))
            stepped = ws.receive_text()
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"op": "open", "env_id": DIALOG, "reset": {"seed": 7}}))
            folded = json.loads(ws.receive_text())
            ws.send_text(json.dumps({"op": "step", "action": "Hello"}))
            assert ws.receive_text() == stepped
        assert folded.pop("reset") == reset
        assert {**folded, "session_id": ""} == {**opened, "session_id": ""}
        with client.websocket_connect("/ws") as ws:  # an invalid reset: no session at all
            ws.send_text(json.dumps({"op": "open", "env_id": DIALOG, "reset": {"seed": -1}}))
            assert json.loads(ws.receive_text())["error"]["code"] == "invalid_request"
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"op": "open", "env_id": DIALOG, "reset": {"options": {"bogus": 1}}}))
            answer = json.loads(ws.receive_text())
            assert "session_id" in answer and set(answer["reset"]) in ({"error"}, {"obs", "info"})
        assert client.get("/health").json()["sessions"] == 0
