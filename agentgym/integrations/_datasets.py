"""The episode datasets that the training examples (``examples/train_<trainer>.py``) write.

Every example names its training episodes from the same options (``env_id``, ``num_tasks``
seeds from ``first_seed``, ``noise``, ``difficulty``), and verl and SkyRL both read a train and a
validation parquet file. One function for each keeps the examples naming the same episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from agentgym.integrations._tasks import TaskSpec, task_specs

__all__ = ["train_specs", "write_parquet_splits"]


class EpisodeOptions(Protocol):
    """The options of an example's config that name its training episodes."""

    env_id: str
    num_tasks: int
    first_seed: int
    noise: str | None
    difficulty: str | None


class SplitOptions(EpisodeOptions, Protocol):
    """The options of an example that also writes validation episodes and may step on a server."""

    num_val_tasks: int
    remote_url: str | None


def train_specs(cfg: EpisodeOptions, **env_kwargs: Any) -> list[TaskSpec]:
    """The training episodes: seeds ``first_seed ... first_seed + num_tasks - 1`` of ``env_id``
    with the config's noise and difficulty, plus `env_kwargs` (other `TaskSpec` fields)."""
    seeds = range(cfg.first_seed, cfg.first_seed + cfg.num_tasks)
    return task_specs(cfg.env_id, seeds, noise=cfg.noise, difficulty=cfg.difficulty, **env_kwargs)


def write_parquet_splits(cfg: SplitOptions, dataset_rows: Callable[..., Iterable[dict[str, Any]]],
                         data_dir: Path) -> tuple[Path, Path]:
    """Write ``train.parquet`` (`train_specs`) and ``val.parquet`` (the test split's first
    ``num_val_tasks`` seeds) under `data_dir`, one row per episode from the trainer's
    `dataset_rows`; return their paths."""
    import pandas as pd

    data_dir.mkdir(parents=True, exist_ok=True)
    train, val = data_dir / "train.parquet", data_dir / "val.parquet"
    pd.DataFrame(dataset_rows(train_specs(cfg), remote_url=cfg.remote_url)).to_parquet(train)
    val_specs = task_specs(cfg.env_id, range(cfg.num_val_tasks), split="test", noise=cfg.noise,
                           difficulty=cfg.difficulty)
    pd.DataFrame(dataset_rows(val_specs, remote_url=cfg.remote_url)).to_parquet(val)
    return train, val
