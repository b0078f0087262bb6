"""The verl adapter, against verl's own ``AgentLoopBase`` when verl imports, else against a stub.

The stub mirrors verl 0.9.1 (``verl/experimental/agent_loop/agent_loop.py``): ``AgentLoopBase``'s
constructor and the attributes it sets, ``AgentLoopOutput``'s fields, and ``register``. The
server manager is a fake with the signature of verl 0.9.1's ``LLMServerClient.generate``
(``request_id, *, prompt_ids, sampling_params, ... -> TokenOutput``) that plays the actions of a
reference episode, so the adapter's episode can be compared with the one played in process.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import types
from abc import ABC, abstractmethod
from typing import Any, Optional

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

VERL_VERSION = "0.9.1"
REAL_VERL = importlib.util.find_spec("verl") is not None


# ------------------------------------------------------------------------------- verl or its stub
def _stub_modules() -> dict[str, types.ModuleType]:
    """``verl.experimental.agent_loop`` as verl 0.9.1 documents it, reduced to what an agent loop uses."""
    from pydantic import BaseModel

    class AgentLoopMetrics(BaseModel):
        generate_sequences: float = 0.0
        tool_calls: float = 0.0
        compute_score: float = 0.0
        num_preempted: int = -1

    class AgentLoopOutput(BaseModel):
        prompt_ids: list[int]
        response_ids: list[int]
        response_mask: list[int]
        response_logprobs: Optional[list[float]] = None  # noqa: UP045  (as verl writes it)
        routed_experts: Optional[Any] = None  # noqa: UP045
        multi_modal_data: Optional[dict[str, Any]] = None  # noqa: UP045
        reward_score: Optional[float] = None  # noqa: UP045
        num_turns: int = 0
        metrics: AgentLoopMetrics
        extra_fields: dict[str, Any] = {}
        mm_processor_kwargs: Optional[dict[str, Any]] = None  # noqa: UP045
        mm_processor_output: Optional[list[dict[str, Any]]] = None  # noqa: UP045

    class AgentLoopBase(ABC):
        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any,
                     dataset_cls: Any, data_config: Any, hf_model_type: str | None = None, **kwargs: Any) -> None:
            self.config = trainer_config.config
            self.rollout_config = self.config.actor_rollout_ref.rollout
            self.server_manager = server_manager
            self.tokenizer = tokenizer
            self.processor = processor
            self.dataset_cls = dataset_cls
            self.data_config = data_config.config
            self.apply_chat_template_kwargs = self.data_config.get("apply_chat_template_kwargs", {})

        @abstractmethod
        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
            raise NotImplementedError

    registry: dict[str, dict[str, str]] = {}

    def register(agent_name: str) -> Any:
        def decorator(subclass: type) -> type:
            registry[agent_name] = {"_target_": f"{subclass.__module__}.{subclass.__qualname__}"}
            return subclass
        return decorator

    verl = types.ModuleType("verl")
    verl.__version__ = VERL_VERSION  # type: ignore[attr-defined]
    experimental = types.ModuleType("verl.experimental")
    package = types.ModuleType("verl.experimental.agent_loop")
    inner = types.ModuleType("verl.experimental.agent_loop.agent_loop")
    for module in (package, inner):
        module.AgentLoopBase = AgentLoopBase  # type: ignore[attr-defined]
        module.AgentLoopOutput = AgentLoopOutput  # type: ignore[attr-defined]
        module.AgentLoopMetrics = AgentLoopMetrics  # type: ignore[attr-defined]
    inner.register = register  # type: ignore[attr-defined]
    inner._agent_loop_registry = registry  # type: ignore[attr-defined]
    package.agent_loop = inner  # type: ignore[attr-defined]
    verl.experimental = experimental  # type: ignore[attr-defined]
    experimental.agent_loop = package  # type: ignore[attr-defined]
    return {"verl": verl, "verl.experimental": experimental, "verl.experimental.agent_loop": package,
            "verl.experimental.agent_loop.agent_loop": inner}


@pytest.fixture
def verl_api(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``verl.experimental.agent_loop``: verl's own when installed, else the 0.9.1 stub."""
    return trainer_or_stub(monkeypatch, REAL_VERL, _stub_modules, "verl.experimental.agent_loop")


def _token_output(**fields: Any) -> Any:
    if REAL_VERL:
        from verl.workers.rollout.replica import TokenOutput

        return TokenOutput(**fields)
    return types.SimpleNamespace(**fields)


