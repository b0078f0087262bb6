"""The tool-use domains, one module each; `load_domains` collects their `DOMAIN` specs."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from agentgym.envs.tooluse.base import Draws, Goal, Gold, Step, ToolUseToolkit, World
from agentgym.envs.tooluse.review import Names, ReviewWords

__all__ = ["DomainSpec", "Generated", "Shift", "DOMAIN_MODULES", "TIER_MODULES", "load_domains", "solved"]

#: The domain modules, in the order tasks draw from them.
DOMAIN_MODULES: tuple[str, ...] = ("finance", "calendar", "orders", "ops")
#: Domains whose hard tier lives in a module of its own (it builds on the domain module, which
#: therefore cannot name it): its ``TIER`` holds the spec's `hard_toolkit`, `paged` and `harden`.
TIER_MODULES: dict[str, str] = {"finance": "finance_tier", "calendar": "calendar_tier", "orders": "orders_tier",
                                 "ops": "ops_tier"}


@dataclass(slots=True)
class Generated:
    """One generated task of a domain: the world, what the user wants, the gold and the brief."""

    world: World
    goal: Goal
    gold: Gold
    brief: str
    #: The gold's plan with each paged list read as far as a careful agent must, where the tier's
    #: `harden` knows how far from what it made (what `agentgym.envs.tooluse.tasks` would read off
    #: the world by the tools, `_fast.paged_plan`; a test keeps the two equal); None: tasks reads it.
    paged: tuple[Step, ...] | None = None

    def rename(self, name: str, named: str) -> None:
        """Say `named` for `name` wherever the user says it: the request, its blurred wordings
        and the details (a generated goal is the task's own, so it is changed in place)."""
        goal = self.goal
        goal.request = goal.request.replace(name, named)
        goal.blurred = {k: v.replace(name, named) for k, v in goal.blurred.items()}
        for detail in goal.details:
            detail.statement = detail.statement.replace(name, named)


def solved(gen: Generated, solve: Callable[[Any, Any], Gold]) -> Generated:
    """A domain's draft (`DomainSpec.draft`) made whole: its gold's plan and effects (and kind)
    are `solve`'s on its world and job (its useful reads too), its traps kept."""
    gold = solve(gen.world, gen.goal.job)
    gen.gold = Gold(gold.kind, gold.plan, gold.effects, gen.gold.traps, useful=gold.useful)
    return gen


@dataclass(frozen=True, slots=True)
class Shift:
    """A goal shift a domain plans for one task: one parameter of the job changes mid-episode.

    `detail` is the id of the goal detail it changes (or adds), `old` and `new` its values,
    `announce` what the user says, `statement` how the user states the detail from then on, and
    `gold` the reference solver's gold for the changed job (computed on the initial world).
    """

    detail: str
    slot: str
    old: Any
    new: Any
    announce: str
    statement: str
    gold: Gold


@dataclass(frozen=True)
class DomainSpec:
    """A domain: its split, its toolkit class and its generator ``(draws, difficulty) -> Generated``.

    `vocabulary` names values of the details in the domain's own words (slot -> phrases, e.g.
    its currency codes), which the user recognises in questions; `shifts(world, job)` lists the
    goal shifts a task offers (the user picks one); `undo` maps the record kinds a tool can undo to
    that tool and the record field its one argument takes (so a shift after such a record was
    made stays recoverable, and a wrong one can be put right); `review` holds the user's words for what it sees of the world
    (`agentgym.envs.tooluse.review`), and `names` the domain's names for record fields there.
    `hard_toolkit`, `paged`, `harden` and `draft` make the hard tier (see `agentgym.envs.tooluse.tasks`).
    """

    name: str
    split: str
    toolkit: type[ToolUseToolkit]
    generate: Callable[[Draws, str], Generated]
    description: str
    vocabulary: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    shifts: Callable[[World, Any], list[Shift]] | None = None
    undo: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    review: ReviewWords = ReviewWords({}, {}, {})
    names: Names | None = None
    #: The hard tier (`ToolUseEnv`'s card): its toolkit, whose list tools come in pages, the
    #: list of each paged tool (`agentgym.envs.tooluse.paging.PagedList`: its field, and how far a
    #: careful agent reads it), and what it adds to a generated task (near-duplicates).
    hard_toolkit: type[ToolUseToolkit] | None = None
    paged: Mapping[str, Any] = field(default_factory=dict)
    harden: Callable[[Draws, Generated], Generated] | None = None
    #: The difficulty of the generated task the tier hardens (the orders tier builds its own
    #: orders, so it starts from a smaller world).
    tier_base: str = "hard"
    #: What the tier hardens, where `harden` remakes part of ``generate(draws, tier_base)``:
    #: ``draft(draws, tier_base)`` makes the same draws, world and brief, and leaves out only what
    #: `harden` makes anew (the gold's plan and effects, solved again on the hardened world; the
    #: orders tier's request), which generate would make for the tier to throw away. None: generate.
    draft: Callable[[Draws, str], Generated] | None = None

    @property
    def undoable(self) -> frozenset[str]:
        """The record kinds a tool of the domain can undo."""
        return frozenset(self.undo)

    def undo_call(self, kind: str, data: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The call that undoes a record of `kind` with `data` (name, arguments), or None."""
        how = self.undo.get(kind)
        return None if how is None else (how[0], {how[1]: data[how[1]]})

    def undo_calls(self, records: Sequence[Any]) -> list[dict[str, Any]]:
        """The calls that undo `records` (`WorldRecord`s), as a gold plan lists calls, each once
        (a meeting and its invitation are undone by one cancel)."""
        calls: list[dict[str, Any]] = []
        for r in records:
            how = self.undo_call(r.kind, r.data)
            if how is not None and {"name": how[0], "arguments": how[1]} not in calls:
                calls.append({"name": how[0], "arguments": how[1]})
        return calls


@lru_cache(maxsize=None)
def load_domains() -> dict[str, DomainSpec]:
    """Every domain by name, in `DOMAIN_MODULES` order."""
    out: dict[str, DomainSpec] = {}
    for module in DOMAIN_MODULES:
        spec: DomainSpec = importlib.import_module(f"{__name__}.{module}").DOMAIN
        if module in TIER_MODULES:
            spec = replace(spec, **importlib.import_module(f"{__name__}.{TIER_MODULES[module]}").TIER)
        if spec.split not in ("train", "test"):
            raise ValueError(f"domain {spec.name!r}: split must be train or test")
        out[spec.name] = spec
    return out
