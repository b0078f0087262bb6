"""Registration of every agentgym id with Gymnasium: one per family of `agentgym.families`.

Every family id is registered with the same factory, `agentgym.noise.factory:make_env`, given the
family's env class as ``env_entry_point``: it makes the env and, when ``gym.make(id, noise=...)``
asks for noise, wraps it in the noise wrappers (they then show in ``env.spec``). Both are
strings, so registering imports nothing heavy.

The entry point in the registry is an `EnvEntryPoint` that carries those strings: calling it
makes the env as the factory does, and ``help(gym.spec(id).entry_point)`` shows the env's card
(its class docstring), which no string entry point can (``help`` looks a string up as a name).
Copied (``copy.deepcopy``, which `EnvSpec.to_json` and every wrapper's ``spec`` do) it becomes
the factory's plain ``"module:attr"`` string, so specs still serialise and
``gym.make(EnvSpec.from_json(...))`` makes the same env; records write that same string.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any, Callable

import gymnasium as gym

from agentgym.families import FAMILIES

__all__ = ["EnvEntryPoint", "REMOTE_ID", "card_summary", "card_text", "env_card", "entry_point_text", "import_env_module",
           "importable_working_dir", "is_agentgym_env", "register_env", "register_envs"]

#: id -> the env's entry point, one per family (`agentgym.families`). Episode length is the env's
#: own turn budget, so no TimeLimit wrapper is added: it would truncate differently per difficulty.
_ENVS: dict[str, str] = {f.env_id: f.env for f in FAMILIES}

#: Makes an id's env and applies the noise it is asked for (see the module docstring).
_FACTORY = "agentgym.noise.factory:make_env"
#: The client of an env server (`agentgym serve`): not a task family, so not in ENV_IDS.
REMOTE_ID = "AgentRL/Remote-v0"
_REMOTE = "agentgym.server.client:RemoteEnv"


class EnvEntryPoint:
    # No class docstring: `__doc__` is the property below, which `help()` of an instance shows.

    def __init__(self, target: str, card: str | None = None) -> None:
        self.target = target
        self.card = card or target

    def __call__(self, **kwargs: Any) -> gym.Env:
        """Make the env: the target called with the spec's kwargs, as a string entry point is."""
        return _load(self.target)(**kwargs)

    @property  # type: ignore[misc]
    def __doc__(self) -> str:  # type: ignore[override]
        """An id's entry point. Calling it calls ``target`` (``"module:attr"``) with the spec's
        kwargs; its docstring is the card of the env class ``card`` names (imported only when
        asked); ``str()`` and copies give the plain ``target`` string."""
        return card_text(self.card, self.target)

    def __str__(self) -> str:
        return self.target

    def __repr__(self) -> str:
        extra = f", card={self.card!r}" if self.card != self.target else ""
        return f"EnvEntryPoint({self.target!r}{extra})"

    def __eq__(self, other: object) -> bool:
        # Equal to the string it copies into, so a spec equals its JSON round trip.
        if isinstance(other, EnvEntryPoint):
            return (self.target, self.card) == (other.target, other.card)
        return isinstance(other, str) and other == self.target

    def __hash__(self) -> int:
        return hash(self.target)

    def __deepcopy__(self, memo: dict[int, Any]) -> str:
        return self.target

    def __reduce__(self) -> tuple[Any, ...]:
        return (EnvEntryPoint, (self.target, self.card))


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


def env_card(spec: Any) -> str:
    """The card (class docstring) of the env a registered spec makes, imported to read it.

    An `EnvEntryPoint` names its env class; a string entry point through the noise factory names
    it in ``env_entry_point``; any other entry point is documented by its own docstring.
    """
    entry = spec.entry_point
    if isinstance(entry, EnvEntryPoint):
        target: Any = _load(entry.card)
    elif isinstance(entry, str):
        target = _load(spec.kwargs.get("env_entry_point") or entry if entry == _FACTORY else entry)
    else:
        target = entry
    return inspect.getdoc(target) or ""


def entry_point_text(entry_point: Any) -> str:
    """A spec's entry point as records write it: a string as it is (an `EnvEntryPoint` gives its
    target), anything else (a class, a function) as its repr."""
    if isinstance(entry_point, (str, EnvEntryPoint)):
        return str(entry_point)
    return repr(entry_point)


def is_agentgym_env(env_id: str) -> bool:
    """Whether `env_id` is registered as an agentgym env (a family's, or one of `register_env`'s):
    made by the noise factory, so it takes agentgym's env arguments and noise, and plays to records."""
    spec = gym.registry.get(env_id)
    return spec is not None and spec.entry_point == _FACTORY


def register_envs() -> tuple[str, ...]:
    """Register the ids not yet registered; return all of them. Safe to call twice."""
    for env_id, entry_point in _ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=EnvEntryPoint(_FACTORY, entry_point),
                         kwargs={"env_entry_point": entry_point}, disable_env_checker=True)
    if REMOTE_ID not in gym.registry:
        gym.register(id=REMOTE_ID, entry_point=EnvEntryPoint(_REMOTE), disable_env_checker=True)
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
    gym.register(id=env_id, entry_point=EnvEntryPoint(_FACTORY, target), kwargs=spec_kwargs, disable_env_checker=True)


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
