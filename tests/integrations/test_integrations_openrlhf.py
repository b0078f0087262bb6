"""The OpenRLHF adapter, against OpenRLHF's own executor when it imports, else against a stub.

The stub mirrors openrlhf 0.11.2 (``openrlhf/utils/agent.py``): ``AgentInstanceBase`` with async
``reset``/``step``, and ``MultiTurnAgentExecutor.execute``'s text path (reset, then generate /
step / append the tokenized feedback until ``done`` or ``max_length``). The agent file is loaded as
0.11.2's ``_load_agent_executor`` loads ``--train.agent_func_path``; the engine is a fake with
vLLM's ``generate`` result shape that plays the actions of a reference episode.
"""

from __future__ import annotations

import asyncio
import importlib.util
import types
from abc import ABC, abstractmethod
from copy import deepcopy
from typing import Any

import pytest
from integrations_support import (
    SPECS,
    byte_tokenizer,
    env_server_url,
    reference_conversation,
    reference_episode,
    render_conversation,
    trainer_or_stub,
)

from agentgym.integrations import TaskSpec
from agentgym.integrations._chat import TemplateRenderer

torch = pytest.importorskip("torch")

OPENRLHF_VERSION = "0.11.2"
REAL_OPENRLHF = importlib.util.find_spec("openrlhf") is not None


# ------------------------------------------------------------------------------- OpenRLHF or its stub
def _stub_modules() -> dict[str, types.ModuleType]:
    """``openrlhf.utils.agent`` as openrlhf 0.11.2 has it, text prompts only."""

    class AgentExecutorBase(ABC):
        @abstractmethod
        async def execute(self, prompt: Any, label: Any, sampling_params: Any, max_length: int, hf_tokenizer: Any,
                          llm_engine: Any, images: Any = None) -> Any:
            raise NotImplementedError

    class AgentInstanceBase(ABC):
        @abstractmethod
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        async def reset(self, states: dict, **kwargs: Any) -> dict:
            return states

        @abstractmethod
        async def step(self, state_dict: dict, **kwargs: Any) -> dict:
            raise NotImplementedError

    def tokens_of(tokenizer: Any, text: str) -> list[int]:
        return tokenizer(text=text, add_special_tokens=False, return_tensors="pt")["input_ids"][0].tolist()

    class MultiTurnAgentExecutor(AgentExecutorBase):
        def __init__(self, agent_instance_cls: type) -> None:
            assert issubclass(agent_instance_cls, AgentInstanceBase)
            self.agent_instance_cls = agent_instance_cls

        async def execute(self, prompt: Any, label: Any, sampling_params: Any, max_length: int, hf_tokenizer: Any,
                          llm_engine: Any, images: Any = None) -> Any:
            instance = self.agent_instance_cls()
            observation_text = (await instance.reset({"observation": prompt, "label": label}))["observation"]
            tokens = tokens_of(hf_tokenizer, observation_text)
            room = max_length - (getattr(sampling_params, "max_tokens", None) or 1)
            if len(tokens) > room:
                tokens = tokens[-room:]
                observation_text = hf_tokenizer.decode(tokens, skip_special_tokens=False)
            action_ranges, total_reward, final_scores, extra_logs, truncated = [], 0, 0, {}, False
            while True:
                sampling_params.max_tokens = max_length - len(tokens)
                if sampling_params.max_tokens <= 0:
                    break
                out = (await llm_engine.generate(tokens, deepcopy(sampling_params), multi_modal_data=None)).outputs[0]
                truncated = out.finish_reason == "length"
                action_ranges.append((len(tokens), len(tokens) + len(out.token_ids)))
                result = await instance.step({"observation_text": observation_text, "action_text": out.text,
                                              "label": label, "sampling_params": sampling_params})
                total_reward += result["rewards"].item()
                final_scores = result.get("scores", total_reward)
                extra_logs = result.get("extra_logs", {})
                feedback = result["environment_feedback"]
                observation_text = observation_text + out.text + feedback
                tokens = tokens + list(out.token_ids) + tokens_of(hf_tokenizer, feedback)
                if result.get("sampling_params", None):
                    sampling_params = result["sampling_params"]
                if result["done"]:
                    break
            return {"prompt": prompt, "label": label, "reward": total_reward, "scores": final_scores,
                    "observation_tokens": tokens, "action_ranges": action_ranges, "truncated": truncated,
                    "extra_logs": extra_logs, "rollout_log_probs": None}

    openrlhf = types.ModuleType("openrlhf")
    openrlhf.__version__ = OPENRLHF_VERSION  # type: ignore[attr-defined]
    utils = types.ModuleType("openrlhf.utils")
    agent = types.ModuleType("openrlhf.utils.agent")
    for cls in (AgentExecutorBase, AgentInstanceBase, MultiTurnAgentExecutor):
        setattr(agent, cls.__name__, cls)
    openrlhf.utils = utils  # type: ignore[attr-defined]
    utils.agent = agent  # type: ignore[attr-defined]
    return {"openrlhf": openrlhf, "openrlhf.utils": utils, "openrlhf.utils.agent": agent}


