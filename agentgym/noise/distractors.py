"""Distractor tools: decoys named and described like the env's own tools, that do not help."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Hashable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Callable

import gymnasium as gym

from agentgym.core.env import AgentEnv
from agentgym.core.hooks import ExtraTool
from agentgym.core.task import SimulatedUser
from agentgym.core.tools import ToolKind, ToolSpec
from agentgym.noise._common import NoiseWrapper, check_count, recoverable_at

__all__ = ["Distractors", "MAX_DISTRACTORS", "decoys_for"]

#: The most decoys one env may get (the parser enforces it too).
MAX_DISTRACTORS = 10

#: Per tool kind: (name template, description template, what calling it does to the agent).
#: Names stay within the `[A-Za-z0-9_-]{1,64}` a tool name allows (the base is cut to fit).
_READ_DECOYS: tuple[tuple[str, str, str], ...] = (
    ("{name}_all", "{desc} Also covers archived and unlisted entries.", "empty results"),
    ("quick_{name}", "{desc} Faster: answers from the cache.", "stale cache, no data"),
    ("{name}_v1", "{desc} (v1 endpoint.)", "empty results"),
)
_WRITE_DECOYS: tuple[tuple[str, str, str], ...] = (
    ("{name}_tentative", "{desc} Tentative: holds it for later confirmation.", "records nothing"),
    ("{name}_draft", "{desc} Saves it as a draft first.", "records nothing"),
    ("quick_{name}", "{desc} Faster: skips the usual checks.", "records nothing"),
)
#: What a decoy returns, per effect (made fresh per call: the agent may keep what it is given).
_RESULTS: dict[str, Callable[[], dict[str, Any]]] = {
    "empty results": lambda: {"status": "ok", "results": [], "total": 0},
    "stale cache, no data": lambda: {"status": "ok", "cached": True, "results": []},
    "records nothing": lambda: {"status": "pending", "message": "request received"},
}


def _fit(template: str, name: str) -> str:
    room = 64 - len(template.replace("{name}", ""))
    return template.format(name=name[:room])


#: A decoy, the name of the real tool it clones, and what calling it does.
_Decoy = tuple[ExtraTool, str, str]


def decoys_for(specs: Iterable[ToolSpec]) -> list[tuple[ToolSpec, str, str]]:
    """Every decoy a set of real tools offers, in a fixed order: (spec, clone of, effect).

    A decoy's spec is the real tool's spec renamed and redescribed, so its parameter schema is the
    one derived from the real tool's signature. No decoy is terminal, and none takes a real name.
    """
    return [(extra.spec, clone_of, effect) for extra, clone_of, effect in _decoys(tuple(specs))]


def _decoys(specs: tuple[ToolSpec, ...]) -> list[_Decoy]:
    """The decoys of `specs` in order, each name once and none a real tool's."""
    out: list[_Decoy] = []
    taken = {s.name for s in specs}
    for real in specs:
        for decoy in _decoys_of(real):
            name = decoy[0].spec.name
            if name not in taken:
                taken.add(name)
                out.append(decoy)
    return out


@functools.lru_cache(maxsize=1024)
def _decoys_of(real: ToolSpec) -> tuple[_Decoy, ...]:
    # Built once per real tool, not per set of tools: a decoy's spec compiles its own validator,
    # and a cross-task session's tools come in dozens of mixes of the same few toolkits, whose
    # decoy sets (the cache below) then share their decoys.
    templates = _READ_DECOYS if real.kind is ToolKind.READ else _WRITE_DECOYS
    out: list[_Decoy] = []
    for name_t, desc_t, effect in templates:
        name = _fit(name_t, real.name)
        spec = dataclasses.replace(real, name=name, description=desc_t.format(desc=real.description), terminal=False)
        out.append((ExtraTool(spec, _handler(name, real.name, effect)), real.name, effect))
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _extra_tools(specs: tuple[ToolSpec, ...]) -> tuple[ExtraTool, ...]:
    # Per set of real tools (a family's toolkit, or a cross-task session's mix): its decoys.
    return tuple(extra for extra, _, _ in _decoys(specs))


