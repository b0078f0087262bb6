"""Helpers shared by the trainer-adapter tests: a byte-level tokenizer built in milliseconds, the
actions of reference episodes, and the chat-template text of a whole conversation."""

from __future__ import annotations

import atexit
import importlib
import json
import sys
import types
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the AgentRL/* ids)
from agentgym.agents import make_agent
from agentgym.agents.chat import DEFAULT_CHAT_TEMPLATE, Conversation
from agentgym.eval.episode import EpisodeResult, run_episode
from agentgym.integrations import TaskSpec

#: Episodes the tests play: a dialog whose agent talks to the user, and a tool chain.
SPECS = [
    TaskSpec(env_id="AgentRL/Dialog-v0", seed=0, difficulty="easy"),
    TaskSpec(env_id="AgentRL/ToolUse-v0", seed=1, difficulty="easy", domain="finance"),
]


def trainer_or_stub(monkeypatch: pytest.MonkeyPatch, installed: bool,
                    stub_modules: Callable[[], dict[str, types.ModuleType]], module: str) -> types.ModuleType:
    """`module` (a dotted name) from the trainer itself when it is `installed`, else from its stub:
    the modules `stub_modules()` builds, put in ``sys.modules`` for the calling test only."""
    if not installed:
        for name, stub in stub_modules().items():
            monkeypatch.setitem(sys.modules, name, stub)
    return importlib.import_module(module)


def byte_tokenizer(chat_template: str = DEFAULT_CHAT_TEMPLATE) -> Any:
    """A byte-level BPE tokenizer with no merges (every byte a token) and the ChatML specials."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    bpe.train_from_iterator([], trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False,
                                                    initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                        additional_special_tokens=specials[1:])
    tokenizer.add_tokens(["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"])
    tokenizer.chat_template = chat_template
    return tokenizer


def reference_episode(spec: TaskSpec, agent: str = "heuristic") -> EpisodeResult:
    """The episode `agent` plays in process: its actions replayed through an adapter must give
    the same episode (the envs are deterministic)."""
    env = gym.make(spec.env_id, **spec.env_kwargs())
    try:
        return run_episode(env, make_agent(agent), spec.seed)
    finally:
        env.close()


def reference_conversation(spec: TaskSpec, actions: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The messages of `spec` played with `actions` (each assistant turn as the model wrote it), up
    to the last turn, and the episode's tools."""
    env = gym.make(spec.env_id, **spec.env_kwargs())
    try:
        _, info = env.reset(seed=spec.seed)
        messages = list(info["messages"])
        tools = info["tools"]
        for action in actions:
            _, _, terminated, truncated, info = env.step(action)
            messages.append({"role": "assistant", "content": action})
            if terminated or truncated:
                break  # a rollout ends with the model's last turn: the env's last answer is not in it
            messages.extend(info["messages"][1:])  # the env's answer, after its reading of the turn
        return messages, tools
    finally:
        env.close()


def render_conversation(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The template's text for a whole conversation (no generation prompt)."""
    return tokenizer.apply_chat_template(Conversation(messages).template_messages(), tools=tools or None,
                                         tokenize=False, add_generation_prompt=False)


def tool_call_text(action: str) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) when `action` is a one-call JSON tool call, else None (a message)."""
    try:
        value = json.loads(action)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict) and "name" in value and isinstance(value.get("arguments"), dict):
        return value["name"], value["arguments"]
    return None


_server: Any = None


def env_server_url() -> str:
    """The URL of an env server shared by the tests of this session (started on first use)."""
    global _server
    if _server is None:
        from agentgym.server import ServerThread

        _server = ServerThread().start()
        atexit.register(_server.stop)
    return _server.url
