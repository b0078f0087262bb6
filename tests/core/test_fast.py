"""Each speed kernel of `agentgym.core._fast` equals the plain code it stands for."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
from collections import OrderedDict
from typing import Any, Iterator

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding
from hypothesis import given, settings
from hypothesis import strategies as st

import agentgym  # noqa: F401  (registers the ids)
from agentgym import ENV_IDS
from agentgym.agents import make_agent
from agentgym.core import _fast
from agentgym.core.gold import leaves
from agentgym.core.protocol import ActionError, ErrorCode, ParsedAction, ToolCall
from agentgym.core.seeding import Rng
from agentgym.core.strict_json import DECODER as _DECODER
from agentgym.families import FAMILIES
from agentgym.testing import trajectory_hash

# ------------------------------------------------------------------ data

_SCALARS = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(max_size=8)
_JSON = st.recursive(_SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids,
                                                                                          max_size=4), max_leaves=20)


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


def _shares_nothing(a: Any, b: Any) -> bool:
    return not {id(c) for c in _containers(a)} & {id(c) for c in _containers(b)}


def _ordered(value: Any) -> Any:
    """`value` with every dict made an OrderedDict (a dict subclass, as a caller may send)."""
    if isinstance(value, dict):
        return OrderedDict((k, _ordered(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


# ------------------------------------------------------------------ LazyNpRandom


class _Plain(gym.Env):
    observation_space = action_space = gym.spaces.Discrete(2)


class _Lazy(_fast.LazyNpRandom, gym.Env):
    observation_space = action_space = gym.spaces.Discrete(2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.none() | st.integers(0, 2**64), min_size=1, max_size=4), st.integers(0, 3))
def test_lazy_np_random_reads_what_gymnasium_would_have_made(seeds: list[int | None], draws: int) -> None:
    plain, lazy = _Plain(), _Lazy()
    first = seeds[0] if seeds[0] is not None else 7  # an unseeded first reset draws from the OS
    for seed in [first, *seeds[1:]]:
        gym.Env.reset(plain, seed=seed)
        lazy.reset(seed=seed)
        assert lazy.np_random_seed == plain.np_random_seed
        for _ in range(draws):
            assert lazy.np_random.integers(2**62) == plain.np_random.integers(2**62)
        assert lazy._np_random.bit_generator.state == plain._np_random.bit_generator.state


def test_lazy_np_random_makes_nothing_until_read_and_takes_an_assigned_generator() -> None:
    lazy = _Lazy()
    lazy.reset(seed=3)
    assert "_np_random_made" not in lazy.__dict__
    assert lazy.np_random_seed == 3 and "_np_random_made" not in lazy.__dict__
    mine = seeding.np_random(11)[0]
    lazy.np_random = mine
    assert lazy.np_random is mine and lazy._np_random is mine
    lazy.reset(seed=3)
    assert lazy.np_random.integers(100) == seeding.np_random(3)[0].integers(100)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", np.int64(3)])
def test_lazy_np_random_refuses_the_seeds_gymnasium_refuses(bad: Any) -> None:
    with pytest.raises(Exception) as plain_error:
        gym.Env.reset(_Plain(), seed=bad)
    with pytest.raises(type(plain_error.value)) as lazy_error:
        _Lazy().reset(seed=bad)
    assert str(lazy_error.value) == str(plain_error.value)


class _GymnasiumSeeding(_fast.LazyNpRandom):
    """Gymnasium's own seeding in place of the fast path: after an env class in the bases, its
    ``super().reset(seed=seed)`` is `gymnasium.Env.reset` and ``_np_random`` a plain attribute."""

    _np_random = None
    reset = gym.Env.reset


def _play_through(env: gym.Env, agent: Any, seed: int, steps: int) -> None:
    """Play `agent` in `env`'s episode of `seed`, at most `steps` steps."""
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    for _ in range(steps):
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        if terminated or truncated:
            break


