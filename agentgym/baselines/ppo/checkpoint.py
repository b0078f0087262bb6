"""PPO checkpoints: weights and the run's arguments, loaded weights-only (an untrusted file runs
no code)."""

from __future__ import annotations

import pickle
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from agentgym.baselines.ppo.acting import candidate_config
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.networks import make_policy, policy_spec

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_MAX_BYTES", "load_checkpoint", "save_checkpoint", "trained_args"]


CHECKPOINT_FORMAT = "agentgym-ppo/1"


def save_checkpoint(path: Path, policy: nn.Module, args: Args, update: int, global_step: int) -> None:
    """Weights, architecture, candidate-builder config and the run's Args, in one file."""
    tmp = path.with_suffix(".tmp")
    torch.save({"format": CHECKPOINT_FORMAT, "policy": policy_spec(policy), "state_dict": policy.state_dict(),
                "candidates": asdict(candidate_config(args)), "args": asdict(args), "update": update,
                "global_step": global_step}, tmp)
    tmp.replace(path)


#: The largest checkpoint file `load_checkpoint` reads: the hash policy's is a few MB, an `lm`
#: policy's holds its model's weights; past this, the file is refused before it is read.
CHECKPOINT_MAX_BYTES = 8 << 30


def load_checkpoint(path: str | Path, max_bytes: int = CHECKPOINT_MAX_BYTES) -> tuple[nn.Module, dict[str, Any]]:
    """The policy of a checkpoint (in eval mode) and the checkpoint's other fields.

    The file is untrusted input: it is read with torch's weights-only unpickler, which builds
    tensors and plain data (dicts, lists, strings, numbers) and refuses anything else, so a file
    crafted to run code when unpickled is refused and nothing in it runs.

    Raises:
        ValueError: a one-line reason when the file is missing, too large, not a weights-only
            file, or not an agentgym PPO checkpoint.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ValueError(f"no PPO checkpoint at {str(path)!r} ({exc.strerror or exc})") from None
    if size > max_bytes:
        raise ValueError(f"{path}: {size} bytes, over the {max_bytes}-byte limit of a PPO checkpoint")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError(f"{path}: refused: it holds objects other than tensors and plain data, and such a file "
                         "can run code when loaded (PPO checkpoints are loaded weights-only)") from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"{path}: not a readable PPO checkpoint ({reason})") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not an agentgym PPO checkpoint ({CHECKPOINT_FORMAT})")
    spec, state = ckpt.get("policy"), ckpt.get("state_dict")
    if not isinstance(spec, dict) or not isinstance(spec.get("config", {}), dict) or not isinstance(state, dict):
        raise ValueError(f"{path}: a {CHECKPOINT_FORMAT} checkpoint needs a policy spec and a state_dict")
    try:
        policy = make_policy(spec)
        policy.load_state_dict(state)
    except (TypeError, RuntimeError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"{path}: its weights do not fit its policy spec ({reason})") from None
    policy.eval()
    return policy, {k: v for k, v in ckpt.items() if k != "state_dict"}


def trained_args(meta: dict[str, Any]) -> Args:
    """The Args a checkpoint's run trained with (from `load_checkpoint`'s fields), less the policy
    choice, which the checkpoint's own spec makes: what acting and its envs take from the run."""
    saved = dict(meta.get("args") or {})
    return Args(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()
                   if k in Args.__dataclass_fields__ and k not in ("policy", "model")})
