"""Noise keyed on the call (``draws=call``, `agentgym.core.call_draws`): the same call meets the
same fault whatever else the agent calls; the default stream is as before."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.core.action_types import ToolCall
from agentgym.core.call_draws import CallDraws, call_key
from agentgym.noise.spec import NoiseSpecError, format_noise, parse_noise

TOOLUSE = "AgentRL/ToolUse-v0"
NOISE = "tool_failure=0.3,corruption=0.3,latency=400"
#: Reads of the finance domain the agent makes for real, turn by turn.
REAL = [[("find_employee", {"query": "Ana"})], [("list_accounts", {})],
        [("list_expenses", {"employee_id": "E-1", "month": 3}), ("list_accounts", {})],
        [("find_employee", {"query": "Ana"})], [("list_accounts", {})]]
PAD = ("list_policies", {})


def _faults(noise: str, pads: int, seed: int) -> list[tuple[Any, ...]]:
    """Each turn's real calls' fates (what each returned, the faults logged on them, their times
    left out: the pads take time too) when every turn also sends `pads` reads of the policies
    after its own calls."""
    env = gym.make(TOOLUSE, split="train", difficulty="easy", noise=noise)
    env.reset(seed=seed, options={"domain": "finance"})
    out = []
    for k, calls in enumerate(REAL):
        action = [{"name": n, "arguments": a} for n, a in calls] + [{"name": PAD[0], "arguments": PAD[1]}] * pads
        _, _, term, trunc, info = env.step(json.dumps(action))
        events = [{key: v for key, v in e.items() if key != "at_ms"} for e in info["noise"] if e["target"] != PAD[0]]
        real = [m["content"] for m in info["messages"] if m["role"] == "tool"][: len(calls)]
        out.append((k, real, sorted(json.dumps(e, sort_keys=True) for e in events)))
        if term or trunc:
            break
    return out


def test_reads_added_to_every_turn_never_change_the_faults_of_the_other_calls() -> None:
    met = 0
    for seed in range(12):
        plain = _faults(f"{NOISE},draws=call", 0, seed)
        assert plain == _faults(f"{NOISE},draws=call", 3, seed), seed
        met += sum(len(events) for *_, events in plain)
    assert met >= 10  # the real calls met faults to keep


def test_the_stream_is_the_default_and_padding_moves_its_faults() -> None:
    # Why the option exists: on the episode's stream, reads added to a turn take draws from it,
    # so the faults of the calls after them move (on some seed of a dozen).
    assert any(_faults(NOISE, 0, seed) != _faults(NOISE, 3, seed) for seed in range(12))
    assert all("keyed" not in kw for _, kw in parse_noise("medium"))


def test_a_retry_is_a_new_draw_and_the_same_call_the_same_draw_in_any_key_order() -> None:
    draws, records = CallDraws(7, 0), []
    first = ToolCall("get_order", {"order_id": "O-1", "verbose": True})
    same = ToolCall("get_order", {"verbose": True, "order_id": "O-1"})
    a = draws.words(records, first)
    assert draws.words(records, first) is a  # asked again for the call being made: the same bits
    records.append({"valid": True, "name": first.name, "arguments": first.arguments})
    b = draws.words(records, same)  # the same call again: its second occurrence
    assert b != a and call_key(first.name, first.arguments) == call_key(same.name, same.arguments)
    fresh, again = CallDraws(7, 0), []
    assert fresh.words(again, same) == a  # its first occurrence, written in the other order
    assert CallDraws(7, 1).words([], first) != a and CallDraws(8, 0).words([], first) != a
    # Each kind reads bits of its own: the gates of one call are not one number.
    assert len({CallDraws.uniform(a, kind) for kind in ("tool_failure", "corruption", "latency")}) == 3


def test_keyed_episodes_replay_byte_for_byte() -> None:
    def play() -> list[str]:
        env = gym.make(TOOLUSE, split="train", noise="medium,draws=call")
        obs, _ = env.reset(seed=3)
        out = [obs]
        for calls in REAL:
            obs, *_ = env.step(json.dumps([{"name": n, "arguments": a} for n, a in calls]))
            out.append(obs)
        return out
    assert play() == play()


def test_the_spec_item() -> None:
    layers = dict(parse_noise("medium,draws=call"))
    assert all(layers[k]["keyed"] for k in ("latency", "tool_failure", "corruption"))
    assert "keyed" not in layers["typos"]
    assert format_noise("medium,draws=call").endswith(",draws=call") and "draws" not in format_noise("medium")
    assert format_noise({"tool_failure": 0.2, "draws": "call"}) == "tool_failure=0.2,draws=call"
    assert parse_noise("tool_failure=0.2,draws=stream") == parse_noise("tool_failure=0.2")
    for bad, words in (("typos=0.1,draws=call", "has none of them"), ("medium,draws=maybe", "draws must be one of"),
                       ({"corruption": {"rate": 0.1, "keyed": "yes"}}, "keyed must be true or false")):
        with pytest.raises(NoiseSpecError, match=words):
            parse_noise(bad)
