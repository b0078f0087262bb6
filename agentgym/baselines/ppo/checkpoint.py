"""PPO checkpoints: weights and the run's arguments, loaded weights-only (an untrusted file runs
no code), and the warm start of a run from one (``--init``)."""

from __future__ import annotations

import hashlib
import json
import pickle
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from agentgym.baselines.ppo.acting import candidate_config
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.features import FEATURES
from agentgym.baselines.ppo.networks import make_policy, policy_spec

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_MAX_BYTES", "load_checkpoint", "read_checkpoint", "save_checkpoint",
           "trained_args", "warm_start"]


CHECKPOINT_FORMAT = "agentgym-ppo/1"


def save_checkpoint(path: Path, policy: nn.Module, args: Args, update: int, global_step: int,
                    init: dict[str, Any] | None = None, demos: dict[str, Any] | None = None) -> None:
    """Weights, architecture, candidate-builder config and the run's Args, in one file; `init`:
    where a warm-started run began (`warm_start`'s record); `demos`: what it learned from
    demonstrations first (`run_demos`'s record)."""
    tmp = path.with_suffix(".tmp")
    torch.save({"format": CHECKPOINT_FORMAT, "policy": policy_spec(policy), "state_dict": policy.state_dict(),
                "candidates": asdict(candidate_config(args)), "args": asdict(args), "update": update,
                "global_step": global_step, "init": init, "demos": demos}, tmp)
    tmp.replace(path)


#: The largest checkpoint file `load_checkpoint` reads: the hash policy's is a few MB, an `lm`
#: policy's holds its model's weights; past this, the file is refused before it is read.
CHECKPOINT_MAX_BYTES = 8 << 30


def read_checkpoint(path: str | Path, max_bytes: int = CHECKPOINT_MAX_BYTES) -> dict[str, Any]:
    """A checkpoint's fields (weights included), read weights-only and checked for shape.

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
        raise ValueError(f"{path}: not a readable PPO checkpoint ({_first_line(exc)})") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not an agentgym PPO checkpoint ({CHECKPOINT_FORMAT})")
    spec, state = ckpt.get("policy"), ckpt.get("state_dict")
    if not isinstance(spec, dict) or not isinstance(spec.get("config", {}), dict) or not isinstance(state, dict):
        raise ValueError(f"{path}: a {CHECKPOINT_FORMAT} checkpoint needs a policy spec and a state_dict")
    return ckpt


def load_checkpoint(path: str | Path, max_bytes: int = CHECKPOINT_MAX_BYTES) -> tuple[nn.Module, dict[str, Any]]:
    """The policy of a checkpoint (in eval mode) and the checkpoint's other fields.

    Raises:
        ValueError: a one-line reason (see `read_checkpoint`), or weights that do not fit the
            checkpoint's own policy spec.
    """
    ckpt = read_checkpoint(path, max_bytes)
    try:
        policy = make_policy(ckpt["policy"])
        policy.load_state_dict(ckpt["state_dict"])
    except (TypeError, RuntimeError) as exc:
        raise ValueError(f"{path}: its weights do not fit its policy spec ({_first_line(exc)})") from None
    policy.eval()
    return policy, {k: v for k, v in ckpt.items() if k != "state_dict"}


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


# ================================================================================ warm start
#: The Args fields a warm start records of the run its checkpoint came from.
_SOURCE_FIELDS = ("env", "split", "difficulty", "noise", "policy", "seed", "total_timesteps", "max_seconds",
                  "calibration", "demos", "demo_episodes")


#: A policy config key as the misfit message names it, and the option that sets it.
_LABELS = {"n_actions": "action space of {} actions", "obs_dim": "observation size {}"}
_OPTIONS = {"buckets": "--hash-buckets", "dim": "--hash-dim", "hidden": "--hidden", "model": "--model",
            "max_context": "--lm-max-context", "max_candidate": "--lm-max-candidate"}


def _misfit(saved: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """What differs between a checkpoint's policy spec and the one this run builds, in words."""
    if saved.get("kind") != fresh["kind"]:
        return [f"policy kind {saved.get('kind')!r} (this run: {fresh['kind']!r})"]
    have, want = dict(saved.get("config") or {}), fresh["config"]
    if fresh["kind"] == "hash":
        have.setdefault("features", 1)  # saved before the features had versions
    out = []
    if "features" in want and have.get("features") != want["features"]:
        out.append(f"features version {have.get('features')} (this agentgym computes {FEATURES}; train it again)")
    for key in sorted(set(have) | set(want)):
        if key != "features" and have.get(key) != want.get(key):
            option = _OPTIONS.get(key)
            hint = f"; give {option} {have.get(key)}" if option and have.get(key) is not None else ""
            out.append(f"{_LABELS.get(key, key + ' {}').format(have.get(key))} (this run: {want.get(key)}{hint})")
    return out


def warm_start(policy: nn.Module, path: str | Path) -> dict[str, Any]:
    """Load a checkpoint's weights into `policy` (a fresh policy of the new run) and return the
    record of where the run starts from: the checkpoint's path and sha256, its update and step,
    and a summary of its run's Args (with its own `init`, so a chain of warm starts is traced).

    Raises:
        ValueError: one line: a checkpoint `read_checkpoint` refuses, or one whose policy kind,
            features version, action space or architecture differs from `policy`'s (each
            difference named).
    """
    try:
        ckpt = read_checkpoint(path)
    except ValueError as exc:
        raise ValueError(f"--init: {exc}") from None
    misfit = _misfit(ckpt["policy"], policy_spec(policy))
    if misfit:
        raise ValueError(f"--init {path}: its policy does not fit this run: {'; '.join(misfit)}")
    try:
        policy.load_state_dict(ckpt["state_dict"])
    except (TypeError, RuntimeError) as exc:
        raise ValueError(f"--init {path}: its weights do not fit its policy spec ({_first_line(exc)})") from None
    with open(path, "rb") as f:  # streamed: an lm policy's checkpoint holds a whole model
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    source = ckpt.get("args") if isinstance(ckpt.get("args"), dict) else {}
    record = {"checkpoint": str(Path(path).resolve()), "sha256": digest, "update": ckpt.get("update"),
              "global_step": ckpt.get("global_step"), "args": {k: source.get(k) for k in _SOURCE_FIELDS if k in source},
              "init": ckpt.get("init")}
    return json.loads(json.dumps(record))  # plain JSON data: the same in init.json, the checkpoint and the result


def trained_args(meta: dict[str, Any]) -> Args:
    """The Args a checkpoint's run trained with (from `load_checkpoint`'s fields), less the policy
    choice, which the checkpoint's own spec makes, and its warm start: what acting and its envs
    take from the run."""
    saved = dict(meta.get("args") or {})
    return Args(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()
                   if k in Args.__dataclass_fields__ and k not in ("policy", "model", "init")})
