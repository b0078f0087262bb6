"""The entry point every ``AgentRL/*`` id is registered with: the env, with the noise it asks for.

``gym.make(id)`` gives the bare env (no wrapper is added, nothing from the noise package runs),
``gym.make(id, noise="tool_failure=0.2")`` the env inside its noise wrappers. Gymnasium lets an
entry point add its own wrappers: they show in ``env.spec.additional_wrappers`` (each records its
arguments) with ``noise`` in ``env.spec.kwargs``, and ``gym.make(env.spec)`` rebuilds the same
stack, which replay relies on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

__all__ = ["make_env"]


def make_env(*, env_entry_point: str, noise: str | Mapping[str, Any] | None = None, **kwargs: Any) -> gym.Env:
    """Make the env of `env_entry_point` with `kwargs`, wrapped in the noise `noise` asks for.

    Args:
        env_entry_point: ``"module:Class"`` of the env (set by the registration, per id).
        noise: a noise spec (`agentgym.noise.spec`): a string, a preset name, a dict, or None.
        **kwargs: the env's own constructor arguments (the env rejects unknown ones).

    Raises:
        NoiseSpecError: the noise spec is malformed; raised before the env is made.
    """
    if noise is None:
        return load_env_creator(env_entry_point)(**kwargs)
    from agentgym.noise.spec import apply_layers, parse_noise

    layers = parse_noise(noise)  # a bad spec fails before the (costly) env is built
    return apply_layers(load_env_creator(env_entry_point)(**kwargs), layers)
