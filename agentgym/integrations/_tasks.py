"""Episodes as trainers see them: a `TaskSpec` per dataset row, and an `EnvSession` that plays it.

Every trainer feeds its rollouts from a dataset, so an episode is named by a row: the env id, the
seed, and the env's arguments (noise, split, difficulty ...). The same row always gives the same
task, in any process and on any machine, in process or on an env server.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

__all__ = ["RAY_ACTORS", "EnvSession", "TaskSpec", "episode_summary", "task_specs"]

#: The `remote_url` that makes the envs on Ray env actors (`agentgym.rayenv`) instead of an env server.
RAY_ACTORS = "ray"


@dataclass(frozen=True)
class TaskSpec:
    """One episode: an env id, a seed and the env's arguments.

    A row carries it as a flat mapping (`to_row`, `from_row`), or as JSON text where a trainer
    allows only a string (`to_json`, `from_json`).
    """

    #: A registered id, e.g. ``AgentRL/Dialog-v0``.
    env_id: str
    #: The episode seed: the same seed gives the same task; None lets the env draw a fresh one.
    seed: int | None
    #: A noise spec or preset for ``gym.make(env_id, noise=...)``; None for none.
    noise: str | None = None
    #: ``train`` or ``test``.
    split: str = "train"
    #: ``easy``, ``medium``, ``hard``, or None to draw one per episode.
    difficulty: str | None = None
    #: A domain of the env, or None to draw one of the split's domains per episode.
    domain: str | None = None
    #: The turn budget, or None for the task's own.
    max_turns: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.env_id, str) or not self.env_id:
            raise ValueError(f"env_id must be a non-empty str, got {self.env_id!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ValueError(f"seed must be an int >= 0 or None, got {self.seed!r}")

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TaskSpec:
        """The spec a row holds; a key that is no field is an error (a misspelt column must not
        silently fall back to a default)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(row) - fields)
        if unknown:
            raise ValueError(f"unknown task fields {unknown}; a task row has {sorted(fields)}")
        values = dict(row)
        seed = values.get("seed")
        if hasattr(seed, "item"):  # a numpy scalar from a parquet or Arrow column
            values["seed"] = seed.item()
        return cls(**values)

    def to_row(self) -> dict[str, Any]:
        """The spec as a flat dict of JSON values."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, text: str) -> TaskSpec:
        """The spec `to_json` wrote."""
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError(f"a task spec is a JSON object, got {text[:80]!r}")
        return cls.from_row(value)

    def to_json(self) -> str:
        """The spec as JSON text (for trainers whose rows carry only a string label)."""
        return json.dumps(self.to_row(), sort_keys=True)

    def env_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``gym.make`` for this spec (the seed goes to reset)."""
        kwargs: dict[str, Any] = {"split": self.split}
        for name in ("noise", "difficulty", "domain", "max_turns"):
            value = getattr(self, name)
            if value is not None:
                kwargs[name] = value
        return kwargs

    def env_key(self) -> tuple[Any, ...]:
        """What decides the env an episode runs in: every field but the seed."""
        return (self.env_id, *sorted(self.env_kwargs().items()))


def task_specs(env_id: str, seeds: Iterable[int], **env_kwargs: Any) -> list[TaskSpec]:
    """One spec per seed, with the same env arguments (`TaskSpec`'s fields)."""
    return [TaskSpec(env_id=env_id, seed=int(seed), **env_kwargs) for seed in seeds]


class EnvSession:
    """The env an adapter instance plays its episodes in.

    The env is made when the first spec comes, in this process, on an env server through
    `agentgym.server.RemoteEnv` (`remote_url`), or on a Ray env actor through
    `agentgym.rayenv.RayEnv` (`remote_url` ``"ray"``: the trainer's Ray cluster), and kept while later specs name the same env, so
    a pooled adapter pays for ``gym.make`` once, not once per episode.

    Args:
        remote_url: an ``agentgym serve`` server to step the env on, ``"ray"`` for the env actors
            of this process's pool (`agentgym.rayenv.pool.default_pool`), or None for in process.
    """

    def __init__(self, remote_url: str | None = None) -> None:
        self.remote_url = remote_url
        self._env: gym.Env | None = None
        self._key: tuple[Any, ...] | None = None
        self.spec: TaskSpec | None = None
        #: The episode's return so far (the task score once it has ended, by default).
        self.total_reward = 0.0
        #: Whether the episode has ended (terminated or truncated).
        self.done = False
        #: ``info["episode_summary"]`` once the episode has ended.
        self.episode: dict[str, Any] | None = None
        #: The reset info of the current episode.
        self.reset_info: dict[str, Any] = {}

    def reset(self, spec: TaskSpec) -> tuple[str, dict[str, Any]]:
        """Start the episode of `spec`; the env's ``(obs, info)``."""
        if self._env is None or spec.env_key() != self._key:
            self.close()
            self._env = self._make(spec)
            self._key = spec.env_key()
        obs, info = self._env.reset(seed=spec.seed)
        self.spec = spec
        self.total_reward = 0.0
        self.done = False
        self.episode = None
        self.reset_info = info
        return obs, info

    def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One env step; the env's 5-tuple. Stepping an ended episode raises ``ResetNeeded``."""
        if self._env is None:
            raise gym.error.ResetNeeded("call reset() first")
        obs, reward, terminated, truncated, info = self._env.step(action)
        self.total_reward += float(reward)
        if terminated or truncated:
            self.done = True
            self.episode = info.get("episode_summary")
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        """Close the env (a remote one frees its server session)."""
        if self._env is not None:
            env, self._env, self._key = self._env, None, None
            env.close()

    def _make(self, spec: TaskSpec) -> gym.Env:
        if self.remote_url is None:
            return gym.make(spec.env_id, **spec.env_kwargs())
        if self.remote_url == RAY_ACTORS:
            from agentgym.rayenv.client import RayEnv

            return RayEnv(spec.env_id, **spec.env_kwargs())  # on this process's pool (Ray joined or started)
        from agentgym.server.client import RemoteEnv

        kwargs = spec.env_kwargs()
        return RemoteEnv(self.remote_url, spec.env_id, noise=kwargs.pop("noise", None), **kwargs)


def episode_summary(session: EnvSession) -> dict[str, Any]:
    """Scalars of an ended episode for a trainer's logs: success, score, turns, tool calls."""
    episode = session.episode or {}
    return {
        "success": float(bool(episode.get("success", False))),
        "score": float(episode.get("score", 0.0)),
        "turns": float(episode.get("turns", 0)),
        "tool_calls": float(episode.get("tool_calls", 0)),
        "finished": float(session.done),
    }
