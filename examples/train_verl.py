"""GRPO with verl on agentgym episodes, through the `agentgym` agent loop.

    pip install -r requirements/integrations-verl.txt    # on GPUs: verl[vllm]==0.9.1
    python examples/train_verl.py --model Qwen/Qwen2.5-3B-Instruct --n-gpus 8
    python examples/train_verl.py --dry-run              # write the files, check the config, print the command

This writes the train and validation parquet files (one row per episode, with
``agent_name: agentgym`` and the episode in ``extra_info["agentgym"]``) and the agent-loop file
that registers `agentgym.integrations.verl.AgentGymAgentLoop`, then runs
``python -m verl.trainer.main_ppo`` with the overrides that point verl at them. The loop's
``reward_score`` (the episode's score) is verl's reward: no reward function is configured.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agentgym.cli_parser import parse_dataclass
from agentgym.integrations._datasets import write_parquet_splits
from agentgym.integrations.verl import agent_loop_config, dataset_rows


@dataclass
class Config:
    """GRPO with verl on agentgym episodes."""

    model: str = "Qwen/Qwen2.5-3B-Instruct"
    """a Hugging Face model id or a local path"""
    env_id: str = "AgentRL/ToolUse-v0"
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
    output_dir: str = "runs/verl"
    """where the data, the agent-loop file and verl's checkpoints go"""
    n_gpus: int = 8
    """GPUs on the node"""
    rollout_n: int = 8
    """rollouts per episode (the GRPO group)"""
    train_batch_size: int = 64
    """episodes per step"""
    max_prompt_length: int = 4096
    """tokens of an episode's opening (the system brief and tool schemas included)"""
    max_response_length: int = 8192
    """tokens of a rollout after the opening: the model's turns and the env's answers"""
    total_training_steps: int = 200
    """optimizer steps"""
    learning_rate: float = 1e-6
    """the actor's learning rate"""
    dry_run: bool = False
    """write the files, check the overrides against verl's own config, print the command, and stop"""


def overrides(cfg: Config, train: Path, val: Path, loops: Path) -> list[str]:
    """verl 0.9.1's Hydra overrides for this run."""
    return [
        "algorithm.adv_estimator=grpo",
        f"data.train_files={train}",
        f"data.val_files={val}",
        f"data.train_batch_size={cfg.train_batch_size}",
        f"data.max_prompt_length={cfg.max_prompt_length}",
        f"data.max_response_length={cfg.max_response_length}",
        "data.filter_overlong_prompts=True",
        "data.return_raw_chat=True",
        f"actor_rollout_ref.model.path={cfg.model}",
        f"actor_rollout_ref.actor.optim.lr={cfg.learning_rate}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={cfg.train_batch_size}",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.actor.use_kl_loss=True",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.mode=async",
        f"actor_rollout_ref.rollout.n={cfg.rollout_n}",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loops}",
        "actor_rollout_ref.rollout.agent.default_agent_loop=agentgym",
        f"trainer.n_gpus_per_node={cfg.n_gpus}",
        "trainer.nnodes=1",
        f"trainer.total_training_steps={cfg.total_training_steps}",
        f"trainer.default_local_dir={Path(cfg.output_dir).resolve() / 'checkpoints'}",
        "trainer.logger=['console']",
        "trainer.project_name=agentgym",
        f"trainer.experiment_name={cfg.env_id.replace('/', '-')}",
    ]


def check_overrides(args: list[str]) -> None:
    """Compose verl's own trainer config with `args`: an unknown key or a bad value fails here."""
    import verl
    from hydra import compose, initialize_config_dir

    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        config = compose(config_name="ppo_trainer", overrides=args)
    assert config.actor_rollout_ref.rollout.agent.default_agent_loop == "agentgym"


def main(argv: list[str] | None = None) -> None:
    cfg = parse_dataclass(Config, argv, prog="train_verl.py")
    import yaml

    out = Path(cfg.output_dir).resolve()
    train, val = write_parquet_splits(cfg, dataset_rows, out / "data")
    loops = out / "agent_loops.yaml"
    loops.write_text(yaml.safe_dump(agent_loop_config(remote_url=cfg.remote_url), sort_keys=False))
    print(f"wrote {train}, {val} and {loops}")

    args = overrides(cfg, train, val, loops)
    command = [sys.executable, "-m", "verl.trainer.main_ppo", *args]
    if cfg.dry_run:
        check_overrides(args)
        lines = [" ".join(shlex.quote(c) for c in command[:3]), *(shlex.quote(a) for a in args)]
        print("verl accepts the overrides; the command:\n" + " \\\n    ".join(lines))
        return
    subprocess.run(command, check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
