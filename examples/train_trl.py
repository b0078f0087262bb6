"""GRPO with TRL on agentgym episodes: the env's tools are the model's tools, its score the reward.

    pip install -r requirements/integrations-trl.txt
    python examples/train_trl.py --model Qwen/Qwen2.5-0.5B-Instruct --env-id AgentRL/ToolUse-v0
    python examples/train_trl.py --tiny          # a smoke run on CPU: a tiny random model, one step
    agentgym serve &                              # or step the envs on an env server (port 8100):
    python examples/train_trl.py --remote-url http://127.0.0.1:8100

Each dataset row names one episode (env id, seed, noise ...); `agentgym.integrations.trl.build`
makes the rows and one environment class per tool set, which ``GRPOTrainer`` gets as its
``environment_factory``. The model talks to the simulated user through the ``send_message`` tool.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass

from agentgym.cli_parser import parse_dataclass
from agentgym.integrations._datasets import train_specs
from agentgym.integrations.trl import build


@dataclass
class Config:
    """GRPO with TRL on agentgym episodes."""

    model: str = "Qwen/Qwen2.5-0.5B-Instruct"
    """a Hugging Face model id or a local path; its chat template must render tool calls"""
    tiny: bool = False
    """smoke run on CPU: a tiny random local model (built here) instead of --model, one step"""
    env_id: str = "AgentRL/ToolUse-v0"
    """the agentgym env to train on"""
    num_tasks: int = 256
    """episodes in the dataset (seeds first_seed, first_seed + 1, ...)"""
    first_seed: int = 0
    """the first episode seed"""
    noise: str | None = None
    """a noise spec or preset, e.g. tool_failure=0.2"""
    difficulty: str | None = "easy"
    """easy, medium or hard (none: drawn per episode)"""
    domain: str | None = None
    """one domain of the env (none: drawn per episode)"""
    split: str = "train"
    """train or test"""
    remote_url: str | None = None
    """an `agentgym serve` URL to step the envs on (none: in process)"""
    output_dir: str = "runs/trl"
    """where TRL writes checkpoints and logs"""
    max_steps: int = 200
    """optimizer steps"""
    learning_rate: float = 1e-6
    """the learning rate"""
    per_device_train_batch_size: int = 8
    """completions per device per step"""
    num_generations: int = 8
    """completions per prompt (the GRPO group)"""
    max_completion_length: int = 4096
    """tokens of a rollout after the prompt, tool results included"""
    max_tool_calling_iterations: int = 16
    """tool-calling rounds of a rollout"""
    unfinished_reward: float = 0.0
    """the reward of a rollout that stops before its episode ends"""
    use_vllm: bool = False
    """generate with vLLM (needs a GPU and vllm)"""


def main(argv: list[str] | None = None) -> None:
    cfg = parse_dataclass(Config, argv, prog="train_trl.py")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    model_path = cfg.model
    if cfg.tiny:
        from trl.chat_template_utils import qwen2_5_chat_template

        from agentgym.testing.models import build_tiny_causal_lm

        model_path = str(build_tiny_causal_lm(tempfile.mkdtemp(prefix="agentgym-tiny-"),
                                              chat_template=qwen2_5_chat_template, arch="qwen2"))
        cfg.num_tasks, cfg.max_steps, cfg.max_completion_length = 4, 1, 256
        cfg.per_device_train_batch_size, cfg.num_generations = 4, 2

    rows, factory = build(train_specs(cfg, domain=cfg.domain, split=cfg.split), remote_url=cfg.remote_url,
                          unfinished_reward=cfg.unfinished_reward)
    print(f"{len(rows)} episodes of {cfg.env_id}, {len(factory)} tool set(s): {', '.join(factory)}")

    args = GRPOConfig(
        output_dir=cfg.output_dir, max_steps=cfg.max_steps, learning_rate=cfg.learning_rate,
        per_device_train_batch_size=cfg.per_device_train_batch_size, num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length, max_tool_calling_iterations=cfg.max_tool_calling_iterations,
        use_vllm=cfg.use_vllm, use_cpu=cfg.tiny, logging_steps=1, save_strategy="no" if cfg.tiny else "steps",
        report_to="none",
    )
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(model_path),
                          processing_class=AutoTokenizer.from_pretrained(model_path), args=args,
                          train_dataset=Dataset.from_list(rows), environment_factory=factory)
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    if logged:
        last = logged[-1]
        calls, failures = last.get("tools/call_frequency", 0.0), last.get("tools/failure_frequency", 0.0)
        print(f"step {last['step']}: reward {last['reward']:.3f}, tool calls per turn {calls:.2f}, "
              f"tool failures {failures:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
