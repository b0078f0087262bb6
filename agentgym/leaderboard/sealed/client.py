"""The client of a sealed run: `agentgym bench SUITE --agent AGENT --sealed URL --model M --revision R`.

It opens a run on the board with the submitter's token, plays the run's episodes with the agent
over WebSockets, several at once (one session per worker and cell), and waits for the board to
verify the run and store its entry; the published records are then fetched into the run folder.

The client never has an env: every reset and step happens on the board, and the agent is given
only the observations and infos the board sends (`agentgym.leaderboard.sealed.view`). A
privileged agent (one that reads the env, like the oracle) is refused before anything is opened.

Resume: a WebSocket that drops is reconnected to its session and the episode goes on where it
stopped (a lost action is sent again; a lost answer is read back). A client that is killed is
run again with the same command and run folder (``sealed.json`` names the run): its episodes in
play are taken up by a fresh agent, which is first shown the episode so far (its reset, then
each observation, as the agent saw them), so it goes on from the same state when it is
deterministic.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["SealedError", "Refused", "PrivilegedAgent", "SealedTarget", "run_sealed", "read_token", "TOKEN_ENV",
           "RUN_FILE", "refuse_privileged"]

#: The environment variable that holds the submitter's token.
TOKEN_ENV = "AGENTGYM_TOKEN"
#: The file in the run folder that names the run (for a client that is run again).
RUN_FILE = "sealed.json"
#: The most of one HTTP answer read.
_MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: WebSocket close codes after which the session is gone for good (4000 + an HTTP status, or
#: the env server's own: reaped, closed, taken over by another socket).
_FINAL_CLOSES = frozenset({4401, 4404, 4408, 4410, 4411})


class SealedError(Exception):
    """A sealed run that cannot go on, said in one line."""


class Refused(SealedError):
    """The board answered a request with an error: ``status`` and its ``code``."""

    def __init__(self, status: int, code: str | None, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class PrivilegedAgent(SealedError):
    """The agent reads the env (``privileged``): it has no place in the sealed track."""


@dataclass(frozen=True)
class SealedTarget:
    """The board and who the run is for."""

    #: The board's base URL.
    url: str
    #: The submitter's token.
    token: str
    #: The model behind the agent, and its revision (the entry's identity).
    model: str
    revision: str
    #: The organisation (default: the token's; another is refused by the board).
    organisation: str | None = None
    description: str = ""
    #: The agent's name on the board (default: the agent's CLI name or path).
    agent_name: str | None = None


def read_token(token_file: str | None = None, environ: dict[str, str] | None = None) -> str:
    """The submitter's token: from `token_file`, else from `$AGENTGYM_TOKEN`.

    Raises:
        SealedError: neither holds one.
    """
    if token_file:
        token = Path(token_file).read_text("utf-8").strip()
        if not token:
            raise SealedError(f"{token_file} holds no token")
        return token
    token = (os.environ if environ is None else environ).get(TOKEN_ENV, "").strip()
    if not token:
        raise SealedError(f"a sealed run needs your token: set {TOKEN_ENV} or pass --token-file FILE (the board's "
                          "admin issues tokens with `agentgym leaderboard token add --org ORG`)")
    return token


def refuse_privileged(agent: Any, name: str) -> None:
    """Refuse an agent that reads the env (`Agent.privileged`), before anything is opened.

    Raises:
        PrivilegedAgent: it is privileged.
    """
    if getattr(agent, "privileged", False):
        raise PrivilegedAgent(f"{name} is a privileged agent (it reads the hidden task through the env): the sealed "
                              "track gives an agent only observations, never an env. Run it in the open track, where "
                              "it is shown as a reference: agentgym bench SUITE --agent "
                              f"{name} --out DIR, then agentgym submit DIR ...")


# ============================================================================ HTTP
class _Board:
    """JSON requests to a board with the submitter's token, over one pool of keep-alive
    connections shared by the run's workers (`close` when the run is over)."""

    def __init__(self, url: str, token: str, timeout_s: float) -> None:
        import httpx

        from agentgym.leaderboard.httpclient import ANSWER_HEADERS

        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--sealed must be an http:// or https:// URL, got {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self._client = httpx.Client(timeout=timeout_s, headers={
            **ANSWER_HEADERS, "Authorization": f"Bearer {token}", "Content-Type": "application/json"})

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any, Any]:
        """``(status, headers, answer)``: the answer is JSON when the board says so, else bytes.

        Raises:
            ConnectionError: no answer came (nothing listens, the board hung up, a timeout).
        """
        from agentgym.leaderboard.httpclient import NoAnswer, request_capped, why_no_answer

        data = None if body is None else json.dumps(body).encode("utf-8")
        try:
            response, raw = request_capped(self._client, method, self.url + path, _MAX_ANSWER_BYTES, content=data)
        except NoAnswer as exc:
            raise ConnectionError(f"cannot reach the board at {self.url}: {why_no_answer(exc, self.timeout_s)}") \
                from exc
        headers = response.headers
        if (headers.get("Content-Type") or "").startswith("application/json"):
            try:
                return response.status_code, headers, json.loads(raw or b"null")
            except (ValueError, RecursionError):  # not JSON after all, cut at the cap, or nested too deep
                pass
        return response.status_code, headers, raw

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> _Board:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def json(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201)) -> Any:
        """The answer of a request that must succeed."""
        status, headers, answer = self.request(method, path, body)
        if status not in ok:
            error = answer.get("error") if isinstance(answer, dict) else None
            code = error.get("code") if isinstance(error, dict) else None
            raise Refused(status, code, f"the board refused {method} {path}: {_said(status, headers, answer)}")
        if isinstance(answer, bytes):
            raise Refused(status, None, f"the board's answer to {method} {path} is not JSON: {answer[:200]!r}")
        return answer


