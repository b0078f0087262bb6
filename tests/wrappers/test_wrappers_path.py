"""`agentgym.wrappers` is a public import path, not a second implementation: every name it and
`agentgym.wrappers.candidates` export is the object of its home module, and a spec recorded while
the wrapper lived there (its entry point ``agentgym.wrappers.candidates:ActionCandidates``) still
loads the one wrapper."""

from __future__ import annotations

import importlib

import pytest
from gymnasium.envs.registration import load_env_creator

import agentgym.agents.candidates as builders
import agentgym.agents.candidates.crosstask as crosstask
import agentgym.agents.candidates.dialog as dialog
import agentgym.agents.candidates.tooluse as tooluse
import agentgym.agents.candidates.wrapper as wrapper
import agentgym.wrappers.subtask_rewards as subtask_rewards

HOMES = (builders, crosstask, dialog, tooluse, wrapper, subtask_rewards)


@pytest.mark.parametrize("path", ["agentgym.wrappers", "agentgym.wrappers.candidates"])
def test_every_name_is_its_home_modules_object(path: str) -> None:
    module = importlib.import_module(path)
    assert module.__all__
    for name in module.__all__:
        homes = [home for home in HOMES if name in vars(home)]
        assert homes, f"{path}.{name} has no home among the modules it re-exports"
        assert all(getattr(module, name) is vars(home)[name] for home in homes), f"{path}.{name} is a copy"


def test_a_spec_naming_the_former_entry_point_loads_the_one_wrapper() -> None:
    assert load_env_creator("agentgym.wrappers.candidates:ActionCandidates") is wrapper.ActionCandidates
    assert load_env_creator("agentgym.wrappers:ActionCandidates") is wrapper.ActionCandidates
