"""GRPO with SkyRL on agentgym episodes, through the `agentgym` SkyRL-gym env.

    pip install -r requirements/integrations-skyrl.txt "skyrl[skyrl-train]==0.3.0"   # on GPUs, Python >= 3.12
    python examples/train_skyrl.py --model Qwen/Qwen2.5-1.5B-Instruct --n-gpus 4
    python examples/train_skyrl.py --dry-run     # write the data, check the overrides, print them

This writes the train and validation parquet files (one row per episode: ``prompt``, the opening
with the tools in the system message; ``env_class: agentgym``; ``agentgym``, the episode) and
runs SkyRL's PPO experiment with `agentgym.integrations.skyrl.AgentGymTextEnv` registered inside
the Ray worker that runs it (as SkyRL's examples register their envs). SkyRL's turn limit
(``generator.max_turns``) is set to the env's budget, and the input length to the opening plus
the rollout's tokens. With ``--remote-url`` the envs step on that server (through
``AGENTGYM_REMOTE_URL``, which the local Ray cluster's workers inherit).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.cli_parser import parse_dataclass
from agentgym.integrations._datasets import write_parquet_splits
from agentgym.integrations.skyrl import ENV_CLASS, REMOTE_URL_VARIABLE, dataset_rows


@dataclass
class Config:
    """GRPO with SkyRL on agentgym episodes."""

    model: str = "Qwen/Qwen2.5-1.5B-Instruct"
    """a Hugging Face model id or a local path"""
    env_id: str = "AgentRL/Dialog-v0"
    """the agentgym env to train on"""
    num_tasks: int = 2048
    """training episodes (seeds first_seed, first_seed + 1, ...)"""
    num_val_tasks: int = 128
    """validation episodes, from the test split"""
    first_seed: int = 0
    """the first episode seed"""
    noise: str | None = None
    """a noise spec or preset, e.g. tool_failure=0.2"""
    difficulty: str | None = None
    """easy, medium or hard (none: drawn per episode)"""
    remote_url: str | None = None
    """an `agentgym serve` URL to step the envs on (none: in process)"""
    output_dir: str = "runs/skyrl"
    """where the data and SkyRL's checkpoints go"""
    n_gpus: int = 4
    """GPUs on the node (policy, reference and inference engines colocated)"""
    n_samples_per_prompt: int = 8
    """rollouts per episode (the GRPO group)"""
    train_batch_size: int = 64
    """episodes per step"""
    max_prompt_length: int = 4096
    """tokens of an episode's opening (the system brief and tool schemas included)"""
    max_generate_length: int = 1024
    """tokens of one model turn"""
    max_rollout_length: int = 12288
    """tokens of a whole rollout: the opening, the model's turns and the env's answers"""
    max_turns: int = 40
    """SkyRL's turn limit per rollout (at least the env's own budget, so the env ends its episodes)"""
    epochs: int = 1
    """passes over the dataset"""
    learning_rate: float = 1e-6
    """the policy's learning rate"""
    dry_run: bool = False
    """write the data, check the overrides against SkyRL's own config, print them, and stop"""


def overrides(cfg: Config, train: Path, val: Path) -> list[str]:
    """skyrl 0.3.0's config overrides for this run."""
    n = cfg.n_gpus
    return [
        f"data.train_data=['{train}']",
        f"data.val_data=['{val}']",
        "trainer.algorithm.advantage_estimator=grpo",
        f"trainer.policy.model.path={cfg.model}",
        f"trainer.policy.optimizer_config.lr={cfg.learning_rate}",
        "trainer.placement.colocate_all=true",
        "trainer.strategy=fsdp2",
        f"trainer.placement.policy_num_gpus_per_node={n}",
        f"trainer.placement.ref_num_gpus_per_node={n}",
        f"generator.inference_engine.num_engines={n}",
        "generator.inference_engine.tensor_parallel_size=1",
        f"trainer.epochs={cfg.epochs}",
        f"trainer.train_batch_size={cfg.train_batch_size}",
        f"trainer.policy_mini_batch_size={cfg.train_batch_size}",
        f"trainer.max_prompt_length={cfg.max_prompt_length}",
        f"generator.max_input_length={cfg.max_rollout_length}",
        f"generator.sampling_params.max_generate_length={cfg.max_generate_length}",
        f"generator.max_turns={cfg.max_turns}",
        "generator.batched=false",
        "generator.use_conversation_multi_turn=true",
        f"generator.n_samples_per_prompt={cfg.n_samples_per_prompt}",
        f"environment.env_class={ENV_CLASS}",
        f"trainer.ckpt_path={Path(cfg.output_dir).resolve() / 'checkpoints'}",
        "trainer.logger=console",
        "trainer.project_name=agentgym",
        f"trainer.run_name={cfg.env_id.replace('/', '-')}",
    ]


def _run_experiment(cfg: Any) -> None:
    """Inside the Ray worker that runs training: register the env there, then train."""
    from skyrl.train.entrypoints.main_base import BasePPOExp

    from agentgym.integrations.skyrl import register

    register()
    BasePPOExp(cfg).run()


def main(argv: list[str] | None = None) -> None:
    cfg = parse_dataclass(Config, argv, prog="train_skyrl.py")
    train, val = write_parquet_splits(cfg, dataset_rows, Path(cfg.output_dir).resolve() / "data")
    print(f"wrote {train} and {val}")

    from skyrl.train.config import SkyRLTrainConfig

    args = overrides(cfg, train, val)
    config = SkyRLTrainConfig.from_cli_overrides(args)  # an unknown key or a bad value fails here
    if cfg.dry_run:
        print("SkyRL accepts the overrides:\n    " + "\n    ".join(args))
        return
    import ray
    from skyrl.train.utils import validate_cfg
    from skyrl.train.utils.utils import initialize_ray

    if cfg.remote_url:
        os.environ[REMOTE_URL_VARIABLE] = cfg.remote_url
    validate_cfg(config)
    initialize_ray(config)
    ray.get(ray.remote(num_cpus=1)(_run_experiment).remote(config))


if __name__ == "__main__":
    main(sys.argv[1:])
