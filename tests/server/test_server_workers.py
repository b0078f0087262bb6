"""Serving at scale (issue 31): several workers on one port, sessions opened on their WebSocket,
never-used sessions reaped within seconds, heavy env calls that never hold steps back, and
nothing left behind (sessions, threads, processes) when clients or the server go away."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import Any

import gymnasium as gym
import httpx
import pytest
from server_support import ECHO_ID, echo_registered, free_port, health, play_canonical, rss_of, running, server_process

from agentgym.server.client import RemoteEnv, ServerBusy
from agentgym.server.monitoring import read_metrics
from agentgym.server.routing import owner_of
from agentgym.server.ws_blocking import BlockingWebSocket

DIALOG = "AgentRL/Dialog-v0"


class _SessionsWs:
    """The first protocol: a session made with POST /sessions, stepped over WS /sessions/{id}/ws
    (a second connection, which may land on another worker than the one holding the session)."""

    def __init__(self, url: str, env_id: str) -> None:
        self.session_id = httpx.post(url + "/sessions", json={"env_id": env_id}).json()["session_id"]
        self.ws = BlockingWebSocket("ws" + url[4:] + f"/sessions/{self.session_id}/ws", max_size=None)

    def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        self.ws.send(json.dumps(message))
        return json.loads(self.ws.recv(timeout=30))

    def reset(self, *, seed: int, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        out = self._call({"op": "reset", "seed": seed, "options": options})
        return out["obs"], out["info"]

    def step(self, action: Any) -> tuple[Any, ...]:
        out = self._call({"op": "step", "action": action})
        return out["obs"], out["reward"], out["terminated"], out["truncated"], out["info"]

    def close(self) -> None:
        self.ws.close()


def test_two_workers_serve_every_transport_byte_identical_to_in_process() -> None:
    """HTTP requests on fresh connections (each may land on either worker and is passed on to
    the owner), sessions opened on their WebSocket, and the first protocol's second connection
    (relayed to the owner): every episode equals its in-process run."""
    with server_process("--workers", "2", "--max-sessions", "64") as (url, _):
        kinds = ("http", "ws", "sessions-ws")
        jobs = [(kinds[i % 3], 300 + i) for i in range(12)]

        def remote(job: tuple[str, int]) -> tuple[str, list[str]]:
            kind, seed = job
            if kind == "sessions-ws":
                env: Any = _SessionsWs(url, DIALOG)
                return env.session_id, _finish(env, seed)
            env = RemoteEnv(url, DIALOG, transport=kind)
            fresh = env._http.close if kind == "http" else None  # a new connection for every request
            try:
                return env.session_id, play_canonical(env, seed, step_hook=fresh)
            finally:
                env.close()

        with ThreadPoolExecutor(6) as pool:
            runs = list(pool.map(remote, jobs))
        local = [play_canonical(gym.make(DIALOG), seed) for _, seed in jobs]
        owners = {owner_of(session_id) for session_id, _ in runs}
        identical = sum(run == here for (_, run), here in zip(runs, local, strict=True))
        print(f"\ntwo workers: {identical}/{len(jobs)} episodes identical to in process; sessions on workers {owners}")
        assert identical == len(jobs)
        assert owners == {0, 1}
        whole = health(url)
        assert whole["workers"] == 2 and whole["sessions"] == 0 and whole["max_sessions"] == 64
        samples = read_metrics(httpx.get(url + "/metrics").text)
        opened = samples["agentgym_sessions_opened_total"]
        assert {dict(k)["worker"] for k in opened} == {"0", "1"} and sum(opened.values()) == len(jobs)


def _finish(env: _SessionsWs, seed: int) -> list[str]:
    try:
        return play_canonical(env, seed)
    finally:
        env.close()


def test_a_session_never_used_is_reaped_within_seconds() -> None:
    """A client that creates a session and dies before it resets or connects: its session goes at
    the unused timeout (here 1 s), not the idle timeout (300 s)."""
    with running(unused_timeout_s=1.0) as server:
        for _ in range(5):
            assert httpx.post(server.url + "/sessions", json={"env_id": DIALOG}).status_code == 201
        used = RemoteEnv(server.url, DIALOG)
        used.reset(seed=1)
        started = time.monotonic()
        while health(server.url)["sessions"] > 1 and time.monotonic() - started < 10:
            time.sleep(0.05)
        took = time.monotonic() - started
        print(f"\n5 sessions never used: reaped {took:.2f} s after they were made (unused timeout 1 s)")
        assert health(server.url)["sessions"] == 1 and took < 3.0
        used.step("hello")  # the used one is kept
        used.close()


def test_sessions_opened_on_their_websocket() -> None:
    with echo_registered(), running((ECHO_ID, DIALOG), max_sessions=2) as server:
        first = RemoteEnv(server.url, ECHO_ID, transport="ws")
        second = RemoteEnv(server.url, ECHO_ID, transport="ws")
        assert first._on_socket and health(server.url)["sessions"] == 2
        with pytest.raises(ServerBusy) as busy:
            RemoteEnv(server.url, ECHO_ID, transport="ws")
        assert busy.value.retry_after_s >= 1
        with pytest.raises(ValueError, match="invalid_env_args"):
            RemoteEnv(server.url, DIALOG, transport="ws", scorer="mine")
        first.close()  # the close op answers once the session is closed
        assert health(server.url)["sessions"] == 1
        ws = BlockingWebSocket("ws" + server.url[4:] + "/ws")
        ws.send(json.dumps({"op": "step", "action": "not opened"}))
        assert json.loads(ws.recv(timeout=10))["error"]["code"] == "invalid_request"
        ws.close()
        second.reset(seed=0)
        second._ws.close()  # the client vanishes: the session goes with its socket
        started = time.monotonic()
        while health(server.url)["sessions"] and time.monotonic() - started < 5:
            time.sleep(0.02)
        assert health(server.url)["sessions"] == 0


def test_resets_never_hold_steps_back() -> None:
    """40 resets of 20 ms each arrive at once (0.8 s of work on the loop) while one client steps:
    each step waits for at most about one reset, since resets run one per pass of the loop."""
    heavy = "ServerTest/HeavyReset-v0"
    with echo_registered(length=10**6), echo_registered(heavy, reset_busy_s=0.02, length=10**6), \
            running((ECHO_ID, heavy), env_calls="inline", max_sessions=64) as server:
        stepper = RemoteEnv(server.url, ECHO_ID, transport="ws")
        stepper.reset(seed=0)
        openers = [RemoteEnv(server.url, heavy, transport="ws") for _ in range(40)]
        go = threading.Barrier(41)
        latencies: list[float] = []

        def reset(env: RemoteEnv) -> None:
            go.wait(10)
            env.reset(seed=0)

        with ThreadPoolExecutor(40) as pool:
            futures = [pool.submit(reset, env) for env in openers]
            go.wait(10)
            while not all(f.done() for f in futures):
                t = time.perf_counter()
                stepper.step("a")  # (its own reset would wait its turn behind the 40)
                latencies.append(time.perf_counter() - t)
            for f in futures:
                f.result()
        worst = max(latencies)
        print(f"\n40 resets of 20 ms at once: {len(latencies)} steps meanwhile, the slowest {1e3 * worst:.0f} ms")
        assert len(latencies) >= 5 and worst < 0.3  # without the lane a step waits for all 40 (0.8 s)
        for env in [stepper, *openers]:
            env.close()


@pytest.fixture(scope="module")
def one_worker() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The module's one-worker server (inline env calls, the default; never-used sessions reaped
    after 1 s), for the tests of what sessions leave behind in a worker: each test counts from the
    threads and resident size it finds, and leaves no session open."""
    with server_process("--workers", "1", "--env-calls", "inline", "--unused-timeout-s", "1") as running_server:
        yield running_server


