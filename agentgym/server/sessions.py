"""Sessions: admission under the cap, serialised env calls with a timeout, and the idle reaper.

Everything here runs on the server's event loop. Env calls run inline on it under a watchdog
(``env_calls="inline"``, the default: no thread per session), the heavy ones (make, reset) one
per pass of the loop so that steps never wait behind a burst of them (`agentgym.server.lanes`);
or on each session's own thread (``"thread"``), so a step that sleeps or blocks in I/O holds only
its own session. Either way a call never escapes its timeout.
Admission is a check and an increment with no ``await`` between them, so concurrent creates can
never push the count past the cap; the env is built only after its slot is taken.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym.noise.spec import NoiseSpecError, parse_noise
from agentgym.server.config import ServerConfig
from agentgym.server.inline import Watchdog
from agentgym.server.lanes import OnePerPass
from agentgym.server.models import EnvKwargs

__all__ = ["ApiError", "CLIENT_KWARGS", "CLOSE_REASONS", "EnvThread", "Session", "SessionStore"]

log = logging.getLogger("agentgym.server")


class ApiError(Exception):
    """A client-facing error: an HTTP status, a stable code and a message (never a traceback)."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


class EnvThread:
    """The one thread that makes, steps and closes one session's env, in order.

    A call costs a queue put and one wake-up of the event loop, less than a pooled executor's
    futures; and an env is only ever touched by its own thread.
    """

    _names = itertools.count()

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"agentgym-env-{next(self._names)}", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Queue ``fn(*args)``; the future settles on the calling loop when it has run."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return future

    def stop(self) -> None:
        """End the thread once the jobs queued so far have run."""
        self._jobs.put(None)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, fn, args = job
            try:
                outcome: tuple[Any, BaseException | None] = (fn(*args), None)
            except Exception as exc:  # noqa: BLE001 (handed to the awaiting request, which decides)
                outcome = (None, exc)
            except BaseException as exc:  # noqa: BLE001 (SystemExit from an env must not end this thread)
                outcome = (None, RuntimeError(f"the env call raised {exc!r}"))
            try:
                loop.call_soon_threadsafe(_settle, future, *outcome)
            except RuntimeError:
                return  # The loop is closed (server shutdown): nobody is waiting any more.


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():  # Cancelled by a timeout: nobody waits for this answer.
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)


class _Expired(TimeoutError):
    """An env call ran over the step timeout."""


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(_Expired())


def _make_into(made: list[gym.Env], env_id: str, kwargs: dict[str, Any]) -> None:
    # The env lands in `made` even when its creator has given up waiting, so it can be closed.
    made.append(gym.make(env_id, **kwargs))


def _close_envs(envs: list[gym.Env]) -> None:
    for env in envs:
        try:
            env.close()
        except (Exception, SystemExit):  # noqa: BLE001 (the env's bug: logged, and the slot is freed anyway)
            log.exception("closing an env failed")


