"""A tiny causal language model, built locally in seconds, for tests that need a real model.

`build_tiny_causal_lm` trains a byte-level BPE tokenizer with `tokenizers` on text from the
registered envs (their briefs, tool schemas and tool calls in the forms models emit), builds a
randomly initialised Llama (or Qwen2) of about 150k parameters from a config, and saves both
with ``save_pretrained``, so a test loads them through the same `from_pretrained` path as a real
checkpoint. Nothing is downloaded. The model's output is garbage, which is what tests of the
env, the harness and the agents' error handling want.

Everything is deterministic: the same arguments give the same tokenizer and the same weights
(the weights are drawn under a forked torch RNG, so the caller's global RNG is untouched).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

__all__ = ["build_tiny_causal_lm", "tiny_corpus", "SPECIAL_TOKENS", "TOOL_CALL_TOKENS"]

#: Control tokens: end of text (also padding), and the ChatML turn markers.
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
#: Tags the model may emit around a tool call: single tokens, but ordinary (not special) ones,
#: so decoding keeps them, as in Qwen2.5's tokenizer.
TOOL_CALL_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")


def tiny_corpus(seeds_per_env: int = 4) -> Iterator[str]:
    """Training text for the tokenizer: openings, tool schemas and tool calls of every local id."""
    import gymnasium as gym

    import agentgym

    for env_id in sorted(agentgym.ENV_IDS):
        env = gym.make(env_id)
        try:
            for seed in range(seeds_per_env):
                obs, info = env.reset(seed=seed)
                yield obs
                for tool in info.get("tools", []):
                    fn = tool.get("function", {})
                    yield json.dumps(tool)
                    args = {k: "x" for k in fn.get("parameters", {}).get("properties", {})}
                    call = json.dumps({"name": fn.get("name", ""), "arguments": args})
                    yield f"<tool_call>\n{call}\n</tool_call>"
                    yield call
        finally:
            env.close()
    yield "You may call one or more functions to assist with the user query. <tools></tools>"


def build_tiny_causal_lm(
    dirpath: str | Path,
    *,
    vocab_size: int = 1024,
    chat_template: str | None = "default",
    arch: str = "llama",
    hidden_size: int = 64,
    num_layers: int = 2,
    max_positions: int = 8192,
    seed: int = 0,
) -> Path:
    """Train a tokenizer, build a tiny model, and save both to `dirpath`.

    Args:
        dirpath: the folder to write (created if missing).
        vocab_size: the BPE vocabulary size (byte alphabet and special tokens included).
        chat_template: ``"default"`` for `agentgym.agents.chat.DEFAULT_CHAT_TEMPLATE`, None for
            a tokenizer without a chat template, or a Jinja template.
        arch: ``"llama"`` or ``"qwen2"``.
        hidden_size: the model width.
        num_layers: the number of decoder layers.
        max_positions: the context length.
        seed: the seed of the weights.

    Returns:
        `dirpath` as a Path, ready for ``from_pretrained``.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AutoModelForCausalLM, GenerationConfig, LlamaConfig, PreTrainedTokenizerFast, Qwen2Config

    from agentgym.agents.chat import DEFAULT_CHAT_TEMPLATE

    out = Path(dirpath)
    out.mkdir(parents=True, exist_ok=True)

    # --- tokenizer: byte-level BPE, so any text (any Unicode) encodes
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(tiny_corpus(), trainer)
    eos, im_start, im_end = SPECIAL_TOKENS
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=eos, pad_token=eos,
                                        additional_special_tokens=[im_start, im_end])
    tokenizer.add_tokens(list(TOOL_CALL_TOKENS))
    if chat_template is not None:
        tokenizer.chat_template = DEFAULT_CHAT_TEMPLATE if chat_template == "default" else chat_template
    tokenizer.save_pretrained(out)

    # --- model: a randomly initialised decoder from a config
    eos_id, im_end_id = tokenizer.convert_tokens_to_ids([eos, im_end])
    common: dict[str, Any] = dict(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=max_positions, tie_word_embeddings=True,
        bos_token_id=eos_id, eos_token_id=im_end_id, pad_token_id=eos_id,
    )
    if arch == "llama":
        config = LlamaConfig(**common)
    elif arch == "qwen2":
        config = Qwen2Config(**common)
    else:
        raise ValueError(f"arch must be 'llama' or 'qwen2', got {arch!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config)
    model.generation_config = GenerationConfig(eos_token_id=[im_end_id, eos_id], pad_token_id=eos_id,
                                               bos_token_id=eos_id)
    model.save_pretrained(out)
    return out
