"""Which episode an MCP session plays, chosen when the session starts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agentgym.eval.jobs import EpisodeJob

__all__ = ["EpisodeChoice", "QUERY_KEYS"]

#: The query parameters of the MCP endpoint's URL that choose a session's episode.
QUERY_KEYS = ("env", "seed", "trial", "noise", "split", "difficulty", "suite", "episode")
_MAX_TEXT = 128


@dataclass(frozen=True)
class EpisodeChoice:
    """An episode to play: an env id and its make arguments, a seed and a trial, or the
    `episode`-th episode of a suite (its env, noise, split and seed).

    Args:
        env: the env id.
        seed: the reset's seed.
        trial: the trial number (what the record's key says).
        noise: a noise preset or spec (None: none).
        split: the task split the env draws from (None: the env's default).
        difficulty: the task difficulty (None: the env's mix).
        suite: a suite id; with it, `episode` picks the job and the fields above are ignored.
        episode: the index of the job in the suite's fixed order.
    """

    env: str = "AgentRL/Dialog-v0"
    seed: int = 0
    trial: int = 0
    noise: str | None = None
    split: str | None = None
    difficulty: str | None = None
    suite: str | None = None
    episode: int = 0

    def with_query(self, query: Mapping[str, str]) -> EpisodeChoice:
        """This choice with the session URL's query parameters (`QUERY_KEYS`) in place of its own.

        Raises:
            ValueError: an unknown parameter, or a value of the wrong kind.
        """
        unknown = sorted(set(query) - set(QUERY_KEYS))
        if unknown:
            raise ValueError(f"unknown query parameter {unknown[0]!r}; known: {', '.join(QUERY_KEYS)}")
        changes: dict[str, Any] = {}
        for key, raw in query.items():
            if len(raw) > _MAX_TEXT:
                raise ValueError(f"query parameter {key!r} is longer than {_MAX_TEXT} characters")
            if key in ("seed", "trial", "episode"):
                try:
                    changes[key] = int(raw)
                except ValueError:
                    raise ValueError(f"query parameter {key!r} must be an integer, got {raw!r}") from None
                if changes[key] < 0:
                    raise ValueError(f"query parameter {key!r} must not be negative, got {raw!r}")
            else:
                changes[key] = None if raw in ("", "none") and key != "env" else raw
        if changes.get("suite") is not None:
            from agentgym.bench.suites import SUITES

            if changes["suite"] not in SUITES:  # a client never names a file on the server
                raise ValueError(f"unknown suite {changes['suite']!r}; built-in suites: {', '.join(SUITES)}")
        return replace(self, **changes)

    def job(self) -> EpisodeJob:
        """The episode as a job (as `agentgym eval` and `agentgym bench` would play it).

        Raises:
            ValueError: an unknown env id or suite, or an episode past the suite's end.
        """
        import gymnasium as gym

        import agentgym  # noqa: F401  (registers the ids)

        if self.suite is not None:
            from agentgym.bench.suites import get_suite

            jobs = get_suite(self.suite).jobs()
            if self.episode >= len(jobs):
                raise ValueError(f"suite {self.suite} has {len(jobs)} episodes; episode {self.episode} is past its end")
            return jobs[self.episode]
        if self.env not in gym.registry or not self.env.startswith("AgentRL/") or self.env == "AgentRL/Remote-v0":
            raise ValueError(f"unknown env id {self.env!r}")
        kwargs = tuple(sorted((k, v) for k, v in (("split", self.split), ("difficulty", self.difficulty))
                              if v is not None))
        return EpisodeJob(env_id=self.env, seed=self.seed, trial=self.trial, noise=self.noise, kwargs=kwargs)
