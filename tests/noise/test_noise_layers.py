"""Noise layers are true wrappers: each acts only in its own reset and step, in stack order."""

from __future__ import annotations

import copy
import json
from typing import Any

import gymnasium as gym
import pytest
from noise_helpers import LIVE_IDS, ReadProber, events, tool_contents

from agentgym.agents import make_agent
from agentgym.core.hooks import POINTS
from agentgym.core.render import call_text
from agentgym.noise import KINDS, ActionConstraint, Latency, ToolFailure, parse_noise
from agentgym.noise._common import NoiseWrapper

DIALOG = "AgentRL/Dialog-v0"
#: Every kind at a rate that acts on every opportunity it has.
ALWAYS = "latency=5000,tool_failure=1,corruption=1,distractors=3,ambiguity=1,goal_shift=1,typos=1"


def _episode(env: Any, seed: int, steps: int = 6) -> str:
    """Everything `env` returns over a short episode of read calls, as JSON."""
    out: list[Any] = [env.reset(seed=seed)]
    prober = ReadProber(env, seed)
    info: dict[str, Any] = out[0][1]
    for _ in range(steps):
        result = env.step(prober.act(info))
        out.append(result)
        info = result[4]
        if result[2] or result[3]:
            break
    return json.dumps(out, sort_keys=True, default=str)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_the_unwrapped_env_of_a_noisy_stack_is_the_clean_env(env_id: str) -> None:
    noisy, clean = gym.make(env_id, noise=ALWAYS), gym.make(env_id)
    for seed in range(3):
        assert _episode(noisy.unwrapped, seed) == _episode(clean.unwrapped, seed)
    # The same stack, reset and stepped through its layers, does inject.
    assert _episode(noisy, 0) != _episode(clean, 0)


def test_a_step_below_the_layers_injects_no_call_fault() -> None:
    env = gym.make(DIALOG, noise="tool_failure=1,latency=5000,corruption=1")
    env.reset(seed=3)
    *_, info = env.unwrapped.step(call_text("search"))
    (record,) = info["calls"]
    assert record["error"] is None and not record["injected"] and info["noise"] == []
    assert "elapsed_ms" not in info
    *_, info = env.step(call_text("search"))  # through the layers again: the fault is back
    assert info["calls"][0]["injected"] and events(info, "tool_failure")


def _failing_calls(env: gym.Env, n: int = 4) -> tuple[list[bool], float]:
    env.reset(seed=2)
    injected = []
    for _ in range(n):
        *_, info = env.step(call_text("search"))
        injected.append(info["calls"][0]["injected"])
    return injected, info.get("elapsed_ms", 0.0)


def test_layers_act_innermost_first_so_the_order_of_a_stack_is_the_order_of_its_faults() -> None:
    # Latency beneath ToolFailure (the canonical order): every call takes time, also one that fails.
    charged = ToolFailure(Latency(gym.make(DIALOG), mean_ms=100.0), rate=1.0)
    injected, elapsed = _failing_calls(charged)
    assert all(injected) and elapsed > 0
    # ToolFailure beneath Latency: a call the inner layer fails never reaches the outer one.
    uncharged = Latency(ToolFailure(gym.make(DIALOG), rate=1.0), mean_ms=100.0)
    injected, elapsed = _failing_calls(uncharged)
    assert all(injected) and elapsed == 0.0


class _Tag(NoiseWrapper):
    """A test layer: wraps every tool result in ``{"by": name, "result": ...}``."""

    label = ""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)

    def after_call(self, env: Any, call: Any, spec: Any, turn: int, result: Any) -> Any:
        return {"by": self.label, "result": result}


class _Inner(_Tag):
    label = "inner"


class _Outer(_Tag):
    label = "outer"


def test_each_layer_acts_on_the_result_the_layers_beneath_it_left() -> None:
    env = _Outer(_Inner(gym.make(DIALOG)))
    env.reset(seed=0)
    *_, info = env.step(call_text("search"))
    ((_, content),) = tool_contents(info)
    got = json.loads(content)
    assert got["by"] == "outer" and got["result"]["by"] == "inner"
    # Only the layers whose step is running act: stepping the inner layer alone skips the outer.
    *_, info = env.env.step(call_text("search"))
    assert json.loads(tool_contents(info)[0][1])["by"] == "inner"


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_a_policy_refuses_before_any_noise_wherever_it_sits(where: str) -> None:
    rules = {"allowed_tools": ["get_details"]}
    if where == "outside":
        env = ActionConstraint(gym.make(DIALOG, noise="latency=5000,tool_failure=1"), **rules)
    else:
        env = ToolFailure(Latency(ActionConstraint(gym.make(DIALOG), **rules), mean_ms=5000.0), rate=1.0)
    env.reset(seed=1)
    *_, info = env.step(call_text("search"))
    (record,) = info["calls"]
    assert record["error"] == "BLOCKED" and not record["injected"]
    assert [e["kind"] for e in info["noise"]] == ["action_constraint"] and "elapsed_ms" not in info


