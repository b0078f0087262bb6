"""Shared pieces of the sealed-track tests: a board on loopback, tokens, the agents that test it,
and the figures measured with them.

The board is the real app (`agentgym.leaderboard.server.create_app` with ``sealed=``) under
uvicorn, with the env server's connection guard, in a thread of the test process or in a child
process (`board_process`) when its CPU must be its own. The agents are small real agents: one
that keeps everything it is shown, the oracle relabelled as an ordinary agent, and one that has
memorised public episodes. The figures (`memoriser_figures`, `agreement_figures`) are what
`tests/leaderboard/test_lb_sealed_agents.py` asserts and `benchmarks/bench_sealed.py` reports.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import lb_support as S

from agentgym.agents.base import Agent
from agentgym.agents.heuristic import HeuristicAgent
from agentgym.agents.oracle import OracleAgent
from agentgym.bench.suites import Suite
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.tokens import TokenBook

#: A fixed secret: with `counting_ids`, a board's sealed seeds are the same on every test run.
SECRET = bytes(range(32))

#: The tests' sealed suites: the leaderboard tests' own, and every family at once.
REGISTRY = S.REGISTRY


def counting_ids(prefix: str = "test-run") -> Any:
    """Run ids ``test-run-0000000001``, ``...2``: reproducible seeds for a board of the tests."""
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter):010d}"


@dataclass
class Board:
    """A sealed board on loopback."""

    url: str
    store: Store
    app: Any
    db: Path

    @property
    def host(self) -> Any:
        return self.app.state.sealed

    def token(self, org: str = "tests", quota: int = 100) -> str:
        return TokenBook(self.store).add(org, quota)[1]


@contextlib.contextmanager
def sealed_board(tmp: Path, config: SealedConfig | None = None, *, suites: Mapping[str, Suite] | None = None,
                 secret: bytes = SECRET, ids: str = "test-run") -> Iterator[Board]:
    """A sealed board (with `config`) serving in a thread of this process, for the block."""
    from agentgym.leaderboard.server import create_app
    from agentgym.server.serve import uvicorn_server

    db = tmp / "board.sqlite"
    store = Store(db)
    cfg = config or SealedConfig(grace_s=30.0)
    app = create_app(store, suites=REGISTRY if suites is None else suites, workers=1, sealed=cfg, secret=secret,
                     run_ids=counting_ids(ids))
    server_cfg = cfg.server_config()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn_server(app, host="127.0.0.1", port=port, log_level="warning",
                            limits=server_cfg.connection_limits(), ws_max_bytes=server_cfg.max_body_bytes)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the board did not start"
        time.sleep(0.02)
    try:
        yield Board(url=f"http://127.0.0.1:{port}", store=store, app=app, db=db)
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


@contextlib.contextmanager
def board_process(db: Path, *args: str, cwd: Path | None = None,
                  log: Path | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``agentgym leaderboard serve --db DB --sealed ARGS`` in a child process (its own GIL and
    CPU), on a free loopback port; yields (url, process) once it answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log or os.devnull, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "agentgym.cli", "leaderboard", "serve", "--db", str(db),
                                 "--sealed", "--port", str(port), *args], cwd=cwd, stdout=subprocess.DEVNULL,
                                stderr=err)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"the board exited with {proc.returncode}"
            try:
                if _client().get(url + "/leaderboard.json", timeout=1).status_code == 200:
                    break
            except Exception:  # noqa: BLE001 (not up yet: any connection error)
                pass
            assert time.monotonic() < deadline, "the board did not start"
            time.sleep(0.05)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def http(board_url: str, method: str, path: str, body: Any = None, token: str | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    """One request; (status, decoded JSON or bytes, headers)."""

    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    r = _client().request(method, board_url + path, json=body, headers=h, timeout=60)
    try:
        data: Any = r.json()
    except ValueError:
        data = r.content
    return r.status_code, data, dict(r.headers)


_CLIENTS: dict[int, Any] = {}


def _client() -> Any:
    """One keep-alive HTTP client per thread (a new TCP connection per request is most of its cost)."""
    import httpx

    client = _CLIENTS.get(threading.get_ident())
    if client is None:
        client = _CLIENTS[threading.get_ident()] = httpx.Client()
    return client


def open_run(board: Board, token: str, suite: str = S.SUITE.id, **fields: Any) -> dict[str, Any]:
    body = {"suite": suite, "agent": "heuristic", "agent_config": {}, "model": "m", "revision": "r1", **fields}
    status, answer, _ = http(board.url, "POST", "/sealed/runs", body, token)
    assert status == 201, answer
    return answer


def session(board: Board, token: str, run_id: str, cell: Mapping[str, Any]) -> str:
    status, answer, _ = http(board.url, "POST", f"/sealed/runs/{run_id}/sessions",
                             {"env_id": cell["env_id"], "kwargs": cell["kwargs"], "noise": cell["noise"]}, token)
    assert status == 201, answer
    return answer["session_id"]


def ws(board: Board, token: str | None, run_id: str, session_id: str) -> Any:
    from websockets.sync.client import connect

    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    url = board.url.replace("http", "ws", 1) + f"/sealed/runs/{run_id}/sessions/{session_id}/ws"
    return connect(url, additional_headers=headers, compression=None, max_size=None, open_timeout=20)


def exchange(sock: Any, message: dict[str, Any]) -> dict[str, Any]:
    sock.send(json.dumps(message))
    return json.loads(sock.recv(timeout=30))


def wait_state(board: Board, token: str, run_id: str, timeout_s: float = 60.0,
               until: tuple[str, ...] = ("complete", "incomplete", "rejected")) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        status, answer, _ = http(board.url, "GET", f"/sealed/runs/{run_id}", token=token)
        assert status == 200, answer
        if answer["state"] in until:
            return answer
        assert time.monotonic() < deadline, f"run {run_id} still {answer['state']}"
        time.sleep(0.05)


# ============================================================================ agents
class RecordingAgent(HeuristicAgent):
    """The heuristic, keeping every observation and info it is shown (class-wide: one per worker)."""

    name = "recording"
    seen: list[tuple[str, dict[str, Any]]] = []
    binds = 0
    _lock = threading.Lock()

    def bind(self, env: Any) -> None:
        with RecordingAgent._lock:
            RecordingAgent.binds += 1

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        with RecordingAgent._lock:
            RecordingAgent.seen.append((obs, info))
        super().reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        with RecordingAgent._lock:
            RecordingAgent.seen.append((obs, info))
        return super().act(obs, info)


class SlowHeuristic(HeuristicAgent):
    """The heuristic, taking 10 ms a turn (a client that can be killed mid-run)."""

    name = "slow-heuristic"

    def act(self, obs: str, info: dict[str, Any]) -> str:
        time.sleep(0.01)
        return super().act(obs, info)


class RelabelledOracle(OracleAgent):
    """The oracle, claiming to be an ordinary agent: it still reads the env, if it is given one."""

    name = "relabelled-oracle"
    privileged = False


class RaisingAgent(HeuristicAgent):
    """The heuristic, except that it raises on its second turn of every episode."""

    name = "raising"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        super().reset(obs, info)
        self._turn = 0

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._turn += 1
        if self._turn == 2:
            raise RuntimeError("raising agent: its second turn")
        return super().act(obs, info)


class LongTurnAgent(Agent):
    """Sends the same long turn every time: 1 MiB of text (over the env's cap) by default."""

    name = "long-turn"
    text = "x" * ((1 << 20) - 64)

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        pass

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self.text


class ControlCharAgent(LongTurnAgent):
    """Sends 64 KiB of control characters every turn: under the env's cap, six times that in a record."""

    name = "control-chars"
    text = "\x01" * (64 * 1024)


class LargeTurnAgent(LongTurnAgent):
    """Sends 60,000 characters every turn: under the env's cap, so recorded in full."""

    name = "large-turns"
    text = "x" * 60_000


class NotJsonAgent(HeuristicAgent):
    """The heuristic, whose second turn is a tool call with an argument JSON cannot carry (NaN)."""

    name = "not-json"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        super().reset(obs, info)
        self._turn = 0

    def act(self, obs: str, info: dict[str, Any]) -> Any:
        self._turn += 1
        if self._turn == 2:
            return {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": {"q": float("nan")}}}]}
        return super().act(obs, info)


def opening_key(obs: str, info: Mapping[str, Any]) -> str:
    """What an agent can key a memorised episode on: its opening observation, the tools it is
    offered and the trial (noise may change the opening)."""
    tools = json.dumps(info.get("tools", []), sort_keys=True)
    return hashlib.sha256(f"{obs}|{tools}|{info.get('trial', 0)}".encode("utf-8", "surrogatepass")).hexdigest()


def memorise(suite: Suite, oracle_records: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Opening key -> the oracle's recorded actions, for every public episode of `suite` (the
    openings are the env's own: every public seed is known)."""
    import gymnasium as gym

    by_key = {r["key"]: r for r in oracle_records}
    table: dict[str, list[Any]] = {}
    envs: dict[Any, Any] = {}
    for job in suite.jobs():
        kw = job.make_kwargs()
        env = envs.get((job.env_id, json.dumps(kw, sort_keys=True)))
        if env is None:
            env = envs[(job.env_id, json.dumps(kw, sort_keys=True))] = gym.make(job.env_id, **kw)
        obs, info = env.reset(seed=job.seed, options={"trial": job.trial} if job.trial else None)
        table.setdefault(opening_key(obs, info), by_key[job.key]["actions"])
    for env in envs.values():
        env.close()
    return table


class LookupAgent(Agent):
    """An agent that memorised the public episodes of a suite: when an opening is one it knows,
    it replays the oracle's recorded actions; otherwise it plays the heuristic.

    The table is a class attribute (set by the test before the agent is made), as a trained
    model's weights would be.
    """

    name = "lookup"
    table: dict[str, list[Any]] = {}
    hits = 0

    def __init__(self) -> None:
        self._fallback = HeuristicAgent()
        self._script: list[Any] | None = None

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        script = LookupAgent.table.get(opening_key(obs, info))
        self._script = list(script) if script is not None else None
        if script is not None:
            LookupAgent.hits += 1
        self._fallback.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> Any:
        if self._script:
            return self._script.pop(0)
        return self._fallback.act(obs, info)


# ============================================================================ figures
def public_records(suite: Suite, agent: str, root: Path) -> list[dict[str, Any]]:
    """The records of an in-process run of `suite`'s public seeds (resumed, so made once per folder)."""
    from agentgym.bench.run import RECORDS, run_suite
    from agentgym.eval.records import read_records
    from agentgym.eval.runner import AgentSpec

    out = Path(root) / suite.id / agent.replace(":", "_")
    run_suite(suite, AgentSpec(agent), out, workers=1, progress=False, timeout_s=None)
    return list(read_records(out / RECORDS))


def sealed_submission(suite: Suite, agent: str, tmp: Path, revision: str = "r1") -> Any:
    """The published submission of a sealed run of `agent` on a board of its own."""
    from agentgym.eval.runner import AgentSpec
    from agentgym.leaderboard.sealed.client import SealedTarget, run_sealed
    from agentgym.leaderboard.submission import decode_submission

    name = agent.replace(":", "_")
    with sealed_board(tmp / f"board-{name}", SealedConfig(grace_s=60), suites={suite.id: suite},
                      ids=f"{suite.id}-{agent.split(':')[-1]}") as board:
        final = run_sealed(suite.id, AgentSpec(agent), SealedTarget(board.url, board.token(), "m", revision),
                           tmp / f"sealed-{name}", progress=False, concurrency=4, timeout_s=None)
    assert final["state"] == "complete", final
    return decode_submission(Path(final["records_file"]).read_bytes())


def success(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The success rate of `records` with its bootstrap 95% CI (``{"value", "ci", ...}``)."""
    from agentgym.eval import metrics

    return metrics.completion(records, n_boot=2000, seed=0)["success_rate"]


def paired_success(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
    """Success(a) - success(b) on the same episodes (by record key), with a paired bootstrap 95% CI."""
    from agentgym.eval import metrics

    return metrics.paired_comparison(a, b, "success", n_boot=2000, seed=0)["diff"]


def task_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
    """Success(a) - success(b) for two runs on different tasks, with a 95% CI that resamples
    tasks (env and seed: a task's noise settings and trials move together), not episodes."""
    import numpy as np

    def by_task(records: list[dict[str, Any]]) -> list[list[float]]:
        groups: dict[tuple[str, int], list[float]] = {}
        for r in records:
            groups.setdefault((r["env"]["id"], r["seed"]), []).append(float(bool(r["metrics"].get("success"))))
        return list(groups.values())

    rng = np.random.default_rng(0)
    ga, gb = by_task(a), by_task(b)

    def mean(groups: list[list[float]], pick: Any) -> float:
        chosen = [groups[i] for i in pick]
        return sum(map(sum, chosen)) / sum(map(len, chosen))

    point = mean(ga, range(len(ga))) - mean(gb, range(len(gb)))
    boots = [mean(ga, rng.integers(0, len(ga), len(ga))) - mean(gb, rng.integers(0, len(gb), len(gb)))
             for _ in range(2000)]
    return {"value": point, "ci": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))]}


def overlap(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two aggregates' 95% CIs overlap."""
    return bool(a["ci"][0] <= b["ci"][1] and b["ci"][0] <= a["ci"][1])


def memoriser_figures(suite: Suite, oracle_records: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    """The memoriser (`LookupAgent`, taught `oracle_records` of `suite`'s public episodes) against
    the heuristic on the same episodes: on the public seeds, and on a sealed run's (whose
    published seeds make its episodes anyone's to play).

    Returns:
        ``public``, ``sealed``: the memoriser's success; ``oracle_public``: the oracle's, whose
        actions it memorised; ``heuristic_public``,
        ``heuristic_sealed``: the heuristic's on the same episodes; ``public_vs_heuristic``,
        ``sealed_vs_heuristic``: the paired differences; ``public_hits``, ``sealed_hits``: the
        openings it knew; ``episodes``.
    """
    from agentgym.eval.runner import AgentSpec, play_job

    LookupAgent.table = memorise(suite, oracle_records)
    LookupAgent.hits = 0
    public = public_records(suite, "lb_sealed_support:LookupAgent", tmp / "public")
    public_hits, LookupAgent.hits = LookupAgent.hits, 0
    heuristic_public = public_records(suite, "heuristic", tmp / "public")
    published = sealed_submission(suite, "lb_sealed_support:LookupAgent", tmp)
    sealed, sealed_hits = published.records, LookupAgent.hits
    jobs = suite.jobs(published.manifest.sealed.seeds)
    assert [j.key for j in jobs] == [r["key"] for r in sealed]
    heuristic_sealed = [play_job(j, AgentSpec("heuristic")) for j in jobs]
    return {"episodes": len(sealed), "public_hits": public_hits, "sealed_hits": sealed_hits,
            "public": success(public), "oracle_public": success(oracle_records),
            "heuristic_public": success(heuristic_public),
            "public_vs_heuristic": paired_success(public, heuristic_public),
            "sealed": success(sealed), "heuristic_sealed": success(heuristic_sealed),
            "sealed_vs_heuristic": paired_success(sealed, heuristic_sealed)}


def agreement_figures(suite: Suite, agent: str, tmp: Path) -> dict[str, Any]:
    """`agent`'s success on `suite`'s public seeds and in a sealed run of its own (other tasks):
    ``public``, ``sealed``, ``difference`` (sealed - public, resampling tasks), ``overlap``."""
    public = public_records(suite, agent, tmp / "public")
    sealed = sealed_submission(suite, agent, tmp).records
    a, b = success(public), success(sealed)
    return {"public": a, "sealed": b, "difference": task_difference(sealed, public), "overlap": overlap(a, b)}