class ScriptedServer:
    """A server manager with verl 0.9.1's ``generate`` signature that answers with set turns."""

    def __init__(self, tokenizer: Any, turns: list[str], stop: str = "<|im_end|>") -> None:
        self.tokenizer = tokenizer
        self.turns = list(turns)
        self.stop = stop
        self.prompts: list[list[int]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       image_data: Any = None, video_data: Any = None, audio_data: Any = None,
                       mm_processor_kwargs: Any = None, **kwargs: Any) -> Any:
        self.prompts.append(list(prompt_ids))
        text = (self.turns.pop(0) if self.turns else "I am done.") + self.stop
        ids = self.tokenizer.encode(text, add_special_tokens=False)[: sampling_params["max_tokens"]]
        logprobs = [-0.5] * len(ids) if sampling_params.get("logprobs") else None
        return _token_output(token_ids=ids, log_probs=logprobs, stop_reason="completed", num_preempted=0,
                             extra_fields={})


def _config(prompt_length: int, response_length: int) -> tuple[Any, Any]:
    rollout = {"prompt_length": prompt_length, "response_length": response_length}
    if REAL_VERL:
        from omegaconf import OmegaConf
        from verl.experimental.agent_loop.agent_loop import DictConfigWrap

        config = OmegaConf.create({"actor_rollout_ref": {"rollout": rollout}, "data": {}})
        return DictConfigWrap(config), DictConfigWrap(config.data)
    namespace = types.SimpleNamespace(actor_rollout_ref=types.SimpleNamespace(rollout=types.SimpleNamespace(**rollout)))
    return types.SimpleNamespace(config=namespace), types.SimpleNamespace(config={})


def _make_loop(server: Any, tokenizer: Any, *, prompt_length: int = 16384, response_length: int = 16384,
               **loop_kwargs: Any) -> Any:
    """The agent loop as verl's worker instantiates it (hydra passes the YAML entry's keys too)."""
    from agentgym.integrations import verl as adapter

    trainer_config, data_config = _config(prompt_length, response_length)
    entry = adapter.agent_loop_config(**loop_kwargs)[0]
    cls = adapter.AgentGymAgentLoop
    kwargs = {k: v for k, v in entry.items() if k not in ("_target_",)}
    return cls(trainer_config=trainer_config, server_manager=server, tokenizer=tokenizer, processor=None,
               dataset_cls=None, data_config=data_config, hf_model_type=None, tools=None, **kwargs)


def _run(loop: Any, spec: TaskSpec, **sampling: Any) -> Any:
    row = {"raw_prompt": [], "index": 0, "extra_info": {"index": 0, "agentgym": spec.to_row()},
           "agent_name": "agentgym", "data_source": "agentgym"}
    return asyncio.run(loop.run({"temperature": 1.0, **sampling}, **row))


# ------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.env_id)
def test_episode_matches_the_one_played_in_process(verl_api: Any, spec: TaskSpec) -> None:
    tokenizer = byte_tokenizer()
    reference = reference_episode(spec)
    server = ScriptedServer(tokenizer, reference.actions)
    output = _run(_make_loop(server, tokenizer), spec, logprobs=True)

    assert isinstance(output, verl_api.AgentLoopOutput)
    assert output.reward_score == pytest.approx(reference.score) and reference.score == 1.0
    assert output.extra_fields["reward_extra_info"]["agentgym/success"] == 1.0
    assert output.extra_fields["reward_extra_info"]["agentgym/turns"] == len(reference.actions)
    assert len(output.response_ids) == len(output.response_mask) == len(output.response_logprobs)

    # The whole sequence is the chat template's text of the conversation (the last turn ends at
    # its stop token, before the template's newline).
    messages, tools = reference_conversation(spec, reference.actions)
    renderer = TemplateRenderer(tokenizer)
    text = tokenizer.decode(output.prompt_ids + output.response_ids, skip_special_tokens=False)
    assert text + renderer.closing(text) == render_conversation(tokenizer, messages, tools)
    assert tokenizer.decode(output.prompt_ids, skip_special_tokens=False) == renderer.prompt(messages[:2], tools)

    # Mask 1 exactly on the model's tokens, each turn generated from everything before it.
    spans, start = [], None
    for i, bit in enumerate([*output.response_mask, 0]):
        if bit and start is None:
            start = i
        elif not bit and start is not None:
            spans.append((start, i))
            start = None
    generated = [tokenizer.decode(output.response_ids[a:b], skip_special_tokens=False) for a, b in spans]
    assert generated == [a + "<|im_end|>" for a in reference.actions]
    assert [len(p) for p in server.prompts] == [len(output.prompt_ids) + a for a, _ in spans]
    assert all(lp == -0.5 for lp, m in zip(output.response_logprobs, output.response_mask, strict=True) if m)
    assert all(lp == 0.0 for lp, m in zip(output.response_logprobs, output.response_mask, strict=True) if not m)


