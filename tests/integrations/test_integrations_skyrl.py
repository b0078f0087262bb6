"""The SkyRL-gym adapter, against skyrl-gym itself when it imports, else against a stub.

The stub mirrors skyrl-gym 0.4.0: ``skyrl_gym.Env``, ``make``/``register``/``registry``
(``skyrl_gym/envs/registration.py``: ``make(id, **kwargs)`` calls the entry point with the
kwargs, checks the result is an ``Env`` and sets its ``spec``), and ``BaseTextEnv``/``BaseTextEnvStepOutput``
(``skyrl_gym/envs/base_text_env.py``). The episode is driven as SkyRL's generator drives an env:
``make(env_class, env_config=..., extras=row fields + max_turns)``, ``init(prompt)``, then
``step(text)`` until ``done``, ``get_metrics()``, ``close()``.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import types
from typing import Any, TypedDict

import pytest
from integrations_support import SPECS, env_server_url, reference_conversation, reference_episode, trainer_or_stub

from agentgym.integrations import TaskSpec

SKYRL_GYM_VERSION = "0.4.0"
REAL_SKYRL = importlib.util.find_spec("skyrl_gym") is not None


# ------------------------------------------------------------------------------- skyrl-gym or its stub
def _stub_modules() -> dict[str, types.ModuleType]:
    """``skyrl_gym`` as skyrl-gym 0.4.0 has it, reduced to what an env and its maker use."""

    class Env:
        def step(self, action: Any) -> Any:
            raise NotImplementedError

        def init(self, *kwargs: Any) -> Any:
            raise NotImplementedError

        def close(self) -> None:
            pass

    class BaseTextEnvStepOutput(TypedDict):
        observations: list[dict[str, str]]
        reward: float
        done: bool
        metadata: dict[str, Any]

    class BaseTextEnv(Env):
        def __init__(self) -> None:
            super().__init__()
            self.turns = 0
            self.max_turns = 1
            self.tool_groups: list[Any] = []
            self.tool_to_toolgroup: dict[str, Any] = {}

        def init(self, prompt: Any) -> Any:
            return prompt, {}

        def get_metrics(self) -> dict[str, Any]:
            return {}

    registry: dict[str, types.SimpleNamespace] = {}

    def register(id: str, entry_point: Any = None, kwargs: dict[str, Any] | None = None) -> None:  # noqa: A002
        if id in registry:
            raise ValueError(f"An environment with name `{id}` is already registered")
        registry[id] = types.SimpleNamespace(id=id, entry_point=entry_point, kwargs=kwargs or {})

    def make(id: str, **kwargs: Any) -> Env:  # noqa: A002
        spec = registry[id]
        creator = spec.entry_point
        if isinstance(creator, str):
            module, _, attr = creator.partition(":")
            creator = getattr(importlib.import_module(module), attr)
        env = creator(**{**copy.deepcopy(spec.kwargs), **kwargs})
        if not isinstance(env, Env):
            raise TypeError(f"The environment must inherit from the skyrl_gym.Env class, actual class: {type(env)}.")
        env.spec = types.SimpleNamespace(id=id, entry_point=spec.entry_point, kwargs=kwargs)  # as 0.4.0 does
        return env

    skyrl_gym = types.ModuleType("skyrl_gym")
    skyrl_gym.__version__ = SKYRL_GYM_VERSION  # type: ignore[attr-defined]
    skyrl_gym.Env = Env  # type: ignore[attr-defined]
    skyrl_gym.make, skyrl_gym.register, skyrl_gym.registry = make, register, registry  # type: ignore[attr-defined]
    envs = types.ModuleType("skyrl_gym.envs")
    base_text_env = types.ModuleType("skyrl_gym.envs.base_text_env")
    base_text_env.BaseTextEnv = BaseTextEnv  # type: ignore[attr-defined]
    base_text_env.BaseTextEnvStepOutput = BaseTextEnvStepOutput  # type: ignore[attr-defined]
    skyrl_gym.envs = envs  # type: ignore[attr-defined]
    envs.base_text_env = base_text_env  # type: ignore[attr-defined]
    return {"skyrl_gym": skyrl_gym, "skyrl_gym.envs": envs, "skyrl_gym.envs.base_text_env": base_text_env}


@pytest.fixture
def skyrl_gym(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``skyrl_gym`` (its own when installed, else the 0.4.0 stub), with the agentgym env registered."""
    skyrl_gym = trainer_or_stub(monkeypatch, REAL_SKYRL, _stub_modules, "skyrl_gym")
    from agentgym.integrations.skyrl import register

    register()
    register()  # again: a no-op
    return skyrl_gym


