"""PPO over candidate actions: the thin "optimise the whole interaction" baseline.

One module per part: the configuration (`config`), what the hash policy reads (`features`), the
networks (`networks`), making envs and acting (`acting`), rollouts and the asynchronous actors
(`rollout`), advantages and the update (`update`), evaluation and logging (`reporting`),
checkpoints (`checkpoint`), the training loop (`training`) and the agent that plays a checkpoint
(`agent`). The names a script uses are here::

    from agentgym.baselines.ppo import Args, train
    result = train(Args(env=("AgentRL/Dialog-v0",), max_seconds=600))

``python -m agentgym.baselines.ppo`` is ``agentgym train ppo``. Each name is imported on first
use (torch with it), so the `ppo` agent's module loads without the trainer.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The package's public names, each with the module that defines it.
_HOMES = {
    "Args": "config", "Acting": "acting", "act": "acting", "resolve_env_ids": "acting",
    "CHECKPOINT_FORMAT": "checkpoint", "load_checkpoint": "checkpoint", "save_checkpoint": "checkpoint",
    "evaluate": "reporting", "learning_curve": "reporting", "Rollout": "rollout",
    "TrainResult": "training", "main": "training", "train": "training",
    "gae": "update", "make_batch": "update", "normalise_advantages": "update",
}

__all__ = list(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
