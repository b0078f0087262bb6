"""The episode loop shared by `agentgym run`, the harness and the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym.agents.base import Agent

__all__ = ["EpisodeResult", "run_episode"]


@dataclass
class EpisodeResult:
    """One finished episode: its actions, rewards and the env's `info["episode_summary"]`."""

    seed: int
    actions: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    episode: dict[str, Any] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return bool(self.episode.get("success", False))

    @property
    def score(self) -> float:
        return float(self.episode.get("score", 0.0))


def run_episode(env: gym.Env, agent: Agent, seed: int, options: dict[str, Any] | None = None) -> EpisodeResult:
    """Play one episode of `agent` in `env` from `seed`."""
    obs, info = env.reset(seed=seed, options=options)
    if agent.privileged:
        agent.bind(env.unwrapped)
    agent.reset(obs, info)
    result = EpisodeResult(seed=int(info.get("seed", seed)))
    while True:
        action = agent.act(obs, info)
        result.actions.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        result.rewards.append(float(reward))
        if terminated or truncated:
            result.episode = info.get("episode_summary", {})
            return result