def play(skyrl_gym: Any, row: dict[str, Any], actions: list[str], env_config: dict[str, Any] | None = None,
         max_turns: int = 10) -> tuple[list[dict[str, Any]], list[Any], dict[str, Any]]:
    """One trajectory as SkyRL's generator runs it: the chat history, the step outputs, the metrics."""
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    extras["max_turns"] = max_turns
    env = skyrl_gym.make(row["env_class"], env_config=env_config or {}, extras=extras)
    chat_history, _ = env.init(copy.deepcopy(row["prompt"]))
    outputs = []
    for action in actions:
        out = env.step(action)
        outputs.append(out)
        chat_history = chat_history + [{"role": "assistant", "content": action}] + out["observations"]
        if out["done"]:
            break
    metrics = env.get_metrics()
    env.close()
    return chat_history, outputs, metrics


# ------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.env_id)
def test_episode_matches_the_one_played_in_process(skyrl_gym: Any, spec: TaskSpec) -> None:
    from agentgym.integrations.skyrl import dataset_rows

    reference = reference_episode(spec)
    row = dataset_rows([spec])[0]
    history, outputs, metrics = play(skyrl_gym, row, reference.actions)

    assert [o["done"] for o in outputs] == [False] * (len(outputs) - 1) + [True]
    assert sum(o["reward"] for o in outputs) == pytest.approx(reference.score) and reference.score == 1.0
    assert outputs[-1]["metadata"]["episode_summary"]["success"] is True
    assert metrics["success"] == 1.0 and metrics["turns"] == len(reference.actions)

    # The conversation is the reference one, the tools written into the system message.
    messages, tools = reference_conversation(spec, reference.actions)
    system = history[0]["content"]
    assert system.startswith(messages[0]["content"]) and "<tools>" in system
    assert all(json.dumps(t, ensure_ascii=False) in system for t in tools)
    assert [(m["role"], m["content"]) for m in history[1:]] == [(m["role"], m["content"]) for m in messages[1:]]
    assert history[:2] == row["prompt"]


def test_observations_are_chat_messages(skyrl_gym: Any) -> None:
    from agentgym.integrations.skyrl import dataset_rows

    spec = SPECS[1]
    row = dataset_rows([spec])[0]
    _, outputs, _ = play(skyrl_gym, row, reference_episode(spec).actions[:1])
    (tool,) = outputs[0]["observations"]
    assert tool["role"] == "tool" and tool["name"] == "list_expenses" and tool["content"].startswith("{")
    assert outputs[0]["reward"] == 0.0 and not outputs[0]["done"]


def test_skyrls_turn_limit_ends_a_rollout_with_the_unfinished_reward(skyrl_gym: Any) -> None:
    from agentgym.integrations.skyrl import dataset_rows

    spec = SPECS[1]
    row = dataset_rows([spec])[0]
    _, outputs, metrics = play(skyrl_gym, row, reference_episode(spec).actions, max_turns=2,
                               env_config={"unfinished_reward": -1.0})
    assert [o["done"] for o in outputs] == [False, True]
    assert outputs[-1]["reward"] == -1.0 and outputs[-1]["metadata"]["unfinished"] is True
    assert outputs[-1]["observations"] == [] and metrics["finished"] == 0.0