def test_a_turn_that_stopped_on_a_stop_string_is_closed_by_the_feedback(verl_api: Any) -> None:
    tokenizer = byte_tokenizer()
    spec = SPECS[1]
    reference = reference_episode(spec)
    output = _run(_make_loop(ScriptedServer(tokenizer, reference.actions, stop=""), tokenizer), spec)
    assert output.reward_score == 1.0
    messages, tools = reference_conversation(spec, reference.actions)
    text = tokenizer.decode(output.prompt_ids + output.response_ids, skip_special_tokens=False)
    assert text + "<|im_end|>\n" == render_conversation(tokenizer, messages, tools)


def test_a_rollout_out_of_tokens_gets_the_unfinished_reward(verl_api: Any) -> None:
    tokenizer = byte_tokenizer()
    spec = SPECS[1]
    reference = reference_episode(spec)
    server = ScriptedServer(tokenizer, reference.actions)
    output = _run(_make_loop(server, tokenizer, response_length=600, unfinished_reward=0.25), spec)
    assert output.reward_score == 0.25
    assert output.response_logprobs is None
    assert len(output.response_ids) <= 600
    assert output.extra_fields["reward_extra_info"]["agentgym/finished"] == 0.0


def test_a_long_opening_is_left_truncated_to_the_prompt_length(verl_api: Any) -> None:
    tokenizer = byte_tokenizer()
    server = ScriptedServer(tokenizer, ["Hello?"])
    output = _run(_make_loop(server, tokenizer, prompt_length=100, response_length=300), SPECS[0])
    assert len(output.prompt_ids) == 100
    assert server.prompts[0][:100] == output.prompt_ids


def test_a_row_without_a_spec_is_refused(verl_api: Any) -> None:
    loop = _make_loop(ScriptedServer(byte_tokenizer(), []), byte_tokenizer())
    with pytest.raises(ValueError, match="extra_info"):
        asyncio.run(loop.run({}, raw_prompt=[], extra_info={"index": 0}))


def test_the_yaml_entry_resolves_to_the_registered_class(verl_api: Any) -> None:
    from agentgym.integrations import verl as adapter

    cls = adapter.AgentGymAgentLoop
    target = adapter.agent_loop_config()[0]["_target_"]
    module, _, name = target.rpartition(".")
    assert getattr(importlib.import_module(module), name) is cls
    assert issubclass(cls, verl_api.AgentLoopBase)
    assert verl_api.agent_loop._agent_loop_registry["agentgym"]["_target_"] == target


def test_dataset_rows_name_the_loop_and_the_episode() -> None:
    from agentgym.integrations.verl import dataset_rows, spec_from_extra_info

    rows = dataset_rows(SPECS)
    assert [r["agent_name"] for r in rows] == ["agentgym", "agentgym"]
    assert [spec_from_extra_info(r["extra_info"]) for r in rows] == SPECS
    assert rows[0]["prompt"][0]["role"] == "system" and rows[0]["prompt"][1]["role"] == "user"


def test_remote_env_gives_the_same_rollout(verl_api: Any) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    tokenizer = byte_tokenizer()
    spec = SPECS[1]
    actions = reference_episode(spec).actions
    here = _run(_make_loop(ScriptedServer(tokenizer, actions), tokenizer), spec)
    there = _run(_make_loop(ScriptedServer(tokenizer, actions), tokenizer, remote_url=env_server_url()), spec)
    assert there.prompt_ids == here.prompt_ids
    assert there.response_ids == here.response_ids
    assert there.response_mask == here.response_mask
    assert there.reward_score == here.reward_score == 1.0


@pytest.mark.skipif(not REAL_VERL, reason="verl is not installed (run tests/integrations/run_against_real_trainers.sh)")
def test_rows_read_back_by_verls_own_dataset_drive_the_loop(verl_api: Any, tmp_path: Any) -> None:
    """The rows written to parquet, read back by verl's RLHFDataset, are what the loop gets."""
    import pandas as pd
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from agentgym.integrations.verl import dataset_rows

    tokenizer = byte_tokenizer()
    path = tmp_path / "train.parquet"
    pd.DataFrame(dataset_rows(SPECS)).to_parquet(path)
    config = OmegaConf.create({"max_prompt_length": 8192, "filter_overlong_prompts": False, "return_raw_chat": True,
                               "cache_dir": str(tmp_path / "cache")})
    dataset = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config, processor=None)
    for index, spec in enumerate(SPECS):
        row = {k: v for k, v in dataset[index].items() if k != "dummy_tensor"}
        assert row["agent_name"] == "agentgym"
        reference = reference_episode(spec)
        loop = _make_loop(ScriptedServer(tokenizer, reference.actions), tokenizer)
        output = asyncio.run(loop.run({"temperature": 1.0}, **row))
        assert output.reward_score == reference.score == 1.0
