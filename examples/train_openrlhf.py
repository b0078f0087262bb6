"""GRPO with OpenRLHF on agentgym episodes, through its agent executor (``--train.agent_func_path``).

    pip install -r requirements/integrations-openrlhf.txt   # on GPUs: openrlhf[vllm]==0.11.2
    python examples/train_openrlhf.py --model Qwen/Qwen2.5-3B-Instruct --n-gpus 8
    python examples/train_openrlhf.py --dry-run --tokenizer ./some/tokenizer   # write the data, print the command

This writes the prompt dataset (JSON lines: ``prompt``, the episode's opening rendered with the
model's chat template and the env's tools; ``label``, the episode as JSON) and runs
``python -m openrlhf.cli.train_ppo_ray`` with ``--train.agent_func_path`` set to
``agentgym/integrations/openrlhf.py``, whose ``AgentExecutor`` plays each episode. With
``--remote-url`` the executors step the envs on that server (``AGENTGYM_REMOTE_URL`` is set for
the run; on an existing Ray cluster, pass it in the job's runtime environment).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agentgym.cli_parser import parse_dataclass
from agentgym.integrations._datasets import train_specs
from agentgym.integrations.openrlhf import REMOTE_URL_VARIABLE, dataset_rows


@dataclass
class Config:
    """GRPO with OpenRLHF on agentgym episodes."""

    model: str = "Qwen/Qwen2.5-3B-Instruct"
    """a Hugging Face model id or a local path"""
    tokenizer: str | None = None
    """the tokenizer that renders the prompts (none: the model's)"""
    env_id: str = "AgentRL/ToolUse-v0"
    """the agentgym env to train on"""
    num_tasks: int = 2048
    """episodes in the dataset (seeds first_seed, first_seed + 1, ...)"""
    first_seed: int = 0
    """the first episode seed"""
    noise: str | None = None
    """a noise spec or preset, e.g. tool_failure=0.2"""
    difficulty: str | None = None
    """easy, medium or hard (none: drawn per episode)"""
    remote_url: str | None = None
    """an `agentgym serve` URL to step the envs on (none: in process)"""
    output_dir: str = "runs/openrlhf"
    """where the data and OpenRLHF's checkpoints go"""
    n_gpus: int = 8
    """GPUs on the node (actor, reference and vLLM engines colocated)"""
    n_samples_per_prompt: int = 8
    """rollouts per episode (the GRPO group)"""
    rollout_batch_size: int = 64
    """episodes per rollout batch"""
    train_batch_size: int = 512
    """samples per optimizer step"""
    max_len: int = 12288
    """tokens of a whole rollout: the opening, the model's turns and the env's answers"""
    learning_rate: float = 1e-6
    """the actor's learning rate"""
    num_episodes: int = 1
    """passes over the dataset"""
    dry_run: bool = False
    """write the data, check the flags against OpenRLHF's parser source, print the command, and stop"""


def command(cfg: Config, data: Path) -> list[str]:
    """openrlhf 0.11.2's ``train_ppo_ray`` command for this run."""
    import agentgym.integrations.openrlhf as agent_file

    n = str(cfg.n_gpus)
    return [
        sys.executable, "-m", "openrlhf.cli.train_ppo_ray",
        "--ref.num_nodes", "1", "--ref.num_gpus_per_node", n,
        "--actor.num_nodes", "1", "--actor.num_gpus_per_node", n,
        "--vllm.num_engines", n, "--vllm.tensor_parallel_size", "1", "--vllm.gpu_memory_utilization", "0.6",
        "--train.colocate_all", "--vllm.enable_sleep", "--ds.enable_sleep", "--ds.zero_stage", "3",
        "--actor.model_name_or_path", cfg.model,
        "--train.agent_func_path", str(Path(agent_file.__file__).resolve()),
        "--data.prompt_dataset", str(data), "--data.input_key", "prompt", "--data.label_key", "label",
        "--data.max_len", str(cfg.max_len),
        "--algo.advantage.estimator", "group_norm", "--algo.kl.use_loss", "--algo.kl.init_coef", "1e-3",
        "--rollout.n_samples_per_prompt", str(cfg.n_samples_per_prompt),
        "--rollout.batch_size", str(cfg.rollout_batch_size), "--train.batch_size", str(cfg.train_batch_size),
        "--train.micro_batch_size", "1", "--rollout.micro_batch_size", "1",
        "--train.num_episodes", str(cfg.num_episodes), "--actor.adam.lr", str(cfg.learning_rate),
        "--actor.gradient_checkpointing_enable",
        "--ckpt.output_dir", str(Path(cfg.output_dir).resolve() / "checkpoints"),
    ]


def check_flags(args: list[str]) -> None:
    """Every flag must be declared in the installed OpenRLHF's ``train_ppo_ray`` parser (read from
    its source: importing it needs vLLM and a GPU). Per-model flags are declared as ``--{prefix}.``."""
    spec = importlib.util.find_spec("openrlhf")
    if spec is None or spec.origin is None:
        raise SystemExit("openrlhf is not installed: pip install -r requirements/integrations-openrlhf.txt")
    source = (Path(spec.origin).parent / "cli" / "train_ppo_ray.py").read_text()
    for flag in (a for a in args if a.startswith("--")):
        owner, _, rest = flag[2:].partition(".")
        if f'"{flag}"' not in source and not (owner in ("actor", "critic") and f'"--{{prefix}}.{rest}"' in source):
            raise SystemExit(f"openrlhf's train_ppo_ray has no flag {flag}")


def main(argv: list[str] | None = None) -> None:
    cfg = parse_dataclass(Config, argv, prog="train_openrlhf.py")
    from transformers import AutoTokenizer

    out = Path(cfg.output_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    data = out / "agentgym_prompts.jsonl"
    tokenizer = AutoTokenizer.from_pretrained(cfg.tokenizer or cfg.model)
    with data.open("w") as f:
        for row in dataset_rows(train_specs(cfg), tokenizer, remote_url=cfg.remote_url):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {cfg.num_tasks} episodes to {data}")

    args = command(cfg, data)
    env = dict(os.environ)
    if cfg.remote_url:
        env[REMOTE_URL_VARIABLE] = cfg.remote_url
    if cfg.dry_run:
        check_flags(args)
        lines = [" ".join(shlex.quote(a) for a in args[:3])]
        for a in args[3:]:
            if a.startswith("--"):
                lines.append(shlex.quote(a))
            else:
                lines[-1] += " " + shlex.quote(a)
        print("openrlhf declares every flag; the command:\n" + " \\\n    ".join(lines))
        return
    subprocess.run(args, check=True, env=env)


if __name__ == "__main__":
    main(sys.argv[1:])
