"""The noise spec parser, the presets, and the make-time integration (`gym.make(id, noise=...)`)."""

from __future__ import annotations

import re
import time

import gymnasium as gym
import pytest
from gymnasium.envs.registration import EnvSpec
from noise_helpers import LIVE_IDS

from agentgym.noise import KINDS, PRESETS, NoiseSpecError, apply_noise, format_noise, parse_noise
from agentgym.noise.spec import MAX_SPEC_BYTES

CANONICAL = list(KINDS)
#: ToolFailure's arguments besides its rate, as it records them when not given.
TF = {"modes": ["error", "timeout", "rate_limit"], "tools": None}


def test_kinds_are_the_designed_seven_in_a_fixed_order() -> None:
    assert set(KINDS) == {"tool_failure", "corruption", "ambiguity", "goal_shift", "distractors", "typos", "latency"}
    # Latency innermost (every call is charged, also one that then fails); typos outermost.
    assert CANONICAL[0] == "latency" and CANONICAL[-1] == "typos"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, []),
        ("none", []),
        ("tool_failure=0.2", [("tool_failure", {"rate": 0.2, **TF})]),
        # Any spelling order gives the canonical order.
        ("typos=0.1, ambiguity = 0.5 ,tool_failure=0.2",
         [("tool_failure", {"rate": 0.2, **TF}), ("ambiguity", {"rate": 0.5}), ("typos", {"rate": 0.1})]),
        ("distractors=3,latency=250", [("latency", {"mean_ms": 250.0}), ("distractors", {"n": 3})]),
        ("corruption=1,goal_shift=0", [("corruption", {"rate": 1.0}), ("goal_shift", {"rate": 0.0})]),
        ("corruption=.5", [("corruption", {"rate": 0.5})]),
        ({"goal_shift": 0.3, "latency": 100}, [("latency", {"mean_ms": 100.0}), ("goal_shift", {"rate": 0.3})]),
        ({"tool_failure": {"rate": 0.4, "modes": ["timeout"]}},
         [("tool_failure", {"rate": 0.4, "modes": ["timeout"], "tools": None})]),
    ],
)
def test_valid_specs_parse_to_the_canonical_order(spec, expected) -> None:
    assert parse_noise(spec) == expected


def test_presets_are_data_in_one_place_and_escalate() -> None:
    assert set(PRESETS) == {"none", "light", "medium", "heavy"}
    assert parse_noise("none") == []
    for name in ("light", "medium", "heavy"):
        layers = parse_noise(name)
        assert [k for k, _ in layers] == CANONICAL, f"{name} should set every kind"
        assert dict((k, kw[KINDS[k].param]) for k, kw in layers) == PRESETS[name]
    # Each kind is at least as strong in a heavier preset.
    for kind in KINDS:
        assert PRESETS["light"][kind] <= PRESETS["medium"][kind] <= PRESETS["heavy"][kind], kind


def test_a_preset_can_be_overridden_item_by_item() -> None:
    layers = dict(parse_noise("medium, typos=0, tool_failure=0.5"))
    assert layers["typos"] == {"rate": 0.0} and layers["tool_failure"] == {"rate": 0.5, **TF}
    assert layers["ambiguity"] == {"rate": PRESETS["medium"]["ambiguity"]}


def test_format_noise_is_canonical() -> None:
    assert format_noise("typos=0.10,tool_failure=0.2") == "tool_failure=0.2,typos=0.1"
    assert format_noise(None) == format_noise("none") == "none"
    assert parse_noise(format_noise("heavy")) == parse_noise("heavy")


# Each malformed spec, and the part its error message must name.
MALFORMED = [
    ("tool_faliure=0.2", "tool_faliure"),
    ("tool_failure=0.2,bogus=1", "bogus"),
    ("tool_failure=1.5", "tool_failure=1.5"),
    ("ambiguity=-0.1", "ambiguity=-0.1"),
    ("typos=nan", "typos=nan"),
    ("typos=inf", "typos=inf"),
    ("corruption=", "corruption="),
    ("corruption=abc", "corruption=abc"),
    ("corruption=0x1", "corruption=0x1"),
    ("corruption=1_0", "corruption=1_0"),
    ("goal_shift", "goal_shift"),
    ("distractors=2.5", "distractors=2.5"),
    ("distractors=99", "distractors=99"),
    ("latency=-5", "latency=-5"),
    ("latency=fast", "latency=fast"),
    ("tool_failure=0.1,,typos=0.1", "position 2"),
    ("tool_failure=0.1,tool_failure=0.2", "tool_failure"),
    ("tool_failure=0.1,medium", "medium"),
    ("extreme", "extreme"),
    ("", "empty"),
    ("   ", "empty"),
    ("=0.2", "''"),
    ({"tool_failure": 2}, "tool_failure"),
    ({"tool_failure": True}, "tool_failure"),
    ({"nope": 0.1}, "nope"),
    ({"tool_failure": {"rate": 0.1, "mode": ["error"]}}, "mode"),
    ({"tool_failure": {"modes": ["error"]}}, "rate"),
    (0.2, "float"),
]