def _no_exit(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` inline, where an env's ``sys.exit()`` must become an error, not end the server."""
    try:
        return fn(*args)
    except SystemExit as exc:
        raise RuntimeError(f"the env call raised {exc!r}") from exc


#: The env arguments a client may set (`EnvKwargs`, where each has its bounds); noise travels apart.
CLIENT_KWARGS = frozenset(EnvKwargs.model_fields) - {"noise"}
#: Why a session closes: DELETE or its host (``closed``), the idle reaper, its WebSocket's end,
#: an env call past the step timeout, the server's shutdown.
CLOSE_REASONS = ("closed", "idle", "disconnect", "step_timeout", "shutdown")


@dataclass(eq=False)
class Session:
    """One env, its thread, and what the server knows about its use."""

    id: str
    env_id: str
    env: gym.Env
    #: The thread its env calls run on (None when they run inline, on the event loop).
    thread: EnvThread | None
    last_used: float
    #: Serialises every env call on this session. Never held across network I/O: a client that
    #: stops reading must not keep its session from the reaper.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Closed to clients: later requests get 404.
    closed: bool = False
    #: An env call overran its timeout; its thread closes the env once that call ends.
    abandoned: bool = False
    #: Called on the loop with the reason when the session is closed, e.g. to close its WebSocket.
    on_close: Callable[[str], None] | None = None
    #: What a `agentgym.server.host.SessionHost` keeps about the session (None for the default host).
    hosted: Any = None
    #: A client has used it since it was made (an env call, or a WebSocket attached): until then it
    #: is reaped after the short `ServerConfig.unused_timeout_s`, not the idle timeout.
    used: bool = False


class SessionStore:
    """The live sessions of one server.

    Args:
        config: the limits.
        env_ids: the ids sessions may be opened on (the allow-list; nothing else is ever made).
        on_retire: called once with each session and the reason when it is closed to clients.
        upkeep: awaited after each reaper pass (a host's own periodic work).
        id_prefix: what every session id begins with (a worker's name, so that any worker can
            tell which one holds a session: `agentgym.server.routing`).
    """

    def __init__(self, config: ServerConfig, env_ids: Iterable[str],
                 on_retire: Callable[[Session, str], None] | None = None,
                 upkeep: Callable[[], Awaitable[Any]] | None = None, id_prefix: str = "") -> None:
        self.config = config
        self.id_prefix = id_prefix
        self.env_ids = frozenset(env_ids)
        self._on_retire = on_retire
        self._upkeep = upkeep
        self._sessions: dict[str, Session] = {}
        # Slots held: live sessions, creates in progress, and sessions whose timed-out env call
        # still runs on their thread. The cap applies to this number, so it bounds all three,
        # and with them the number of env threads.
        self._slots = 0
        self.peak = 0
        #: Sessions opened so far, and closed so far by reason (`CLOSE_REASONS`).
        self.opened = 0
        self.closed_by: dict[str, int] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._watchdog: Watchdog | None = None  # for env_calls="inline", made on the loop's thread
        self._heavy = OnePerPass()  # inline makes and resets, one per pass of the loop

    # ------------------------------------------------------------------ queries
    @property
    def live(self) -> int:
        """Sessions open now."""
        return len(self._sessions)

    def find(self, session_id: str) -> Session | None:
        """The open session `session_id`, or None."""
        return self._sessions.get(session_id)

    def get(self, session_id: str) -> Session:
        """The open session `session_id`.

        Raises:
            ApiError: 404, no such session (never opened, closed, or reaped).
        """
        session = self._sessions.get(session_id)
        if session is None:
            raise ApiError(404, "unknown_session", f"no open session {session_id!r} (closed, reaped or never opened)")
        return session

    # ------------------------------------------------------------------ lifecycle
    async def create(self, env_id: str, kwargs: dict[str, Any], noise: str | None) -> Session:
        """Admit, then build the env on the session's new thread.

        Raises:
            ApiError: 404 unknown env, 429 over the cap, 422 bad kwargs, 504 too slow.
        """
        if env_id not in self.env_ids:
            raise ApiError(404, "unknown_env", f"{env_id!r} is not served here; GET /envs lists the ids")
        if "noise" in kwargs:
            if noise is not None:
                raise ApiError(422, "invalid_env_args", "give the noise spec once: as 'noise' or in 'kwargs'")
            kwargs = dict(kwargs)
            noise = kwargs.pop("noise")
        # An allow-list: the env's parts and gym.make's own parameters would let a client choose
        # the code a session runs, or its memory.
        unknown = sorted(kwargs.keys() - CLIENT_KWARGS)
        if unknown:
            raise ApiError(422, "invalid_env_args", f"kwargs may not set {unknown}; the env arguments a client "
                                                    f"may set are {sorted(CLIENT_KWARGS)} and noise")
        # The registered kwargs are the operator's: a variant registered with a fixed difficulty keeps it.
        reserved = sorted(gym.spec(env_id).kwargs.keys() & kwargs.keys())
        if reserved:
            raise ApiError(422, "invalid_env_args", f"kwargs may not set {reserved}: the id's registered "
                                                    "arguments are fixed by the server")
        if noise is not None:
            try:
                parse_noise(noise)  # before a slot is taken: a bad spec costs nothing
            except NoiseSpecError as exc:
                raise ApiError(422, "invalid_env_args", str(exc)) from None
            kwargs = {**kwargs, "noise": noise}
        if self._slots >= self.config.max_sessions:
            raise ApiError(429, "too_many_sessions",
                           f"the server holds its cap of {self.config.max_sessions} sessions; retry later",
                           headers={"Retry-After": str(self.config.retry_after_s)})
        self._slots += 1  # No await since the check: admission is atomic on the event loop.
        self.peak = max(self.peak, self._slots)
        thread = EnvThread() if self.config.env_calls == "thread" else None
        made: list[gym.Env] = []
        try:
            await self._run(thread, _make_into, made, env_id, kwargs, heavy=True)
        except (_Expired, asyncio.CancelledError) as exc:
            self._end(thread, made)  # Once the make ends, what it made is closed and the slot freed.
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise self._timeout_error("making the env") from None
        except BaseException as exc:
            if thread is not None:
                thread.stop()
            self._release_slot()
            if isinstance(exc, (TypeError, ValueError, gym.error.Error)):
                raise ApiError(422, "invalid_env_args", f"cannot make {env_id}: {exc}") from None
            raise
        session = Session(id=self.id_prefix + secrets.token_urlsafe(16), env_id=env_id, env=made[0], thread=thread,
                          last_used=time.monotonic())
        self._sessions[session.id] = session
        self.opened += 1
        return session

    async def close(self, session: Session, reason: str = "closed") -> None:
        """Close a session: later requests get 404; the env closes once no call runs on it."""
        if session.closed:
            return
        self._retire(session, reason)
        async with session.lock:
            done = None if session.abandoned else self._end(session.thread, [session.env])
        if session.on_close is not None:
            session.on_close(reason)
        if done is not None:
            try:
                await self._wait(asyncio.shield(done))
            except _Expired:
                log.warning("closing the env of session %s is slow; its slot is freed when it ends", session.id)

    async def close_all(self) -> None:
        """Close every session (server shutdown)."""
        for session in list(self._sessions.values()):
            await self.close(session, "shutdown")
        if self._watchdog is not None:
            self._watchdog.stop()

    # ------------------------------------------------------------------ env calls
    async def call(self, session: Session, fn: Callable[..., Any], *args: Any, heavy: bool = False) -> Any:
        """Run ``fn(*args)`` (an env call) on the session's thread, or inline, under the step timeout.

        The caller holds ``session.lock``. A call that overruns loses its session: the env may be
        mid-step, so it is never stepped again, and its thread closes it when the call ends.
        A `heavy` call (a reset: ten steps' worth of work) runs inline only one per pass of the loop.

        Raises:
            ApiError: 404 if the session closed meanwhile, 504 on timeout.
        """
        if session.closed:
            raise ApiError(404, "unknown_session", f"session {session.id!r} was closed")
        session.last_used = time.monotonic()
        session.used = True
        try:
            return await self._run(session.thread, fn, *args, heavy=heavy)
        except (_Expired, asyncio.CancelledError) as exc:
            session.abandoned = True
            self._retire(session, "step_timeout")
            self._end(session.thread, [session.env])
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise self._timeout_error("the env call") from None
        finally:
            session.last_used = time.monotonic()

    async def _run(self, thread: EnvThread | None, fn: Callable[..., Any], *args: Any, heavy: bool = False) -> Any:
        """``fn(*args)`` on `thread`, or inline under the watchdog (a `heavy` one in its pass of
        the loop); `_Expired` if it overruns."""
        if thread is not None:
            return await self._wait(thread.submit(fn, *args))
        if self._watchdog is None or not self._watchdog.here():
            # Made on the loop's thread; a harness that runs each request on a loop of its own
            # (Starlette's TestClient outside a `with`) gets one for the thread it is on now.
            if self._watchdog is not None:
                self._watchdog.stop()
            self._watchdog = Watchdog(self.config.step_timeout_s, _Expired)
        if not heavy:
            return self._watchdog.run(_no_exit, fn, *args)
        async with self._heavy:
            return self._watchdog.run(_no_exit, fn, *args)

    async def _wait(self, future: asyncio.Future[Any]) -> Any:
        # A bare timer, not asyncio.timeout(): on the step path that costs more than the thread hop.
        timer = future.get_loop().call_later(self.config.step_timeout_s, _expire, future)
        try:
            return await future
        finally:
            timer.cancel()

    def _timeout_error(self, what: str) -> ApiError:
        return ApiError(504, "step_timeout", f"{what} ran over the {self.config.step_timeout_s:g} s step timeout; "
                                             "the session is closed")

    def _retire(self, session: Session, reason: str) -> None:
        session.closed = True
        if self._sessions.pop(session.id, None) is None:
            return
        self.closed_by[reason] = self.closed_by.get(reason, 0) + 1
        if self._on_retire is not None:
            try:
                self._on_retire(session, reason)
            except Exception:  # noqa: BLE001 (a host's bug must not leave the session half closed)
                log.exception("the session host failed on retiring session %s", session.id)

    def _end(self, thread: EnvThread | None, envs: list[gym.Env]) -> asyncio.Future[Any] | None:
        """Close `envs` on `thread` after whatever it runs now, end it, then free the slot."""
        if thread is None:  # Inline: nothing runs on them now.
            _close_envs(envs)
            self._release_slot()
            return None
        done = thread.submit(_close_envs, envs)
        thread.stop()
        done.add_done_callback(self._release_slot)
        return done

    def _release_slot(self, _: Any = None) -> None:
        self._slots -= 1

    # ------------------------------------------------------------------ reaper
    def start_reaper(self) -> None:
        """Start the background task that closes idle sessions (call on the server's loop)."""
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever(), name="agentgym-reaper")

    async def stop_reaper(self) -> None:
        """Stop the reaper task."""
        if self._reaper is not None:
            self._reaper.cancel()
            try:
                await self._reaper
            except asyncio.CancelledError:
                pass
            self._reaper = None

    async def reap(self) -> int:
        """Close every session idle for longer than the idle timeout, and every one never used
        within the unused timeout of its making; return how many.

        Idle means no request and no WebSocket message, whatever became of the client: a
        vanished client is reaped as surely as one that said goodbye. A session with an env call
        in progress is not idle.
        """
        now = time.monotonic()
        deadline, unused = now - self.config.idle_timeout_s, now - self.config.unused_timeout_s
        idle = [s for s in self._sessions.values()
                if (s.last_used < deadline or (not s.used and s.last_used < unused)) and not s.lock.locked()]
        for session in idle:
            await self.close(session, "idle")
        if idle:
            log.info("reaped %d idle sessions", len(idle))
        return len(idle)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.config.reap_interval_s)
            try:
                await self.reap()
                if self._upkeep is not None:
                    await self._upkeep()
            except Exception:  # noqa: BLE001 (the reaper must outlive one bad pass; it is logged)
                log.exception("reaper pass failed")
