"""Conversations for language-model agents, built from what the env hands out.

An env gives an agent OpenAI chat messages in ``info["messages"]``: at reset the system brief
and the user's first message; after every step a slice of the conversation, the env's
normalised reading of the agent's own turn first, then the tool results and the user's words.
A `Conversation` appends them as they come. The assistant message is the env's, not the agent's
raw text, so its ``tool_calls`` ids are exactly the ``tool_call_id`` of the tool messages that
follow, whatever form the model wrote the call in.

The same conversation is sent in two forms:

- `Conversation.api_messages`: the chat-completions API form. Tool-call ``arguments`` stay JSON
  strings, and tool messages keep only ``role``, ``tool_call_id`` and ``content`` (the fields
  the API documents; strict servers reject others).
- `Conversation.template_messages`: the Hugging Face chat-template form. The templates of the
  common tool-calling models (Qwen2.5, Hermes, Llama 3.1, Mistral) write ``arguments | tojson``,
  which expects a mapping: a string would come out quoted and escaped. So arguments that decode
  to a JSON object become that object; anything else (``"null"`` for a call the env rejected,
  text that is not JSON) stays the string it was, so the model sees what it wrote.

`trim_messages` fits a conversation into a token budget; `EpisodeLocal` keeps per-episode state
for an agent that the harness shares between concurrent episodes; `DEFAULT_CHAT_TEMPLATE` is a
ChatML template with tools, for tokenizers that ship without a chat template.
"""

from __future__ import annotations

import contextvars
import copy
import json
from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar

import numpy as np

from agentgym.core.seeding import stream_seed

__all__ = [
    "DEFAULT_CHAT_TEMPLATE",
    "ChatEpisode",
    "Conversation",
    "EpisodeLocal",
    "episode_sampling_seed",
    "opens_with_assistant",
    "trim_messages",
]

T = TypeVar("T")

#: A ChatML template with tools, in the form Qwen2.5 and Hermes models are trained on: the tool
#: schemas in the system turn inside ``<tools>``, calls as ``<tool_call>`` JSON, results as
#: ``<tool_response>`` blocks in a user turn. Arguments may be a mapping or a JSON string.
#: Selected with ``--agent-arg chat_template=default``.
DEFAULT_CHAT_TEMPLATE = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] + '\\n\\n' }}{%- endif %}"
    "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n'"
    " 'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments'"
    " ' within <tool_call></tool_call> XML tags:\\n<tool_call>\\n'"
    " '{\"name\": <function-name>, \"arguments\": <args-json-object>}\\n</tool_call><|im_end|>\\n' }}"
    "{%- elif messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'system' and loop.first %}"
    "{%- elif message['role'] == 'tool' %}"
    "{%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + message['content'] + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- elif message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant' }}"
    "{%- if message['content'] %}{{- '\\n' + message['content'] }}{%- endif %}"
    "{%- for tool_call in message.get('tool_calls') or [] %}"
    "{%- set call = tool_call['function'] if tool_call.get('function') else tool_call %}"
    "{{- '\\n<tool_call>\\n{\"name\": ' + (call['name'] | tojson) + ', \"arguments\": ' }}"
    "{%- if call['arguments'] is string %}{{- call['arguments'] }}"
    "{%- else %}{{- call['arguments'] | tojson }}{%- endif %}"
    "{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


