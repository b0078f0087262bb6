"""`ActionCandidates`: every info carries ``info["candidates"]``, the candidate actions for the next step.

The list comes from a candidate builder (`agentgym.agents.candidates`), chosen per episode from
the public task family; the builder reads only what any agent sees, so the wrapper adds nothing
hidden.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from agentgym.agents.candidates import CandidateBuilder, CandidateConfig, make_builder

__all__ = ["ActionCandidates"]


class ActionCandidates(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """Adds ``info["candidates"]``, the candidate actions for the next step, to every info.

    The builder is chosen per episode from the public task family (``info["task"]["family"]``)
    unless `builder` names one; it sees only `public_view(info)` and the actions taken. Actions
    pass through unchanged: the env still takes any string.

    Args:
        env: the env to wrap (any env whose infos carry chat ``messages``).
        config: a `CandidateConfig` or a mapping of its fields.
        builder: a family whose builder to use always (``"generic"`` for `GenericCandidates`),
            or None to follow the task family.
    """

    def __init__(self, env: gym.Env, config: CandidateConfig | Mapping[str, Any] | None = None,
                 builder: str | None = None) -> None:
        cfg = CandidateConfig.of(config)
        RecordConstructorArgs.__init__(self, config=asdict(cfg), builder=builder)
        gym.Wrapper.__init__(self, env)
        self.config = cfg
        self.builder_family = builder
        self._builder: CandidateBuilder | None = None

    @property
    def builder(self) -> CandidateBuilder:
        """The current episode's builder."""
        if self._builder is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._builder

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        family = self.builder_family or (info.get("task") or {}).get("family")
        self._builder = make_builder(family, self.config)
        self._builder.reset(obs, info)
        info["candidates"] = self._builder.candidates()
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        builder = self.builder
        builder.step(action, obs, info)
        info["candidates"] = [] if terminated or truncated else builder.candidates()
        return obs, reward, terminated, truncated, info
