"""Tool-use tasks: draw a domain and difficulty, generate its world and gold, score the final state.

The domain modules (`agentgym.envs.tooluse.domains`) generate the world, the user's request and
the reference solver's gold (the exact plan of calls and the effects it leaves). Scoring looks only
at the final world: the records the agent's writes made and the policy violations they caused.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from agentgym.core.seeding import fast_stream, stream_bits
from agentgym.core.task import DIFFICULTIES, Score, Task
from agentgym.envs.tooluse.base import Draws, Gold, World, WorldRecord, evaluate
from agentgym.envs.tooluse.domains import load_domains

__all__ = ["DIFFICULTY", "domains_for", "generate_task", "score_task", "score_world", "make_toolkit"]

#: Per difficulty: the gold plan's length (calls) and the turn budget.
DIFFICULTY: dict[str, dict[str, Any]] = {
    "easy": {"calls": (3, 4), "max_turns": 12},
    "medium": {"calls": (5, 6), "max_turns": 16},
    "hard": {"calls": (7, 8), "max_turns": 20},
}


@lru_cache(maxsize=None)
def domains_for(split: str) -> tuple[str, ...]:
    """The domains of a split, in registry order."""
    return tuple(name for name, d in load_domains().items() if d.split == split)


def generate_task(seed: int, options: dict[str, Any]) -> Task:
    """Generate the tool-use task of `seed` (deterministic in seed and options)."""
    split = options.get("split", "train")
    names = domains_for(split)
    # Both draws are read from the stream's bits (two draws need no generator), unconditionally,
    # so fixing the domain or difficulty never shifts the other.
    bits = stream_bits(seed, "task")
    domain = options.get("domain")
    domains = load_domains()
    if domain is None:
        domain = names[bits % len(names)]
    elif domain not in domains:
        raise ValueError(f"unknown tooluse domain {domain!r}; known: {sorted(domains)}")
    difficulty = options.get("difficulty") or DIFFICULTIES[bits // len(names) % 3]
    spec = domains[domain]
    gen = spec.generate(Draws(fast_stream(seed, f"task/world/{domain}")), difficulty)
    return Task(
        family="tooluse",
        domain=domain,
        difficulty=difficulty,
        split=spec.split,
        seed=seed,
        task_id=f"tooluse/{domain}/{difficulty}/{seed}",
        brief=gen.brief,
        world=gen.world,
        goal=gen.goal,
        gold=gen.gold,
        max_turns=DIFFICULTY[difficulty]["max_turns"],
    )


def make_toolkit(task: Task) -> Any:
    """The default toolkit factory: the task's domain toolkit over its world."""
    return load_domains()[task.domain].toolkit(task.world)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _record_view(r: WorldRecord) -> dict[str, Any]:
    return {"kind": r.kind, **{k: _plain(v) for k, v in r.data.items()}}


def score_world(gold: Gold, world: World) -> Score:
    """Score a world against a gold: the share of required effects met, diluted by extra effects.

    ``score = met / (required + extra)``, and 0 after any policy violation. Success needs every
    effect met, no extra effect and no violation. ``details["policy_violations"]`` lists the
    broken policies by id, once per violating call.
    """
    met, extras = evaluate(gold.effects, world.records)
    n_met = sum(met.values())
    violations = list(world.violations)
    score = 0.0 if violations else n_met / (len(gold.effects) + len(extras))
    success = not violations and not extras and n_met == len(gold.effects)
    return Score(round(score, 6), success, {
        "met": met,
        "extras": [_record_view(r) for r in extras],
        "policy_violations": violations,
    })


def score_task(task: Task, toolkit: Any) -> Score:
    """The default scorer: `score_world` on the task's final world."""
    return score_world(task.gold, task.world)
