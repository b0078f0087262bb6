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
from agentgym.envs.tooluse import _fast
from agentgym.envs.tooluse.base import Draws, Gold, World, WorldRecord, evaluate
from agentgym.envs.tooluse.consent import Consent
from agentgym.envs.tooluse.domains import DomainSpec, Generated, load_domains
from agentgym.envs.tooluse.domains.consent_rules import RULES

__all__ = ["DIFFICULTY", "TIER_MAX_TURNS", "TIER_CALLS", "tier_calls", "tier_turns", "is_tier", "SESSION_TIER", "shift_gold", "longest_plan", "domains_for", "generate_task", "score_task", "score_world", "make_toolkit"]

#: Per difficulty: the gold plan's length (calls) and the turn budget.
DIFFICULTY: dict[str, dict[str, Any]] = {
    "easy": {"calls": (3, 4), "max_turns": 12},
    "medium": {"calls": (5, 6), "max_turns": 16},
    "hard": {"calls": (7, 8), "max_turns": 20},
}
#: The hard tier, what an explicit ``difficulty="hard"`` makes (`ToolUseEnv`'s card): today's hard
#: task with its list tools in pages and, where the domain has them, near-duplicate records.
TIER_MAX_TURNS = 24
#: The hard tier's gold plan length (calls): 8 to 15 with every page read, a few fewer where the
#: gold stops reading a list at the page that settles what it needs.
TIER_CALLS = (6, 15)
#: Domains whose tier plans are longer: the orders tier's bulk return (`orders_bulk`) reads two or
#: three orders and writes for six to ten items, an approval first where one is due.
_TIER_CALLS_OF = {"orders": (10, 30)}
#: Domains whose tier has more turns, sized to the work (the expert's turns x 1.5 + 4); the
#: domain's tier brief states them.
_TIER_TURNS_OF = {"orders": 30, "ops": 28}


def tier_turns(domain: str) -> int:
    """The hard tier's turn budget in `domain`."""
    return _TIER_TURNS_OF.get(domain, TIER_MAX_TURNS)


def tier_calls(domain: str) -> tuple[int, int]:
    """The hard tier's gold plan length (calls) in `domain`."""
    return _TIER_CALLS_OF.get(domain, TIER_CALLS)


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
    # Only an explicit hard makes the hard tier (unless `tier` says otherwise, as a cross-task
    # session's sub-tasks do): a drawn difficulty keeps its tasks as they were.
    tier = bool(options.get("tier", options.get("difficulty") == "hard"))
    difficulty = options.get("difficulty") or DIFFICULTIES[bits // len(names) % 3]
    spec = domains[domain]
    draws = Draws(fast_stream(seed, f"task/world/{domain}"))
    if tier:
        gen = _harden(spec, (spec.draft or spec.generate)(draws, spec.tier_base), seed)
    else:
        gen = spec.generate(draws, difficulty)
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
        max_turns=tier_turns(domain) if tier else DIFFICULTY[difficulty]["max_turns"],
        extra={"tier": "hard"} if tier else {},
    )


def _harden(spec: DomainSpec, gen: Generated, seed: int) -> Generated:
    """The hard tier of a generated hard task: the domain's near-duplicates (from a stream of
    their own, so the task's other draws stay as they were), and a gold plan that reads each
    paged list as far as a careful agent must."""
    if spec.harden is not None:
        gen = spec.harden(Draws(fast_stream(seed, f"task/tier/{spec.name}")), gen)
    if gen.paged is not None:  # the tier knows how far its gold reads each list
        gen.gold = gen.gold.with_plan(gen.paged)
    else:
        gen.gold = _read_pages(spec, gen.gold, gen.world)
    # Every tier's harden states its turn budget before the policies (`base.turn_budget`).
    rules = RULES.get(spec.name)
    if rules is not None:
        gen.world.consent = Consent(rules, rules.anchors(gen.world, gen.goal))
    return gen


def _read_pages(spec: DomainSpec, gold: Gold, world: World,
                useful: tuple[dict[str, Any], ...] | None = None) -> Gold:
    """`gold` with each paged call's later pages read as far as a careful agent must
    (`agentgym.envs.tooluse.paging.paged_plan`, whose kernel reads each list once) on `world`,
    as it is now, and with `useful` in place of its useful reads where given."""
    if spec.hard_toolkit is None:
        return gold if useful is None else gold.with_plan(gold.plan, useful)
    return gold.with_plan(_fast.paged_plan(gold.plan, spec.hard_toolkit(world), spec.toolkit, spec.paged), useful)


def shift_gold(task: Task, gold: Gold) -> Gold:
    """A goal shift's gold (the domain's solver's, on the task's initial world) as the task plays
    it: in the hard tier, its pages read as the task's own gold reads them, with the reads the
    task points to (`Gold.useful`)."""
    if not is_tier(task):
        return gold
    # What the task points to beyond the plan (the organiser) is the shifted task's too.
    return _read_pages(load_domains()[task.domain], gold, task.world, task.gold.useful)


def longest_plan(task: Task) -> int:
    """The most calls a gold plan of the task's kind has (a goal shift must not make it longer)."""
    return tier_calls(task.domain)[1] if is_tier(task) else DIFFICULTY[task.difficulty]["calls"][1]


#: The key of a task's `extra` by which a session of a tier (CrossTask's) asks the user of its
#: tool-use sub-task to read a plan as the tier's does: a plan that asks for any answer asks for
#: a yes (`agentgym.envs.tooluse.user`). Its tools, turns and scoring stay the sub-task's.
SESSION_TIER = "session_tier"


def is_tier(task: Task) -> bool:
    """Whether a task is of the hard tier (an explicit hard; its card says ``tier: hard``)."""
    return task.extra.get("tier") == "hard"


def make_toolkit(task: Task) -> Any:
    """The default toolkit factory: the task's domain toolkit over its world (the hard tier's,
    with its lists in pages, for a task of the tier)."""
    spec = load_domains()[task.domain]
    return (spec.hard_toolkit or spec.toolkit)(task.world) if is_tier(task) else spec.toolkit(task.world)


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
