"""Faults are tied to what they hit: every event says which gold step or constraint it affects."""

from __future__ import annotations

import gymnasium as gym
import pytest
from noise_helpers import LIVE_IDS

from agentgym.agents import make_agent
from agentgym.core.gold import call_matches, carries
from agentgym.core.render import call_text
from agentgym.eval.episode import run_episode

DIALOG = "AgentRL/Dialog-v0"


def _gold(env: gym.Env) -> list[dict]:
    return env.unwrapped.gold_calls()


def test_a_failed_gold_call_hits_its_step_and_a_call_the_plan_does_not_need_hits_none() -> None:
    env = gym.make(DIALOG, noise="tool_failure=1")
    env.reset(seed=4)
    plan = _gold(env)
    g = env.unwrapped.task.gold
    _, _, _, _, info = env.step(call_text("check_availability", item_id=g.items[0], day=g.day, slot=g.slot))
    (event,) = info["noise"]
    assert event["hits"] == {"gold_step": 1} and call_matches("check_availability", info["calls"][0]["arguments"],
                                                              plan[event["hits"]["gold_step"]])
    assert event["call"] == info["calls"][0]["id"] and event["at_ms"] == 0.0
    place = env.unwrapped.task.world.places[0].id
    _, _, _, _, info = env.step(call_text("get_details", item_id=place))  # no step of the plan
    assert info["noise"][0]["hits"] is None


def test_a_call_for_a_step_already_done_is_for_no_step() -> None:
    env = gym.make(DIALOG)
    env.reset(seed=4)
    base = env.unwrapped
    assert base.gold_step_for("search", {}) == 0
    env.step(call_text("search"))
    assert base.gold_step_for("search", {}) is None  # a failure of it would leave nothing to recover
    g = base.task.gold
    assert base.gold_step_for("check_availability", {"item_id": "x", "day": g.day, "slot": g.slot}) == 1
    assert base.repeats_success("search", {}) and not base.repeats_success("search", {"page": 2})


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_every_event_carries_its_tie_and_a_corruption_hits_a_step_consuming_the_true_value(env_id: str) -> None:
    env = gym.make(env_id, noise="tool_failure=0.3,corruption=0.4,ambiguity=0.5,goal_shift=0.5,latency=100")
    tied = {"corruption": 0, "tool_failure": 0}
    for seed in range(40):
        result = run_episode(env, make_agent("oracle"), seed)
        for event in result.episode["noise"]:
            assert {"step", "kind", "target", "detail", "hits", "at_ms"} <= set(event)
            hits = event["hits"]
            if event["kind"] in ("ambiguity", "goal_shift"):
                assert hits == {"constraint": event["target"]}
            elif event["kind"] in ("tool_failure", "corruption") and hits is not None:
                tied[event["kind"]] += 1
                assert set(hits) == {"gold_step"} and isinstance(hits["gold_step"], int) and "call" in event
    assert tied["tool_failure"] and tied["corruption"], tied


def test_a_corruption_names_the_step_that_needs_the_value_it_replaced() -> None:
    env = gym.make("AgentRL/ToolUse-v0", noise="corruption=1")
    oracle = make_agent("oracle")
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        plan = _gold(env)
        oracle.bind(env.unwrapped)
        oracle.reset(obs, info)
        for _ in range(40):
            obs, _, term, trunc, info = env.step(oracle.act(obs, info))
            for event in info["noise"]:
                if event["kind"] == "corruption" and event["hits"] is not None:
                    assert carries(plan[event["hits"]["gold_step"]], event["detail"]["from"])
                    return
            if term or trunc:
                break
    pytest.fail("no corruption hit a step in 30 episodes")


def test_the_step_info_names_a_step_by_its_index_only() -> None:
    # The step info reaches any agent that reads it: it must not carry the gold step's arguments.
    env = gym.make(DIALOG, noise="tool_failure=1")
    env.reset(seed=2)
    g = env.unwrapped.task.gold
    _, _, _, _, info = env.step(call_text("book", item_id=g.items[0], day=g.day, slot=g.slot))
    (event,) = info["noise"]
    assert event["hits"] == {"gold_step": 2}
    assert g.items[0] not in str(event["hits"])
