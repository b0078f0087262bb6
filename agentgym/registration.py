"""Registration of every agentgym id with Gymnasium, one block per family.

Every id is registered with the same entry point, `agentgym.noise.factory:make_env`, given the
family's env class as ``env_entry_point``: it makes the env and, when ``gym.make(id, noise=...)``
asks for noise, wraps it in the noise wrappers (they then show in ``env.spec``). Both are
strings, so registering imports nothing heavy.
"""

from __future__ import annotations

import gymnasium as gym

__all__ = ["register_envs"]

#: id -> the env's entry point. Episode length is the env's own turn budget, so no TimeLimit
#: wrapper is added: it would truncate differently per difficulty.
_ENVS: dict[str, str] = {
    # Dialog: find and book for a user whose constraints arrive over turns.
    "AgentRL/Dialog-v0": "agentgym.envs.dialog.env:DialogEnv",
    # ToolUse: chains of dependent tool calls under domain policies (finance, calendar, orders, ops).
    "AgentRL/ToolUse-v0": "agentgym.envs.tooluse.env:ToolUseEnv",
    # CrossTask: one session that switches between dialog and tool-use tasks and comes back.
    "AgentRL/CrossTask-v0": "agentgym.envs.crosstask.env:CrossTaskEnv",
}

#: Makes an id's env and applies the noise it is asked for (see the module docstring).
_FACTORY = "agentgym.noise.factory:make_env"


def register_envs() -> tuple[str, ...]:
    """Register the ids not yet registered; return all of them. Safe to call twice."""
    for env_id, entry_point in _ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=_FACTORY, kwargs={"env_entry_point": entry_point},
                         disable_env_checker=True)
    # A client of an env server (`agentgym serve`): not a task family, so not in ENV_IDS.
    if "AgentRL/Remote-v0" not in gym.registry:
        gym.register(id="AgentRL/Remote-v0", entry_point="agentgym.server.client:RemoteEnv",
                     disable_env_checker=True)
    return tuple(_ENVS)
