"""Registration of every agentgym id with Gymnasium, one block per family.

Every id is registered with the same entry point, `agentgym.noise.factory:make_env`, given the
family's env class as ``env_entry_point``: it makes the env and, when ``gym.make(id, noise=...)``
asks for noise, wraps it in the noise wrappers (they then show in ``env.spec``). Both are
strings, so registering imports nothing heavy.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Callable

import gymnasium as gym

__all__ = ["register_envs", "register_env", "import_env_module", "importable_working_dir"]

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


def register_env(env_id: str, entry_point: str | Callable[..., gym.Env], **kwargs: Any) -> None:
    """Register an agentgym env under any namespace, e.g. ``MyOrg/Shop-v0``, as the families are.

    Then ``gym.make(env_id, noise="medium")`` applies noise, `gym.make(env.spec)` and a fresh
    process rebuild it, and the `agentgym` command takes it as ``module:MyOrg/Shop-v0`` (the module
    that registers it, imported first, as in ``gym.make("module:MyOrg/Shop-v0")``).

    Args:
        env_id: the id, ``[Namespace/]Name-vN``.
        entry_point: ``"module:function"`` making the env (an `AgentEnv`, e.g. from
            `agentgym.make_tool_env`), or that function itself when its module can be imported by
            name (not ``__main__``): specs, records and replays name it by its import path.
        **kwargs: default keyword arguments for the entry point (JSON data, as specs must be).

    Raises:
        ValueError: the entry point cannot be named by an import path.
    """
    target = entry_point if isinstance(entry_point, str) else _import_path(entry_point)
    if ":" not in target:
        raise ValueError(f"entry_point must look like 'module:function', got {target!r}")
    spec_kwargs = {"env_entry_point": target, **kwargs}
    existing = gym.registry.get(env_id)
    if existing is not None and existing.entry_point == _FACTORY and existing.kwargs == spec_kwargs:
        return  # the module was imported again: nothing changes
    gym.register(id=env_id, entry_point=_FACTORY, kwargs=spec_kwargs, disable_env_checker=True)


def _import_path(fn: Callable[..., Any]) -> str:
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or not name or "<" in name or "." in name:
        raise ValueError(f"{fn!r} has no import path (a function of __main__, a lambda or a nested function): "
                         "define it at the top of an importable module, or pass 'module:function'")
    return f"{module}:{name}"


def import_env_module(env_id: str) -> str:
    """Import the module of a ``module:Namespace/Name-vN`` id (as `gym.make` would) and check that
    it registered the id; return `env_id` unchanged (`gym.make` takes it as it is). An id without
    a module part is left to `gym.make`.

    The working directory is importable (`importable_working_dir`), so that ``agentgym eval
    examples.own_env:MyOrg/Shop-v0`` finds ``examples/own_env.py`` where it is run.

    Raises:
        ValueError: the module cannot be imported, or it did not register the id.
    """
    module, sep, name = env_id.rpartition(":")
    if not sep:
        return env_id
    if not module:
        raise ValueError(f"{env_id!r}: the module before ':' is empty")
    importable_working_dir()
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"cannot import {module!r}, named in {env_id!r}: {exc}") from None
    if name not in gym.registry:
        raise ValueError(f"no environment {name!r}: importing {module!r} did not register it")
    return env_id


def importable_working_dir() -> None:
    """Make modules of the working directory importable, as ``python -m`` does, for the
    ``module:...`` names the `agentgym` command takes (envs, agents) and the worker processes it
    starts (they inherit the search path). It goes last: it never shadows an installed module."""
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.append(cwd)