def test_remote_env_gives_the_same_trajectory(skyrl_gym: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from agentgym.integrations.skyrl import dataset_rows

    spec = SPECS[0]
    row = dataset_rows([spec])[0]
    actions = reference_episode(spec).actions
    here = play(skyrl_gym, row, actions)
    there = play(skyrl_gym, row, actions, env_config={"remote_url": env_server_url()})
    monkeypatch.setenv("AGENTGYM_REMOTE_URL", env_server_url())  # SkyRL 0.3's typed config has no place for it
    there_too = play(skyrl_gym, row, actions)
    made = skyrl_gym.make("agentgym", env_config={}, extras={"agentgym": row["agentgym"]})
    assert made.session.remote_url == env_server_url()
    assert there[0] == there_too[0] == here[0]
    assert [o["reward"] for o in there[1]] == [o["reward"] for o in here[1]] == [o["reward"] for o in there_too[1]]


def test_a_row_without_a_spec_is_refused(skyrl_gym: Any) -> None:
    with pytest.raises(ValueError, match="'agentgym' field"):
        skyrl_gym.make("agentgym", env_config={}, extras={"max_turns": 3})


def test_the_env_is_a_base_text_env(skyrl_gym: Any) -> None:
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    from agentgym.integrations.skyrl import AgentGymTextEnv, dataset_rows

    assert issubclass(AgentGymTextEnv, BaseTextEnv)
    env = skyrl_gym.make("agentgym", env_config={}, extras={"agentgym": dataset_rows(SPECS[:1])[0]["agentgym"]})
    assert isinstance(env, skyrl_gym.Env)


REAL_SKYRL_TRAINER = importlib.util.find_spec("skyrl") is not None


class ScriptedInferenceClient:
    """An inference engine client with skyrl 0.3.0's ``generate(InferenceEngineInput) ->
    InferenceEngineOutput`` that answers with set turns (ids end with the stop token; the text,
    as vLLM's with special tokens skipped, does not)."""

    def __init__(self, tokenizer: Any, turns: list[str]) -> None:
        self.tokenizer = tokenizer
        self.turns = list(turns)

    async def generate(self, engine_input: Any, model: Any = None) -> dict[str, Any]:
        text = self.turns.pop(0) if self.turns else "I am done."
        stop = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [stop]
        return {"responses": [text], "response_ids": [ids], "stop_reasons": ["stop"], "response_logprobs": None}

    async def finish_session(self, session_id: Any) -> None:
        """Frees the session's routing state in SkyRL's clients; nothing to free here."""


@pytest.mark.skipif(not REAL_SKYRL_TRAINER, reason="SkyRL's trainer (skyrl) is not installed "
                    "(run tests/integrations/run_against_real_trainers.sh)")
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.env_id)
def test_skyrls_own_generator_plays_the_reference_episode(skyrl_gym: Any, spec: TaskSpec) -> None:
    """SkyRL's generator (skyrl 0.3.0 ``SkyRLGymGenerator.agent_loop``) drives the env: its
    tokenization of the env's messages, its rewards and its metrics."""
    import asyncio

    from integrations_support import byte_tokenizer, render_conversation
    from skyrl.train.config import GeneratorConfig, SkyRLGymConfig
    from skyrl.train.generators.skyrl_gym_generator import SkyRLGymGenerator

    from agentgym.integrations.skyrl import dataset_rows

    tokenizer = byte_tokenizer()
    tokenizer.eos_token = "<|im_end|>"  # as in Qwen's instruct tokenizers, whose turns end on their eos
    reference = reference_episode(spec)
    row = dataset_rows([spec])[0]
    generator = SkyRLGymGenerator(GeneratorConfig(max_turns=20), SkyRLGymConfig(max_env_workers=0),
                                  ScriptedInferenceClient(tokenizer, reference.actions), tokenizer)
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    out = asyncio.run(generator.agent_loop(row["prompt"], row["env_class"], extras, max_tokens=1024,
                                           max_input_length=32768))
    assert sum(out.reward) == pytest.approx(reference.score) and reference.score == 1.0
    assert out.env_metrics["success"] == 1.0
    assert out.stop_reason == "stop"
    history, _, _ = play(skyrl_gym, row, reference.actions)
    text = tokenizer.decode(out.prompt_ids + out.response_ids, skip_special_tokens=False)
    assert text + "\n" == render_conversation(tokenizer, history, [])
    spans = [tokenizer.decode([t for t, m in zip(out.response_ids, out.loss_mask, strict=True) if m],
                              skip_special_tokens=False)]
    assert spans == ["".join(a + "<|im_end|>" for a in reference.actions)]