#: The decoys of a toolkit's tools per (toolkit type, `schemas_key`), which fixes its tools;
#: emptied when full, as `_extra_tools` is bounded (a process may make toolkit classes anew).
_BY_KEY: dict[Hashable, tuple[ExtraTool, ...]] = {}
_BY_KEY_MAX = 1024


def _candidates(toolkit: Any) -> tuple[ExtraTool, ...]:
    """``_extra_tools(tuple(toolkit.tool_specs().values()))``: the decoys of a toolkit's tools in
    listing order. At reset, `tool_specs` holds the very specs that looking up each listed schema
    with `spec` gives (in a cross-task session the first sub-task is active, so every name
    resolves to its first owner). Invariant: a toolkit's `schemas_key`, where it has one, fixes
    its tool specs as it fixes its schemas (a `Toolkit` class's specs are its class's; a session's
    are its sub-toolkit classes'), so the decoys are looked up by it, without building the specs."""
    key = getattr(toolkit, "schemas_key", None)
    if key is None:
        return _extra_tools(tuple(toolkit.tool_specs().values()))
    key = (type(toolkit), key)
    got = _BY_KEY.get(key)
    if got is None:
        if len(_BY_KEY) >= _BY_KEY_MAX:
            _BY_KEY.clear()
        got = _BY_KEY[key] = _extra_tools(tuple(toolkit.tool_specs().values()))
    return got


class Distractors(NoiseWrapper):
    """Each episode offers `n` extra tools named and described like the env's own, that do not help.

    Decoys are derived from the episode's real tools: ``search`` gives ``search_all`` or
    ``quick_search``, ``book`` gives ``book_tentative`` (see `decoys_for`); they are drawn per
    episode and listed in ``info["tools"]`` after the real ones. A read decoy returns no data; a
    write decoy answers "pending" and records nothing, so an agent that trusts it never gets its
    task done. The reset logs the decoys added (target ``tools``); every call to one is logged
    with ``{"clone_of", "effect", "recoverable"}`` and its call record has ``distractor: True``.

    Args:
        env: an agentgym env.
        n: how many decoys, in [0, MAX_DISTRACTORS].
    """

    #: This episode's decoys by name (the env lists and runs them while this layer acts).
    extra_tools: Mapping[str, ExtraTool] = MappingProxyType({})

    def __init__(self, env: gym.Env, n: int) -> None:
        super().__init__(env, **self.check(n=n))

    @classmethod
    def check(cls, n: Any) -> dict[str, Any]:
        return {"n": check_count("Distractors n", n, MAX_DISTRACTORS)}

    def _configure(self, n: int) -> None:
        self._n = n

    def on_reset(self, env: AgentEnv, user: SimulatedUser) -> None:
        # The toolkit exists only once reset has made it, and this point comes right after that
        # and before the reset lists the tools: the one point where the decoys can follow it.
        candidates = _candidates(env.toolkit)
        if self._n > len(candidates):
            raise ValueError(f"Distractors(n={self._n}): this episode's tools offer only {len(candidates)} decoys")
        picks = sorted(env.noise_rng("distractors", once=True).permutation(len(candidates))[: self._n])
        self.extra_tools = {candidates[i].spec.name: candidates[i] for i in picks}
        if picks:
            env.log_noise("distractors", "tools", {"added": list(self.extra_tools), "recoverable": True})


def _handler(name: str, clone_of: str, effect: str) -> Callable[[AgentEnv, dict[str, Any]], dict[str, Any]]:
    make_result = _RESULTS[effect]

    def handle(env: AgentEnv, arguments: dict[str, Any]) -> dict[str, Any]:
        env.log_noise("distractors", name, {"clone_of": clone_of, "effect": effect,
                                            "recoverable": recoverable_at(env, env.turn)})
        return make_result()

    return handle