class Conversation:
    """The chat so far of one episode, as OpenAI messages, and the tools on offer.

    Args:
        messages: the messages so far (copied).
        tools: the OpenAI tool schemas of the episode (copied).
    """

    def __init__(self, messages: list[dict[str, Any]] | None = None,
                 tools: list[dict[str, Any]] | None = None) -> None:
        self.messages: list[dict[str, Any]] = copy.deepcopy(messages or [])
        self.tools: list[dict[str, Any]] = copy.deepcopy(tools or [])

    @classmethod
    def from_reset(cls, info: dict[str, Any]) -> "Conversation":
        """The conversation an episode opens with: the reset info's messages and tools."""
        return cls(info.get("messages", []), info.get("tools", []))

    def add_step(self, info: dict[str, Any], action: str | dict[str, Any] | None = None) -> None:
        """Append one step's messages: the env's reading of the agent's turn, then its answer.

        Args:
            info: the step's info.
            action: what the agent sent; used only when the step's messages do not open with
                the assistant's turn (an env outside agentgym), as that turn.
        """
        messages = info.get("messages", [])
        if not opens_with_assistant(messages) and action is not None:
            self.messages.append(copy.deepcopy(action) if isinstance(action, dict)
                                 else {"role": "assistant", "content": action})
        self.messages.extend(copy.deepcopy(messages))

    def api_messages(self) -> list[dict[str, Any]]:
        """The messages as the chat-completions API takes them (arguments as JSON strings)."""
        return [_api_message(m) for m in self.messages]

    def template_messages(self) -> list[dict[str, Any]]:
        """The messages as Hugging Face chat templates take them (arguments as mappings)."""
        return [_template_message(m) for m in self.messages]


@dataclass
class ChatEpisode:
    """What a chat agent keeps of one episode: the conversation and its own last turn."""

    conversation: Conversation
    #: What the agent sent last (used only for envs whose steps do not give the assistant's turn).
    last_action: str | dict[str, Any] | None = None
    #: The turns the agent has taken.
    turns: int = 0

    @classmethod
    def from_reset(cls, info: dict[str, Any]) -> "ChatEpisode":
        """A new episode from its reset info."""
        return cls(Conversation.from_reset(info))

    def observe(self, info: dict[str, Any]) -> None:
        """Take in the info `act` got: a step's, or (before the first turn) the reset info that
        opened the conversation already."""
        if self.turns:
            self.conversation.add_step(info, self.last_action)

    def took(self, action: str | dict[str, Any]) -> None:
        """Note the turn the agent sends."""
        self.last_action = action
        self.turns += 1


def _api_message(m: dict[str, Any]) -> dict[str, Any]:
    role = m.get("role")
    if role == "tool":
        return {"role": "tool", "tool_call_id": m.get("tool_call_id", ""), "content": _text(m.get("content"))}
    out: dict[str, Any] = {"role": role, "content": _text(m.get("content"))}
    if role == "assistant" and isinstance(m.get("tool_calls"), list) and m["tool_calls"]:
        out["tool_calls"] = [
            {"id": _call_id(c), "type": "function",
             "function": {"name": _function(c).get("name", ""), "arguments": _arguments_string(_function(c))}}
            for c in m["tool_calls"]
        ]
    return out


def _template_message(m: dict[str, Any]) -> dict[str, Any]:
    out = dict(m)
    out["content"] = _text(m.get("content"))
    if not isinstance(m.get("tool_calls"), list):
        out.pop("tool_calls", None)
    if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list) and m["tool_calls"]:
        out["tool_calls"] = [
            {"id": _call_id(c), "type": "function",
             "function": {"name": _function(c).get("name", ""), "arguments": _arguments_object(_function(c))}}
            for c in m["tool_calls"]
        ]
    return out


def opens_with_assistant(messages: list[dict[str, Any]]) -> bool:
    """Whether `messages` open with an assistant turn: a step's messages do, a reset's never."""
    return bool(messages) and isinstance(messages[0], dict) and messages[0].get("role") == "assistant"


# The env's normalised messages are well formed; these also take an agent's own raw message
# (an env whose steps do not give the assistant's turn), which may not be.
def _function(call: Any) -> dict[str, Any]:
    fn = call.get("function") if isinstance(call, dict) else None
    return fn if isinstance(fn, dict) else {}


def _call_id(call: Any) -> str:
    cid = call.get("id") if isinstance(call, dict) else None
    return cid if isinstance(cid, str) else ""


def _text(content: Any) -> str:
    return content if isinstance(content, str) else ("" if content is None else json.dumps(content))


