"""`SessionHost`: who may use the env server's sessions, and what their resets and steps do.

The default is `agentgym serve`'s rules: any client opens a session on any served env with the
arguments it chooses, resets it with its own seed and sees what the env returns. A host with
other rules keeps everything else of the server (the session cap, the idle reaper, the body and
message limits, the allow-listed env arguments, step and send timeouts, the connection guard),
because it plugs into the same app (`agentgym.server.app.create_app(host=...)`) rather than
beside it. The leaderboard's sealed track is one (`agentgym.leaderboard.sealed.host`).

Every hook runs on the server's event loop; env calls go through `SessionStore.call`, on the
session's own thread and under the step timeout.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.error import ResetNeeded
from starlette.requests import HTTPConnection

from agentgym.server.models import CreateSession, ResetRequest, StepRequest
from agentgym.server.sessions import ApiError, Session, SessionStore
from agentgym.server.wire import reset_payload, step_payload

__all__ = ["SessionHost"]


class SessionHost:
    """The env server's own rules; subclass and override a hook to host sessions differently."""

    #: Sessions outlive their WebSocket: a socket that drops leaves its session to the idle
    #: reaper or to a new socket, which takes it over (the old one is closed). False: a socket
    #: that drops closes its session, and a second socket on a session is refused (4409).
    resumable: bool = False

    def admit(self, conn: HTTPConnection) -> None:
        """Before anything else of every request (its body, its ids): whether the caller may ask at
        all, so that a refused caller gets one answer whatever the request names.

        Raises:
            ApiError: the caller is refused (over a WebSocket: closed with code 4000 + status).
        """

    async def open(self, conn: HTTPConnection, body: CreateSession, store: SessionStore) -> Session:
        """Open a session for a ``POST /sessions`` (the body is validated already).

        Raises:
            ApiError: the request is refused.
        """
        return await store.create(body.env_id, body.kwargs.model_dump(exclude_none=True), body.noise)

    def check(self, conn: HTTPConnection, session: Session) -> None:
        """Before every request on `session`: its HTTP calls, and a WebSocket before it is used.

        Raises:
            ApiError: the request is refused (over a WebSocket: closed with code 4000 + status).
        """

    async def reset(self, store: SessionStore, session: Session, req: ResetRequest) -> dict[str, Any] | bytes:
        """Start an episode (the caller holds ``session.lock``): ``{"obs", "info"}``, or its JSON bytes."""
        try:
            obs, info = await store.call(session, _env_reset, session.env, req.seed, req.options, heavy=True)
        except (ValueError, TypeError) as exc:  # the env's answer to bad seeds, options or kwargs
            raise ApiError(422, "invalid_reset", f"reset rejected its arguments: {exc}") from None
        return reset_payload(obs, info)

    async def step(self, store: SessionStore, session: Session, req: StepRequest) -> dict[str, Any] | bytes:
        """Take one turn (the caller holds ``session.lock``): ``{"obs", "reward", "terminated",
        "truncated", "info"}``, or its JSON bytes."""
        try:
            result = await store.call(session, session.env.step, req.action)
        except ResetNeeded as exc:
            raise ApiError(409, "reset_needed", f"{exc}") from None
        return step_payload(*result)

    async def upkeep(self) -> None:
        """Periodic work of the host's own, run after each pass of the idle reaper."""

    def retired(self, session: Session, reason: str) -> None:
        """`session` was closed to clients, once, whatever closed it: ``closed`` (DELETE),
        ``idle`` (the reaper), ``disconnect``, ``step_timeout`` or ``shutdown``."""


def _env_reset(env: gym.Env, seed: int | None, options: dict[str, Any] | None) -> Any:
    return env.reset(seed=seed, options=options)
