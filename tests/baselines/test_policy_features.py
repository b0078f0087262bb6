"""The hash policy's structural features: what the tool schemas say about the flow of values
(`ToolNeeds`), where a call's values came from, the kind of a candidate and the turns left.

Hand-made transcripts with tools of no shipped domain: the features name no tool, so they must
read the same off any schemas."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("torch")

from agentgym.baselines.policies import HashFeaturizer, ToolNeeds, Transcript, _transcript_state  # noqa: E402


def _tool(name: str, description: str, **required: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": required, "required": list(required)}}}


TOOLS = [
    _tool("list_rules", "The rules every write must respect."),
    _tool("list_vaults", "The vaults of the guild and what they hold."),
    _tool("move_gold", "Move gold from a vault to a member.", from_vault={"type": "string"},
          member_id={"type": "string"}, coins={"type": "number"}),
    _tool("find_member", "Find members by name.", query={"type": "string"}),
]


def _call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def _transcript(*steps: tuple[str, list[dict[str, Any]]], max_turns: int = 10) -> Transcript:
    t = Transcript()
    t.reset({"messages": [{"role": "system", "content": "You keep the guild's books."},
                          {"role": "user", "content": "Please pay Ada Stone 40 coins."}],
             "tools": TOOLS, "max_turns": max_turns})
    for action, answer in steps:
        # A step's messages open with the env's reading of the action (the transcript drops it).
        t.add(action, {"messages": [{"role": "assistant", "content": action}, *answer]})
    return t


def _tool_msg(name: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "name": name, "content": content if isinstance(content, str) else json.dumps(content)}


def test_a_look_up_that_names_a_kind_of_value_another_tool_lacks_unlocks_it() -> None:
    needs = ToolNeeds(TOOLS)
    assert needs.needed_by["vault"] == {"move_gold"} and needs.needed_by["member"] == {"move_gold"}
    assert needs.unlocks("list_vaults", set())
    assert needs.unlocks("find_member", set())
    assert not needs.unlocks("list_rules", set()), "a look-up naming no needed kind unlocks nothing"
    assert not needs.unlocks("list_vaults", {"vault"}), "a kind already seen is not lacking"
    assert not needs.unlocks("move_gold", set()), "the only tool needing a kind does not unlock it for itself"


def test_the_kinds_known_come_from_tool_results_and_the_agents_calls() -> None:
    t = _transcript((_call("list_vaults"), [_tool_msg("list_vaults", {"vaults": [{"vault_id": "V-1"}]})]))
    state = _transcript_state(t)
    assert "vault" in state.known and state.succeeded == {"list_vaults"}
    assert not t.needs.unlocks("list_vaults", state.known)
    failed = _transcript((_call("find_member", query="Ada"), [_tool_msg("find_member", "[error TOOL_ERROR] no")]))
    state = _transcript_state(failed)
    assert state.failed == {"find_member"} and not state.succeeded and state.last == "error"


def test_a_calls_values_are_traced_to_where_they_came_from() -> None:
    t = _transcript((_call("list_vaults"), [_tool_msg("list_vaults", {"vaults": [{"vault_id": "v-7"}]})]),
                    (_call("find_member", query="ada stone"),
                     [_tool_msg("find_member", {"matches": [{"member_id": "m-3"}]})]))
    start = _transcript_state(t).answer_start
    assert HashFeaturizer._origin("m-3", t, start) == "latest"
    assert HashFeaturizer._origin("v-7", t, start) == "tool"
    assert HashFeaturizer._origin("40", t, start) == "user"
    assert HashFeaturizer._origin("you keep", t, start) == "brief"
    assert HashFeaturizer._origin("ada stone", t, start) == "user"
    assert HashFeaturizer._origin("m-999", t, start) == "none", "a value nobody but the agent said is a guess"


def test_structural_features_tell_the_chains_next_step_from_a_guess_and_a_no_op() -> None:
    t = _transcript((_call("list_vaults"), [_tool_msg("list_vaults", {"vaults": [{"vault_id": "v-7"}]})]),
                    (_call("find_member", query="ada stone"),
                     [_tool_msg("find_member", {"matches": [{"member_id": "m-3"}]})]))
    f = HashFeaturizer()
    sourced = f.candidates([_call("move_gold", from_vault="v-7", member_id="m-3", coins=40)], t).shape[0]
    guessed = f.candidates([_call("move_gold", from_vault="v-9", member_id="m-3", coins=40)], t).shape[0]
    assert set(f._ids(["s:sourced:fresh:latest"])) <= set(sourced.tolist())
    assert set(f._ids(["s:guessed"])) <= set(guessed.tolist())
    assert not set(f._ids(["s:guessed"])) & set(sourced.tolist())
    fresh = _transcript()
    lookups = f.candidates([_call("list_vaults"), _call("list_rules")], fresh).shape
    assert set(f._ids(["s:unlocks:fresh"])) <= set(lookups[0].tolist())
    assert set(f._ids(["s:gives:fresh"])) <= set(lookups[1].tolist())


def test_messages_are_told_apart_by_kind_and_every_candidate_sees_the_turns_left() -> None:
    f = HashFeaturizer()
    t = _transcript(max_turns=3)
    ask, reply = f.candidates(["Which vault should I use?", "Done, Ada Stone is paid."], t).shape
    assert set(f._ids(["s:ask", "left:3-4"])) <= set(ask.tolist())
    assert set(f._ids(["s:reply", "left:3-4"])) <= set(reply.tolist())
    t = _transcript(("Which vault?", [{"role": "user", "content": "The big one."}]), max_turns=3)
    assert set(f._ids(["left:2", "s:ask:asked:1"])) <= set(f.candidates(["Which vault?"], t).shape[0].tolist())
    unbounded = Transcript()
    unbounded.reset({"messages": [], "tools": []})
    assert set(f._ids(["left:?"])) <= set(f.candidates(["Hello?"], unbounded).shape[0].tolist())


def test_a_policy_saved_before_feature_versions_plays_with_the_features_it_trained_with() -> None:
    from agentgym.baselines.policies import FEATURES, HashPolicy, make_policy, policy_spec

    assert policy_spec(HashPolicy())["config"]["features"] == FEATURES == 2
    old = make_policy({"kind": "hash", "config": {"buckets": 1 << 10, "dim": 8, "hidden": 16, "recent": 4}})
    assert old.featurizer.version == 1
    t = _transcript()
    f1, f2 = old.featurizer, HashFeaturizer(1 << 10, 4)
    shape_v1 = set(f1.candidates([_call("list_vaults")], t).shape[0].tolist())
    assert not set(f1._ids(["s:unlocks", "s:fresh", "left:9+"])) & shape_v1
    assert set(f2._ids(["s:unlocks", "s:fresh", "left:9+"])) <= set(f2.candidates([_call("list_vaults")], t).shape[0].tolist())
    with pytest.raises(ValueError, match="features version"):
        HashFeaturizer(version=3)
