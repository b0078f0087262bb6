"""Tests for agentgym.register_env and import_env_module: an env registered under its own
namespace gets noise, specs that rebuild it, fresh-process replay, and the module:ID form."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym
from agentgym.registration import import_env_module
from agentgym.testing import fresh_process_hashes, probe_actions, trajectory_hash
from agentgym.toolenv import ToolEnv

ENV_ID = "OwnEnvTest/Register-v0"
EXAMPLES = str(Path(__file__).resolve().parents[1] / "envs" / "examples")


def make_shop(**kwargs: object) -> ToolEnv:
    """The example's env, made through this module (so the entry point is this module's)."""
    if EXAMPLES not in sys.path:
        sys.path.append(EXAMPLES)  # envs/examples/ is a folder of the repository, not a package
    return importlib.import_module("own_env").make_env(**kwargs)


@pytest.fixture
def registered() -> Iterator[str]:
    agentgym.register_env(ENV_ID, make_shop)
    yield ENV_ID
    del gym.registry[ENV_ID]
    gym.registry.pop("MyOrg/Shop-v0", None)  # registered by the example make_shop imports
    sys.modules.pop("own_env", None)


def test_a_registered_env_takes_noise_and_its_spec_rebuilds_it(registered: str) -> None:
    spec = gym.spec(registered)
    assert spec.entry_point == "agentgym.noise.factory:make_env"
    assert spec.kwargs == {"env_entry_point": f"{__name__}:make_shop"}
    env = gym.make(registered, noise="tool_failure=0.5,typos=0.2")
    assert [w.name for w in env.spec.additional_wrappers] == ["ToolFailure", "Typos"]
    again = gym.make(gym.spec(registered).from_json(env.spec.to_json()))
    assert trajectory_hash(env, 3, ["Hello?"]) == trajectory_hash(again, 3, ["Hello?"])


def test_registering_again_with_the_same_entry_point_changes_nothing(registered: str) -> None:
    before = gym.spec(registered)
    agentgym.register_env(registered, f"{__name__}:make_shop")
    assert gym.spec(registered) is before


def test_a_fresh_process_replays_a_registered_env_by_id(registered: str) -> None:
    env = gym.make(registered)
    _, info = env.reset(seed=2)
    actions = probe_actions(info["tools"], 2, n=6)
    assert fresh_process_hashes(registered, [(2, actions)]) == [trajectory_hash(env, 2, actions)]


def test_an_entry_point_without_an_import_path_is_refused() -> None:
    with pytest.raises(ValueError, match="no import path"):
        agentgym.register_env("OwnEnvTest/Lambda-v0", lambda: None)

    def nested() -> None:
        return None

    with pytest.raises(ValueError, match="no import path"):
        agentgym.register_env("OwnEnvTest/Nested-v0", nested)
    with pytest.raises(ValueError, match="module:function"):
        agentgym.register_env("OwnEnvTest/Text-v0", "no_colon")
    assert "OwnEnvTest/Lambda-v0" not in gym.registry


def test_a_module_id_imports_its_module_which_registers_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "my_own_envs.py").write_text(
        "import agentgym\n"
        f"agentgym.register_env('OwnEnvTest/FromModule-v0', '{__name__}:make_shop')\n")
    monkeypatch.chdir(tmp_path)  # the working directory is importable, as with python -m
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        assert import_env_module("my_own_envs:OwnEnvTest/FromModule-v0") == "my_own_envs:OwnEnvTest/FromModule-v0"
        assert "OwnEnvTest/FromModule-v0" in gym.registry
        env = gym.make("my_own_envs:OwnEnvTest/FromModule-v0")  # gymnasium's own module:ID form
        assert env.spec.id == "OwnEnvTest/FromModule-v0"
    finally:
        gym.registry.pop("OwnEnvTest/FromModule-v0", None)
        sys.modules.pop("my_own_envs", None)


@pytest.mark.parametrize("env_id, match", [
    ("no_such_module_xyz:OwnEnvTest/X-v0", "cannot import 'no_such_module_xyz'"),
    (":OwnEnvTest/X-v0", "module before ':' is empty"),
    ("agentgym:OwnEnvTest/X-v0", "importing 'agentgym' did not register it"),
])
def test_a_module_id_that_does_not_resolve_says_why(env_id: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        import_env_module(env_id)


def test_ids_pass_as_they_are() -> None:
    assert import_env_module("OwnEnvTest/Unknown-v0") == "OwnEnvTest/Unknown-v0"  # gym.make's to refuse
    assert import_env_module("AgentRL/Dialog-v0") == "AgentRL/Dialog-v0"
    assert import_env_module("agentgym:AgentRL/Dialog-v0") == "agentgym:AgentRL/Dialog-v0"
