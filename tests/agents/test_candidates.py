"""`ActionCandidates`: candidate actions from public information only, on every registered id."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents.candidates import CandidateConfig, GenericCandidates, make_builder
from agentgym.agents.candidates.crosstask import CrossTaskCandidates
from agentgym.agents.candidates.dialog import DialogCandidates
from agentgym.agents.candidates.tooluse import ToolUseCandidates
from agentgym.core.protocol import parse_action
from agentgym.envs.dialog.domain import load_lexicon
from agentgym.envs.dialog.env import DialogEnv
from agentgym.envs.dialog.tasks import Gold, generate_task, satisfying_places
from agentgym.eval.episode import agent_view
from agentgym.wrappers import ActionCandidates

DIALOG_ID = "AgentRL/Dialog-v0"


def _live_ids() -> list[str]:
    return sorted(i for i in gym.registry if i.startswith("AgentRL/") and "Remote" not in i)


def _play(env: gym.Env, seed: int, steps: int, pick: random.Random) -> list[tuple[Any, dict[str, Any], str | None]]:
    """(obs, info, action taken next) along a random walk over the candidates."""
    obs, info = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        action = pick.choice(info["candidates"])
        out.append((obs, info, action))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            out.append((obs, info, None))
            break
    return out


# ------------------------------------------------------------------ every id
@pytest.mark.parametrize("env_id", _live_ids())
def test_every_id_gets_non_empty_well_formed_candidates(env_id: str) -> None:
    env = ActionCandidates(gym.make(env_id))
    pick = random.Random(0)
    for seed in range(3):
        for obs, info, action in _play(env, seed, 6, pick):
            if action is None:
                assert info["candidates"] == []  # the episode is over
                continue
            cands = info["candidates"]
            assert cands and len(cands) == len(set(cands)) and len(cands) <= CandidateConfig().max_candidates
            tools = {t["function"]["name"] for t in env.unwrapped.toolkit.schemas()}
            for c in cands:
                parsed = parse_action(c)
                assert parsed.error is None, c
                assert all(call.error is None and call.name in tools for call in parsed.calls), c
    env.close()


@pytest.mark.parametrize("env_id", _live_ids())
def test_the_generic_builder_works_on_every_id(env_id: str) -> None:
    env = ActionCandidates(gym.make(env_id), builder="generic")
    obs, info = env.reset(seed=1)
    assert isinstance(env.builder, GenericCandidates) and info["candidates"]
    tool_calls = [c for c in info["candidates"] if parse_action(c).calls]
    assert tool_calls, "the generic builder offers tool calls filled from public values"
    env.close()


def test_each_family_has_its_builder_and_others_fall_back_to_the_generic_one() -> None:
    assert isinstance(make_builder("dialog"), DialogCandidates)
    assert isinstance(make_builder("tooluse"), ToolUseCandidates)
    assert isinstance(make_builder("crosstask"), CrossTaskCandidates)
    for family in ("no-such-family", None, "generic"):
        assert isinstance(make_builder(family), GenericCandidates)


# ------------------------------------------------------------------ dialog
def test_dialog_asks_about_every_slot_of_the_user_lexicon_and_the_user_understands() -> None:
    env = ActionCandidates(gym.make(DIALOG_ID))
    obs, info = env.reset(seed=3)
    slots = list(load_lexicon().slots)
    questions = [c for c in info["candidates"] if c.endswith("?") and not parse_action(c).calls][1: 1 + len(slots)]
    assert len(questions) == len(slots)
    for q in questions:
        env.reset(seed=3)
        _, _, _, _, step_info = env.step(q)
        reply = step_info["messages"][-1]["content"]
        assert "not sure what you mean" not in reply, (q, reply)
    env.close()


def test_dialog_tool_arguments_come_from_what_the_user_said_and_tools_returned() -> None:
    env = ActionCandidates(gym.make(DIALOG_ID, difficulty="easy"))
    obs, info = env.reset(seed=11)
    opening = info["messages"][-1]["content"].lower()
    search = next(c for c in info["candidates"] if parse_action(c).calls and parse_action(c).calls[0].name == "search")
    for value in parse_action(search).calls[0].arguments.values():
        for v in value if isinstance(value, list) else [value]:
            assert str(v).lower() in opening
    _, _, _, _, info = env.step(search)
    found = [r["id"] for r in json.loads(info["messages"][1]["content"])["results"]]
    ids = {call.arguments.get("item_id") for c in info["candidates"] for call in parse_action(c).calls}
    assert found and set(found[: CandidateConfig().max_entities]) <= ids
    env.close()


def _shifted_goal_generator(seed: int, options: dict[str, Any]) -> Any:
    """The task of `seed`, with its hidden ("ask") constraints given other values: the public
    part (world, brief, opening) is the same, the hidden goal and the gold differ."""
    task = generate_task(seed, options)
    gold: Gold = task.gold
    world = task.world
    constraints = []
    for c in gold.constraints:
        if c.reveal == "ask" and c.kind == "area":
            other = next(a for a in world.domain.areas if a != c.value)
            c = dataclasses.replace(c, value=other)
        elif c.reveal == "ask" and c.kind == "price":
            c = dataclasses.replace(c, value=c.value + 5 * world.domain.price_step)
        elif c.reveal == "ask" and c.kind == "rating":
            c = dataclasses.replace(c, value=3.0 if c.value > 3.0 else 4.5)
        constraints.append(c)
    items = satisfying_places(world, constraints, gold.day, gold.slot)
    new = dataclasses.replace(gold, constraints=tuple(constraints), items=items)
    return dataclasses.replace(task, goal=new, gold=new)


def test_candidates_never_depend_on_the_hidden_goal() -> None:
    """Two tasks that differ only in hidden goals get identical candidate lists for the same
    public transcript (here: actions that reveal nothing hidden, taken from the candidates)."""
    compared = 0
    for seed in range(40):
        a = ActionCandidates(DialogEnv(difficulty="medium"))
        b = ActionCandidates(DialogEnv(difficulty="medium", task_generator=_shifted_goal_generator))
        obs_a, info_a = a.reset(seed=seed)
        obs_b, info_b = b.reset(seed=seed)
        if a.unwrapped.task.gold.constraints == b.unwrapped.task.gold.constraints:
            continue  # this task has no hidden constraint the generator could change
        assert obs_a == obs_b
        assert info_a["candidates"] == info_b["candidates"]
        # Search, look up and check places: tool results are the world's, never the goal's.
        for _ in range(5):
            safe = [c for c in info_a["candidates"] if parse_action(c).calls
                    and parse_action(c).calls[0].name in ("search", "get_details", "check_availability")]
            action = safe[(seed + _) % len(safe)]
            obs_a, _, _, _, info_a = a.step(action)
            obs_b, _, _, _, info_b = b.step(action)
            assert obs_a == obs_b
            assert info_a["candidates"] == info_b["candidates"]
        compared += 1
    assert compared >= 10


@pytest.mark.parametrize("env_id", ["AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"])
def test_the_builder_reads_only_public_keys(env_id: str) -> None:
    env = gym.make(env_id)
    obs, info = env.reset(seed=5)
    family = info["task"]["family"]
    plain, poisoned = make_builder(family), make_builder(family)
    plain.reset(obs, info)
    poisoned.reset(obs, {**info, "episode_summary": {"gold": {"items": ["rest_999"], "calls": [{"name": "x"}]}},
                         "noise": [{"kind": "x"}], "calls": [{"contradicts": ["area"]}]})
    assert plain.candidates() == poisoned.candidates()
    env.close()


def test_an_agent_rebuilds_the_wrappers_lists_from_what_it_sees() -> None:
    """The builder driven by (obs, info) as the runner shows an agent gives the wrapper's lists."""
    env = ActionCandidates(gym.make(DIALOG_ID))
    pick = random.Random(7)
    for seed in range(4):
        walk = _play(env, seed, 10, pick)
        builder = make_builder(walk[0][1]["task"]["family"])
        for i, (obs, info, action) in enumerate(walk):
            view = agent_view({k: v for k, v in info.items() if k != "candidates"})
            if i == 0:
                builder.reset(obs, view)
            else:
                builder.step(walk[i - 1][2], obs, view)
            if action is not None:
                assert builder.candidates() == info["candidates"]
    env.close()


# ------------------------------------------------------------------ wrapper contract
def test_the_wrapper_records_its_arguments_and_passes_actions_through() -> None:
    env = ActionCandidates(gym.make(DIALOG_ID), config={"max_entities": 3}, builder=None)
    assert env.spec is not None
    saved = env.spec.additional_wrappers[-1]
    assert saved.name == "ActionCandidates" and saved.kwargs["config"]["max_entities"] == 3
    obs, info = env.reset(seed=2)
    _, _, _, _, info = env.step("not a candidate at all")  # any string is still a valid action
    assert info["candidates"]
    env.close()


def test_candidate_config_rejects_unknown_and_bad_fields() -> None:
    with pytest.raises(ValueError, match="unknown CandidateConfig fields"):
        CandidateConfig.of({"max_entitys": 3})
    with pytest.raises(ValueError, match="positive int"):
        CandidateConfig(max_candidates=0)
    with pytest.raises(gym.error.ResetNeeded):
        ActionCandidates(gym.make(DIALOG_ID)).builder
