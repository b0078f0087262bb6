"""The noise spec: ``"tool_failure=0.2,ambiguity=0.5"``, a preset name, or a dict; parsed strictly.

Grammar (whitespace around items, names and values is ignored)::

    spec   := preset | item ("," item)* | preset "," item ("," item)*
    item   := kind "=" value | "draws=" ("stream" | "call")
    kind   := one of KINDS
    preset := one of PRESETS (its items, which later items override)

Values: a rate in [0, 1] for tool_failure, corruption, ambiguity, goal_shift and typos; an
integer in [0, MAX_DISTRACTORS] for distractors; a mean in milliseconds (>= 0) for latency.
``draws=call`` keys the draws of latency, tool_failure and corruption on each call
(`agentgym.core.call_draws`: the same call meets the same fault whatever else the agent calls,
so two agents' runs meet the same faults on the same calls); ``draws=stream``, the default,
draws them from the episode's stream of each kind. A
dict maps kinds to a value as above, or to that wrapper's keyword arguments
(``{"tool_failure": {"rate": 0.2, "modes": ["timeout"]}}``). Whatever the spelling, the wrappers
are applied in one canonical order (`KINDS`), innermost first.

The parser turns text into numbers; each wrapper's ``check`` is the one place its values are
checked, and the wrappers are then built from the checked values (`NoiseWrapper.from_checked`).
A string spec is parsed once per process (the CLI and the env server check a spec before
``gym.make`` parses it again).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

import gymnasium as gym

from agentgym.core.protocol import json_size
from agentgym.core.tools import close_names
from agentgym.noise._common import NoiseWrapper
from agentgym.noise.calls import Corruption, Latency, ToolFailure
from agentgym.noise.distractors import Distractors
from agentgym.noise.user import Ambiguity, GoalShift, Typos

__all__ = ["NoiseSpecError", "KINDS", "PRESETS", "DRAWS", "MAX_SPEC_BYTES", "parse_noise", "apply_noise",
           "apply_layers", "format_noise"]

#: A spec (a string, or a dict as JSON) past this size is refused unread: every kind with a long
#: value fits in a tenth of it, and a spec can arrive from a remote client.
MAX_SPEC_BYTES = 4096


class NoiseSpecError(ValueError):
    """A malformed noise spec; the message names the bad part."""


_NUMBER = re.compile(r"^(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_INTEGER = re.compile(r"^\d+$")


def _number(text: Any) -> Any:
    """A spec value as a number: text must be a plain non-negative number; numbers pass as they
    are (the wrapper's ``check`` says which are in range)."""
    if isinstance(text, str):
        if not _NUMBER.match(text):
            raise ValueError(f"must be a plain non-negative number, got {text!r}")
        return float(text)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return text
    raise ValueError(f"must be a number, got {text!r}")


def _whole(text: Any) -> Any:
    """A spec value as a whole number: text must be digits; anything else passes to ``check``."""
    if isinstance(text, str):
        if not _INTEGER.match(text):
            raise ValueError(f"must be a whole number, got {text!r}")
        return int(text)
    return text


@dataclass(frozen=True)
class Kind:
    """One noise kind: its wrapper, the keyword its spec value sets, and how a spec's text for
    that value becomes a number (the wrapper's ``check`` then checks it)."""

    wrapper: type[NoiseWrapper]
    param: str
    parse: Callable[[Any], Any]
    #: Further keyword arguments a dict spec may set (checked by the wrapper's ``check``).
    options: tuple[str, ...] = ()


#: Every kind, in the canonical order the wrappers are applied (innermost first). Latency comes
#: first so that every call is charged, also one that then fails; typos last, as it rewrites what
#: the step returns.
KINDS: dict[str, Kind] = {
    "latency": Kind(Latency, "mean_ms", _number, ("keyed",)),
    "tool_failure": Kind(ToolFailure, "rate", _number, ("modes", "tools", "keyed")),
    "corruption": Kind(Corruption, "rate", _number, ("keyed",)),
    "distractors": Kind(Distractors, "n", _whole),
    "ambiguity": Kind(Ambiguity, "rate", _number),
    "goal_shift": Kind(GoalShift, "rate", _number),
    "typos": Kind(Typos, "rate", _number),
}

#: The named presets. Like an env version, a published preset never changes: a new mix gets a
#: new name. The time budget of a task is 120 s of simulated time by default.
PRESETS: dict[str, dict[str, float | int]] = {
    "none": {},
    "light": {"latency": 200.0, "tool_failure": 0.05, "corruption": 0.02, "distractors": 1,
              "ambiguity": 0.1, "goal_shift": 0.05, "typos": 0.05},
    "medium": {"latency": 500.0, "tool_failure": 0.1, "corruption": 0.05, "distractors": 2,
               "ambiguity": 0.25, "goal_shift": 0.15, "typos": 0.15},
    "heavy": {"latency": 1500.0, "tool_failure": 0.25, "corruption": 0.1, "distractors": 4,
              "ambiguity": 0.5, "goal_shift": 0.3, "typos": 0.3},
}

Layers = list[tuple[str, dict[str, Any]]]

#: The item that says how the call layers draw, and the layers it sets `keyed` on.
DRAWS = "draws"
_DRAWS_VALUES = ("stream", "call")
_CALL_KINDS = ("latency", "tool_failure", "corruption")


def _unknown_kind(name: str, spec: Any) -> NoiseSpecError:
    close = close_names(name, [*KINDS, *PRESETS], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return NoiseSpecError(f"bad noise spec {spec!r}: unknown noise kind {name!r}{hint} "
                          f"(kinds: {', '.join(KINDS)}; presets: {', '.join(PRESETS)})")


def _kwargs(kind: str, value: Any, spec: Any, part: str) -> dict[str, Any]:
    """The wrapper arguments of one item, checked by the wrapper's ``check``."""
    k = KINDS[kind]
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {k.param, *k.options})
        if unknown or k.param not in value:
            raise NoiseSpecError(f"bad noise spec {spec!r}: {part!r}: {kind} takes {k.param!r} (required)"
                                 + (f" and {', '.join(map(repr, k.options))}" if k.options else "")
                                 + (f", not {', '.join(map(repr, unknown))}" if unknown else ""))
        out = dict(value)
        raw = value[k.param]
    else:
        out, raw = {}, value
    try:
        out[k.param] = k.parse(raw)
    except ValueError as exc:
        raise NoiseSpecError(f"bad noise spec {spec!r}: {part!r}: {kind} {exc}") from None
    try:
        return k.wrapper.check(**out)
    except ValueError as exc:
        # The item is named once: a one-item spec is its item.
        where = f"{spec!r}" if spec == part else f"{spec!r}: {part!r}"
        raise NoiseSpecError(f"bad noise spec {where}: {exc}") from None


def parse_noise(spec: str | Mapping[str, Any] | None) -> Layers:
    """The wrappers a noise spec asks for: ``[(kind, kwargs), ...]`` in canonical order, each
    kwargs every argument of that wrapper as it records them (checked, defaults included).

    Args:
        spec: a string (see the module docstring), a dict, or None (no noise).

    Raises:
        NoiseSpecError: the spec is malformed; the message names the bad part.
    """
    if spec is None:
        return []
    if json_size(spec, MAX_SPEC_BYTES) > MAX_SPEC_BYTES:
        raise NoiseSpecError(f"bad noise spec: over {MAX_SPEC_BYTES} bytes")
    if isinstance(spec, str):
        return [(kind, _fresh(kwargs)) for kind, kwargs in _parse_text(spec)]
    return _parse(spec)


def _fresh(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A copy of parsed arguments that shares no list with the parser's cache."""
    return {k: list(v) if isinstance(v, list) else v for k, v in kwargs.items()}


@functools.lru_cache(maxsize=64)
def _parse_text(spec: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    """`_parse` of a string spec, kept per string (the result is only ever copied out)."""
    return tuple(_parse(spec))


def _parse(spec: str | Mapping[str, Any]) -> Layers:
    """`parse_noise` of a spec within the size bound."""
    chosen: dict[str, dict[str, Any]] = {}
    draws = "stream"
    if isinstance(spec, Mapping):
        for kind, value in spec.items():
            if kind == DRAWS:
                draws = _draws(value, spec)
                continue
            if not isinstance(kind, str) or kind not in KINDS:
                raise _unknown_kind(str(kind), spec)
            chosen[kind] = _kwargs(kind, value, spec, f"{kind}: {value!r}")
    elif isinstance(spec, str):
        if not spec.strip():
            raise NoiseSpecError("bad noise spec '': empty; pass None or 'none' for no noise")
        from_preset: set[str] = set()
        for i, part in enumerate(spec.split(",")):
            item = part.strip()
            if not item:
                raise NoiseSpecError(f"bad noise spec {spec!r}: empty item at position {i + 1}")
            if "=" not in item:
                if item not in PRESETS:
                    if item in KINDS:
                        raise NoiseSpecError(f"bad noise spec {spec!r}: {item!r} needs a value ({item}=...)")
                    raise _unknown_kind(item, spec)
                if i != 0:
                    raise NoiseSpecError(f"bad noise spec {spec!r}: preset {item!r} must come first")
                chosen = {k: _kwargs(k, v, item, k) for k, v in PRESETS[item].items()}
                from_preset = set(chosen)
                continue
            name, _, value = (x.strip() for x in item.partition("="))
            if name == DRAWS:
                draws = _draws(value, spec)
                continue
            if name not in KINDS:
                raise _unknown_kind(name, spec)
            if name in chosen and name not in from_preset:
                raise NoiseSpecError(f"bad noise spec {spec!r}: {name!r} is given twice")
            from_preset.discard(name)
            chosen[name] = _kwargs(name, value, spec, item)
    else:
        raise NoiseSpecError(f"a noise spec must be a string, a dict or None, got {type(spec).__name__}")
    if draws == "call":
        keyed = [kind for kind in _CALL_KINDS if kind in chosen]
        if not keyed:
            raise NoiseSpecError(f"bad noise spec {spec!r}: draws=call keys the draws of {', '.join(_CALL_KINDS)}, "
                                 "and the spec has none of them")
        for kind in keyed:
            chosen[kind] = {**chosen[kind], "keyed": True}
    return [(kind, chosen[kind]) for kind in KINDS if kind in chosen]


def _draws(value: Any, spec: Any) -> str:
    if value not in _DRAWS_VALUES:
        raise NoiseSpecError(f"bad noise spec {spec!r}: draws must be one of {', '.join(_DRAWS_VALUES)}, got {value!r}")
    return str(value)


def format_noise(spec: str | Mapping[str, Any] | None) -> str:
    """The canonical string of a spec (kinds in canonical order, main values only), ``none`` if empty.

    Two specs with the same canonical string and no extra options make the same wrapper stack.
    """
    layers = parse_noise(spec)
    if not layers:
        return "none"
    text = ",".join(f"{kind}={kwargs[KINDS[kind].param]:g}" for kind, kwargs in layers)
    calls = [kwargs for kind, kwargs in layers if kind in _CALL_KINDS]
    return f"{text},{DRAWS}=call" if calls and all(kw.get("keyed") for kw in calls) else text


def apply_noise(env: gym.Env, spec: str | Mapping[str, Any] | None) -> gym.Env:
    """`env` wrapped in the noise wrappers `spec` asks for, in canonical order.

    Raises:
        NoiseSpecError: the spec is malformed (checked before anything is wrapped).
    """
    return apply_layers(env, parse_noise(spec))


def apply_layers(env: gym.Env, layers: Layers) -> gym.Env:
    """`env` wrapped in `layers` as `parse_noise` returned them (their values already checked)."""
    for kind, kwargs in layers:
        env = KINDS[kind].wrapper.from_checked(env, kwargs)
    return env