def test_idle_sessions_cost_no_thread_and_bounded_memory(one_worker: tuple[str, subprocess.Popen[bytes]]) -> None:
    """200 idle sessions (opened on their WebSocket and reset) in a worker: no thread of their own,
    and a bounded resident size each."""
    url, proc = one_worker

    async def open_sessions(n: int, sockets: list[Any]) -> None:
        import websockets

        for seed in range(n):
            ws = await websockets.connect("ws" + url[4:] + "/ws", compression=None, ping_interval=None)
            sockets.append(ws)
            await ws.send(json.dumps({"op": "open", "env_id": DIALOG}))
            await ws.recv()
            await ws.send(json.dumps({"op": "reset", "seed": seed}))
            await ws.recv()

    async def measure() -> tuple[int, int, float]:
        sockets: list[Any] = []
        try:
            await open_sessions(20, sockets)  # warm: imports, first envs, lexicons
            await asyncio.sleep(0.5)
            threads, before = len(os.listdir(f"/proc/{proc.pid}/task")), rss_of(proc.pid)
            await open_sessions(200, sockets)
            await asyncio.sleep(0.5)
            assert health(url)["sessions"] == 220
            return threads, len(os.listdir(f"/proc/{proc.pid}/task")), (rss_of(proc.pid) - before) / 200
        finally:
            await asyncio.gather(*(ws.close() for ws in sockets))

    threads, held, per_session = asyncio.run(measure())
    print(f"\n200 idle sessions: {per_session / 1024:.0f} KiB each, threads {threads} -> {held}")
    assert held == threads and per_session < 200 * 1024


