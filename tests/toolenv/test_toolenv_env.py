"""Tests for agentgym.toolenv.env: an env built from plain functions keeps the env contract, takes
every noise kind, reports what the metrics need, and refuses parts that do not fit."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

import agentgym
from agentgym.core.tools import Toolkit
from agentgym.noise import apply_noise
from agentgym.testing import check_agent_env
from agentgym.toolenv import WRITE, Detail, Score, Shift, ToolEnv, ToolError, ToolTask, gold_call, make_tool_env, tool

ENV_ID = "OwnEnvTest/Desk-v0"


def find_ticket(world: dict, email: str) -> dict:
    """Find the open ticket of a customer.

    Args:
        email: The customer's e-mail address.
    """
    if email != world["email"]:
        raise ToolError(f"no ticket for '{email}'")
    return {"ticket_id": world["ticket_id"], "opened": "2025-03-02"}


@tool(kind=WRITE)
def close_ticket(world: dict, ticket_id: str, reason: str) -> dict:
    """Close a ticket.

    Args:
        ticket_id: The ticket's id.
        reason: Why it is closed.
    """
    if ticket_id != world["ticket_id"]:
        raise ToolError(f"no ticket '{ticket_id}'")
    world["closed"].append({"ticket_id": ticket_id, "reason": reason})
    return {"status": "closed"}


def desk_task(seed: int) -> ToolTask:
    rng = random.Random(seed)
    email, ticket = f"c{rng.randrange(50)}@example.com", f"T-{rng.randrange(100, 999)}"
    reason = rng.choice(["resolved", "duplicate"])
    return ToolTask(
        request="Please close my support ticket.",
        details=[Detail("email", email, "I'm {value}."), Detail("reason", reason, "It's {value}.", reveal="ask",
                                                                 ask=("why",))],
        gold_calls=[gold_call("find_ticket", email=email), gold_call("close_ticket", ticket_id=ticket, reason=reason)],
        world={"email": email, "ticket_id": ticket, "closed": []},
        shifts=[Shift("reason", "duplicate" if reason == "resolved" else "resolved")],
        domain="support", max_turns=8)


def make_desk(**kwargs: Any) -> ToolEnv:
    """The test's own env, with the default scorer (the gold plan's writes)."""
    return make_tool_env(tools=[find_ticket, close_ticket], task_generator=desk_task, name="desk", **kwargs)


@pytest.fixture
def registered() -> Iterator[str]:
    agentgym.register_env(ENV_ID, make_desk)
    yield ENV_ID
    del gym.registry[ENV_ID]


def _solve(env: gym.Env, seed: int) -> dict[str, Any]:
    """Play the task as a careful agent would (privileged only to know the gold values)."""
    _, info = env.reset(seed=seed)
    goal = env.unwrapped.task.goal
    actions = ["Why should I close it?",
               json.dumps({"name": "find_ticket", "arguments": {"email": goal.value("email")}}),
               json.dumps({"name": "close_ticket", "arguments": dict(goal.gold_calls[1]["arguments"])})]
    for action in actions + ["OK."] * 20:
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return _summary(info)
    raise AssertionError("the episode did not end within its budget")


def _summary(info: dict[str, Any]) -> dict[str, Any]:
    """The end-of-episode summary (the one place this module reads its key)."""
    return info["episode_summary"]


def test_the_built_env_keeps_the_contract_and_gives_every_metric_what_it_needs(registered: str) -> None:
    report = check_agent_env(registered, n_garbage=40)
    assert report.ok, report.render()
    assert {f.metric for f in report.findings} == {"completion", "tool_accuracy", "recovery", "goal_consistency",
                                                  "noise"}


def test_an_instance_without_a_spec_is_checked_too() -> None:
    with pytest.warns(UserWarning, match="fresh-process replay skipped"):
        report = check_agent_env(make_desk(), n_garbage=20, seeds=(0,))
    assert report.ok, report.render()


def test_the_public_card_and_the_gold_reach_the_summary_not_the_agent() -> None:
    env = make_desk()
    obs, info = env.reset(seed=4)
    assert info["task"] == {"family": "desk", "domain": "support", "difficulty": "medium", "split": "train",
                            "id": "desk/support/4"}
    assert "How to" not in obs and 'reply with JSON {"name"' in obs
    assert [t["function"]["name"] for t in info["tools"]] == ["find_ticket", "close_ticket"]
    summary = _solve(env, 4)
    assert summary["success"] and summary["outcome"] == "accepted"
    assert summary["gold"]["calls"][1]["name"] == "close_ticket"
    assert summary["commitments"] == [{"turn": 4, "kind": "final", "contradicts": []}]  # told at turn 4
    assert [c["contradicts"] for c in summary["calls"]] == [[], []]


def test_noise_reaches_the_built_env_through_gym_make(registered: str) -> None:
    env = gym.make(registered, noise="medium")
    assert [w.name for w in env.spec.additional_wrappers] == ["Latency", "ToolFailure", "Corruption",
                                                               "Distractors", "Ambiguity", "GoalShift", "Typos"]
    kinds = set()
    for seed in range(60):  # typos land only on messages with something to read: the opening, mostly
        kinds |= {e["kind"] for e in _solve(env, seed)["noise"]}
    assert {"tool_failure", "distractors", "ambiguity", "goal_shift", "typos"} <= kinds


def test_same_seed_same_episode_and_the_task_is_drawn_from_the_seed() -> None:
    a, b = make_desk(), make_desk()
    assert a.reset(seed=9) == b.reset(seed=9)
    assert _solve(a, 9) == _solve(b, 9)
    tasks = {make_desk().reset(seed=s)[0] for s in range(12)}
    assert len(tasks) > 6


def test_a_user_scorer_and_user_factory_are_used() -> None:
    calls: list[str] = []

    def scorer(task: ToolTask, world: dict) -> Score:
        calls.append("scored")
        return Score(0.5, False)

    env = make_tool_env(tools=[find_ticket, close_ticket], task_generator=desk_task, scorer=scorer)
    summary = _solve(env, 1)
    assert summary["score"] == 0.5 and not summary["success"] and calls


class Desk(Toolkit):
    """The same tools as a Toolkit subclass over the world."""

    def __init__(self, world: dict) -> None:
        self.world = world

    @tool(kind=WRITE)
    def close_ticket(self, ticket_id: str, reason: str) -> dict:
        """Close a ticket.

        Args:
            ticket_id: The ticket's id.
            reason: Why it is closed.
        """
        self.world["closed"].append({"ticket_id": ticket_id, "reason": reason})
        return {"status": "closed"}

    @tool
    def find_ticket(self, email: str) -> dict:
        """Find the open ticket of a customer.

        Args:
            email: The customer's e-mail address.
        """
        return {"ticket_id": self.world["ticket_id"]}


def test_a_toolkit_subclass_works_with_its_own_scorer() -> None:
    with pytest.raises(TypeError, match="scorer"):
        make_tool_env(tools=Desk, task_generator=desk_task)
    env = make_tool_env(tools=Desk, task_generator=desk_task,
                        scorer=lambda task, world: world["closed"] == [dict(task.gold_calls[1]["arguments"])])
    assert _solve(env, 2)["success"]


def test_parts_that_do_not_fit_fail_clearly() -> None:
    with pytest.raises(TypeError, match="difficulty"):
        make_tool_env(tools=[find_ticket], task_generator=desk_task, difficulty="hard")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="task_generator"):
        make_tool_env(tools=[find_ticket], task_generator="desk")  # type: ignore[arg-type]
    env = make_tool_env(tools=[find_ticket], task_generator=desk_task)  # close_ticket is in the gold, not the tools
    with pytest.raises(ValueError, match="not one of the tools"):
        env.reset(seed=0)
    bad_args = make_tool_env(tools=[find_ticket, close_ticket], task_generator=lambda seed: ToolTask(
        request="x", gold_calls=[gold_call("find_ticket", mail="a")]))
    with pytest.raises(ValueError, match="does not take"):
        bad_args.reset(seed=0)
    with pytest.raises(ValueError, match="set their own difficulty"):
        make_desk().reset(seed=0, options={"difficulty": "hard"})
    not_a_task = make_tool_env(tools=[find_ticket], task_generator=lambda seed: {"request": "x"})
    with pytest.raises(TypeError, match="ToolTask"):
        not_a_task.reset(seed=0)


def test_noise_applies_to_an_instance_too() -> None:
    env = apply_noise(make_desk(), {"ambiguity": 1.0})
    _, info = env.reset(seed=3)
    assert [e["kind"] for e in info["noise"]] == ["ambiguity"]
    assert "@example.com" not in info["messages"][1]["content"]

