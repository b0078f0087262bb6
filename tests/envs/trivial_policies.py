"""The trivial agents the family tests (ToolUse, CrossTask) play, and the loop that scores them.

A policy is ``policy(env, obs, info, state) -> action``, with ``state`` a dict kept for the
episode (it holds ``"seed"``). Each family adds its own "propose everything" policy and plays
episodes with its own ``_play`` and split of seeds.
"""

from __future__ import annotations

from typing import Any, Callable

from agentgym.agents import make_agent
from agentgym.agents.random_agent import sample_arguments
from agentgym.core.render import to_json
from agentgym.core.seeding import stream

Policy = Callable[[Any, str, dict[str, Any], dict[str, Any]], str]

#: The trivial agents that do nothing at all: they must score exactly 0.
DOING_NOTHING = ("no-op 'OK.'", "empty", "'{}'", "echo the observation")


def const(text: str) -> Policy:
    return lambda env, obs, info, state: text


def echo(env: Any, obs: str, info: dict[str, Any], state: dict[str, Any]) -> str:
    return obs


def random_policy(env: Any, obs: str, info: dict[str, Any], state: dict[str, Any]) -> str:
    if "agent" not in state:
        state["agent"] = make_agent("random", seed=state["seed"])
        state["agent"].reset(obs, info)
    return state["agent"].act(obs, info)


def every_tool_once(stream_name: str) -> Policy:
    """Calls each tool of the episode once, in order, with arguments sampled from its schema
    (from the stream `stream_name` of the episode's seed), then says "OK."."""

    def policy(env: Any, obs: str, info: dict[str, Any], state: dict[str, Any]) -> str:
        if "tools" not in state:
            state["tools"] = [t["function"] for t in info["tools"]]
            state["rng"] = stream(state["seed"], stream_name)
        if state["tools"]:
            fn = state["tools"].pop(0)
            return to_json({"name": fn["name"], "arguments": sample_arguments(fn["parameters"], state["rng"])})
        return "OK."

    return policy


def trivial_policies(every_tool_stream: str, propose_everything: Policy) -> dict[str, Policy]:
    """The trivial agents by name, with the family's own "propose everything"."""
    return {
        "no-op 'OK.'": const("OK."),
        "empty": const(""),
        "'{}'": const("{}"),
        "echo the observation": echo,
        "random": random_policy,
        "call every tool once": every_tool_once(every_tool_stream),
        "propose everything": propose_everything,
    }


def tally(play: Callable[..., tuple[Any, ...]], envs: dict[str, Any], split: Callable[[int], str],
          policy: Policy, n: int) -> tuple[int, float]:
    """(successes, total reward) of `policy` over seeds 0..n-1, each played on ``envs[split(seed)]``
    by ``play(env, policy, seed)`` (which returns the final episode info and reward first)."""
    successes, total = 0, 0.0
    for seed in range(n):
        episode, reward = play(envs[split(seed)], policy, seed)[:2]
        successes += episode["success"]
        total += reward
    return successes, total
