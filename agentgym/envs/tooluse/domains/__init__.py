"""The tool-use domains, one module each; `load_domains` collects their `DOMAIN` specs."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from agentgym.envs.tooluse.base import Draws, Goal, Gold, ToolUseToolkit, World

__all__ = ["DomainSpec", "Generated", "DOMAIN_MODULES", "load_domains"]

#: The domain modules, in the order tasks draw from them.
DOMAIN_MODULES: tuple[str, ...] = ("finance", "calendar", "orders", "ops")


@dataclass(slots=True)
class Generated:
    """One generated task of a domain: the world, what the user wants, the gold and the brief."""

    world: World
    goal: Goal
    gold: Gold
    brief: str


@dataclass(frozen=True)
class DomainSpec:
    """A domain: its split, its toolkit class and its generator ``(draws, difficulty) -> Generated``."""

    name: str
    split: str
    toolkit: type[ToolUseToolkit]
    generate: Callable[[Draws, str], Generated]
    description: str


@lru_cache(maxsize=None)
def load_domains() -> dict[str, DomainSpec]:
    """Every domain by name, in `DOMAIN_MODULES` order."""
    out: dict[str, DomainSpec] = {}
    for module in DOMAIN_MODULES:
        spec: DomainSpec = importlib.import_module(f"{__name__}.{module}").DOMAIN
        if spec.split not in ("train", "test"):
            raise ValueError(f"domain {spec.name!r}: split must be train or test")
        out[spec.name] = spec
    return out
