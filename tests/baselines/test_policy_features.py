"""The hash policy's structural features: what the tool schemas say about the flow of values
(`ToolNeeds`), where a call's values came from, the kind of a candidate and the turns left.

Hand-made transcripts with tools of no shipped domain: the features name no tool, so they must
read the same off any schemas."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("torch")

from agentgym.baselines.ppo.features import HashFeaturizer, ToolNeeds, Transcript, _transcript_state  # noqa: E402


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


def test_only_the_current_features_are_computed_and_an_older_policy_is_refused() -> None:
    from agentgym.baselines.ppo.features import FEATURES
    from agentgym.baselines.ppo.networks import HashPolicy, make_policy, policy_spec

    assert policy_spec(HashPolicy())["config"]["features"] == FEATURES == 5
    for version in (1, 4, FEATURES + 1):
        with pytest.raises(ValueError, match="features version"):
            HashFeaturizer(version=version)
    with pytest.raises(ValueError, match="train the policy again"):  # saved before the features had versions
        make_policy({"kind": "hash", "config": {"buckets": 1 << 10, "dim": 8, "hidden": 16, "recent": 4}})


def _renamed(text: str) -> str:
    """The same conversation in another domain's words: every tool, key and value renamed."""
    for old, new in (("move_gold", "send_grain"), ("list_vaults", "list_silos"), ("from_vault", "from_silo"),
                     ("vault", "silo"), ("member_id", "farmer_id"), ("coins", "sacks"), ("gold", "grain"),
                     ("V-1", "S-7"), ("M-9", "F-3"), ("Ada Stone", "Ida Rowe")):
        text = text.replace(old, new)
    return text


def _both(words: bool) -> tuple[list[list[int]], list[list[int]]]:
    """The featurizer's history and candidate ids for one conversation and its renamed twin."""
    out = []
    for rename in (lambda s: s, _renamed):
        tools = json.loads(rename(json.dumps(TOOLS)))
        t = Transcript()
        t.reset({"messages": [{"role": "system", "content": "You keep the guild's books."},
                              {"role": "user", "content": rename("Please pay Ada Stone 40 coins.")}],
                 "tools": tools, "max_turns": 10})
        vaults = rename(json.dumps({"vaults": [{"id": "V-1", "gold": 90}]}))
        t.add(rename(_call("list_vaults")), {"messages": [{"role": "assistant", "content": ""},
                                                          _tool_msg(rename("list_vaults"), vaults)]})
        candidates = [rename(_call("move_gold", from_vault="V-1", member_id="M-9", coins=40)),
                      rename(_call("list_vaults")), "Which member should I pay?"]
        f = HashFeaturizer(words=words)
        c = f.candidates(candidates, t)
        out.append([sorted(f.history(t).tolist())] + [sorted(o.tolist() + s.tolist()) for o, s in zip(c.own, c.shape)]
                   + [sorted(e.tolist()) for e in c.entities])
    return out[0], out[1]


def test_structural_only_features_name_no_tool_key_or_value() -> None:
    plain, renamed = _both(words=False)
    assert plain == renamed, "without words, a renamed domain must read exactly the same"
    plain, renamed = _both(words=True)
    assert plain != renamed, "with words, the tools' and values' names are features"


def test_a_structural_only_policy_rebuilds_from_its_config() -> None:
    from agentgym.baselines.ppo.networks import HashPolicy, make_policy, policy_spec

    assert "words" not in HashPolicy().config, "the default config stays as checkpoints have it"
    spec = policy_spec(HashPolicy(buckets=64, dim=4, hidden=8, words=False))
    assert spec["config"]["words"] is False and make_policy(spec).featurizer.words is False


def test_where_a_value_sits_is_read_off_the_result_not_its_text() -> None:
    t = _transcript((_call("list_vaults"), [_tool_msg("list_vaults", {"vaults": [
        {"vault_id": "v-1", "gold": 10}, {"vault_id": "v-2", "gold": 20}, {"vault_id": "v-3", "gold": 30}]})]))
    f = HashFeaturizer()
    first, middle, last = (set(f._anchor(v, t).shape) for v in ("v-1", "v-2", "v-3"))
    assert set(f._ids(["a0:p:first"])) <= first and set(f._ids(["a0:p:i1"])) <= middle
    assert set(f._ids(["a0:p:i2", "a0:p:last"])) <= last
    assert f._anchor("v-2", t).key == "vault_id"
    # A number is a value only where a value equals it: 20 is in v-2's record, not in "v-20".
    assert f._anchor("20", t).key == "gold"
    assert f._anchor("gold", t).key == "", "a key is no value"
    sail = _call("move_gold", from_vault="v-1", member_id="m-1", coins=10)
    assert set(f._ids(["s:keymatch"])) <= set(f.candidates([sail], t).shape[0].tolist())


def test_a_value_carries_the_flags_of_its_record_however_far_from_the_mention() -> None:
    def vaults() -> Transcript:  # one per featurizer: a transcript caches what it was asked
        return _transcript((_call("list_vaults"), [_tool_msg("list_vaults", {"vaults": [
            {"vault_id": "v-7", "label": "the old north vault by the river gate", "owner": "the guild", "sealed": True},
            {"vault_id": "v-8", "label": "the new south vault", "sealed": False}]})]))

    f, t = HashFeaturizer(), vaults()
    sealed = set(f._anchor("v-7", t).words.tolist())
    assert set(f._ids(["a0:f:sealed:true"])) <= sealed, "the flag sits 60 characters past the id"
    assert set(f._ids(["a0:f:sealed:false"])) <= set(f._anchor("v-8", t).words.tolist())
