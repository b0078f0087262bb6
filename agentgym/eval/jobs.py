"""What an evaluation plays: episode jobs, agent specs and the key that names an episode.

These are the types every part of a run shares: a suite lists its `EpisodeJob`s, the runner plays
them with the agent an `AgentSpec` builds, a record carries the job's `key`, and resume and the
leaderboard's replay match records on it. Loading the module loads only the standard library, so a
suite, the verifier or the sealed track reads a job without the runner, its backends or gymnasium.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["AgentSpec", "EpisodeJob", "episode_key"]


def episode_key(env_id: str, noise: str | None, seed: int, trial: int) -> str:
    """The identity of one episode of a run: what resume and replay match on."""
    return f"{env_id}|noise={noise or 'none'}|seed={seed}|trial={trial}"


class _JobKey:
    """`EpisodeJob.key`: computed on first use and kept in the job's ``__dict__``, where later reads
    find it before this descriptor. A frozen job's key never changes, so it needs no lock, which
    `functools.cached_property` takes on every first use."""

    def __get__(self, job: "EpisodeJob | None", owner: type | None = None) -> Any:
        if job is None:
            return self
        base = episode_key(job.env_id, job.noise, job.seed, job.trial)
        key = f"{base}|{','.join(f'{k}={v}' for k, v in job.kwargs)}" if job.kwargs else base
        job.__dict__["key"] = key
        return key


@dataclass(frozen=True, init=False)
class EpisodeJob:
    """One episode to play: an env (id and make kwargs), a seed and a trial."""

    env_id: str
    seed: int
    trial: int = 0
    noise: str | None = None
    kwargs: tuple[tuple[str, Any], ...] = ()
    suite: str | None = None

    def __init__(self, env_id: str, seed: int, trial: int = 0, noise: str | None = None,
                 kwargs: tuple[tuple[str, Any], ...] = (), suite: str | None = None) -> None:
        # A frozen dataclass's own __init__ sets each field through object.__setattr__; writing
        # the instance dict at once is the same state for half the cost (a run makes a job per
        # episode).
        d = self.__dict__
        d["env_id"], d["seed"], d["trial"], d["noise"], d["kwargs"], d["suite"] = env_id, seed, trial, noise, kwargs, suite

    #: `episode_key` of the job, with its make kwargs appended (``|k=v,...``) when it has any
    #: (unannotated: not a field of the dataclass).
    key = _JobKey()

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
