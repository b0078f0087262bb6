"""The openai agent's retries (tenacity): transient faults are tried again, up to ``max_retries``
times with a seeded, capped exponential backoff; client errors are not. Against
`fake_openai_server` on 127.0.0.1, which counts every request it answers."""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest
import tenacity

pytest.importorskip("fastapi")

from fake_openai_server import FakeOpenAIServer, serve  # noqa: E402

from agentgym.agents.openai_agent import OpenAIAgent, OpenAIAgentError, OpenAIConfig, _Backoff, _Retryable  # noqa: E402


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[FakeOpenAIServer, str]]:
    srv = FakeOpenAIServer()
    with serve(srv) as url:
        yield srv, url


@pytest.fixture
def server(served: tuple[FakeOpenAIServer, str]) -> tuple[FakeOpenAIServer, str]:
    srv, url = served
    srv.script.clear()
    srv.requests.clear()
    srv.served.clear()
    return srv, url


def _agent(url: str, **kwargs: Any) -> OpenAIAgent:
    settings: dict[str, Any] = dict(model="fake", base_url=url, backoff_s=0.001, max_backoff_s=0.01, timeout_s=2.0)
    settings.update(kwargs)
    return OpenAIAgent(**settings)


def _act(agent: OpenAIAgent) -> str | dict[str, Any]:
    obs, info = gym.make("AgentRL/Dialog-v0").reset(seed=0)
    agent.reset(obs, info)
    try:
        return agent.act(obs, info)
    finally:
        agent.close()


@pytest.mark.parametrize("failures", [1, 3, 5])
def test_a_server_that_fails_n_times_then_answers_is_tried_n_plus_one_times(
        server: tuple[FakeOpenAIServer, str], failures: int) -> None:
    srv, url = server
    srv.push(*[{"status": 500}] * failures, {"text": "Which date?"})
    agent = _agent(url, max_retries=5)
    assert _act(agent) == "Which date?"
    assert len(srv.requests) == failures + 1
    usage = agent.usage()
    assert usage is not None
    assert usage["failures"] == {"500": failures} and usage["retries"] == failures and usage["requests"] == 1


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
def test_transient_statuses_are_retried(server: tuple[FakeOpenAIServer, str], status: int) -> None:
    srv, url = server
    srv.push({"status": status}, {"text": "ok"})
    assert _act(_agent(url, max_retries=1)) == "ok"
    assert len(srv.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(server: tuple[FakeOpenAIServer, str], status: int) -> None:
    srv, url = server
    srv.push({"status": status}, {"text": "never asked for"})
    agent = _agent(url, max_retries=5)
    with pytest.raises(OpenAIAgentError, match=f"HTTP {status}"):
        _act(agent)
    assert len(srv.requests) == 1
    usage = agent.usage()
    assert usage is not None and usage["retries"] == 0 and usage["failures"] == {}


def test_the_attempts_stop_after_max_retries_plus_one(server: tuple[FakeOpenAIServer, str]) -> None:
    srv, url = server
    srv.push(*[{"status": 503}] * 4, {"text": "too late"})
    agent = _agent(url, max_retries=2)
    with pytest.raises(OpenAIAgentError, match="after 3 tries; last: HTTP 503"):
        _act(agent)
    assert len(srv.requests) == 3
    usage = agent.usage()
    assert usage is not None and usage["failures"] == {"503": 3} and usage["retries"] == 2


def test_max_retries_zero_tries_once(server: tuple[FakeOpenAIServer, str]) -> None:
    srv, url = server
    srv.push({"status": 429, "retry_after": "0"}, {"text": "ok"})
    with pytest.raises(OpenAIAgentError, match="after 1 tries"):
        _act(_agent(url, max_retries=0))
    assert len(srv.requests) == 1


def test_a_refused_connection_is_retried() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = _agent(f"http://127.0.0.1:{port}/v1", max_retries=2)
    with pytest.raises(OpenAIAgentError, match="after 3 tries"):
        _act(agent)
    usage = agent.usage()
    assert usage is not None and usage["failures"] == {"connection": 3}


def test_a_retry_after_is_waited_for_up_to_the_cap(server: tuple[FakeOpenAIServer, str]) -> None:
    srv, url = server
    srv.push({"status": 429, "retry_after": "0.3"}, {"status": 429, "retry_after": "100"}, {"text": "ok"})
    t0 = time.monotonic()
    assert _act(_agent(url, max_retries=3, max_backoff_s=0.4)) == "ok"
    assert 0.3 + 0.4 <= time.monotonic() - t0 < 5, "0.3 s as asked, then 100 s capped at 0.4 s"


# ------------------------------------------------------------------ the backoff itself
def _state(attempt: int, fault: BaseException) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(tenacity.Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    state.set_exception((type(fault), fault, None))
    return state


def test_the_backoff_doubles_with_seeded_jitter_and_is_capped() -> None:
    settings = OpenAIConfig(model="m", backoff_s=1.0, max_backoff_s=30.0, seed=7)
    wait = _Backoff(settings, random.Random(settings.seed))
    fault = _Retryable("500", "HTTP 500")
    waits = [wait(_state(n, fault)) for n in range(1, 8)]
    draws = random.Random(7)
    assert waits == [min(2 ** (n - 1) * (0.5 + draws.random()), 30.0) for n in range(1, 8)]
    assert all(2 ** (n - 1) * 0.5 <= w < 2 ** (n - 1) * 1.5 for n, w in enumerate(waits[:4], start=1))
    assert waits[-1] == 30.0
    again = _Backoff(settings, random.Random(settings.seed))
    assert [again(_state(n, fault)) for n in range(1, 8)] == waits, "the same seed, the same waits"


def test_the_servers_retry_after_replaces_the_backoff_up_to_the_cap() -> None:
    wait = _Backoff(OpenAIConfig(model="m", backoff_s=1.0, max_backoff_s=5.0), random.Random(0))
    assert wait(_state(1, _Retryable("429", "slow down", retry_after=2.5))) == 2.5
    assert wait(_state(1, _Retryable("429", "slow down", retry_after=60.0))) == 5.0
