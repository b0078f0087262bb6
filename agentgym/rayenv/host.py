"""The body of an env actor: env sessions by id, each made, reset, stepped and closed on call."""

from __future__ import annotations

import itertools
from typing import Any

__all__ = ["EnvHost"]


class EnvHost:
    """Env sessions in one process (a Ray actor's, or this one's in tests).

    One call at a time (an actor runs its calls in order), so an env is never stepped from two
    threads. Sessions are numbered by the host; ids are never reused.
    """

    def __init__(self) -> None:
        import agentgym  # noqa: F401  (registers the ids in the actor's process)

        self._envs: dict[int, Any] = {}
        self._ids = itertools.count(1)

    def open(self, env_id: str, kwargs: dict[str, Any]) -> tuple[int, Any, Any, dict[str, Any]]:
        """Make an env; its session id, observation and action spaces, and metadata."""
        import gymnasium as gym

        env = gym.make(env_id, **kwargs)
        sid = next(self._ids)
        self._envs[sid] = env
        return sid, env.observation_space, env.action_space, dict(env.metadata)

    def reset(self, sid: int, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        return self._env(sid).reset(seed=seed, options=options)

    def step(self, sid: int, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self._env(sid).step(action)

    def step_many(self, calls: list[tuple[int, Any]]) -> list[tuple[Any, float, bool, bool, dict[str, Any]]]:
        """Several sessions' steps in one call (a vector env's on this actor)."""
        return [self._env(sid).step(action) for sid, action in calls]

    def reset_many(self, calls: list[tuple[int, int | None]]) -> list[tuple[Any, dict]]:
        return [self._env(sid).reset(seed=seed) for sid, seed in calls]

    def close(self, sid: int) -> None:
        env = self._envs.pop(sid, None)
        if env is not None:
            env.close()

    def sessions(self) -> int:
        """How many sessions this host holds."""
        return len(self._envs)

    def _env(self, sid: int) -> Any:
        try:
            return self._envs[sid]
        except KeyError:
            raise KeyError(f"no env session {sid} on this actor (closed?)") from None
