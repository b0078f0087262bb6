"""`agentgym train ppo --init CHECKPOINT`: a run continues from a trained policy, records where it
started from, and refuses a checkpoint that does not fit it with one line naming what differs."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from agentgym.baselines.ppo import Args, load_checkpoint, save_checkpoint, train  # noqa: E402
from agentgym.baselines.ppo.checkpoint import read_checkpoint, warm_start  # noqa: E402
from agentgym.baselines.ppo.features import FEATURES  # noqa: E402
from agentgym.baselines.ppo.networks import HashPolicy, MLPPolicy  # noqa: E402

SMALL = {"hash_buckets": 512, "hash_dim": 8, "hidden": 16}


def _tiny(tmp: Path, name: str, **kw: Any) -> Args:
    """One 128-step update of a small hash policy on Dialog-v0, evaluated on 6 fixed seeds."""
    options = {"env": ("AgentRL/Dialog-v0",), "num_envs": 4, "total_timesteps": 128, "eval_episodes": 6,
               "tensorboard": False, "plot": False, "progress": False, **SMALL, **kw}
    return Args(out=str(tmp), run_name=name, **options)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return train(_tiny(tmp_path_factory.mktemp("warm"), "source"))


def _strip(ev: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in ev.items() if k not in ("per_episode",)}


def test_a_warm_start_continues_with_the_loaded_weights_and_records_its_source(source: Any, tmp_path: Path) -> None:
    # Learning rate 0: Adam moves nothing, so the run's policy is the loaded one throughout.
    warm = train(_tiny(tmp_path, "warm", init=str(source.checkpoint), learning_rate=0.0, seed=7))
    # Before its first update the run acts exactly as the loaded policy did (greedy, same seeds),
    # which is not how fresh weights act.
    assert _strip(warm.initial_eval) == _strip(source.final_eval) != _strip(source.initial_eval)
    loaded, _ = load_checkpoint(source.checkpoint)
    kept, meta = load_checkpoint(warm.checkpoint)
    for key, value in loaded.state_dict().items():
        assert torch.equal(kept.state_dict()[key], value), key
    digest = hashlib.sha256(source.checkpoint.read_bytes()).hexdigest()
    recorded = json.loads((warm.run_dir / "init.json").read_text())
    assert recorded == meta["init"] == warm.init
    assert recorded["checkpoint"] == str(source.checkpoint.resolve()) and recorded["sha256"] == digest
    assert recorded["args"]["env"] == ["AgentRL/Dialog-v0"] and recorded["args"]["seed"] == 1
    assert recorded["global_step"] == source.global_step and recorded["init"] is None
    assert "warm start from" in warm.summary()


def test_a_warm_start_learns_from_there_and_chains(source: Any, tmp_path: Path) -> None:
    warm = train(_tiny(tmp_path, "test-split", init=str(source.checkpoint), split="test"))
    assert json.loads((warm.run_dir / "args.json").read_text())["split"] == "test"
    assert warm.initial_eval["split"] == warm.final_eval["split"] == "test"
    before = read_checkpoint(source.checkpoint)["state_dict"]
    after = read_checkpoint(warm.checkpoint)["state_dict"]
    assert any(not torch.equal(before[k], after[k]) for k in before), "the warm run trained"
    again = train(_tiny(tmp_path, "chain", init=str(warm.checkpoint), total_timesteps=1, eval_episodes=0))
    assert again.init["init"]["checkpoint"] == str(source.checkpoint.resolve())


def _policy() -> HashPolicy:
    return HashPolicy(SMALL["hash_buckets"], SMALL["hash_dim"], SMALL["hidden"])


def test_checkpoints_that_do_not_fit_are_refused_with_what_differs(source: Any, tmp_path: Path) -> None:
    ckpt = read_checkpoint(source.checkpoint)
    args = _tiny(tmp_path, "x")

    def saved(name: str, **spec: Any) -> Path:
        path = tmp_path / name
        torch.save({**ckpt, "policy": {**ckpt["policy"], **spec}}, path)
        return path

    cases = {
        "missing": (tmp_path / "nothing.pt", "no PPO checkpoint at"),
        "corrupt": (tmp_path / "corrupt.pt", "not a readable PPO checkpoint"),
        "other features": (saved("v3.pt", config={**ckpt["policy"]["config"], "features": 3}),
                           f"features version 3 (this agentgym computes {FEATURES}"),
        "old, unversioned": (saved("v1.pt", config={k: v for k, v in ckpt["policy"]["config"].items()
                                                    if k != "features"}), "features version 1"),
        "other width": (saved("wide.pt", config={**ckpt["policy"]["config"], "hidden": 32}),
                        "hidden 32 (this run: 16; give --hidden 32)"),
        "not a checkpoint": (tmp_path / "plain.pt", "is not an agentgym PPO checkpoint"),
    }
    whole = source.checkpoint.read_bytes()
    (tmp_path / "corrupt.pt").write_bytes(whole[: len(whole) // 2])  # a copy cut short
    torch.save({"weights": torch.zeros(2)}, tmp_path / "plain.pt")
    mlp = tmp_path / "mlp.pt"
    save_checkpoint(mlp, MLPPolicy(4, 2), replace(args, env=("CartPole-v1",)), 1, 1)
    cases["wrong kind"] = (mlp, "policy kind 'mlp' (this run: 'hash')")
    for case, (path, says) in cases.items():
        with pytest.raises(ValueError) as info:
            warm_start(_policy(), path)
        message = str(info.value)
        assert message.startswith("--init") and says in message and "\n" not in message, (case, message)
    other = MLPPolicy(4, 3)
    with pytest.raises(ValueError, match=r"action space of 2 actions \(this run: 3\)"):
        warm_start(other, mlp)


def test_the_command_refuses_a_bad_init_in_one_line_and_makes_no_run_folder(source: Any, tmp_path: Path,
                                                                           agentgym_here: Any) -> None:
    done = agentgym_here("train", "ppo", "--init", str(source.checkpoint), "--out", str(tmp_path), "--hidden", "64",
                         "--hash-buckets", "512", "--hash-dim", "8")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert "its policy does not fit this run: hidden 16 (this run: 64; give --hidden 16)" in done.stderr
    assert not any(tmp_path.iterdir()), "a refused warm start leaves no run folder"


def test_help_explains_init_and_split(agentgym_here: Any) -> None:
    done = agentgym_here("train", "ppo", "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "--init" in text and "Warm start" in text and "fresh optimizer" in text
    assert "--split" in text and "unseen domains" in text