@pytest.mark.parametrize(("spec", "named"), MALFORMED, ids=[repr(s) for s, _ in MALFORMED])
def test_malformed_specs_are_rejected_naming_the_bad_part(spec, named) -> None:
    with pytest.raises(NoiseSpecError) as info:
        parse_noise(spec)
    assert named in str(info.value), f"{info.value} should name {named!r}"
    assert isinstance(info.value, ValueError)


def test_a_misspelt_kind_gets_a_suggestion() -> None:
    with pytest.raises(NoiseSpecError, match=r"did you mean 'tool_failure'"):
        parse_noise("tool_faliure=0.2")


@pytest.mark.parametrize(
    "spec",
    ["x" * (64 * 2**20), "tool_failure=0.1," * 300_000, "latency=" + "1" * 10**6,
     {"tool_failure": {"rate": 0.1, "tools": ["search"] * 2**20}}, {"k" * 2**20: 1}],
    ids=["64 MiB name", "300k items", "1 MB number", "1M tools", "1 MiB key"],
)
def test_a_huge_spec_is_refused_unread(spec: object) -> None:
    start = time.perf_counter()
    with pytest.raises(NoiseSpecError, match=f"over {MAX_SPEC_BYTES} bytes") as info:
        parse_noise(spec)  # type: ignore[arg-type]
    assert time.perf_counter() - start < 0.05
    assert len(str(info.value)) < 100  # the spec is not echoed back


def test_a_spec_within_the_budget_still_parses() -> None:
    spec = ",".join(f"{kind}=0.{'1' * 60}" if kind not in ("distractors", "latency") else f"{kind}=1"
                    for kind in KINDS)
    assert len(spec) < MAX_SPEC_BYTES and len(parse_noise(spec)) == len(KINDS)


@pytest.mark.parametrize("env_id", LIVE_IDS)
@pytest.mark.parametrize(("spec", "named"), [("bogus=0.1", "bogus"), ("tool_failure=1.01", "tool_failure=1.01"),
                                             ("typos=-1", "typos=-1")])
def test_make_rejects_a_bad_spec_with_a_clear_error(env_id: str, spec: str, named: str) -> None:
    with pytest.raises(NoiseSpecError, match=re.escape(named)):
        gym.make(env_id, noise=spec)


def test_wrapper_options_are_still_checked_through_a_dict_spec() -> None:
    with pytest.raises(ValueError, match="unknown ToolFailure modes"):
        gym.make(LIVE_IDS[0], noise={"tool_failure": {"rate": 0.1, "modes": ["explode"]}})


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_make_without_noise_gives_the_bare_env(env_id: str) -> None:
    env = gym.make(env_id)
    assert env.spec is not None and "noise" not in env.spec.kwargs
    assert env.spec.additional_wrappers == () and env.spec.order_enforce
    assert env.env is env.unwrapped  # nothing between OrderEnforcing and the env
    env.close()


@pytest.mark.parametrize("env_id", LIVE_IDS)
@pytest.mark.parametrize("spec", ["medium", "heavy", "typos=0.3,tool_failure=0.2,distractors=2"])
def test_make_with_noise_shows_the_stack_and_rebuilds_it(env_id: str, spec: str) -> None:
    env = gym.make(env_id, noise=spec)
    assert env.spec is not None and env.spec.kwargs["noise"] == spec
    names = [w.name for w in env.spec.additional_wrappers]
    expected = [KINDS[k].wrapper.__name__ for k, _ in parse_noise(spec)]
    assert names == expected and env.spec.order_enforce
    for w, (_, kwargs) in zip(env.spec.additional_wrappers, parse_noise(spec)):
        assert {k: w.kwargs[k] for k in kwargs} == kwargs  # each records its constructor arguments

    # gym.make(env.spec), directly and through the spec's JSON (as records store it).
    for spec_copy in (env.spec, EnvSpec.from_json(env.spec.to_json())):
        again = gym.make(spec_copy)
        assert again.spec.additional_wrappers == env.spec.additional_wrappers
        assert str(again) == str(env)
        a = env.reset(seed=7)
        b = again.reset(seed=7)
        assert a == b
        again.close()
    env.close()


def test_apply_noise_wraps_an_env_already_made() -> None:
    env = apply_noise(gym.make(LIVE_IDS[0]), "tool_failure=0.2,typos=0.1")
    assert [type(e).__name__ for e in (env, env.env)] == ["Typos", "ToolFailure"]
    env.close()


def test_the_package_card_lists_every_kind() -> None:
    import agentgym.noise

    rows = {line.split("|")[1].strip() for line in agentgym.noise.__doc__.splitlines() if line.startswith("| ")}
    assert set(KINDS) <= rows
