"""Every user hears that its request is done from the assistant, never from a tool result."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest
from reporting import DONE

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent

IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")


def _to_the_wait(env_id: str, seed: int, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
    """The env after the oracle's write that completed the first request, and that step's info."""
    env = gym.make(env_id, **kwargs)
    obs, info = env.reset(seed=seed)
    oracle = make_agent("oracle")
    oracle.bind(env.unwrapped)
    oracle.reset(obs, info)
    for _ in range(60):
        obs, _, terminated, truncated, info = env.step(oracle.act(obs, info))
        assert not (terminated or truncated), "the episode ended without a wait for the word"
        if env.unwrapped.awaiting_report:
            return env, info
    raise AssertionError("the user never waited to be told")


@pytest.mark.parametrize("env_id", IDS)
def test_the_user_says_nothing_at_the_completing_write_and_signs_off_when_told(env_id: str) -> None:
    waited = 0
    for seed in range(6):
        try:
            env, info = _to_the_wait(env_id, seed)
        except AssertionError:
            continue  # a task the oracle ends with a terminal tool (a submitted answer)
        waited += 1
        assert info["messages"][-1]["role"] == "tool"  # no word from the user at the write
        # An empty message is no word that the work is done.
        _, _, terminated, _, info = env.step("")
        assert not terminated and env.unwrapped.awaiting_report
        segment = info.get("segment")
        _, _, terminated, _, info = env.step(DONE)
        said = info["messages"][-1]["content"]
        assert not env.unwrapped.awaiting_report and "thank" in said.lower(), said
        if env_id == "AgentRL/CrossTask-v0":
            # The session goes on to the next request after the thanks, or ends with the last.
            assert terminated or info["segment_switch"][0]["ended"]["index"] == segment["index"], info
            # Its thanks says this request is done, not that the session is (more comes after it).
            assert terminated or "everything I needed" not in said, said
        else:
            assert terminated and info["episode_summary"]["outcome"] == "accepted" and info["episode_summary"]["success"]
    assert waited >= 3


def test_a_write_after_the_completing_one_is_judged_afresh() -> None:
    env = gym.make("AgentRL/Dialog-v0", difficulty="easy")
    env.reset(seed=3)
    gold = env.unwrapped.task.gold
    book = {"name": "book", "arguments": {"item_id": gold.items[0], "day": gold.day, "slot": gold.slot}}
    env.step(json.dumps(book))
    assert env.unwrapped.awaiting_report
    # A read changes nothing it waits for.
    _, _, terminated, _, info = env.step(json.dumps({"name": "get_details", "arguments": {"item_id": gold.items[0]}}))
    assert not terminated and env.unwrapped.awaiting_report and info["messages"][-1]["role"] == "tool"
    # A second booking undoes the done work: the user says so at once and waits no more.
    other = next(p for p in env.unwrapped.task.world.places if p.id != gold.items[0] and p.is_open(gold.day, gold.slot))
    _, _, terminated, _, info = env.step(json.dumps({**book, "arguments": {**book["arguments"], "item_id": other.id}}))
    assert not terminated and not env.unwrapped.awaiting_report and info["messages"][-1]["role"] == "user"


def test_a_figure_submitted_in_a_session_waits_for_the_assistants_word_too() -> None:
    """CrossTask 6958 T23 (playtest): the user thanked the assistant and asked the next thing on
    the submission itself, before hearing the figure. Now it waits, as after a write."""
    found = 0
    for seed in range(10):
        env = gym.make("AgentRL/CrossTask-v0", split="train", difficulty="hard")
        obs, info = env.reset(seed=seed)
        oracle = make_agent("oracle")
        oracle.bind(env.unwrapped)
        oracle.reset(obs, info)
        for _ in range(120):
            action = oracle.act(obs, info)
            obs, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
            if "submit_answer" in action and not info["messages"][-1]["content"].startswith("[error"):
                assert info["messages"][-1]["role"] == "tool" and not info.get("segment_switch"), info["messages"]
                _, _, terminated, _, info = env.step("")  # no word yet
                assert not terminated and not info.get("segment_switch")
                _, _, terminated, _, info = env.step("The total is submitted.")
                said = info["messages"][-1]["content"]
                assert terminated or (info["segment_switch"] and said.startswith("Thanks!")), said
                found += 1
                break
    assert found >= 2
