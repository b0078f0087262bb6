"""A whole episode's ``info["messages"]`` is a conversation a tool-calling chat template renders:
every tool result follows the assistant turn that made its call, with matching ids.

The template is written here in the style of the Qwen/Hermes ``<tool_call>`` templates (tools in
the system turn, calls as ``<tool_call>`` JSON, results as ``<tool_response>`` blocks in a user
turn), strict where those are lenient: it refuses a tool result whose id is not among the calls of
the assistant turn before it. It is used through a tokenizer built locally (nothing is downloaded).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.chat import Conversation
from agentgym.agents.heuristic import STRATEGIES
from agentgym.registration import REMOTE_ID
from agentgym.testing import probe_actions

pytest.importorskip("transformers")
pytest.importorskip("torch")

ENV_IDS = sorted(i for i in gym.registry if i.startswith("AgentRL/") and i != REMOTE_ID)

TOOL_TEMPLATE = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}"
    "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n'"
    " 'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments'"
    " ' within the call tags.<|im_end|>\\n' }}"
    "{%- elif messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- set ns = namespace(calls=[]) %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'system' %}"
    "{%- if not loop.first %}{{- raise_exception('a system message after the first') }}{%- endif %}"
    "{%- elif message.role == 'user' %}"
    "{%- set ns.calls = [] %}"
    "{{- '<|im_start|>user\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{%- set ns.calls = [] %}"
    "{{- '<|im_start|>assistant' }}"
    "{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}"
    "{%- for tool_call in message.tool_calls or [] %}"
    "{%- set ns.calls = ns.calls + [tool_call.id] %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    "{{- '\\n<tool_call>\\n{\"name\": \"' + tool_call.name + '\", \"arguments\": ' }}"
    "{%- if tool_call.arguments is string %}{{- tool_call.arguments }}"
    "{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}"
    "{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{%- if message.tool_call_id not in ns.calls %}"
    "{{- raise_exception('tool result ' ~ message.tool_call_id ~ ' answers no call of the assistant turn before it') }}"
    "{%- endif %}"
    "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from transformers import AutoTokenizer

    from agentgym.testing.models import build_tiny_causal_lm

    path: Path = build_tiny_causal_lm(tmp_path_factory.mktemp("tool-template-lm"), chat_template=TOOL_TEMPLATE)
    return AutoTokenizer.from_pretrained(path)


def _episode(env_id: str, noise: str | None, agent_name: str, seed: int) -> tuple[list[dict[str, Any]], list[Any]]:
    """The whole conversation of one episode, from the infos alone, and the reset's tools."""
    env = gym.make(env_id, **({"noise": noise} if noise else {}))
    obs, info = env.reset(seed=seed)
    messages, tools = list(info["messages"]), info["tools"]
    if agent_name in ("probes", "batched"):
        probes = probe_actions(tools, seed, n=60)
        if agent_name == "batched":  # several calls a turn, in the OpenAI form, ids of the agent's own or none
            calls = [json.loads(p) for p in probes if p.startswith("{")]
            probes = [json.dumps({"tool_calls": [
                {**({"id": f"mine_{i}_{j}"} if j % 2 else {}), "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                for j, c in enumerate(calls[i:i + 3])]}) for i in range(0, len(calls), 3)]
        actions = iter(probes + ["OK."] * 200)
        act = lambda obs, info: next(actions)  # noqa: E731
    else:
        agent = make_agent(agent_name if info["task"]["family"] in STRATEGIES or agent_name == "random"
                           else "random")
        if agent.privileged:
            agent.bind(env.unwrapped)
        agent.reset(obs, info)
        act = agent.act
    for _ in range(300):
        obs, _, terminated, truncated, info = env.step(act(obs, info))
        messages += info["messages"]
        if terminated or truncated:
            break
    env.close()
    return messages, tools


def _calls_precede_results(messages: list[dict[str, Any]]) -> int:
    """Each tool message answers a call of the latest assistant turn, once; returns the calls."""
    open_ids: set[str] = set()
    calls = 0
    for m in messages:
        if m["role"] == "assistant":
            open_ids = {c["id"] for c in m.get("tool_calls") or ()}
            calls += len(open_ids)
        elif m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, f"a result for {m['tool_call_id']} with no call before it"
            open_ids.discard(m["tool_call_id"])
    return calls


def _rendered_order_holds(text: str) -> None:
    """In the rendered text, every <tool_response> comes after a <tool_call> not yet answered."""
    pending = 0
    body = text[text.index("<|im_end|>"):]  # past the system turn, which shows the call format
    for tag in re.findall(r"<tool_call>|<tool_response>", body):
        if tag == "<tool_call>":
            pending += 1
        else:
            assert pending > 0, "a tool response before any call"
            pending -= 1


@pytest.mark.parametrize("noise", [None, "heavy"])
@pytest.mark.parametrize("agent_name", ["oracle", "heuristic", "random", "probes", "batched"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_whole_episode_renders_with_a_tool_calling_template(tokenizer: Any, env_id: str, agent_name: str,
                                                              noise: str | None) -> None:
    for seed in (0, 1):
        messages, tools = _episode(env_id, noise, agent_name, seed)
        calls = _calls_precede_results(messages)
        assert sum(m["role"] == "tool" for m in messages) == calls
        for form in (messages, Conversation(messages).template_messages()):
            text = tokenizer.apply_chat_template(form, tools=tools, tokenize=False, add_generation_prompt=True)
            _rendered_order_holds(text)
            assert text.count("<tool_response>") == calls
            assert text.count("<|im_start|>assistant") == sum(m["role"] == "assistant" for m in messages) + 1


def test_the_template_refuses_results_without_their_call(tokenizer: Any) -> None:
    """Without the assistant's turns (the env's old messages), the same episode does not render."""
    from jinja2.exceptions import TemplateError

    messages, tools = _episode("AgentRL/ToolUse-v0", None, "oracle", 0)
    assert any(m["role"] == "tool" for m in messages)
    without = [m for m in messages if m["role"] != "assistant"]
    with pytest.raises(TemplateError, match="answers no call"):
        tokenizer.apply_chat_template(without, tools=tools, tokenize=False)
