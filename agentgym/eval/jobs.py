"""What an evaluation plays: episode jobs, agent specs and the key that names an episode.

These are the types every part of a run shares: a suite lists its `EpisodeJob`s, the runner plays
them with the agent an `AgentSpec` builds, a record carries the job's `key`, and resume and the
leaderboard's replay match records on it. Loading the module loads only the standard library, so a
suite, the verifier or the sealed track reads a job without the runner, its backends or gymnasium.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

__all__ = ["AgentSpec", "EpisodeJob", "episode_key"]


def episode_key(env_id: str, noise: str | None, seed: int, trial: int) -> str:
    """The identity of one episode of a run: what resume and replay match on."""
    return f"{env_id}|noise={noise or 'none'}|seed={seed}|trial={trial}"


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to play: an env (id and make kwargs), a seed and a trial."""

    env_id: str
    seed: int
    trial: int = 0
    noise: str | None = None
    kwargs: tuple[tuple[str, Any], ...] = ()
    suite: str | None = None

    @functools.cached_property
    def key(self) -> str:
        """`episode_key` of the job, with its make kwargs appended (``|k=v,...``) when it has any."""
        # Cached (a frozen job's key never changes): resume asks for it three times, the record once.
        extra = ",".join(f"{k}={v}" for k, v in self.kwargs)
        base = episode_key(self.env_id, self.noise, self.seed, self.trial)
        return f"{base}|{extra}" if extra else base

    def make_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``gym.make(env_id, ...)`` for this job (noise included)."""
        kw = dict(self.kwargs)
        if self.noise not in (None, "none"):
            kw["noise"] = self.noise
        return kw


@dataclass(frozen=True)
class AgentSpec:
    """How to build the agent in any process: a built-in name or ``module:Class``, and kwargs."""

    name: str
    kwargs: tuple[tuple[str, Any], ...] = ()

    def build(self) -> Any:
        """A fresh agent (`agentgym.agents.make_agent` of the name and kwargs)."""
        from agentgym.agents import make_agent

        return make_agent(self.name, **dict(self.kwargs))