class _PassThrough(gym.Wrapper):
    """A plain Gymnasium wrapper that counts the calls passing through it."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.calls = 0

    def reset(self, **kwargs: Any) -> Any:
        self.calls += 1
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> Any:
        self.calls += 1
        return self.env.step(action)


def _layers(env_id: str, noise: str, *, apart: bool) -> gym.Env:
    env = gym.make(env_id)
    for kind, kwargs in parse_noise(noise):
        env = KINDS[kind].wrapper(_PassThrough(env) if apart else env, **kwargs)
    return env


def _played(env: gym.Env, agent_name: str, seed: int) -> str:
    agent = make_agent(agent_name)
    obs, info = env.reset(seed=seed)
    if agent.privileged:
        agent.bind(env.unwrapped)
    agent.reset(obs, info)
    out: list[Any] = [obs, info]
    for _ in range(40):
        result = env.step(agent.act(obs, info))
        obs, info = result[0], result[4]
        out.append(result)
        if result[2] or result[3]:
            break
    return json.dumps(out, sort_keys=True, default=str)


def _hooks_empty(env: gym.Env) -> bool:
    hooks = env.unwrapped.hooks
    return not any(getattr(hooks, point) for point in POINTS)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_the_stack_is_the_call_path_and_nothing_stays_on_the_env(env_id: str) -> None:
    # With a plain wrapper between each two layers, every call passes through every wrapper, and
    # the layers act as they do stacked directly. Between calls no layer is left on the env.
    noise = "latency=3000,tool_failure=0.4,corruption=0.5,distractors=2,ambiguity=0.7,goal_shift=0.7,typos=0.4"
    joined, apart = _layers(env_id, noise, apart=False), _layers(env_id, noise, apart=True)
    assert _hooks_empty(joined) and _hooks_empty(apart)
    plain = []
    layer = apart
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, _PassThrough):
            plain.append(layer)
        layer = layer.env
    assert len(plain) == len(KINDS)
    for agent_name in ("random", "heuristic", "oracle"):
        for seed in range(4):
            assert _played(joined, agent_name, seed) == _played(apart, agent_name, seed), (agent_name, seed)
            assert _hooks_empty(joined) and _hooks_empty(apart)
    assert len({p.calls for p in plain}) == 1 and plain[0].calls > 0  # every call reached every wrapper


def test_a_layer_that_raises_leaves_nothing_on_the_env() -> None:
    env = ToolFailure(Latency(gym.make(DIALOG), mean_ms=10.0), rate=0.0)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(call_text("search"))  # before any reset: the env raises beneath both layers
    assert _hooks_empty(env)
    env.reset(seed=0)
    assert _hooks_empty(env)


def test_a_spec_is_parsed_once_and_each_value_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym.noise import spec as spec_module

    checked: list[str] = []
    for kind, k in KINDS.items():
        original = k.wrapper.check.__func__

        def counting(cls: type, __original: Any = original, __kind: str = kind, **kwargs: Any) -> Any:
            checked.append(__kind)
            return __original(cls, **kwargs)

        monkeypatch.setattr(k.wrapper, "check", classmethod(counting))
    spec_module._parse_text.cache_clear()
    text = "medium, typos=0.2"
    parse_noise(text)  # as the CLI and the env server check a spec before making the env
    env = gym.make(DIALOG, noise=text)
    assert sorted(checked) == sorted([*KINDS, "typos"])  # the preset's seven values and the override
    assert [type(layer).__name__ for layer in (env.env, env.env.env)] == ["Typos", "GoalShift"]
    env.close()


def test_a_deep_copy_of_a_stack_acts_on_its_own_env() -> None:
    env = gym.make("AgentRL/ToolUse-v0", noise="heavy")  # its user copies (the dialog user does not)
    env.reset(seed=0)
    copied = copy.deepcopy(env)
    assert copied.unwrapped.hooks is not env.unwrapped.hooks
    for agent_name in ("heuristic", "random"):
        assert _played(copied, agent_name, 5) == _played(env, agent_name, 5)
    assert _hooks_empty(env) and _hooks_empty(copied)
