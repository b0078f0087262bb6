"""S7: the env arguments a client may set are an allow-list with bounds. The env's parts, gym.make's
own parameters, unbounded turn budgets and malformed noise are refused with 422 naming the
field, before a slot is taken or an env is made."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest
from fastapi.testclient import TestClient

from agentgym.server.app import create_app, default_env_ids
from agentgym.server.models import MAX_NOISE_CHARS, MAX_TURNS
from agentgym.server.sessions import CLIENT_KWARGS

DIALOG = "AgentRL/Dialog-v0"

#: (kwargs, the field the refusal must name).
REFUSED: list[tuple[dict[str, Any], str]] = [
    *(({part: "agentgym.envs.dialog.tasks:generate"}, part)
      for part in ("scorer", "task_generator", "user_factory", "toolkit_factory")),
    *(({param: value}, param) for param, value in (
        ("env_entry_point", "os:system"), ("id", "CartPole-v1"), ("max_episode_steps", 10**9),
        ("disable_env_checker", True), ("apply_api_compatibility", True), ("render_fps", 1),
        ("__class__", "x"), ("kwargs", {}))),
    ({"max_turns": 10**9}, "max_turns"),
    ({"max_turns": MAX_TURNS + 1}, "max_turns"),
    ({"max_turns": 0}, "max_turns"),
    ({"max_turns": -5}, "max_turns"),
    ({"max_turns": 1.5}, "max_turns"),
    ({"max_turns": "20"}, "max_turns"),
    ({"max_turns": True}, "max_turns"),
    ({"difficulty": "impossible"}, "difficulty"),
    ({"difficulty": 1}, "difficulty"),
    ({"split": "validation"}, "split"),
    ({"domain": "x" * 65}, "domain"),
    ({"domain": "../../etc"}, "domain"),
    ({"domain": ""}, "domain"),
    ({"render_mode": "human"}, "render_mode"),
    ({"noise": "x" * (MAX_NOISE_CHARS + 1)}, "noise"),
    ({"noise": {"typos": 0.1}}, "noise"),
    ({"noise": ""}, "noise"),
]


@pytest.fixture(scope="module")
def client() -> Any:
    with TestClient(create_app(max_sessions=4), raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize(("kwargs", "field"), REFUSED, ids=[f"{f}={str(k[f])[:20]}" for k, f in REFUSED])
def test_s7_undocumented_or_unbounded_kwargs_are_refused_naming_the_field(client: TestClient, kwargs: dict[str, Any],
                                                                         field: str) -> None:
    r = client.post("/sessions", json={"env_id": DIALOG, "kwargs": kwargs})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_env_args" and field in error["message"], error
    assert any(i["loc"][:3] == ["body", "kwargs", field] for i in error["issues"]), error
    assert client.get("/health").json()["peak_sessions"] == 0  # refused before a slot was taken


@pytest.mark.parametrize("noise", ["no_such_noise=2", "tool_failure=2", "latency=-1", "typos", "light,light"])
def test_s7_a_malformed_noise_spec_is_refused_before_admission(client: TestClient, noise: str) -> None:
    for where in ({"noise": noise}, {"kwargs": {"noise": noise}}):
        r = client.post("/sessions", json={"env_id": DIALOG, **where})
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_env_args", r.text
        assert "noise spec" in r.json()["error"]["message"]
    assert client.get("/health").json()["peak_sessions"] == 0


def test_s7_every_documented_kwarg_within_bounds_is_accepted_and_applied(client: TestClient) -> None:
    kwargs = {"difficulty": "hard", "split": "test", "domain": "coworking", "max_turns": MAX_TURNS,
              "render_mode": "ansi", "noise": "light"}
    r = client.post("/sessions", json={"env_id": DIALOG, "kwargs": kwargs})
    assert r.status_code == 201, r.text
    sid = r.json()["session_id"]
    info = client.post(f"/sessions/{sid}/reset", json={"seed": 3}).json()["info"]
    local = gym.make(DIALOG, **kwargs)
    try:
        assert info == local.reset(seed=3)[1]
        assert info["max_turns"] == MAX_TURNS
    finally:
        local.close()
    assert client.delete(f"/sessions/{sid}").status_code == 204


def test_s7_the_allow_list_is_the_documented_env_arguments() -> None:
    # The env arguments every family documents, less its injectable parts: nothing more.
    documented = {"difficulty", "split", "domain", "max_turns", "render_mode"}
    assert CLIENT_KWARGS == documented


@pytest.mark.parametrize("env_id", default_env_ids())
def test_s7_the_turn_bound_admits_every_tasks_own_budget(env_id: str) -> None:
    env = gym.make(env_id, difficulty="hard")
    try:
        budgets = [env.reset(seed=seed)[1]["max_turns"] for seed in range(40)]
    finally:
        env.close()
    assert max(budgets) <= MAX_TURNS // 2, f"{env_id}: a task draws {max(budgets)} turns; MAX_TURNS is {MAX_TURNS}"
