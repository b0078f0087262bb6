"""`RemoteEnv` over a real server on loopback: episodes byte-identical to in process (S1), the
Gymnasium contract, `gym.make('AgentRL/Remote-v0')`, and errors raised as in process."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env
from server_support import ECHO_ID, canonical, echo_registered, health, play_canonical, remote_registered, running

from agentgym.core.protocol import MAX_ACTION_BYTES
from agentgym.core.spaces import UnicodeText
from agentgym.server.app import default_env_ids
from agentgym.server.client import RemoteEnv, RemoteEnvError, ServerBusy

DIALOG = "AgentRL/Dialog-v0"


@pytest.fixture(scope="module")
def server() -> Any:
    with running(max_sessions=32) as s:
        yield s


@pytest.mark.parametrize("env_calls", ["thread", "inline"])
def test_s1_sixteen_concurrent_sessions_equal_their_in_process_runs(env_calls: str) -> None:
    with running(max_sessions=32, env_calls=env_calls) as server:
        _sixteen_sessions(server, env_calls)


def _sixteen_sessions(server: Any, env_calls: str) -> None:
    ids = default_env_ids()
    jobs = [{"env_id": ids[i % len(ids)], "seed": 1000 + i, "transport": ("http", "ws")[i % 2],
             "noise": "tool_failure=0.3,typos=0.2" if i % 4 < 2 else None,
             "kwargs": {"difficulty": ("easy", "medium", "hard")[i % 3]}} for i in range(16)]
    barrier = threading.Barrier(16)

    def remote(job: dict[str, Any]) -> list[list[str]]:
        env = RemoteEnv(server.url, job["env_id"], noise=job["noise"], transport=job["transport"], **job["kwargs"])
        try:
            barrier.wait(30)  # all 16 sessions are open at once, and their steps interleave
            return [play_canonical(env, job["seed"] + 100 * k, step_hook=_yield) for k in range(2)]
        finally:
            env.close()

    def local(job: dict[str, Any]) -> list[list[str]]:
        extra = {"noise": job["noise"]} if job["noise"] else {}
        env = gym.make(job["env_id"], **job["kwargs"], **extra)
        try:
            return [play_canonical(env, job["seed"] + 100 * k) for k in range(2)]
        finally:
            env.close()

    with ThreadPoolExecutor(16) as pool:
        remote_runs = list(pool.map(remote, jobs))
    local_runs = [local(job) for job in jobs]
    identical = sum(there == here for there, here in zip(remote_runs, local_runs, strict=True))
    steps = sum(len(e) for run in remote_runs for e in run)
    print(f"\nS1 ({env_calls}): {identical}/16 sessions identical to in process ({steps} resets and steps compared)")
    assert identical == 16
    assert health(server.url)["sessions"] == 0


def _yield() -> None:
    threading.Event().wait(0)  # hand the GIL around so that sessions interleave step by step


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_remote_env_passes_gymnasiums_checker(server: Any, transport: str) -> None:
    env = RemoteEnv(server.url, DIALOG, transport=transport)
    try:
        assert env.observation_space == UnicodeText(env.observation_space.max_length)
        assert isinstance(env.action_space, UnicodeText)
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_gym_make_remote(server: Any) -> None:
    with remote_registered() as remote_id:
        env = gym.make(remote_id, url=server.url, env_id=DIALOG, difficulty="easy")
        try:
            assert env.spec is not None and env.spec.id == remote_id
            assert env.spec.kwargs["env_id"] == DIALOG
            local = gym.make(DIALOG, difficulty="easy")
            assert play_canonical(env, 5) == play_canonical(local, 5)
        finally:
            env.close()


def test_errors_are_raised_as_in_process(server: Any) -> None:
    with echo_registered(length=1), running((ECHO_ID,), max_sessions=1) as small:
        env = RemoteEnv(small.url, ECHO_ID, transport="ws")
        with pytest.raises(ServerBusy) as busy:
            RemoteEnv(small.url, ECHO_ID)
        assert busy.value.status == 429 and busy.value.retry_after_s >= 1
        with pytest.raises(ResetNeeded):
            env.step("before reset")
        env.reset(seed=0)
        env.step("a")
        with pytest.raises(ResetNeeded):
            env.step("after the end")
        with pytest.raises(ValueError, match="invalid_reset"):
            env.reset(options={"x": 1})
        env.close()
        env.close()  # twice is fine
        with pytest.raises(RemoteEnvError, match="closed"):
            env.step("a")
        assert health(small.url)["sessions"] == 0
    with pytest.raises(RemoteEnvError) as unknown:
        RemoteEnv(server.url, "AgentRL/Nope-v0")
    assert unknown.value.status == 404 and unknown.value.code == "unknown_env"
    with pytest.raises(ValueError, match="invalid_env_args"):
        RemoteEnv(server.url, DIALOG, no_such_kwarg=1)
    with pytest.raises(ValueError, match="transport"):
        RemoteEnv(server.url, DIALOG, transport="pigeon")


def test_a_reaped_session_is_a_clear_error() -> None:
    with running(idle_timeout_s=0.2) as s:
        for transport in ("http", "ws"):
            env = RemoteEnv(s.url, DIALOG, transport=transport)
            env.reset(seed=1)
            threading.Event().wait(0.8)  # the reaper looks every 50 ms at this idle timeout
            with pytest.raises(RemoteEnvError) as gone:
                env.step("hello")
            assert gone.value.code in ("unknown_session", "connection_closed")
            env.close()


def test_keep_alive_dropped_by_the_server_is_reopened() -> None:
    with running() as s:
        s._server.config.timeout_keep_alive = 0.2  # uvicorn closes idle connections after this long
        env = RemoteEnv(s.url, DIALOG)
        env.reset(seed=1)
        first = env._http._conn
        threading.Event().wait(0.6)
        env.step("hello")  # the client notices the dropped connection and opens a new one
        assert env._http._conn is not first
        env.close()
        assert health(s.url)["sessions"] == 0


def test_unicode_and_surrogates_travel_exactly(server: Any) -> None:
    with echo_registered(), running((ECHO_ID,)) as s:
        action = "caf\u00e9 \U0001f600 \ud800 \x00 \u2028 \"quoted\" \\"
        for transport in ("http", "ws"):
            env = RemoteEnv(s.url, ECHO_ID, transport=transport)
            env.reset(seed=0)
            assert env.step(action)[0] == action
            env.close()


def test_envs_made_at_once_share_one_loopback_server() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with remote_registered(), ThreadPoolExecutor(8) as pool:
        envs = list(pool.map(lambda _: RemoteEnv(), range(8)))
        try:
            assert len({env.url for env in envs}) == 1
        finally:
            for env in envs:
                env.close()


def _call(arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": arguments}}]}


def _deep(n: int) -> Any:
    value: Any = []
    for _ in range(n):
        value = [value]
    return value


#: Turns that are errors in process. The first group JSON carries exactly (the same observation
#: over the wire); the second it cannot carry as it is (a stand-in with the same error code).
_EXACT = {"nan": _call({"q": float("nan")}), "inf": _call({"q": float("-inf")}), "big_int": _call({"q": 10**400}),
          "over_cap": {"role": "assistant", "content": "x" * (MAX_ACTION_BYTES + 9)},
          "bad_arguments": _call("{not json"), "no_role": {"content": "hi"}}
_SAME_CODE = {"set": _call({"q": {1, 2}}), "bytes": _call({"q": b"x"}), "tuple": _call({"q": (1, 2)}),
              "int_key": _call({1: 2}), "deep": _call({"q": _deep(5000)}), "int": 123, "none": None, "list": ["a"]}


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_hostile_non_string_actions_never_raise_and_fail_as_in_process(server: Any, transport: str) -> None:
    """docs/RELIABILITY.md E15 over the wire: what JSON cannot carry (sets, bytes, tuples, deep
    values, non-dict actions) is a stand-in failing with the in-process error code, never a
    client-side raise; what it carries gives the very same observation."""
    remote, local = RemoteEnv(server.url, DIALOG, transport=transport), gym.make(DIALOG)
    for name, action in {**_EXACT, **_SAME_CODE}.items():
        remote.reset(seed=1)
        local.reset(seed=1)
        want, got = local.step(action), remote.step(action)
        if name in _EXACT:
            assert canonical(*got) == canonical(*want), name
        else:
            assert got[4]["errors"] == want[4]["errors"] and got[4]["errors"], name
            assert got[1:4] == want[1:4], name
    remote.close()