def _arguments_string(function: dict[str, Any]) -> str:
    args = function.get("arguments")
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _arguments_object(function: dict[str, Any]) -> Any:
    args = function.get("arguments")
    if not isinstance(args, str):
        return args
    try:
        value = json.loads(args)
    except (ValueError, RecursionError):
        return args
    return value if isinstance(value, dict) else args


def trim_messages(messages: list[dict[str, Any]], fits: Callable[[list[dict[str, Any]]], bool],
                  keep_first_user: bool = True, start: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The longest tail of a conversation that fits, after its fixed head.

    The head is the system message (when first) and, with `keep_first_user`, the first user
    message (in these envs it states the task). The tail starts at an assistant turn when the
    first user message is kept (so user and assistant still alternate) and at a user turn
    otherwise; either way a tool result never loses the call it answers. When not even the
    head and the last turn fit, that is what comes back: the caller cuts tokens.

    A conversation only grows, so a tail that did not fit once never fits again: pass the
    `start` this returned for the previous turn, and the tails before it are not tried. In the
    steady state (trimming every turn) that costs one call of `fits` per turn.

    Args:
        messages: the conversation.
        fits: whether a list of messages is within the budget (it renders and counts); called
            O(log n) times at most.
        keep_first_user: keep the first user message in the head.
        start: where the tail began last time (0: nothing was dropped, or first call).

    Returns:
        The messages to send (the same list when everything fits), and the index in
        `messages` where the kept tail begins (0 when nothing was dropped).
    """
    if start == 0 and fits(messages):
        return messages, 0
    head_end = 1 if messages and messages[0].get("role") == "system" else 0
    if keep_first_user and head_end < len(messages) and messages[head_end].get("role") == "user":
        head_end += 1
    start_role = "assistant" if keep_first_user and head_end and messages[head_end - 1].get("role") == "user" \
        else "user"
    cuts = [i for i in range(max(head_end, start), len(messages)) if messages[i].get("role") == start_role]
    if not cuts:
        return messages, 0
    head = messages[:head_end]
    if start and fits(head + messages[cuts[0]:]):
        return head + messages[cuts[0]:], cuts[0]
    if len(cuts) == 1 or not fits(head + messages[cuts[-1]:]):
        return head + messages[cuts[-1]:], cuts[-1]
    lo, hi = 0, len(cuts) - 1  # the first cut (the longest tail) that fits; cuts[hi] does
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(head + messages[cuts[mid]:]):
            hi = mid
        else:
            lo = mid + 1
    return head + messages[cuts[lo]:], cuts[lo]


class EpisodeLocal(Generic[T]):
    """Per-episode state of an agent, kept apart even when episodes share one agent instance.

    The runner gives each concurrent episode its own agent instance, but a caller may share one
    (several episodes in asyncio tasks, or threads). Each asyncio task and each thread has its
    own `contextvars` context: `set` at reset stores the episode's state in the caller's
    context, and `get` in the same episode's `act` finds it there, whichever other episodes ran
    in between.

    A caller outside any episode's context (sequential use from several threads, or a harness
    that reads the state after the episode's task ended) gets the state set last, which is the
    right one whenever episodes do not overlap.
    """

    def __init__(self, name: str) -> None:
        self._var: contextvars.ContextVar[T | None] = contextvars.ContextVar(name, default=None)
        self._last: T | None = None

    def set(self, value: T) -> None:
        """Make `value` the state of the episode that runs in this context."""
        self._var.set(value)
        self._last = value

    def get(self) -> T | None:
        """The state of this context's episode (or the one set last); None before any reset."""
        value = self._var.get()
        return self._last if value is None else value


def episode_sampling_seed(info: dict[str, Any], agent_seed: int = 0) -> int:
    """A sampling seed for one episode, from the env's episode seed, the trial and the agent's seed.

    Two trials of one seed sample differently, and the same episode samples the same way in any
    process and in any batch it is generated in.
    """
    seed = int(info.get("seed", 0) or 0)
    trial = int(info.get("trial", 0) or 0)
    seq = stream_seed(seed, f"agent/sampling/{trial}/{int(agent_seed)}")
    return int(seq.generate_state(1, np.uint64)[0]) & (2**63 - 1)
