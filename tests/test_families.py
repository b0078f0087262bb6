"""`agentgym.families`: one table of the families, which every part reads."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym
from agentgym import families
from agentgym.agents.base import Agent
from agentgym.agents.candidates import BUILDERS, CandidateBuilder, make_builder
from agentgym.agents.heuristic import STRATEGIES, make_strategy
from agentgym.core.env import AgentEnv
from agentgym.envs.crosstask.session import FAMILIES as SESSION_PARTS
from agentgym.registration import env_card

NAMES = [f.name for f in families.FAMILIES]


def test_the_ids_are_the_families_ids_and_registered_from_them() -> None:
    assert agentgym.ENV_IDS == families.ENV_IDS == tuple(f.env_id for f in families.FAMILIES)
    for f in families.FAMILIES:
        spec = gym.spec(f.env_id)
        assert spec.kwargs["env_entry_point"] == f.env
        assert families.by_id(f.env_id) is f is families.get(f.name)
    assert families.by_id("AgentRL/Remote-v0") is None


@pytest.mark.parametrize("name", NAMES)
def test_every_part_a_family_names_loads_and_is_what_it_says(name: str) -> None:
    f = families.get(name)
    assert issubclass(families.load(f.env), AgentEnv)
    assert f.card() == env_card(gym.spec(f.env_id)) and f.card()
    strategy = make_strategy(name)
    assert callable(strategy.act) and callable(strategy.reset)
    assert isinstance(make_builder(name), CandidateBuilder)
    if f.candidates is not None:
        assert type(make_builder(name)) is families.load(f.candidates)
    oracle = families.load(f.oracle)
    env = gym.make(f.env_id)
    obs, info = env.reset(seed=0)
    assert isinstance(oracle(env.unwrapped).act(obs, info), str)
    if f.domains is not None:
        assert set(families.load(f.domains)("train")) and set(families.load(f.domains)("test"))


def test_the_heuristic_and_the_builders_read_the_table() -> None:
    assert STRATEGIES == {f.name: f.strategy for f in families.FAMILIES}
    assert BUILDERS == {f.name: f.candidates for f in families.FAMILIES if f.candidates}
    with pytest.raises(KeyError, match="the families: dialog, tooluse, crosstask"):
        families.get("chess")
    with pytest.raises(ValueError, match="module:attr"):
        families.load("agentgym.families")


def test_sessions_mix_in_the_parts_of_the_families_envs() -> None:
    for name, parts in SESSION_PARTS.items():
        f = families.get(name)
        env_parts = families.load(f.env).parts
        assert (parts.generate, parts.toolkit, parts.user, parts.score) == (
            env_parts.task_generator, env_parts.toolkit_factory, env_parts.user_factory, env_parts.scorer)
        assert parts.domains is families.load(f.domains)


def test_the_oracle_agent_plays_each_familys_oracle_to_success() -> None:
    from agentgym.agents import make_agent
    from agentgym.eval.episode import run_episode

    oracle: Agent = make_agent("oracle")
    for f in families.FAMILIES:
        assert run_episode(gym.make(f.env_id), oracle, 1).success, f.name
