"""How big a search Dialog's hard itineraries ask for: plans that keep every rule, and whether a
local search finds the best.

For each itinerary on the seeds given (hard tier, no noise), before any twist: how many plans
there are (one place per booking, no place twice, no area twice), how many of them keep the
budget too, and whether a local search finds the plan the objective picks. The local search
starts from a plan that keeps the rules (the first one a best-rated-first walk meets, and,
apart, the cheapest; the best counts as found when either run ends at it) and moves, while one is better, to the best plan that changes one booking or two: a
planner that improves a plan a step at a time, as a person does by hand. A tier whose plans are
few, or whose best plan such a search finds, asks for no search a careful agent cannot make.

    .venv/bin/python benchmarks/itinerary_search.py --seeds 2000 --split test
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from typing import Sequence

from agentgym.envs.dialog.hard_tier import generate_task
from agentgym.envs.dialog.itinerary import PlanGold, candidates, plan_key, plans
from agentgym.envs.dialog.tasks import Place


def keeps(plan: Sequence[Place], gold: PlanGold) -> bool:
    """Whether a plan keeps the rules: no place twice, no area twice (where asked), the budget."""
    if len({p.id for p in plan}) < len(plan) or sum(p.price for p in plan) > gold.budget:
        return False
    return not gold.distinct_areas or len({p.area for p in plan}) == len(plan)


def local_best(options: list[list[Place]], gold: PlanGold, start: Sequence[Place]) -> tuple[float, ...]:
    """The objective's key of the plan a one-or-two-booking local search ends at from `start`."""
    current = list(start)
    while True:
        best, key = None, plan_key(current, gold.priority, gold.objective)
        for width in (1, 2):
            for legs in itertools.combinations(range(len(options)), width):
                for places in itertools.product(*(options[i] for i in legs)):
                    plan = list(current)
                    for i, place in zip(legs, places):
                        plan[i] = place
                    if keeps(plan, gold) and plan_key(plan, gold.priority, gold.objective) > key:
                        best, key = plan, plan_key(plan, gold.priority, gold.objective)
            if best is not None:
                break
        if best is None:
            return key
        current = best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000, help="seeds 0..N-1 (default 1000)")
    parser.add_argument("--split", choices=("train", "test"), default="test")
    args = parser.parse_args(argv)
    every, fit, missed = [], [], {"priority": [0, 0], "total": [0, 0]}
    for seed in range(args.seeds):
        task = generate_task(seed, {"difficulty": "hard", "split": args.split})
        if task.extra.get("kind") != "itinerary":
            continue
        gold = task.extra["plan"].first
        options = [candidates(task.world, leg) for leg in gold.legs]
        walk = tuple(range(len(options)))
        every.append(sum(1 for _ in plans(options, walk, None, gold.distinct_areas)))
        kept = list(plans(options, walk, gold.budget, gold.distinct_areas))
        fit.append(len(kept))
        cheapest = min(kept, key=lambda p: sum(x.price for x in p))
        found = gold.best in {local_best(options, gold, start) for start in (kept[0], cheapest)}
        missed[gold.objective][0] += 1
        missed[gold.objective][1] += not found

    def spread(xs: list[int]) -> str:
        xs = sorted(xs)
        return f"median {statistics.median(xs):g}, p90 {xs[int(0.9 * (len(xs) - 1))]}, max {xs[-1]}"

    print(f"{len(fit)} itineraries on seeds 0-{args.seeds - 1} ({args.split})")
    print(f"plans keeping the areas apart: {spread(every)}")
    print(f"plans keeping every rule (the budget too): {spread(fit)}")
    for objective, (n, miss) in missed.items():
        print(f"objective {objective}: {n} itineraries; a 1-2 booking local search from both the first and the "
              f"cheapest plan misses the best in {miss} ({100 * miss / max(n, 1):.1f}%)")


if __name__ == "__main__":
    main()
