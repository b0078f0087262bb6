"""What an env hands out is the caller's to edit: its tool schemas and call records share no
container with the env or with each other (the kernels that copy them: `tests/core/test_fast.py`)."""

from __future__ import annotations

from typing import Any, Iterator

import gymnasium as gym
import pytest

import agentgym  # noqa: F401
from agentgym import ENV_IDS
from agentgym.core.render import to_json


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_tool_schemas_are_fresh_unshared_copies(env_id: str) -> None:
    env = gym.make(env_id)
    _, first = env.reset(seed=5)
    tools = first["tools"]
    ids = [id(c) for c in _containers(tools)]
    assert len(ids) == len(set(ids)), "a container appears twice in one copy"
    reference = to_json(tools)
    tools[0]["function"]["parameters"]["properties"]["poisoned"] = {"type": "string"}
    tools.append({"poisoned": True})
    _, again = env.reset(seed=5)
    assert to_json(again["tools"]) == reference
    assert not {id(c) for c in _containers(again["tools"])} & set(ids)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_step_call_records_share_nothing_with_the_episode_log(env_id: str) -> None:
    env = gym.make(env_id)
    _, info = env.reset(seed=3)
    tool = info["tools"][0]["function"]["name"]
    actions = [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": tool, "arguments": {"x": [1, {"y": [2]}]}}}]},
        '{"name": "%s", "arguments": {}}' % tool,
        '{"name": "no_such_tool", "arguments": {"q": {"deep": [1]}}}',
    ]
    logged = []
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        logged += info["calls"]
        if terminated or truncated:
            break
    own = env.unwrapped._calls
    assert [to_json(c) for c in logged] == [to_json(c) for c in own[: len(logged)]]
    own_ids = {id(c) for record in own for c in _containers(record)}
    assert not {id(c) for record in logged for c in _containers(record)} & own_ids
