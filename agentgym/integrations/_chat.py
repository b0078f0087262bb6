"""An episode's messages as the text a model reads, for trainers that handle tokens themselves.

verl and OpenRLHF keep one growing token sequence per rollout: the prompt, then the model's turn,
then what the env answered, then the next turn. `TemplateRenderer` renders both parts with the
tokenizer's own chat template, so the sequence is what the template would give for the whole
conversation:

- the prompt: the opening messages with the env's tools, up to the generation prompt;
- after a turn: the end of the model's turn that it did not write itself (ChatML's newline after
  ``<|im_end|>``), the env's answer (the step's messages after the assistant's turn that opens
  them), and the next generation prompt. The answer is rendered after a short fixed
  conversation and cut off where that conversation ends (the "fixed base" method, as SkyRL
  does), so the cost does not grow with the episode; a template
  that renders that conversation differently once more messages follow is refused
  (`TemplateError`).

`tools_system_prompt` serves trainers that apply the template without tools (SkyRL): the tool
schemas go into the system message in the Hermes/Qwen form the envs parse.
"""

from __future__ import annotations

import json
from typing import Any

from agentgym.agents.chat import Conversation
from agentgym.core.render import answer_messages

__all__ = ["TemplateError", "TemplateRenderer", "tools_system_prompt"]

_SENTINEL = "agentgym-turn-sentinel-7f3a"


class TemplateError(ValueError):
    """The chat template cannot render an episode turn by turn."""


def tools_system_prompt(system: str, tools: list[dict[str, Any]]) -> str:
    """`system` followed by the tool schemas and the call format, as Qwen2.5 and Hermes write them."""
    if not tools:
        return system
    schemas = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    return (
        f"{system}\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        f"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{schemas}\n"
        "</tools>\n\nFor each function call, return a json object with function name and arguments within "
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
        "<args-json-object>}\n</tool_call>"
    )


class TemplateRenderer:
    """Renders an episode with a tokenizer's chat template, turn by turn.

    Args:
        tokenizer: a Hugging Face tokenizer with a chat template.
        chat_template_kwargs: extra arguments of ``apply_chat_template`` (``enable_thinking`` ...).
    """

    def __init__(self, tokenizer: Any, chat_template_kwargs: dict[str, Any] | None = None) -> None:
        if getattr(tokenizer, "chat_template", None) is None:
            raise TemplateError("the tokenizer has no chat template")
        self.tokenizer = tokenizer
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.turn_end = self._turn_end()
        # Special tokens that can stop a generation inside the turn end (e.g. <|im_end|>), longest first.
        # Only tokens marked special: added tokens such as Qwen's </tool_call> are ordinary text.
        special = set(getattr(tokenizer, "all_special_tokens", ()))
        special |= {t.content for t in getattr(tokenizer, "added_tokens_decoder", {}).values() if t.special}
        self._special = sorted((t for t in special if t), key=len, reverse=True)
        self._stops = [t for t in self._special if self.turn_end.startswith(t)]

    # ------------------------------------------------------------------ text
    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, *,
               add_generation_prompt: bool) -> str:
        """The template's text for `messages` (OpenAI form) and `tools`."""
        return self.tokenizer.apply_chat_template(
            Conversation(messages).template_messages(), tools=tools or None, tokenize=False,
            add_generation_prompt=add_generation_prompt, **self.chat_template_kwargs)

    def prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        """The opening of an episode, up to and with the generation prompt."""
        return self.render(messages, tools, add_generation_prompt=True)

    def feedback(self, completion: str, step_messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]] | None) -> str:
        """The text that follows the model's `completion`: the rest of its turn's end, the env's
        answer, and the next generation prompt.

        Args:
            completion: the model's turn as generated (special tokens kept).
            step_messages: the step's ``info["messages"]``: the env's reading of that turn, then
                its answer.
            tools: the episode's tool schemas.
        """
        return self.closing(completion) + self.continuation(step_messages, tools)

    def closing(self, completion: str) -> str:
        """The part of the template's turn end that `completion` did not write: nothing when it
        wrote all of it, the rest when it stopped on the turn end's first token, all of it otherwise
        (a turn cut at the length limit)."""
        if completion.endswith(self.turn_end):
            return ""
        for stop in self._stops:
            if completion.endswith(stop):
                return self.turn_end[len(stop):]
        return self.turn_end

    def ended(self, completion: str) -> bool:
        """Whether `completion` reached the end of its turn (it stopped on the turn end's first
        token, or on the end-of-text token), rather than being cut at a length limit."""
        if self.turn_end and self.closing(completion) != self.turn_end:
            return True
        eos = getattr(self.tokenizer, "eos_token", None)
        return bool(eos) and completion.endswith(eos)

    def continuation(self, step_messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        """The env's answer in `step_messages` and the generation prompt, as the template writes
        them after the turn.

        They are rendered after a short fixed conversation and cut where it ends. A system and a
        user message come first (SkyRL's base: it suits the templates that render an assistant
        turn differently once it is not the last, such as Qwen3's thinking); templates that want
        the assistant's turn before tool results or alternating roles get it (the step's first
        message) added.
        """
        from jinja2 import TemplateError as JinjaTemplateError  # transformers renders templates with jinja2

        new_messages = answer_messages(step_messages)
        head = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
        bases = [head]
        if new_messages is not step_messages:
            bases.append([*head, step_messages[0]])
        for base in bases:
            try:
                before = self.render(base, tools, add_generation_prompt=False)
                after = self.render(base + list(new_messages), tools, add_generation_prompt=True)
            except JinjaTemplateError:  # raised by the template itself (raise_exception) for this order
                continue
            if after.startswith(before):
                return after[len(before):]
        raise TemplateError(
            "the chat template renders a conversation differently once messages follow it, so the env's "
            "messages cannot be appended to the tokens generated so far; use a prefix-preserving template")

    def action(self, completion: str) -> str:
        """The model's turn as the env reads it: `completion` without its trailing special tokens."""
        text = completion
        stripped = True
        while stripped:
            stripped = False
            for token in self._special:
                if text.endswith(token):
                    text = text[: -len(token)]
                    stripped = True
                    break
        return text

    # ------------------------------------------------------------------ tokens
    def encode(self, text: str) -> list[int]:
        """Token ids of `text` (a rendered span: the template wrote its special tokens already)."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, token_ids: list[int]) -> str:
        """Text of generated `token_ids`, special tokens kept."""
        return self.tokenizer.decode(token_ids, skip_special_tokens=False)

    def _turn_end(self) -> str:
        messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                    {"role": "assistant", "content": _SENTINEL}]
        text = self.render(messages, None, add_generation_prompt=False)
        at = text.rfind(_SENTINEL)
        if at < 0:
            raise TemplateError("the chat template drops the assistant's content")
        return text[at + len(_SENTINEL):]
