"""`RayVectorEnv`: `num_envs` envs of one id on a pool's actors, stepped all at once."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RayVectorEnv"]


class RayVectorEnv:
    """Envs spread over the actors of a pool; ``step`` sends each actor its envs' actions in one
    call, and the actors step in parallel. Observations are text, so they come back as lists
    (the rewards and flags as arrays); an env whose episode ended is reset with the next seed on
    the following ``step`` (Gymnasium's next-step autoreset), its reset observation in place of
    a step's.

    Args:
        env_id: the registered id.
        num_envs: how many envs.
        pool: the actors (default: `agentgym.rayenv.pool.default_pool`).
        **kwargs: make arguments of every env (``noise=...`` among them).
    """

    def __init__(self, env_id: str, num_envs: int, pool: Any = None, **kwargs: Any) -> None:
        import ray

        from agentgym.rayenv.pool import default_pool

        self.pool = pool if pool is not None else default_pool()
        self.num_envs = num_envs
        self._actors = [self.pool.next_actor() for _ in range(num_envs)]
        opened = ray.get([a.open.remote(env_id, kwargs) for a in self._actors])
        self._sids = [o[0] for o in opened]
        self.single_observation_space, self.single_action_space = opened[0][1], opened[0][2]
        self._seeds: list[int | None] = [None] * num_envs
        self._ended = np.zeros(num_envs, dtype=bool)

    def _by_actor(self) -> dict[Any, list[int]]:
        groups: dict[Any, list[int]] = {}
        for i, actor in enumerate(self._actors):
            groups.setdefault(actor, []).append(i)
        return groups

    def reset(self, *, seed: int | list[int] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """Reset every env (seed ``s``: env ``i`` gets ``s + i``); the observations and infos."""
        import ray

        if isinstance(seed, int):
            seed = [seed + i for i in range(self.num_envs)]
        self._seeds = list(seed) if seed is not None else [None] * self.num_envs
        groups = self._by_actor()
        refs = {a: a.reset_many.remote([(self._sids[i], self._seeds[i]) for i in idx]) for a, idx in groups.items()}
        obs: list[Any] = [None] * self.num_envs
        infos: list[dict[str, Any]] = [{}] * self.num_envs
        for actor, idx in groups.items():
            for i, (o, info) in zip(idx, ray.get(refs[actor]), strict=True):
                obs[i], infos[i] = o, info
        self._ended[:] = False
        return obs, infos

    def step(self, actions: list[Any]) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every env with its action (an ended env is reset instead)."""
        import ray

        groups = self._by_actor()
        obs: list[Any] = [None] * self.num_envs
        infos: list[dict[str, Any]] = [{}] * self.num_envs
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        pending = {}
        for actor, idx in groups.items():
            steps = [i for i in idx if not self._ended[i]]
            resets = [i for i in idx if self._ended[i]]
            for i in resets:
                self._seeds[i] = None if self._seeds[i] is None else self._seeds[i] + self.num_envs
            pending[actor] = (steps, resets, actor.step_many.remote([(self._sids[i], actions[i]) for i in steps]),
                              actor.reset_many.remote([(self._sids[i], self._seeds[i]) for i in resets]))
        for steps, resets, step_ref, reset_ref in pending.values():
            for i, (o, r, te, tr, info) in zip(steps, ray.get(step_ref), strict=True):
                obs[i], rewards[i], terminated[i], truncated[i], infos[i] = o, r, te, tr, info
            for i, (o, info) in zip(resets, ray.get(reset_ref), strict=True):
                obs[i], infos[i] = o, info
        self._ended = terminated | truncated
        return obs, rewards, terminated, truncated, infos

    def close(self) -> None:
        import ray

        if self._sids:
            ray.get([a.close.remote(s) for a, s in zip(self._actors, self._sids, strict=True)])
            self._sids = []
