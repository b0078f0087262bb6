"""A search by a partial name is a step of the plan: `find_employee` and `find_person` take "a
full or partial name", and a playtest's search by a surname ("Abbott" for Elena Abbott: ToolUse
7189) completed no step of the gold, which listed the full name."""

from __future__ import annotations

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.core.gold import matching_steps


def _name_searches(tool: str) -> list[tuple[str, list[dict]]]:
    """(the name searched, the plan) of the first train episodes whose plan searches by name."""
    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="easy")
    out = []
    for seed in range(200):
        env.reset(seed=seed)
        plan = env.unwrapped.gold_calls()
        out += [(c["arguments"]["query"]["words_of"], plan) for c in plan if c["name"] == tool]
        if len(out) >= 3:
            break
    return out


def test_a_search_by_any_words_of_the_name_is_the_plans_step() -> None:
    for tool in ("find_employee", "find_person"):
        found = _name_searches(tool)
        assert found, tool
        for name, plan in found:
            first, last = name.split()[0], name.split()[-1]
            for query in (name, last, first.lower(), f"{last}, {first}"):
                assert matching_steps(tool, {"query": query}, plan), (tool, query)
            assert not matching_steps(tool, {"query": f"{first}x"}, plan)
            assert not matching_steps(tool, {"query": f"{name} Jr"}, plan)
