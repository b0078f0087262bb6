"""Small fakes and helpers shared by the env-server tests (no conftest: basenames stay unique).

The fakes are real `gymnasium.Env`s registered for the length of a test under ``ServerTest/*``
ids, which the conformance suites (``AgentRL/*`` only) never see.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import gymnasium as gym

from agentgym.core.spaces import UnicodeText
from agentgym.server.config import ServerConfig
from agentgym.server.serve import ServerThread

ECHO_ID = "ServerTest/Echo-v0"
REMOTE_ID = "AgentRL/Remote-v0"
#: The line `agentgym/registration.py` is to carry; tests register it themselves until it does.
REMOTE_ENTRY_POINT = "agentgym.server.client:RemoteEnv"


class EchoEnv(gym.Env[str, str]):
    """Echoes each action; ends after `length` steps. Optional real delays in make and step (a
    sleep, or `busy_s` of pure-Python spinning), a reset that spins `reset_busy_s`, bugs on demand (the actions ``crash`` and
    ``exit``), and a probe that records whether two steps ever ran at once on one env."""

    metadata: dict[str, Any] = {"render_modes": []}
    #: The most steps seen running at once on any one EchoEnv (1 if calls are serialised).
    max_overlap = 0
    _guard = threading.Lock()

    def __init__(self, length: int = 5, step_delay_s: float = 0.0, make_delay_s: float = 0.0,
                 busy_s: float = 0.0, reset_busy_s: float = 0.0) -> None:
        time.sleep(make_delay_s)
        self.length = length
        self.step_delay_s = step_delay_s
        self.busy_s = busy_s
        self.reset_busy_s = reset_busy_s
        self.observation_space = UnicodeText(10_000)
        self.action_space = UnicodeText(10_000)
        self._t = 0
        self._active = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"EchoEnv takes no options, got {sorted(options)}")
        _spin(self.reset_busy_s)
        self._t = 0
        return "ready", {"seed": seed, "draw": int(self.np_random.integers(1 << 30))}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        with EchoEnv._guard:
            self._active += 1
            EchoEnv.max_overlap = max(EchoEnv.max_overlap, self._active)
        try:
            if self._t >= self.length:
                raise gym.error.ResetNeeded("the episode has ended")
            if action == "crash":
                raise KeyError("a bug in the env")
            if action == "exit":
                raise SystemExit(3)
            time.sleep(self.step_delay_s)
            _spin(self.busy_s)
            self._t += 1
            done = self._t >= self.length
            return str(action), 1.0 if done else 0.0, done, False, {"t": self._t}
        finally:
            with EchoEnv._guard:
                self._active -= 1


def _spin(seconds: float) -> None:
    """Pure-Python work for `seconds` (a busy env, not a sleep: it holds whatever thread runs it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


@contextmanager
def echo_registered(env_id: str = ECHO_ID, **kwargs: Any) -> Iterator[str]:
    """Register `env_id` as an `EchoEnv` made with `kwargs` for the duration; yield it.

    The kwargs are the operator's (registered), as a client may set only the documented env
    arguments: a test that wants a slow or a short echo registers one.
    """
    gym.register(id=env_id, entry_point=EchoEnv, kwargs=kwargs, disable_env_checker=True)
    try:
        yield env_id
    finally:
        gym.registry.pop(env_id, None)


@contextmanager
def remote_registered() -> Iterator[str]:
    """Make sure `REMOTE_ID` is registered (registration.py may not carry it yet); undo if we did."""
    added = REMOTE_ID not in gym.registry
    if added:
        gym.register(id=REMOTE_ID, entry_point=REMOTE_ENTRY_POINT, disable_env_checker=True)
    try:
        yield REMOTE_ID
    finally:
        if added:
            gym.registry.pop(REMOTE_ID, None)


@contextmanager
def running(env_ids: tuple[str, ...] | None = None, **limits: Any) -> Iterator[ServerThread]:
    """An env server in a thread of this process, with `limits` (`ServerConfig` fields)."""
    server = ServerThread(ServerConfig(**limits), env_ids=env_ids).start()
    try:
        yield server
    finally:
        server.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_process(*args: str, nofile: int | None = None, log: str | None = None,
                   env: dict[str, str] | None = None) -> AbstractContextManager[tuple[str, subprocess.Popen[bytes]]]:
    """``python -m agentgym.server`` in a child process (its own GIL and RSS); yield (url, process).

    Args:
        args: more command-line options.
        nofile: the child's descriptor limit (soft and hard), as a small machine would have.
        log: a file for the child's stderr (default: discarded; a pipe nobody reads would block it).
        env: environment variables to set in the child.
    """
    return _child(["-m", "agentgym.server", "--log-level", "warning", *args], "/health", log, env, nofile)


def board_process(db: str, *args: str, log: str | None = None,
                  env: dict[str, str] | None = None) -> AbstractContextManager[tuple[str, subprocess.Popen[bytes]]]:
    """``agentgym leaderboard serve`` in a child process, on a fresh board, with more options
    `args` (``--sealed``); yield (url, process). `log` and `env` as for `server_process`."""
    return _child(["-m", "agentgym.cli", "leaderboard", "serve", "--db", db, *args], "/leaderboard.json", log, env)


@contextmanager
def _child(argv: list[str], health_path: str, log: str | None, env: dict[str, str] | None,
           nofile: int | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A server of ours in a child process on a free port, until it answers `health_path`."""
    port = free_port()
    with open(log or os.devnull, "wb") as err:
        proc = subprocess.Popen([sys.executable, *argv, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=err,
                                env=None if env is None else {**os.environ, **env},
                                preexec_fn=None if nofile is None else lambda: _limit_descriptors(nofile))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, path=health_path)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _limit_descriptors(n: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


def open_descriptors(pid: int) -> int:
    """How many descriptors process `pid` holds (Linux /proc)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def wait_healthy(url: str, proc: subprocess.Popen[bytes] | None = None, timeout_s: float = 30.0,
                 path: str = "/health") -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            answer = httpx.get(url + path, timeout=1)
            # A server of several workers answers /health once one is up; it is ready when all are.
            if answer.status_code == 200 and (path != "/health" or answer.json()["status"] == "ok"):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"no healthy server at {url} within {timeout_s} s")


def health(url: str) -> dict[str, Any]:
    import httpx

    return httpx.get(url + "/health", timeout=10).json()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed_episodes(url: str, transport: str, until: float, out: list[float], errors: list[str]) -> None:
    """Heuristic episodes on Dialog-v0 over one connection until `until`, the time of every reset and
    step appended to `out`; a failure is appended to `errors` (an honest client must never fail)."""
    from agentgym.agents import make_agent
    from agentgym.server.client import RemoteEnv

    agent = make_agent("heuristic")
    env = RemoteEnv(url, "AgentRL/Dialog-v0", transport=transport, timeout_s=10)
    try:
        seed = 0
        while time.monotonic() < until:
            t = time.perf_counter()
            obs, info = env.reset(seed=seed)
            out.append(time.perf_counter() - t)
            agent.reset(obs, info)
            done = False
            while not done and time.monotonic() < until:
                action = agent.act(obs, info)
                t = time.perf_counter()
                obs, _, terminated, truncated, info = env.step(action)
                out.append(time.perf_counter() - t)
                done = terminated or truncated
            seed += 1
    except Exception as exc:  # noqa: BLE001 (counted and shown: an honest client must never fail)
        errors.append(f"{transport}: {type(exc).__name__}: {exc}")
    finally:
        env.close()


def honest_episodes(url: str, index: int, deadline: float, tally: dict[str, Any], lock: threading.Lock) -> None:
    """An honest client: open a session, play one or two heuristic episodes, close it; again until
    the deadline. Adds its ``calls``, ``errors``, ``episodes`` and a few ``examples`` to `tally`."""
    from agentgym.agents import make_agent
    from agentgym.server.app import default_env_ids
    from agentgym.server.client import RemoteEnv

    ids = default_env_ids()
    agent = make_agent("heuristic")
    calls = errors = episodes = 0
    examples: list[str] = []
    n = 0
    while time.monotonic() < deadline:
        n += 1
        env = None
        try:
            env = RemoteEnv(url, ids[n % len(ids)], transport=("http", "ws")[(index + n) % 2],
                            noise="tool_failure=0.2" if n % 3 == 0 else None)
            calls += 1
            for k in range(1 + n % 2):
                obs, info = env.reset(seed=index * 100_000 + n * 10 + k)
                calls += 1
                agent.reset(obs, info)
                done = False
                while not done:
                    obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
                    calls += 1
                    done = terminated or truncated
                episodes += 1
        except Exception as exc:  # noqa: BLE001 (every failure is counted and shown, none is hidden)
            errors += 1
            if len(examples) < 5:
                examples.append(f"{type(exc).__name__}: {exc}")
        finally:
            if env is not None:
                env.close()
                calls += 1
    with lock:
        tally["calls"] += calls
        tally["errors"] += errors
        tally["episodes"] += episodes
        tally["examples"] += examples


def rss_growth(samples: list[tuple[float, int]], duration_s: float, level: Callable[[list[int]], float] = max,
               warm: tuple[float, float] = (0.3, 0.4)) -> tuple[float, float, float]:
    """``(baseline, final, growth)`` of RSS samples ``(seconds, bytes)`` over a run: the `level` of
    those after warm-up (the `warm` fractions of the run) against that of its last quarter.
    ``statistics.median`` as the level looks past the short peaks of single large requests."""
    # A loaded machine may leave the sampler no sample inside a window: the nearest one after the
    # warm-up's start, and the last one, stand in.
    warm = [rss for t, rss in samples if warm[0] * duration_s <= t <= warm[1] * duration_s] or \
        [next((rss for t, rss in samples if t >= warm[0] * duration_s), samples[-1][1])]
    late = [rss for t, rss in samples if t >= 0.75 * duration_s] or [samples[-1][1]]
    baseline, final = level(warm), level(late)
    return baseline, final, (final - baseline) / baseline


def rss_of(pid: int) -> int:
    """Resident set size of process `pid` in bytes (Linux /proc)."""
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def raw_http(url: str, request: bytes, *, read_timeout_s: float = 10.0) -> tuple[int, bytes]:
    """Send raw request bytes over a fresh socket; return (status, body) of the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=read_timeout_s) as s:
        s.sendall(request)
        return read_response(s)


def read_response(s: socket.socket) -> tuple[int, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), None)
    while length is not None and len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, body


def raw_websocket(url: str, session_id: str, *, rcvbuf: int | None = None) -> socket.socket:
    """A WebSocket to a session, handshaken over a plain socket (a test then frames what it sends
    with `ws_frame` and reads, or does not read, as it pleases). `rcvbuf` shrinks the socket's
    receive buffer, so a client that stops reading stalls the server's sends sooner."""
    host, port = url.removeprefix("http://").split(":")
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect((host, int(port)))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /sessions/{session_id}/ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)  # byte by byte: nothing past the handshake is read here
        assert chunk, "the server closed the socket during the WebSocket handshake"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return s


def ws_frame(payload: bytes) -> bytes:
    """One masked text frame, as a client sends it."""
    n = len(payload)
    if n < 126:
        head = bytes([0x81, 0x80 | n])
    elif n < 1 << 16:
        head = bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x81, 0x80 | 127]) + n.to_bytes(8, "big")
    mask = os.urandom(4)
    key = (mask * (n // 4 + 1))[:n]
    return head + mask + (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")


def canonical(*parts: Any) -> str:
    """The byte-identity yardstick: sorted-key JSON of what reset or step returned."""
    return json.dumps(parts, sort_keys=True)


def play_canonical(env: gym.Env, seed: int, options: dict[str, Any] | None = None, step_hook: Any = None) -> list[str]:
    """One heuristic episode; the canonical JSON of every reset and step result (`step_hook` is
    called before each step)."""
    from agentgym.agents import make_agent

    agent = make_agent("heuristic")
    obs, info = env.reset(seed=seed, options=options)
    out = [canonical(obs, info)]
    agent.reset(obs, info)
    while True:
        if step_hook is not None:
            step_hook()
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        out.append(canonical(obs, reward, terminated, truncated, info))
        if terminated or truncated:
            return out