def _said(status: int, headers: Any, answer: Any) -> str:
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict):
        text = f"{status} {error.get('code')}: {error.get('message')}"
    else:
        text = f"{status}: {str(answer)[:300]}"
    if status == 429 and headers.get("Retry-After"):
        text += f" (retry after {headers.get('Retry-After')} s)"
    return text


# ============================================================================ sessions
class _Gone(SealedError):
    """The session is gone (closed, reaped, taken over, or the run ended)."""


class _CellDone(Exception):
    """The session's cell has no episode left."""


class _EpisodeOver(Exception):
    """The board ended the episode in play as an agent error (the turn would have taken its record past the cap)."""


#: The board's codes for "no episode left to start": in this cell, or in the whole run (also when
#: the run ended while this worker's session was being opened: another worker played its last
#: episode, or recorded an agent error that ended it).
_NOTHING_LEFT = frozenset({"cell_done", "run_played", "run_closed"})
#: Seconds a worker waits before asking again for a session the board had no room for.
_ROOM_WAIT_S = 1.0


class _Session:
    """One sealed session over one WebSocket, reconnected when the connection drops."""

    def __init__(self, board: _Board, run_id: str, cell: dict[str, Any] | None = None, *,
                 session_id: str | None = None, reconnect_s: float = 60.0) -> None:
        self.board, self.run_id, self.reconnect_s = board, run_id, reconnect_s
        self.prefix = f"/sealed/runs/{run_id}"
        if session_id is None:
            assert cell is not None
            answer = board.json("POST", f"{self.prefix}/sessions", {"env_id": cell["env_id"], "kwargs": cell["kwargs"],
                                                                   "noise": cell["noise"]})
            session_id = answer["session_id"]
        self.session_id = session_id
        self._ws: Any = None
        self._connect()

    def _connect(self) -> None:
        from agentgym.server.ws_blocking import BlockingWebSocket

        url = "ws" + self.board.url[len("http"):] + f"{self.prefix}/sessions/{self.session_id}/ws"
        self._ws = BlockingWebSocket(url, headers={"Authorization": f"Bearer {self.board.token}"}, max_size=None,
                                     open_timeout=self.board.timeout_s)

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        self._ws.send(json.dumps(message))
        return json.loads(self._ws.recv(timeout=self.board.timeout_s))

    def call(self, message: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Send one message; the answer, and whether the connection was remade on the way (then
        the answer is the session's resume, not the answer to `message`)."""
        from websockets.exceptions import ConnectionClosed, InvalidStatus

        try:
            return self._checked(self._exchange(message)), False
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd is not None else None
            if code in _FINAL_CLOSES:
                raise _Gone(f"the board closed session {self.session_id}: {exc.rcvd.reason} ({code})") from None
        except (OSError, TimeoutError):
            pass
        deadline = time.monotonic() + self.reconnect_s
        while True:
            try:
                self._close_socket()
                self._connect()
                return self._checked(self._exchange({"op": "reset"})), True
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                if code in _FINAL_CLOSES:
                    raise _Gone(f"the board closed session {self.session_id}: {exc.rcvd.reason} ({code})") from None
            except (OSError, TimeoutError, InvalidStatus):
                pass
            if time.monotonic() > deadline:
                raise _Gone(f"could not reconnect session {self.session_id} within {self.reconnect_s:g} s")
            time.sleep(0.5)

    @staticmethod
    def _checked(answer: dict[str, Any]) -> dict[str, Any]:
        error = answer.get("error")
        if isinstance(error, dict):
            if error.get("code") in _NOTHING_LEFT:
                raise _CellDone()
            if error.get("code") in ("record_too_large", "reset_needed"):
                raise _EpisodeOver()  # the board ended the episode (its record's cap, its time limit)
            raise _Gone(f"the board refused: {error.get('code')}: {error.get('message')}")
        return answer

    def fail(self, exc: BaseException) -> None:
        """Report that the agent failed in the episode in play."""
        self.board.json("POST", f"{self.prefix}/sessions/{self.session_id}/fail", {
            "type": type(exc).__name__, "message": str(exc)[:4000],
            "traceback": traceback.format_exc(limit=5)[-4000:]})

    def _close_socket(self) -> None:
        if self._ws is not None:
            try:
                self._ws.close()
            except Exception:  # noqa: BLE001 (a socket already broken: nothing to say to it)
                pass
            self._ws = None

    def close(self) -> None:
        self._close_socket()
        try:
            self.board.request("DELETE", f"{self.prefix}/sessions/{self.session_id}")
        except ConnectionError:
            pass  # the board reaps it


# ============================================================================ episodes
class _EpisodeTimeout(Exception):
    """The agent took longer than the per-episode limit."""


def _catch_up(agent: Any, sealed: dict[str, Any]) -> None:
    """Show a fresh agent the episode so far: its reset, then each observation it answered."""
    history = sealed["history"]
    agent.reset(history[0]["obs"], history[0]["info"])
    for shown in history[:-1]:
        agent.act(shown["obs"], shown["info"])


#: `_play`'s answer when the episode ended and the cell has no episode left.
_CELL_EMPTY: dict[str, Any] = {}


def _play(session: _Session, agent: Any, timeout_s: float | None, start: dict[str, Any] | None) -> dict[str, Any] | None:
    """Play the session's next episode (or the one in play on it) to its end.

    Returns:
        None; or, when a reconnect showed that the episode had ended, the next episode's reset
        (`_CELL_EMPTY` if the cell has none left).

    Raises:
        _CellDone: the cell had no episode left to start.
    """
    if start is None:
        start, _ = session.call({"op": "reset"})
    sealed = start["info"]["sealed"]
    episode = sealed["label"]
    resumed = bool(sealed.get("resumed"))
    last = sealed["history"][-1] if resumed else start
    obs, info = last["obs"], last["info"]
    sent = int(sealed.get("turn", 0))
    t0 = time.monotonic()
    fresh = True
    while True:
        try:
            if fresh and resumed:
                _catch_up(agent, sealed)
            elif fresh:
                agent.reset(obs, info)
            fresh = False
            action = agent.act(obs, info)
            if not isinstance(action, (str, dict)):
                raise TypeError(f"act() returned {type(action).__name__}, expected str")
            if timeout_s is not None and time.monotonic() - t0 > timeout_s:
                raise _EpisodeTimeout(f"episode exceeded {timeout_s} s")
        except Exception as exc:  # noqa: BLE001 - the agent's fault is the episode's record (as in the runner)
            session.fail(exc)
            return None
        try:
            answer, remade = session.call({"op": "step", "action": action})
            while remade:
                # The connection dropped and was remade: the answer is where the session stands.
                now = answer["info"].get("sealed") or {}
                if now.get("label") != episode or not now.get("resumed"):
                    return answer  # the action ended this episode; that is the next one's reset
                if int(now["turn"]) == sent + 1:
                    answer = now["history"][-1]  # the action arrived: its answer, as it was sent
                    break
                answer, remade = session.call({"op": "step", "action": action})  # it did not: again
        except _CellDone:
            return _CELL_EMPTY  # the action ended this episode, and the cell is played
        except _EpisodeOver:
            return None
        sent += 1
        obs, info = answer["obs"], answer["info"]
        if answer.get("terminated") or answer.get("truncated"):
            return None


@dataclass
class _Shared:
    """What the workers of one run share."""

    cells: list[dict[str, Any]]
    done_cells: set[int] = field(default_factory=set)
    played: int = 0
    stop: BaseException | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    on_episode: Callable[[], None] = lambda: None

    def next_cell(self, first: int) -> int | None:
        with self.lock:
            for k in range(len(self.cells)):
                i = (first + k) % len(self.cells)
                if i not in self.done_cells:
                    return i
        return None

    def episode(self) -> None:
        with self.lock:
            self.played += 1
        self.on_episode()


def _worker(board: _Board, run_id: str, agent: Any, shared: _Shared, index: int, timeout_s: float | None,
            attach: list[dict[str, Any]]) -> None:
    try:
        for held in attach:  # sessions of a killed client, with an episode in play
            session = _Session(board, run_id, session_id=held["session_id"])
            cell = next(i for i, c in enumerate(shared.cells) if (c["env_id"], c["noise"], c["kwargs"]) ==
                        (held["env_id"], held["noise"], held["kwargs"]))
            _drain(session, agent, shared, cell, timeout_s)
        first = index
        while shared.stop is None:
            cell = shared.next_cell(first)
            if cell is None:
                return
            try:
                session = _Session(board, run_id, shared.cells[cell])
            except Refused as exc:
                if exc.status == 429 and exc.code == "too_many_sessions":
                    time.sleep(_ROOM_WAIT_S)  # the track is full: the run waits for room (and stays active)
                    continue
                if exc.code not in _NOTHING_LEFT:
                    raise
                with shared.lock:
                    shared.done_cells.add(cell)
                continue
            _drain(session, agent, shared, cell, timeout_s)
            first = cell + 1
    except BaseException as exc:  # noqa: BLE001 (handed to the main thread, which says it and stops the run)
        with shared.lock:
            shared.stop = shared.stop or exc


def _drain(session: _Session, agent: Any, shared: _Shared, cell: int, timeout_s: float | None) -> None:
    """Play episodes of `cell` on `session` until the cell has none left."""
    try:
        start = None
        while shared.stop is None:
            try:
                start = _play(session, agent, timeout_s, start)
            except _CellDone:
                start = _CELL_EMPTY
            else:
                shared.episode()
            if start is _CELL_EMPTY:
                with shared.lock:
                    shared.done_cells.add(cell)
                return
    finally:
        session.close()


# ============================================================================ the run
def _open_or_resume(board: _Board, suite: str, agent_name: str, agent_config: dict[str, Any], target: SealedTarget,
                    run_file: Path) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    want = {"url": board.url, "suite": suite, "agent": agent_name, "agent_config": agent_config,
            "model": target.model, "revision": target.revision}
    if run_file.exists():
        saved = json.loads(run_file.read_text("utf-8"))
        if {k: saved.get(k) for k in want} == want:
            status = board.json("GET", f"/sealed/runs/{saved['run_id']}")
            if status["state"] in ("open", "verifying"):
                print(f"resuming sealed run {saved['run_id']}: {status.get('done', 0)} of "
                      f"{status.get('episodes', '?')} episodes played", file=sys.stderr)
                return saved["run_id"], status, status.get("in_play_sessions", [])
            if status["state"] == "complete":
                return saved["run_id"], status, []
            print(f"sealed run {saved['run_id']} ended {status['state']} ({status.get('reason')}); opening a new one",
                  file=sys.stderr)
    body = {"suite": suite, "agent": agent_name, "agent_config": agent_config, "model": target.model,
            "revision": target.revision, "description": target.description}
    if target.organisation:
        body["organisation"] = target.organisation
    opened = board.json("POST", "/sealed/runs", body, ok=(201,))
    run_file.parent.mkdir(parents=True, exist_ok=True)
    run_file.write_text(json.dumps({**want, "run_id": opened["run_id"]}, indent=2, sort_keys=True) + "\n", "utf-8")
    return opened["run_id"], {**opened, "state": "open", "done": 0}, []


def run_sealed(suite: str, agent_spec: Any, target: SealedTarget, out_dir: str | Path, *, concurrency: int = 8,
               timeout_s: float | None = 300.0, progress: bool = True, wait_s: float = 3600.0,
               request_timeout_s: float = 60.0) -> dict[str, Any]:
    """Play a sealed run of `suite` with `agent_spec` on the board `target`, and wait for its entry.

    Args:
        suite: the suite id (the board's registry decides what it is).
        agent_spec: an `agentgym.eval.jobs.AgentSpec`; one agent is built per worker.
        target: the board, the token and the entry's identity.
        out_dir: the run folder: ``sealed.json`` (the run, for a client run again) and, once the
            run is complete, its published records (``sealed-ID.agentgym.gz``).
        concurrency: episodes played at once (one WebSocket each).
        timeout_s: per-episode limit for the agent (None: none); past it the episode is an agent error.
        progress: show a progress bar on stderr.
        wait_s: how long to wait for the board to verify the run once it is played.
        request_timeout_s: how long to wait for any one answer of the board.

    Returns:
        The run's final status (``state`` ``complete`` with its ``entry``, or how it ended).

    Raises:
        PrivilegedAgent: the agent reads the env.
        SealedError: the board refused the run, or it could not be finished.
    """
    first = agent_spec.build()
    refuse_privileged(first, agent_spec.name)
    config = getattr(first, "config", None)
    agent_config = json.loads(json.dumps(config() if callable(config) else {}, sort_keys=True))
    with _Board(target.url, target.token, request_timeout_s) as board:
        return _run(board, suite, agent_spec, first, agent_config, target, Path(out_dir), concurrency=concurrency,
                    timeout_s=timeout_s, progress=progress, wait_s=wait_s)


def _run(board: _Board, suite: str, agent_spec: Any, first: Any, agent_config: dict[str, Any], target: SealedTarget,
         out: Path, *, concurrency: int, timeout_s: float | None, progress: bool, wait_s: float) -> dict[str, Any]:
    from agentgym.eval.progress import Progress

    try:
        run_id, status, attach = _open_or_resume(board, suite, target.agent_name or agent_spec.name, agent_config,
                                                 target, out / RUN_FILE)
    except ConnectionError as exc:
        raise SealedError(str(exc)) from None
    cells = status.get("cells") or []
    workers = max(1, min(concurrency, status.get("sessions_per_run") or concurrency))
    total, already = int(status.get("episodes", 0)), int(status.get("done", 0))
    t0 = time.perf_counter()
    if status["state"] == "open":
        with Progress(total=total, desc=f"{agent_spec.name} sealed", enabled=progress) as bar:
            bar.update(already)
            shared = _Shared(cells=cells, on_episode=lambda: bar.update(1))
            agents = [first] + [agent_spec.build() for _ in range(workers - 1)]
            threads = [threading.Thread(target=_worker, name=f"agentgym-sealed-{i}", daemon=True,
                                        args=(board, run_id, agents[i], shared, i, timeout_s, attach[i::workers]))
                       for i in range(workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if shared.stop is not None:
            raise SealedError(f"sealed run {run_id} stopped: {shared.stop}") from shared.stop
    final = _wait(board, run_id, wait_s)
    final["played_s"] = round(time.perf_counter() - t0, 3)
    if final["state"] == "complete" and final.get("entry"):
        entry = final["entry"]
        status_code, _, body = board.request("GET", entry["records_url"])
        if status_code == 200 and isinstance(body, bytes):
            path = out / f"sealed-{entry['id']}.agentgym.gz"
            path.write_bytes(body)
            final["records_file"] = str(path)
    return final


#: Seconds between status requests while a run is verified: for the first `_BRISK_S` seconds
#: (a run's verification mostly ends in them), then growing to a second.
_POLL_S = 0.1
_BRISK_S = 10.0


def _wait(board: _Board, run_id: str, wait_s: float) -> dict[str, Any]:
    started = time.monotonic()
    pause = _POLL_S
    while True:
        status = board.json("GET", f"/sealed/runs/{run_id}")
        if status["state"] not in ("open", "verifying"):
            return status
        waited = time.monotonic() - started
        if waited > wait_s:
            raise SealedError(f"sealed run {run_id} is still {status['state']} after {wait_s:g} s")
        time.sleep(pause)
        if waited > _BRISK_S:
            pause = min(1.0, pause * 1.5)