@pytest.fixture
def agent_api(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``openrlhf.utils.agent``: OpenRLHF's own when installed, else the 0.11.2 stub."""
    return trainer_or_stub(monkeypatch, REAL_OPENRLHF, _stub_modules, "openrlhf.utils.agent")


def load_agent_executor(path: str, agent_api: Any) -> Any:
    """What openrlhf 0.11.2's ``_load_agent_executor`` does with ``--train.agent_func_path``."""
    assert path.endswith(".py")
    spec = importlib.util.spec_from_file_location("agent_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert hasattr(module, "AgentExecutor")
    assert issubclass(module.AgentExecutor, agent_api.AgentExecutorBase)
    return module.AgentExecutor()


class ScriptedEngine:
    """A rollout engine with vLLM's ``generate`` result shape, answering with set turns."""

    def __init__(self, tokenizer: Any, turns: list[str], stop: str = "<|im_end|>") -> None:
        self.tokenizer = tokenizer
        self.turns = list(turns)
        self.stop = stop

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None) -> Any:
        text = (self.turns.pop(0) if self.turns else "I am done.") + self.stop
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        cut = ids[: sampling_params.max_tokens]
        output = types.SimpleNamespace(token_ids=cut, text=self.tokenizer.decode(cut, skip_special_tokens=False),
                                       finish_reason="length" if len(cut) < len(ids) else "stop", logprobs=None)
        return types.SimpleNamespace(outputs=[output])


def _execute(executor: Any, tokenizer: Any, spec: TaskSpec, turns: list[str], max_length: int = 20000,
             stop: str = "<|im_end|>") -> Any:
    from agentgym.integrations.openrlhf import dataset_rows

    row = dataset_rows([spec], tokenizer)[0]
    params = types.SimpleNamespace(max_tokens=None, logprobs=None)
    return row, asyncio.run(executor.execute(row["prompt"], row["label"], params, max_length, tokenizer,
                                             ScriptedEngine(tokenizer, turns, stop)))


def _agent_file() -> str:
    import agentgym.integrations.openrlhf as module

    return module.__file__


# ------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.env_id)
def test_episode_matches_the_one_played_in_process(agent_api: Any, spec: TaskSpec) -> None:
    tokenizer = byte_tokenizer()
    reference = reference_episode(spec)
    executor = load_agent_executor(_agent_file(), agent_api)
    row, out = _execute(executor, tokenizer, spec, reference.actions)

    assert out["reward"] == pytest.approx(reference.score) and reference.score == 1.0
    assert float(out["scores"]) == pytest.approx(1.0)
    assert out["extra_logs"]["agentgym/success"] == 1.0
    messages, tools = reference_conversation(spec, reference.actions)
    text = tokenizer.decode(out["observation_tokens"], skip_special_tokens=False)
    assert text + TemplateRenderer(tokenizer).closing(text) == render_conversation(tokenizer, messages, tools)
    assert [tokenizer.decode(out["observation_tokens"][a:b], skip_special_tokens=False)
            for a, b in out["action_ranges"]] == [a + "<|im_end|>" for a in reference.actions]
    assert text.startswith(row["prompt"])


def test_a_turn_that_stopped_on_a_stop_string_is_closed_by_the_feedback(agent_api: Any) -> None:
    tokenizer = byte_tokenizer()
    spec = SPECS[1]
    reference = reference_episode(spec)
    _, out = _execute(load_agent_executor(_agent_file(), agent_api), tokenizer, spec, reference.actions, stop="")
    assert out["reward"] == 1.0
    messages, tools = reference_conversation(spec, reference.actions)
    text = tokenizer.decode(out["observation_tokens"], skip_special_tokens=False)
    assert text + "<|im_end|>\n" == render_conversation(tokenizer, messages, tools)


def test_a_rollout_out_of_tokens_gets_the_unfinished_reward(agent_api: Any) -> None:
    from agentgym.integrations.openrlhf import make_agent_executor

    tokenizer = byte_tokenizer()
    spec = SPECS[1]
    executor = make_agent_executor(unfinished_reward=0.25)()
    prompt_tokens = len(tokenizer.encode(_execute(executor, tokenizer, spec, [])[0]["prompt"]))
    for extra in (40, 400):  # the turn cut at the limit; the env's answer overflowing
        _, out = _execute(executor, tokenizer, spec, reference_episode(spec).actions, max_length=prompt_tokens + extra)
        assert out["reward"] == pytest.approx(0.25)
        assert out["extra_logs"]["agentgym/finished"] == 0.0
        assert len(out["observation_tokens"]) <= prompt_tokens + extra


def test_the_module_executor_steps_remote_envs_when_asked(agent_api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    tokenizer = byte_tokenizer()
    spec = SPECS[0]
    actions = reference_episode(spec).actions
    _, here = _execute(load_agent_executor(_agent_file(), agent_api), tokenizer, spec, actions)
    url = env_server_url()
    monkeypatch.setenv("AGENTGYM_REMOTE_URL", url)
    executor = load_agent_executor(_agent_file(), agent_api)
    assert executor.agent_instance_cls._settings.remote_url == url
    _, there = _execute(executor, tokenizer, spec, actions)
    assert there["observation_tokens"] == here["observation_tokens"]
    assert there["reward"] == here["reward"] == 1.0


def test_a_label_that_is_no_spec_is_refused(agent_api: Any) -> None:
    executor = load_agent_executor(_agent_file(), agent_api)
    tokenizer = byte_tokenizer()
    params = types.SimpleNamespace(max_tokens=None, logprobs=None)
    with pytest.raises(ValueError, match="unknown task fields"):
        asyncio.run(executor.execute("p", '{"env_id": "AgentRL/Dialog-v0", "sede": 1}', params, 100, tokenizer,
                                     ScriptedEngine(tokenizer, [])))
