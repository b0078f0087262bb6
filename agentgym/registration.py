"""Registration of every agentgym id with Gymnasium, one block per family (STYLE rule 4)."""

from __future__ import annotations

import gymnasium as gym

__all__ = ["register_envs"]

#: id -> (entry point, max_episode_steps). Episode length is the env's own turn budget, so no
#: TimeLimit wrapper is added: it would truncate differently per difficulty.
_ENVS: dict[str, str] = {
    # Dialog: find and book for a user whose constraints arrive over turns.
    "AgentRL/Dialog-v0": "agentgym.envs.dialog.env:DialogEnv",
}


def register_envs() -> tuple[str, ...]:
    """Register the ids not yet registered; return all of them. Safe to call twice."""
    for env_id, entry_point in _ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, disable_env_checker=True)
    return tuple(_ENVS)