def _agent_actions(env: gym.Env, agent_name: str, seed: int) -> list[Any]:
    """The actions `agent_name` takes in `env`'s episode of `seed`."""
    agent = make_agent(agent_name)
    obs, info = env.reset(seed=seed)
    if agent.privileged:
        agent.bind(env.unwrapped)
    agent.reset(obs, info)
    actions: list[Any] = []
    for _ in range(200):
        actions.append(agent.act(obs, info))
        obs, _, terminated, truncated, info = env.step(actions[-1])
        if terminated or truncated:
            break
    return actions


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_lazy_np_random_plays_the_episodes_of_gymnasium_own_seeding(family: Any) -> None:
    from gymnasium.envs.registration import load_env_creator

    from agentgym.noise.spec import apply_noise

    cls = load_env_creator(family.env)
    plain_cls = type(f"Plain{cls.__name__}", (cls, _GymnasiumSeeding), {})
    for noise in (None, "medium"):
        fast, plain = cls(), plain_cls()
        if noise is not None:
            fast, plain = apply_noise(fast, noise), apply_noise(plain, noise)
        # An unseeded reset draws its episode seed from the env's generator, seeded before.
        drawn = set()
        for env in (fast, plain):
            env.reset(seed=3)
            drawn.add(env.reset()[1]["seed"])
        assert len(drawn) == 1
        for agent in ("random", "heuristic", "oracle"):
            for seed in (0, 1, *drawn):
                actions = _agent_actions(fast, agent, seed)
                assert trajectory_hash(fast, seed, actions) == trajectory_hash(plain, seed, actions), (noise, agent, seed)
        assert "_np_random_made" not in vars(plain.unwrapped)
        assert plain.unwrapped._np_random is vars(plain.unwrapped)["_np_random"] is not None


# ------------------------------------------------------------------ copies


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_copy_json_is_a_json_round_trip_that_shares_nothing(value: Any) -> None:
    for given_value in (value, _ordered(value)):
        out = _fast.copy_json(given_value)
        assert out == json.loads(json.dumps(given_value))
        assert json.dumps(out) == json.dumps(json.loads(json.dumps(given_value)))
        assert all(type(c) in (dict, list) for c in _containers(out))
        assert _shares_nothing(out, given_value)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_schemas_copy_equals_a_deep_copy_of_the_schemas_and_shares_nothing(env_id: str) -> None:
    env = gym.make(env_id)
    for seed in range(12):
        env.reset(seed=seed)
        toolkit = env.unwrapped.toolkit
        want = toolkit.schemas()
        first, second = _fast.schemas_copy(toolkit), _fast.schemas_copy(toolkit)
        assert first == second == copy.deepcopy(want)
        assert json.dumps(first) == json.dumps(want)  # the order of keys too
        assert _shares_nothing(first, want) and _shares_nothing(first, second)
        ids = [id(c) for c in _containers(first)]
        assert len(ids) == len(set(ids))


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_json_maker_makes_the_json_round_trip_afresh_each_call(value: Any) -> None:
    make = _fast.json_maker(value)
    first, second = make(), make()
    want = json.loads(json.dumps(value))
    assert first == second == want
    assert json.dumps(first) == json.dumps(want)  # the order of keys and the scalars' types too
    assert _shares_nothing(first, second) and _shares_nothing(first, value)
    assert all(type(c) in (dict, list) for c in _containers(first))


def test_json_maker_falls_back_where_a_display_cannot_stand_for_the_value() -> None:
    for value in ([{"x": float("inf")}], {"nan": float("nan")}, [[[[]]]] * 3):
        make = _fast.json_maker(value)
        assert json.dumps(make()) == json.dumps(json.loads(json.dumps(value)))
        assert make() is not make()


