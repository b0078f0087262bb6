"""Registration of every agentgym id with Gymnasium: one per family of `agentgym.families`.

Every family id is registered with the same factory, `agentgym.noise.factory:make_env`, given the
family's env class as ``env_entry_point``: it makes the env and, when ``gym.make(id, noise=...)``
asks for noise, wraps it in the noise wrappers (they then show in ``env.spec``). Both are plain
``"module:attr"`` strings, as Gymnasium's own entry points are: registering imports nothing heavy,
specs serialise (`EnvSpec.to_json`), ``gym.make(EnvSpec.from_json(...))`` makes the same env, and
records write the same string.

An env's card is its class docstring: `spec_card` gives it whole (``agentgym list --card ID``
prints it), and ``help(gym.make(id).unwrapped)`` shows it with the class.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any, Callable

import gymnasium as gym

from agentgym.families import FAMILIES

__all__ = ["REMOTE_ID", "card_summary", "card_text", "env_card", "env_class_path", "entry_point_text",
           "import_env_module", "importable_working_dir", "is_agentgym_env", "register_env", "register_envs", "spec_card"]

#: id -> the env's entry point, one per family (`agentgym.families`). Episode length is the env's
#: own turn budget, so no TimeLimit wrapper is added: it would truncate differently per difficulty.
_ENVS: dict[str, str] = {f.env_id: f.env for f in FAMILIES}

#: Makes an id's env and applies the noise it is asked for (see the module docstring).
_FACTORY = "agentgym.noise.factory:make_env"
#: The client of an env server (`agentgym serve`): not a task family, so not in ENV_IDS.
REMOTE_ID = "AgentRL/Remote-v0"
_REMOTE = "agentgym.server.client:RemoteEnv"


def _load(path: str) -> Any:
    from gymnasium.envs.registration import load_env_creator

    return load_env_creator(path)


def card_text(card: str, target: str | None = None) -> str:
    """The card of the env class at `card` (``"module:Class"``): its signature and docstring,
    and how `target`, when it is another callable (the noise factory), makes it."""
    cls = _load(card)
    doc = inspect.getdoc(cls) or f"{card} has no docstring."
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        head = card
    else:  # the arguments and their defaults; the annotations would bury them
        empty = inspect.Parameter.empty
        plain = [p.replace(annotation=empty) for p in signature.parameters.values()]
        head = f"{cls.__name__}{signature.replace(parameters=plain, return_annotation=empty)}"
    made = f"Made from {card}: gym.make passes it the spec's kwargs."
    if target is not None and target != card:
        made = (f"Made by {target}: gym.make(id, noise=...) wraps the env in the noise it asks for "
                f"(agentgym.noise); the other kwargs go to {cls.__name__}.")
    return f"{head}\n\n{doc}\n\n{made}"


def card_summary(doc: str | None) -> str:
    """The first line of a card: its summary line, or (a card that opens with a heading) the
    first sentence under its Description heading; empty when it has neither."""
    lines = [line.strip() for line in inspect.cleandoc(doc or "").splitlines()]
    first = next((line for line in lines if line), "")
    if first and not first.startswith("#"):
        return first
    for i, line in enumerate(lines):
        if line.startswith("#") and line.lstrip("# ").lower() == "description":
            paragraph = []
            for text in lines[i + 1:]:
                if not text or text.startswith("#"):
                    break
                paragraph.append(text)
            sentence = " ".join(paragraph).split(". ")[0].rstrip(".")
            return f"{sentence}." if sentence else ""
    return ""


def env_class_path(spec: Any) -> str | None:
    """The ``"module:attr"`` of the env a registered spec makes: the ``env_entry_point`` the noise
    factory is given, or a string entry point itself; None for an entry point that is a callable."""
    entry = spec.entry_point
    if not isinstance(entry, str):
        return None
    if entry == _FACTORY:
        return spec.kwargs.get("env_entry_point") or entry
    return entry


def env_card(spec: Any) -> str:
    """The card (class docstring) of the env a registered spec makes, imported to read it; an
    entry point that is a callable is documented by its own docstring."""
    path = env_class_path(spec)
    return inspect.getdoc(_load(path) if path is not None else spec.entry_point) or ""


def spec_card(spec: Any) -> str:
    """The whole card of a registered spec, as ``agentgym list --card`` prints it: the env's
    signature and docstring, and how the entry point makes it (`card_text`)."""
    path = env_class_path(spec)
    return env_card(spec) if path is None else card_text(path, spec.entry_point)


def entry_point_text(entry_point: Any) -> str:
    """A spec's entry point as records write it: a string as it is, anything else (a class, a
    function) as its repr."""
    return entry_point if isinstance(entry_point, str) else repr(entry_point)


def is_agentgym_env(env_id: str) -> bool:
    """Whether `env_id` is registered as an agentgym env (a family's, or one of `register_env`'s):
    made by the noise factory, so it takes agentgym's env arguments and noise, and plays to records."""
    spec = gym.registry.get(env_id)
    return spec is not None and spec.entry_point == _FACTORY


def register_envs() -> tuple[str, ...]:
    """Register the ids not yet registered; return all of them. Safe to call twice."""
    for env_id, entry_point in _ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=_FACTORY, kwargs={"env_entry_point": entry_point},
                         disable_env_checker=True)
    if REMOTE_ID not in gym.registry:
        gym.register(id=REMOTE_ID, entry_point=_REMOTE, disable_env_checker=True)
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
    own_env:MyOrg/Shop-v0`` run in ``envs/examples/`` finds ``own_env.py`` there.

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
