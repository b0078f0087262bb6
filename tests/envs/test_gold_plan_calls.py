"""`AgentEnv.gold_calls` takes a gold's calls without building its whole dict
(`agentgym.core.gold.plan_calls`); at every step of every family's episodes, with and without
noise (goal shifts change the gold, a session's follow-ups gain theirs when they start), they
are the ``"calls"`` of the gold's `to_dict`."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.core.gold import plan_calls

IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")


def _plain(gold: Any) -> list[dict[str, Any]]:
    gold = gold.to_dict() if hasattr(gold, "to_dict") else gold
    calls = gold.get("calls") if isinstance(gold, dict) else None
    return list(calls or ())


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("noise", [None, "goal_shift=0.8,tool_failure=0.3"])
def test_gold_calls_are_the_calls_of_the_gold_dict_at_every_step(env_id: str, noise: str | None) -> None:
    checked = 0
    for difficulty in ("easy", "hard"):
        kwargs: dict[str, Any] = {"difficulty": difficulty}
        if noise is not None:
            kwargs["noise"] = noise
        env = gym.make(env_id, **kwargs)
        base = env.unwrapped
        for agent_name in ("heuristic", "oracle"):
            for seed in range(5):
                agent = make_agent(agent_name)
                obs, info = env.reset(seed=seed)
                if agent.privileged:
                    agent.bind(base)
                agent.reset(obs, info)
                for _ in range(200):
                    gold = base.task.gold
                    assert base.gold_calls() == plan_calls(gold) == _plain(gold)
                    checked += 1
                    obs, _, term, trunc, info = env.step(agent.act(obs, info))
                    if term or trunc:
                        break
                assert base.gold_calls() == _plain(base.task.gold)
    assert checked > 50


def test_plan_calls_of_a_dict_or_a_gold_without_calls() -> None:
    assert plan_calls({"calls": [{"name": "a", "arguments": {}}]}) == [{"name": "a", "arguments": {}}]
    assert plan_calls({"kind": "x"}) == [] and plan_calls(None) == []