def test_schemas_copy_empties_its_caches_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    class Keyed:
        def __init__(self, name: str) -> None:
            self.schemas_key = name
            self._schemas = [{"type": "function", "function": {"name": name, "parameters": {}}}]

        def schemas(self) -> list[dict[str, Any]]:
            return self._schemas

    monkeypatch.setattr(_fast, "_SCHEMA_MAKERS", {})
    monkeypatch.setattr(_fast, "_MAKER_OF_SCHEMA", {})
    monkeypatch.setattr(_fast, "_SCHEMA_KEYS_MAX", 2)
    kits = [Keyed(name) for name in "abcde"]
    for _ in range(2):
        for kit in kits:
            assert _fast.schemas_copy(kit) == kit.schemas() and _fast.schemas_copy(kit)[0] is not kit.schemas()[0]
            assert len(_fast._SCHEMA_MAKERS) <= 2 and len(_fast._MAKER_OF_SCHEMA) <= 2


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_schema_copy_of_a_decoy_equals_a_deep_copy_and_shares_nothing(env_id: str) -> None:
    env = gym.make(env_id, noise={"distractors": 3})
    for seed in range(6):
        _obs, info = env.reset(seed=seed)
        layer = env
        while not hasattr(layer, "extra_tools"):
            layer = layer.env
        want = [t.spec.openai_schema() for t in layer.extra_tools.values()]
        assert want and info["tools"][-len(want):] == [_fast.copy_json(w) for w in want]
        for schema in want:
            first, second = _fast.schema_copy(schema), _fast.schema_copy(schema)
            assert first == second == copy.deepcopy(schema)
            assert json.dumps(first) == json.dumps(schema)  # the order of keys too
            assert _shares_nothing(first, schema) and _shares_nothing(first, second)


def test_schema_copy_empties_its_caches_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fast, "_SCHEMA_MAKERS", {})
    monkeypatch.setattr(_fast, "_MAKER_OF_SCHEMA", {})
    monkeypatch.setattr(_fast, "_SCHEMA_KEYS_MAX", 2)
    schemas = [{"type": "function", "function": {"name": name, "parameters": {}}} for name in "abcde"]
    for _ in range(2):
        for schema in schemas:
            assert _fast.schema_copy(schema) == schema and _fast.schema_copy(schema) is not schema
            assert len(_fast._MAKER_OF_SCHEMA) <= 2


def test_schemas_copy_of_a_toolkit_without_a_key_is_a_plain_copy() -> None:
    class Varying:
        schemas_key = None

        def __init__(self, name: str) -> None:
            self.name = name

        def schemas(self) -> list[dict[str, Any]]:
            return [{"type": "function", "function": {"name": self.name, "parameters": {}}}]

    assert _fast.schemas_copy(Varying("a"))[0]["function"]["name"] == "a"
    assert _fast.schemas_copy(Varying("b"))[0]["function"]["name"] == "b"


_NOISES = (None, "medium", "tool_failure=0.5,distractors=3", "corruption=0.5,goal_shift=0.8")


def _records(env_id: str) -> Iterator[dict[str, Any]]:
    """Every call record of a few episodes of the random and heuristic agents."""
    for noise in _NOISES:
        env = gym.make(env_id, **({} if noise is None else {"noise": noise}))
        for name in ("random", "heuristic"):
            agent = make_agent(name)
            for seed in range(3):
                _play_through(env, agent, seed, 40)
                yield from env.unwrapped._calls


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_call_records_keep_the_shape_copy_record_relies_on(env_id: str) -> None:
    seen = 0
    for record in _records(env_id):
        containers = {k for k, v in record.items() if isinstance(v, (dict, list, tuple, set))}
        assert containers <= {"arguments", "contradicts"}, record
        assert isinstance(record["contradicts"], list)
        out = _fast.copy_record(record)
        assert out == copy.deepcopy(record) and json.dumps(out) == json.dumps(record)
        assert _shares_nothing(out, record)
        seen += 1
    assert seen > 50


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=4) | st.none(), st.lists(st.text(max_size=5), max_size=3),
       st.booleans())
def test_copy_record_equals_a_deep_copy_of_any_record_of_that_shape(arguments: Any, contradicts: list[str],
                                                                    valid: bool) -> None:
    record: dict[str, Any] = {"turn": 1, "id": "c", "name": "f", "valid": valid, "error": None, "kind": "read",
                              "injected": False, "contradicts": contradicts}
    if arguments is not None:
        record["arguments"] = arguments
    out = _fast.copy_record(record)
    assert out == copy.deepcopy(record) and _shares_nothing(out, record)



