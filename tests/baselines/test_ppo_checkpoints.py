"""PPO checkpoints are untrusted files: weights-only loading, so a crafted file runs nothing.

The malicious files here are real: unpickled the ordinary way, each runs a shell command that
creates a marker file (the first test proves it). Loading them through `load_checkpoint`, the
`ppo` agent or ``agentgym eval --agent ppo --checkpoint`` must refuse them with one clear line
and never create the marker.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from agentgym.agents import make_agent  # noqa: E402
from agentgym.baselines.ppo import CHECKPOINT_FORMAT, Args, load_checkpoint, save_checkpoint  # noqa: E402
from agentgym.baselines.ppo.networks import HashPolicy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class ShellPayload:
    """Unpickles into ``os.system(command)``: what an attacker's checkpoint carries."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (self.command,)


def _malicious_files(tmp_path: Path, marker: Path) -> dict[str, Path]:
    """The payload as a torch zip checkpoint (inside an otherwise valid-looking dict) and as a
    legacy raw pickle."""
    command = f"touch {marker}"
    zipped = tmp_path / "evil.pt"
    torch.save({"format": CHECKPOINT_FORMAT, "policy": {"kind": "hash", "config": {}},
                "state_dict": {}, "candidates": ShellPayload(command)}, zipped)
    raw = tmp_path / "evil-raw.pt"
    raw.write_bytes(pickle.dumps({"format": CHECKPOINT_FORMAT, "x": ShellPayload(command)}, protocol=2))
    return {"zip": zipped, "raw": raw}


def _honest(tmp_path: Path) -> Path:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, HashPolicy(buckets=256, dim=8, hidden=16), Args(hash_buckets=256, hash_dim=8, hidden=16),
                    update=3, global_step=96)
    return path


def test_the_malicious_files_do_run_code_when_unpickled_the_ordinary_way(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    files = _malicious_files(tmp_path, marker)
    torch.load(files["zip"], weights_only=False)
    assert marker.exists(), "the payload is real"
    marker.unlink()
    with open(files["raw"], "rb") as f:
        pickle.load(f)
    assert marker.exists()


@pytest.mark.parametrize("kind", ["zip", "raw"])
def test_load_checkpoint_refuses_a_malicious_file_and_runs_nothing(tmp_path: Path, kind: str) -> None:
    marker = tmp_path / "pwned"
    path = _malicious_files(tmp_path, marker)[kind]
    with pytest.raises(ValueError, match="refused") as info:
        load_checkpoint(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    with pytest.raises(ValueError, match="refused"):
        make_agent("ppo", checkpoint=str(path))
    assert not marker.exists()


def test_eval_with_a_malicious_checkpoint_prints_one_line_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = _malicious_files(tmp_path, marker)["zip"]
    proc = subprocess.run(
        [sys.executable, "-m", "agentgym.cli", "eval", "AgentRL/Dialog-v0", "--agent", "ppo", "--checkpoint",
         str(path), "--episodes", "1", "--workers", "1", "--json", "--out", str(tmp_path / "records.jsonl")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("agentgym: error:") and "refused" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()


def test_eval_without_a_checkpoint_says_what_to_give_in_one_line(tmp_path: Path, agentgym_here: Any) -> None:
    proc = agentgym_here("eval", "AgentRL/Dialog-v0", "--agent", "ppo", "--episodes", "1", "--json", "--out",
                         str(tmp_path / "records.jsonl"))
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--checkpoint" in lines[0] and "Traceback" not in proc.stderr, proc.stderr


def test_an_honest_checkpoint_loads_weights_only(tmp_path: Path) -> None:
    path = _honest(tmp_path)
    torch.load(path, weights_only=True)  # plain data and tensors only
    policy, meta = load_checkpoint(path)
    assert isinstance(policy, HashPolicy) and not policy.training
    assert meta["update"] == 3 and meta["global_step"] == 96 and meta["args"]["hash_buckets"] == 256


def test_broken_and_oversized_files_give_one_line_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x00not a checkpoint" * 10)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(_honest(tmp_path).read_bytes()[:300])
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    misfit = tmp_path / "misfit.pt"
    ckpt = torch.load(_honest(tmp_path), weights_only=True)
    ckpt["policy"]["config"]["hidden"] = 32  # the weights no longer fit the architecture
    torch.save(ckpt, misfit)
    for path, reason in ((garbage, "refused|not a readable"), (truncated, "not a readable"),
                         (other, "not an agentgym PPO checkpoint"), (misfit, "do not fit"),
                         (tmp_path / "missing.pt", "no PPO checkpoint")):
        with pytest.raises(ValueError, match=reason) as info:
            load_checkpoint(path)
        assert "\n" not in str(info.value), path
    with pytest.raises(ValueError, match="over the 100-byte limit"):
        load_checkpoint(_honest(tmp_path), max_bytes=100)