@pytest.mark.parametrize("env_calls", ["inline", "thread"])
def test_vanished_clients_leave_no_session_or_thread(env_calls: str,
                                                     one_worker: tuple[str, subprocess.Popen[bytes]]) -> None:
    """Clients that drop their sockets mid-episode (and some that never came back after creating a
    session): every session is closed and every thread ends."""
    server = nullcontext(one_worker) if env_calls == "inline" else \
        server_process("--workers", "1", "--env-calls", env_calls, "--unused-timeout-s", "1")
    with server as (url, proc):
        RemoteEnv(url, DIALOG).close()  # the process's own threads started (inline: the step watchdog)
        threads = len(os.listdir(f"/proc/{proc.pid}/task"))
        envs = [RemoteEnv(url, DIALOG, transport="ws") for _ in range(10)]
        for seed, env in enumerate(envs):
            env.reset(seed=seed)
            env.step("hello")
        for _ in range(5):
            httpx.post(url + "/sessions", json={"env_id": DIALOG})
        for env in envs:
            env._ws._sock.close()  # gone without a word
        started = time.monotonic()
        while (health(url)["sessions"] or len(os.listdir(f"/proc/{proc.pid}/task")) > threads) \
                and time.monotonic() - started < 10:
            time.sleep(0.05)
        left = len(os.listdir(f"/proc/{proc.pid}/task"))
        print(f"\n{env_calls}: sessions and threads back to {health(url)['sessions']} and {left} "
              f"in {time.monotonic() - started:.2f} s")
        assert health(url)["sessions"] == 0 and left <= threads


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _gone(pids: list[int], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(os.path.exists(f"/proc/{p}") and not _zombie(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_worker_outlives_its_server(how: signal.Signals) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "agentgym.server", "--workers", "2", "--port", str(port),
                             "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from server_support import wait_healthy

        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout_s=60)
        workers = _children(proc.pid)
        assert len(workers) == 2
        env = RemoteEnv(f"http://127.0.0.1:{port}", DIALOG, transport="ws")
        env.reset(seed=0)
        proc.send_signal(how)
        proc.wait(20)
        assert _gone(workers, 15), f"workers {workers} outlived their server ({how.name})"
        env.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ids_registered_by_this_program_only_are_never_given_to_workers() -> None:
    """A worker process imports agentgym, not the program that registered an id: asked for
    workers, such ids are one clear error, before any socket is bound."""
    from agentgym.errors import UserError
    from agentgym.server.config import ServerConfig
    from agentgym.server.serve import _registered_here, serve

    with echo_registered():
        assert _registered_here([ECHO_ID, DIALOG]) == [ECHO_ID]
        with pytest.raises(UserError, match="workers=1"):
            serve(ServerConfig(workers=2), env_ids=[ECHO_ID], port=free_port())


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_worker_that_dies_is_started_again_and_its_sibling_keeps_serving() -> None:
    with server_process("--workers", "2") as (url, proc):
        workers = _children(proc.pid)
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = [p for p in _children(proc.pid) if not _zombie(p)]
            if len(now) == 2 and workers[0] not in now and health(url)["workers"] == 2 \
                    and health(url)["status"] == "ok":
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"worker {workers[0]} was not replaced: children {_children(proc.pid)}")
        for _ in range(4):  # new connections land on either worker
            env = RemoteEnv(url, DIALOG, transport="ws")
            env.reset(seed=0)
            env.step("hello")
            env.close()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_worker_killed_while_it_starts_is_started_again() -> None:
    """A worker killed before it answers (the OOM killer on a loaded machine) is no reason to stop
    the server: it is started again, and the server comes up with every worker."""
    from agentgym.server.config import ServerConfig
    from agentgym.server.workers import Supervisor

    supervisor = Supervisor(ServerConfig(workers=2), host="127.0.0.1", port=free_port(), log_level="warning")
    try:
        supervisor.start()
        first = supervisor.procs[0]
        assert first is not None
        first.kill()  # long before it has imported the server
        first.wait()
        supervisor.wait_ready(timeout_s=60)
        assert supervisor.procs[0] is not first and health(supervisor.url)["status"] == "ok"
    finally:
        supervisor.stop()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="pinning needs Linux and two cores")
def test_one_worker_per_core_pins_each_worker_to_its_own_core() -> None:
    from agentgym.server.config import ServerConfig
    from agentgym.server.workers import Supervisor

    cores = sorted(os.sched_getaffinity(0))
    explicit = Supervisor(ServerConfig(workers=2), host="127.0.0.1", port=0)
    explicit.stop()
    assert [explicit.core_of(i) for i in range(2)] == [None, None]  # a chosen count: any core
    with server_process() as (_, proc):
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            workers = [int(p) for p in f.read().split()]
        pinned = sorted(os.sched_getaffinity(pid) for pid in workers)
    assert pinned == [{core} for core in cores]
