"""`RayEnv`: a Gymnasium env whose env lives on a Ray actor of an `EnvActorPool`."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

__all__ = ["RayEnv"]


class RayEnv(gym.Env):
    """An env made on an actor of `pool` and played from here: ``reset``, ``step`` and ``close``
    are calls to the actor, which returns what the env returned (the same episode as in process).

    Args:
        env_id: the registered id to make.
        pool: the actors (default: `agentgym.rayenv.pool.default_pool`).
        noise: a noise preset or spec, as ``gym.make(env_id, noise=...)`` takes it.
        **kwargs: more make arguments.
    """

    def __init__(self, env_id: str, pool: Any = None, *, noise: str | None = None, **kwargs: Any) -> None:
        import ray

        from agentgym.rayenv.pool import default_pool

        self.env_id = env_id
        self.pool = pool if pool is not None else default_pool()
        self._actor = self.pool.next_actor()
        make = dict(kwargs, **({"noise": noise} if noise not in (None, "none") else {}))
        self._sid, self.observation_space, self.action_space, metadata = ray.get(self._actor.open.remote(env_id, make))
        self.metadata = {**metadata, "ray_actor": True}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        import ray

        return ray.get(self._actor.reset.remote(self._sid, seed, options))

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        import ray

        return ray.get(self._actor.step.remote(self._sid, action))

    def close(self) -> None:
        """Close the env on its actor (once; later calls do nothing)."""
        if self._actor is not None:
            import ray

            actor, self._actor = self._actor, None
            try:
                ray.get(actor.close.remote(self._sid))
            except ray.exceptions.RayActorError:
                pass  # the actor is gone, and its env with it