_FAULTY = ("medium", "tool_failure=0.5,corruption=0.5,goal_shift=0.8,latency=400")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_done_steps_equals_the_plain_fold_whenever_a_fault_asks(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`DoneSteps` (the env's `_done_steps`) gives `gold.done_steps` over every call so far, at
    every fault of noisy episodes (goal shifts change the plan), and no record changes after it
    is made (what the carried fold relies on)."""
    from agentgym.core.env import AgentEnv
    from agentgym.core.gold import done_steps

    real = AgentEnv._done_steps
    asked = memo = 0
    kept: dict[int, list[Any]] = {}

    def checked(self: AgentEnv, plan: list[dict[str, Any]]) -> list[bool]:
        nonlocal asked, memo
        got = real(self, plan)
        memo += self._steps_done is not None
        assert got == done_steps(plan, self._calls)
        first = kept.setdefault(id(self._calls), [])
        assert self._calls[:len(first)] == first
        first[:] = copy.deepcopy(self._calls)
        asked += 1
        return got

    monkeypatch.setattr(AgentEnv, "_done_steps", checked)
    for noise in _FAULTY:
        for difficulty in ("easy", "hard"):
            env = gym.make(env_id, noise=noise, difficulty=difficulty)
            for name in ("heuristic", "expert"):
                agent = make_agent(name)
                for seed in range(4):
                    kept.clear()
                    _play_through(env, agent, seed, 60)
    assert asked > 20 and memo > 5, (asked, memo)


def _record(name: str, arguments: Any, valid: bool = True, error: str | None = None, **more: Any) -> dict[str, Any]:
    return {"turn": 1, "id": "c", "name": name, "valid": valid, "error": error, "kind": "read", "injected": False,
            "contradicts": [], "arguments": arguments, **more}


def test_done_steps_works_an_edited_plan_out_afresh() -> None:
    """Each edit of a plan the memo has seen is seen, also those Python's equality alone misses
    (a number for a boolean of the same value, and back)."""
    from agentgym.core.gold import done_steps

    def plan() -> list[dict[str, Any]]:
        return [{"name": "f", "arguments": {"x": 1}}, {"name": "f", "arguments": {"x": 1}},
                {"name": "g", "arguments": {"y": ["a"]}}]

    calls = [_record("f", {"x": 1}), _record("g", {"y": ["a"]}), _record("f", {"x": 1}, error="TOOL_ERROR"),
             _record("f", {"x": 1}, distractor=True), _record("f", {"x": True}), _record("f", {"x": 1.0}),
             _record("g", {"y": ("a",)})]
    edits = [lambda p: None, lambda p: p[0]["arguments"].update(x=True), lambda p: p[1]["arguments"].update(x=1.0),
             lambda p: p[2]["arguments"].update(y=("a",)), lambda p: p[2]["arguments"].update(y=[True]),
             lambda p: p.reverse(), lambda p: p.pop(), lambda p: p[0].update(arguments={"x": {"any_of": [True, 2]}}),
             lambda p: p.append(copy.deepcopy(p[0])), lambda p: p[0].update(arguments={"x": float("nan")})]
    for k in range(len(calls) + 1):
        for edit in edits:
            memo, edited = _fast.DoneSteps(), plan()
            assert memo.of(edited, calls[:k]) == done_steps(edited, calls[:k])
            edit(edited)
            assert memo.of(edited, calls[:k]) == done_steps(edited, calls[:k]), (k, edited)
            back = plan()  # and back
            assert memo.of(back, calls) == done_steps(back, calls), (k, back)


_STEP = st.fixed_dictionaries({"name": st.sampled_from(["f", "g"]),
                               "arguments": st.dictionaries(st.sampled_from(["x", "y"]), _JSON, max_size=2)})


@settings(max_examples=200, deadline=None)
@given(st.lists(_STEP, max_size=5), st.lists(st.tuples(st.sampled_from(["f", "g"]), _JSON, st.booleans()), max_size=8),
       st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["x", "y"]), _JSON), max_size=6))
def test_done_steps_equals_the_plain_fold_as_calls_come_and_the_plan_changes(
        plan: list[dict[str, Any]], calls: list[tuple[str, Any, bool]], edits: list[tuple[int, str, Any]]) -> None:
    from agentgym.core.gold import done_steps

    records = [_record(name, {"x": x, "y": x} if ok else {"x": x}, error=None if ok else "TOOL_ERROR")
               for name, x, ok in calls]
    memo = _fast.DoneSteps()
    for k in range(len(records) + 1):
        if edits and plan and k % 2:
            i, key, value = edits.pop()
            plan[i % len(plan)]["arguments"][key] = value
        assert memo.of(plan, records[:k]) == done_steps(plan, records[:k])


# ------------------------------------------------------------------ frozen dataclass constructors


def test_the_constructed_classes_have_the_fields_the_makers_set() -> None:
    assert [(f.name, f.default) for f in dataclasses.fields(ParsedAction)] == [
        ("content", dataclasses.MISSING), ("calls", ()), ("error", None)]
    assert [(f.name, f.default) for f in dataclasses.fields(ToolCall)] == [
        ("name", dataclasses.MISSING), ("arguments", dataclasses.MISSING), ("id", None), ("error", None)]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=20), st.text(max_size=10), st.dictionaries(st.text(max_size=4), _SCALARS, max_size=3),
       st.none() | st.text(max_size=8), st.integers(0, 3))
def test_the_makers_build_what_the_dataclass_constructors_build(text: str, name: str, arguments: dict, call_id: Any,
                                                                 n: int) -> None:
    message = _fast.message_maker(ParsedAction)
    with_calls = _fast.calls_maker(ParsedAction)
    valid_call = _fast.valid_call_maker(ToolCall)
    fast_call, plain_call = valid_call(name, arguments, call_id), ToolCall(name=name, arguments=arguments, id=call_id)
    assert fast_call == plain_call and repr(fast_call) == repr(plain_call)
    fast_msg, plain_msg = message(text), ParsedAction(content=text)
    assert fast_msg == plain_msg and repr(fast_msg) == repr(plain_msg) and hash(fast_msg) == hash(plain_msg)
    calls = [fast_call] * n
    fast_turn, plain_turn = with_calls(text, calls), ParsedAction(content=text, calls=tuple(calls))
    assert fast_turn == plain_turn and type(fast_turn.calls) is tuple
    for obj in (fast_msg, fast_turn, fast_call):
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.error = ActionError(ErrorCode.PARSE_ERROR, "x")  # type: ignore[misc]


# ------------------------------------------------------------------ JSON in and out

_JSONISH = st.text(alphabet='{}[]",:. 0123456789eE+-truefalsnNIay\\\t\n\'x', max_size=30)
_DECODE = _fast.direct_decoder(_DECODER)


def _outcome(decode: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", decode(text)
    except json.JSONDecodeError as exc:
        return "JSONDecodeError", (exc.msg, exc.pos, exc.lineno, exc.colno)
    except ValueError as exc:  # the strict decoder's hooks (duplicate keys, NaN, ranges)
        return type(exc).__name__, str(exc)


@settings(max_examples=500, deadline=None)
@given(_JSONISH | _JSON.map(json.dumps) | _JSON.map(lambda v: f" {json.dumps(v, indent=1)}\n"))
def test_the_direct_decoder_gives_the_decoders_value_or_error(text: str) -> None:
    assert _outcome(_DECODE, text) == _outcome(_DECODER.decode, text)


@pytest.mark.parametrize("text", ['{"a":1}', ' {"a":1} ', '{"a":1} x', "", "   ", '{"a":', "[1,2]", '"s"',
                                  '{"a":1,"a":2}', "NaN", "1e999", '{"a": 1.5}', "\t[\n]\n", "{'a': 1}"])
def test_the_direct_decoder_on_the_edge_cases(text: str) -> None:
    assert _outcome(_DECODE, text) == _outcome(_DECODER.decode, text)


_ENCODERS = [json.JSONEncoder(ensure_ascii=False, allow_nan=False), json.JSONEncoder(),
             json.JSONEncoder(sort_keys=True, separators=(",", ":"))]


@settings(max_examples=300, deadline=None)
@given(_JSON | st.floats() | st.dictionaries(st.text(max_size=3), st.floats(), max_size=3))
def test_the_tree_encoder_writes_the_encoders_text(value: Any) -> None:
    for encoder in _ENCODERS:
        try:
            want: Any = encoder.encode(value)
        except ValueError as exc:  # NaN or an infinity with allow_nan=False
            want = ("ValueError", str(exc))
        try:
            got: Any = _fast.tree_encoder(encoder)(value)
        except ValueError as exc:
            got = ("ValueError", str(exc))
        assert got == want


# ------------------------------------------------------------------ named streams


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**128))
def test_seeded_random_has_the_state_the_class_constructor_gives(bits: int) -> None:
    fast, plain = _fast.seeded_random(Rng, bits), Rng(bits)
    assert type(fast) is Rng and fast.getstate() == plain.getstate()
    assert fast.gauss(0, 1) == plain.gauss(0, 1)
    assert _fast.seeded_random(random.Random, bits).getstate() == random.Random(bits).getstate()


# ------------------------------------------------------------------ scalar_leaves


@settings(max_examples=300, deadline=None)
@given(st.lists(_JSON | st.tuples(_SCALARS, _SCALARS), max_size=5))
def test_scalar_leaves_equals_plain(values: list[Any]) -> None:
    plain = {v for x in values for v in leaves(x) if isinstance(v, (str, int, float, bool))}
    assert _fast.scalar_leaves(values) == plain
    assert _fast.scalar_leaves(OrderedDict(a=[1, {"b": "x"}]) for _ in range(1)) == {1, "x"}


# ------------------------------------------------------------------ nesting depth

#: The plain code's tokens: a JSON string (strings first) or one bracket.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.?[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def _nests_deeper_plain(text: str, limit: int) -> bool:
    depth = 0
    for match in _TOKENS.finditer(text):
        char = text[match.start()]
        if char in "{[":
            depth += 1
            if depth > limit:
                return True
        elif char in "}]":
            depth -= 1
    return False


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet='[]{}"\\a:,\n ', max_size=80), st.integers(0, 6))
def test_nests_deeper_equals_the_token_loop(text: str, limit: int) -> None:
    from agentgym.core.strict_json import _STRING_RE

    assert _fast.nests_deeper(text, limit, _STRING_RE) is _nests_deeper_plain(text, limit)


@pytest.mark.parametrize("text", ['[' * 40, '"' + '[' * 40 + '"', '["\\"' + '[' * 40 + '"]', '[]' * 40,
                                  '{"a": ' * 33 + '1' + '}' * 33, '"\\\n' + '[' * 40, ']' * 40 + '[' * 30])
def test_nests_deeper_on_the_edge_cases(text: str) -> None:
    from agentgym.core.strict_json import _STRING_RE

    assert _fast.nests_deeper(text, 32, _STRING_RE) is _nests_deeper_plain(text, 32)


# ------------------------------------------------------------------ values a gold step consumes

_SPEC = _SCALARS | st.floats() | st.lists(_SCALARS, max_size=3) | st.builds(
    lambda op, v: {op: v}, st.sampled_from(["any_of", "subset_of", "any_order", "if_given", "words_of", "at_least", "any"]),
    _SCALARS | st.lists(_SCALARS | st.floats(), max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.fixed_dictionaries({"name": st.just("f"), "arguments": st.dictionaries(st.text(max_size=3), _SPEC,
                                                                                          max_size=3)}), max_size=4),
       st.lists(_SCALARS | st.floats() | st.lists(_SCALARS, max_size=2), max_size=12))
def test_carried_by_equals_carries_over_every_step(steps: list[dict[str, Any]], values: list[Any]) -> None:
    from agentgym.core.gold import carried_values, carries

    carried = _fast.carried_by(steps)
    mine = [v for step in steps for v in carried_values(step)]
    for value in values + mine + [True, False, 0, 1, 1.0, 0.0, float("nan"), None, "", [1]]:
        assert carried(value) == any(carries(step, value) for step in steps), (value, steps)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_carried_by_equals_carries_on_the_results_a_hard_corruption_aims_at(env_id: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym.core.gold import carries
    from agentgym.noise import calls

    asked = 0

    def checked(steps: Any) -> Any:
        steps = list(steps)
        fast = _fast.carried_by(steps)

        def carried(value: Any) -> bool:
            nonlocal asked
            asked += 1
            got = fast(value)
            assert got == any(carries(step, value) for step in steps), value
            return got

        return carried

    monkeypatch.setattr(calls, "carried_by", checked)
    env = gym.make(env_id, noise="corruption=0.8", difficulty="hard")
    for name in ("heuristic", "expert"):
        agent = make_agent(name)
        for seed in range(4):
            _play_through(env, agent, seed, 60)
    assert asked > 50, asked
