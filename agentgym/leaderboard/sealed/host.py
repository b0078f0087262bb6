"""`SealedHost`: the env server's sessions, hosting the episodes of sealed runs.

The board mounts an env-server app (`agentgym.server.app.create_app`) at ``/sealed/runs/RUN_ID``
with this host, so a sealed session is an env-server session in every respect (the session cap,
the idle reaper, the body and message limits, the allow-listed env arguments, the step and send
timeouts, the connection guard), with these rules on top:

- every request carries the run's token (``Authorization: Bearer``): 401 without it, and a run
  or session of another token's is not found (404);
- a session is opened on one of the run's cells: its ``env_id``, ``kwargs`` and ``noise`` are
  those of the cell, exactly (422 otherwise), and a run holds at most
  `SealedConfig.sessions_per_run` sessions, a token's runs `SealedConfig.sessions_per_token`
  (429); an open refused for want of a session counts as the run's activity (a run waiting for
  room on the track is not idle);
- a reset takes no seed and no options (422): it starts the next episode of the session's cell
  on the board's seed (409 ``cell_done`` when the cell has none left), or, while an episode is in
  play on the session, answers where it stands (``info["sealed"]["resumed"]``, with the
  episode's history), so an episode is never restarted;
- what the client is sent is `agentgym.leaderboard.sealed.view`'s view;
- sessions outlive their WebSocket (a client that reconnects takes its session over); a session
  that is closed, reaped or timed out with an episode in play closes the run as incomplete;
- an episode in play for longer than `SealedConfig.max_episode_s` ends as an agent error
  (``EpisodeTimeout``), as in the harness: the session's next step is answered ``reset_needed``.

Episodes are played by the harness's own `EpisodeState` (`agentgym.eval.episode`), so a sealed
record is written by the same code as any other.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection

from agentgym.eval.episode import EpisodeState
from agentgym.eval.record_budget import RecordTooLarge
from agentgym.leaderboard.sealed.book import Cell, Run, RunBook, RunRefused, RunTooLarge
from agentgym.leaderboard.sealed.view import encode, reset_view, step_view
from agentgym.leaderboard.tokens import TokenBook, Unauthorized, bearer, token_hash
from agentgym.server.host import SessionHost
from agentgym.server.models import CreateSession, ResetRequest, StepRequest
from agentgym.server.monitoring import BoardMetrics, ServerMetrics
from agentgym.server.sessions import ApiError, Session, SessionStore

__all__ = ["SealedHost", "Seat", "MAX_AGENT_ERROR_CHARS"]

log = logging.getLogger("agentgym.leaderboard")

#: The longest agent-error message and traceback a client may report (the runner keeps as much).
MAX_AGENT_ERROR_CHARS = 4000


@dataclass(eq=False)
class Seat:
    """What the host keeps about one sealed session (its ``Session.hosted``)."""

    run: Run
    cell: Cell
    #: The job index in play on the session, and its episode (None between episodes).
    index: int | None = None
    episode: EpisodeState | None = None
    #: The payloads sent in the episode in play, its reset first (what a resume hands back).
    history: list[dict[str, Any]] = field(default_factory=list)

    def end(self) -> None:
        self.index, self.episode, self.history = None, None, []


def _start(job: Any, run: Run, env: Any, sealed: dict[str, Any]) -> tuple[EpisodeState, dict, bytes]:
    # On the session's env thread: the reset, and the view of it (the encoding is off the loop too).
    ep = EpisodeState(job, run.spec, env=env, agent=run.agent, max_record_bytes=run.max_record_bytes)
    payload = reset_view(ep.obs, ep.info, sealed=sealed)
    return ep, payload, encode(payload, job.seed)


def _advance(ep: EpisodeState, action: Any) -> tuple[dict | None, bytes, dict | None]:
    # On the session's env thread: the step, the view of it, and the record when it ended the episode
    # (no view when the turn would have taken the record past its cap: the episode ends unstepped).
    try:
        done = ep.apply(action)
    except RecordTooLarge as exc:
        ep.fail(exc)
        return None, b"", ep.record()
    payload = step_view(ep.obs, ep.terminated, ep.truncated, ep.info)
    data = encode(payload, ep.job.seed)
    return payload, data, ep.record() if done else None


class SealedHost(SessionHost):
    """The rules of sealed sessions (see the module).

    Args:
        book: the board's sealed runs.
        tokens: the board's tokens.
        metrics: the board's metrics (the runs' verifications are counted there).
    """

    resumable = True

    def __init__(self, book: RunBook, tokens: TokenBook, metrics: BoardMetrics | None = None) -> None:
        self.book = book
        self.tokens = tokens
        self.metrics = metrics
        #: The session store and the metrics of the app this host serves (set when the app is
        #: made, `agentgym.leaderboard.sealed.routes`).
        self.sessions: SessionStore | None = None
        self.session_metrics: ServerMetrics | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ who
    def run_of(self, conn: HTTPConnection) -> Run:
        """The live run a request names in its path, if its token is the run's.

        Raises:
            ApiError: 401 no token or a wrong one, 404 no such run of this token's, 409 the run
                has ended (its state and why).
        """
        run_id = str(conn.path_params.get("run_id", ""))
        token = _presented(conn)
        run = self.book.live(run_id)
        if run is None or not hmac.compare_digest(run.token.sha256, token_hash(token)):
            try:
                self.tokens.authenticate(token)
            except Unauthorized as exc:
                raise ApiError(401, "unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}) from None
            if run is None:
                raise ApiError(404, "unknown_run", f"no sealed run {run_id!r} in play for this token (GET "
                                                   f"/sealed/runs/{run_id} says how it ended)")
            raise ApiError(404, "unknown_run", f"no sealed run {run_id!r} in play for this token")
        return run

    def admit(self, conn: HTTPConnection) -> None:
        # A stranger is refused before the session is looked up: 401, whatever the ids.
        self.run_of(conn)

    def check(self, conn: HTTPConnection, session: Session) -> None:
        seat = session.hosted
        run = self.run_of(conn)
        if not isinstance(seat, Seat) or seat.run is not run:
            raise ApiError(404, "unknown_session", f"no session {session.id!r} in this run")

    # ------------------------------------------------------------------ sessions
    async def open(self, conn: HTTPConnection, body: CreateSession, store: SessionStore) -> Session:
        run = self.run_of(conn)
        if not run.playing:
            raise ApiError(409, "run_played", "every episode of the run is played; it is being verified")
        cell = _cell_for(run, body)
        # Refused for want of room or not, the run is active: a client waiting for a session is no idle one.
        run.touch()
        config = self.book.config
        if len(run.seats) + run.opening >= config.sessions_per_run:
            raise ApiError(429, "too_many_sessions", f"a sealed run holds at most {config.sessions_per_run} "
                           "sessions at once", {"Retry-After": "1"})
        held = sum(len(r.seats) + r.opening for r in self.book.live_runs() if r.token.id == run.token.id)
        if held >= config.sessions_per_token:
            raise ApiError(429, "too_many_sessions", f"a token's runs hold at most {config.sessions_per_token} "
                           "sessions at once", {"Retry-After": "1"})
        run.opening += 1
        try:
            session = await store.create(cell[0], dict(cell[2]), cell[1])
        finally:
            run.opening -= 1
            run.touch()
        if not run.playing:  # the run ended while the env was being made
            await store.close(session, "closed")
            raise ApiError(409, "run_closed", "the run ended while the session was being opened")
        session.hosted = Seat(run=run, cell=cell)
        run.seats.add(session.id)
        run.touch()
        return session

    def retired(self, session: Session, reason: str) -> None:
        seat = session.hosted
        if not isinstance(seat, Seat):
            return
        seat.run.seats.discard(session.id)
        if seat.episode is not None:
            self.close_run(seat.run, f"an episode in play was lost: its session was closed ({reason})")

    def close_run(self, run: Run, reason: str) -> None:
        """Close `run` as incomplete, and the sessions it still holds."""
        if not self.book.close(run, "incomplete", reason) or self.sessions is None:
            return
        for session_id in list(run.seats):
            session = self.sessions.find(session_id)
            if session is not None:
                self._spawn(self.sessions.close(session, "closed"))

    # ------------------------------------------------------------------ episodes
    async def reset(self, store: SessionStore, session: Session, req: ResetRequest) -> Any:
        seat: Seat = session.hosted
        run = seat.run
        if req.seed is not None or req.options is not None:
            raise ApiError(422, "sealed_reset", "a sealed run's seeds and trials are the board's: reset takes no seed "
                                                "and no options")
        run.touch()
        if seat.episode is not None:
            session.last_used = time.monotonic()  # a resume asks nothing of the env, but it is a use
            return self._resume(seat)
        if not run.playing:
            raise ApiError(409, "run_played", "every episode of the run is played; it is being verified")
        index = run.take(seat.cell, session.id)
        if index is None:
            raise ApiError(409, "cell_done", "every episode of this env and noise is played or in play; close this "
                                             "session (or open one on another cell)")
        job = run.jobs[index]
        sealed = {"label": run.label(index), "episodes": len(run.jobs), "turn": 0}
        try:
            ep, payload, data = await store.call(session, _start, job, run, session.env, sealed)
        except (ApiError, asyncio.CancelledError):
            run.give_back(index)  # a timeout or a shutdown: the client was shown nothing of it
            raise
        except Exception:
            self._broken(run, "reset")
            raise
        seat.index, seat.episode, seat.history = index, ep, [payload]
        return data

    async def step(self, store: SessionStore, session: Session, req: StepRequest) -> Any:
        seat: Seat = session.hosted
        ep, index = seat.episode, seat.index
        if ep is None or index is None:
            raise ApiError(409, "reset_needed", "no episode in play on this session: reset for the next one")
        run = seat.run
        run.touch()
        try:
            payload, data, record = await store.call(session, _advance, ep, req.action)
        except (ApiError, asyncio.CancelledError):
            raise  # a timeout retires the session, and so closes the run (`retired`)
        except Exception:
            self._broken(run, "step")
            raise
        if payload is None:
            assert record is not None
            seat.end()
            self._finished(run, index, record)
            raise ApiError(413, "record_too_large", f"the episode ended as an agent error: "
                           f"{record['agent_error']['message']}")
        seat.history.append(payload)
        if self.session_metrics is not None:  # the answer is bytes: the app cannot read its errors
            self.session_metrics.step_errors(payload["info"].get("errors"))
        if record is not None:
            seat.end()
            self._finished(run, index, record)
        return data

    def _broken(self, run: Run, what: str) -> None:
        # The board's own failure (an env bug, a view that would leak its seed): the run cannot be
        # finished fairly. The app logs the exception and answers 500; nothing of it is sent.
        log.error("sealed run %s: the board's %s failed; the run is closed", run.run_id, what)
        self.close_run(run, f"the board failed in a {what} (its bug, logged; nothing of it was sent)")

    def fail(self, session: Session, kind: str, message: str, trace: str) -> None:
        """The client's agent failed in the episode in play (it raised, timed out or answered something
        that is not a turn): the episode ends as an agent error, as in the runner, and counts as failed.

        Raises:
            ApiError: 409 no episode in play on the session.
        """
        seat: Seat = session.hosted
        ep, index = seat.episode, seat.index
        if ep is None or index is None:
            raise ApiError(409, "reset_needed", "no episode in play on this session")
        ep.agent_error = {"type": kind[:200], "message": message[:MAX_AGENT_ERROR_CHARS],
                          "traceback": trace[-MAX_AGENT_ERROR_CHARS:]}
        seat.run.touch()
        seat.end()
        self._finished(seat.run, index, ep.record())

    def _finished(self, run: Run, index: int, record: dict[str, Any]) -> None:
        if not run.playing:  # closed while this episode was in play: its records are gone, as it is
            return
        try:
            last = run.record(index, record)
        except RunTooLarge as exc:
            self.close_run(run, str(exc))
            return
        if last:
            self.book.begin_verifying(run)
            self._spawn(self._verify(run))

    async def _verify(self, run: Run) -> None:
        started = time.perf_counter()
        entry = await asyncio.to_thread(self.book.finish, run)
        if self.metrics is not None:
            self.metrics.verified("sealed", "rejected" if entry is None else "accepted", time.perf_counter() - started)

    def _resume(self, seat: Seat) -> bytes:
        ep, index = seat.episode, seat.index
        assert ep is not None and index is not None
        last = seat.history[-1]
        sealed = {"label": seat.run.label(index), "episodes": len(seat.run.jobs), "turn": len(ep.actions),
                  "resumed": True, "history": seat.history, "actions": ep.actions}
        return encode({"obs": last["obs"], "info": {**last["info"], "sealed": sealed}}, ep.job.seed)

    # ------------------------------------------------------------------ upkeep
    async def upkeep(self) -> None:
        await self.sweep()

    async def sweep(self) -> int:
        """End the episodes in play too long; close the runs idle past the grace period, too long,
        or of a revoked token; return how many runs were closed."""
        for run, index, session_id in self.book.overdue():
            session = self.sessions.find(session_id) if self.sessions is not None else None
            if session is not None:
                await self._time_out(run, index, session)
        runs = [r for r in self.book.live_runs() if r.playing]
        revoked = self.tokens.revoked_among({r.token.id for r in runs}) if runs else set()
        closing = self.book.sweep(revoked)
        for run, why in closing:
            self.close_run(run, why)
        return len(closing)

    async def _time_out(self, run: Run, index: int, session: Session) -> None:
        async with session.lock:  # not in the middle of one of its steps
            seat = session.hosted
            if not isinstance(seat, Seat) or seat.index != index or seat.episode is None or not run.playing:
                return
            limit = self.book.config.max_episode_s
            seat.episode.agent_error = {"type": "EpisodeTimeout", "message": f"episode exceeded {limit:g} s on the "
                                        "board", "traceback": ""}
            record = seat.episode.record()
            seat.end()
            self._finished(run, index, record)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for the runs being verified (and the closes in flight)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


def _presented(conn: HTTPConnection) -> str:
    try:
        return bearer(conn.headers.get("authorization"))
    except Unauthorized as exc:
        raise ApiError(401, "unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}) from None


def _cell_for(run: Run, body: CreateSession) -> Cell:
    kwargs = body.kwargs.model_dump(exclude_none=True)
    noise = kwargs.pop("noise", None) if body.noise is None else body.noise
    wanted = (body.env_id, None if noise in (None, "none") else noise, tuple(sorted(kwargs.items())))
    for cell in run.cells():
        if cell == wanted:
            return cell
    offered = "; ".join(f"{c[0]} kwargs={dict(c[2])} noise={c[1]}" for c in run.cells())
    raise ApiError(422, "not_in_run", f"the run has no cell {wanted[0]} kwargs={dict(wanted[2])} noise={wanted[1]}; "
                                      f"its cells: {offered}")


def refusal(exc: RunRefused) -> ApiError:
    """A `RunRefused` as the env server's error answer."""
    return ApiError(exc.status, exc.code, exc.message, exc.headers)
