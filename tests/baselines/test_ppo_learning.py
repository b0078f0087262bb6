"""The thin PPO learns every family: Dialog-v0 (easy, no noise, fixed seed), synchronously and with
actors, and tool chains (ToolUse-v0, CrossTask-v0) from the tool-chain candidates.

Success is measured before and after training on the same 100 fixed-seed evaluation episodes,
with the policy sampling (as it acts in training): the untrained policy is then a near-uniform
choice among the candidates, a baseline that does not depend on the luck of the initial weights.

* The issue's 2-minute runs (asserting +20 points) are marked ``slow``: two of them take over
  four minutes on two cores, the whole default budget of these tests.
* The default run trains for a fixed number of steps instead of a fixed time (so a loaded
  machine changes how long it takes, not what it learns): 2048 steps, 10 to 25 s on two cores.
  The synchronous run is deterministic (seeded) and asserts +15 points (it gains 30: 37% to
  67%); the asynchronous run's order of arrivals varies, so it asserts +10.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from agentgym.baselines.ppo import Args, TrainResult, train  # noqa: E402

DIALOG_ID = "AgentRL/Dialog-v0"


def _run(tmp_path: Path, **kw: Any) -> TrainResult:
    args = Args(env=(DIALOG_ID,), difficulty="easy", noise=None, seed=1, eval_episodes=100, eval_greedy=False,
                eval_every=10_000, out=str(tmp_path), run_name="run", plot=False, tensorboard=False, progress=False,
                **kw)
    return train(args)


def _gain(result: TrainResult) -> float:
    assert result.initial_eval is not None and result.final_eval is not None
    return result.final_eval["success"] - result.initial_eval["success"]


def test_synchronous_training_raises_success(tmp_path: Path) -> None:
    result = _run(tmp_path, total_timesteps=2048)
    assert result.global_step == 2048
    assert _gain(result) >= 0.15, (result.initial_eval, result.final_eval)
    print(f"sync: {result.initial_eval['success']:.0%} -> {result.final_eval['success']:.0%}")


def test_asynchronous_training_raises_success(tmp_path: Path) -> None:
    result = _run(tmp_path, total_timesteps=4096, actors=2)
    assert result.global_step >= 4096
    assert _gain(result) >= 0.10, (result.initial_eval, result.final_eval)
    print(f"async: {result.initial_eval['success']:.0%} -> {result.final_eval['success']:.0%}, lag dropped "
          f"{result.dropped}")


def test_tool_chains_are_learned(tmp_path: Path) -> None:
    """ToolUse and CrossTask (easy): 4,096 and 8,192 synchronous steps raise the mean score of the
    same sampled evaluation episodes (100 and 50; deterministic: the run is seeded). A score, not
    success: in a few thousand steps the policy completes more of each chain before it completes
    whole ones. A cross-task session mixes three families, whose first updates pull the shared
    weights apart (its score dips at 2,048 steps and climbs from 6,144: 0.17 -> 0.24 at 8,192)."""
    for env_id, floor, episodes, steps in (("AgentRL/ToolUse-v0", 0.015, 100, 4096),
                                           ("AgentRL/CrossTask-v0", 0.03, 50, 8192)):
        args = Args(env=(env_id,), difficulty="easy", seed=1, eval_episodes=episodes, eval_greedy=False,
                    eval_every=10_000, total_timesteps=steps, out=str(tmp_path), run_name=env_id[8:12], plot=False,
                    tensorboard=False, progress=False)
        result = train(args)
        assert result.initial_eval is not None and result.final_eval is not None
        gain = result.final_eval["score"] - result.initial_eval["score"]
        assert gain >= floor, (env_id, result.initial_eval["score"], result.final_eval["score"])


@pytest.mark.slow
def test_a_fixed_number_of_steps_learns_tool_chains(tmp_path: Path) -> None:
    """ToolUse-v0, every difficulty, seeded: 56,320 synchronous steps (3-5 minutes on two cores)
    take greedy success on 100 fixed train-split seeds from 0 to 25% (the same on every run of
    this configuration). The same seed run with an evaluation every 20 updates and a time budget
    (`benchmarks/ppo/RESULTS.md`) followed another trajectory: 31% and 37% at 51-56k steps,
    40-46% from 113k steps on."""
    args = Args(env=("AgentRL/ToolUse-v0",), seed=1, eval_episodes=100, eval_every=10_000, total_timesteps=56_320,
                out=str(tmp_path), run_name="tooluse", plot=False, tensorboard=False, progress=False)
    result = train(args)
    assert result.final_eval is not None and result.initial_eval is not None
    assert result.initial_eval["success"] <= 0.05 and result.final_eval["success"] >= 0.20, (
        result.initial_eval, result.final_eval)


@pytest.mark.slow
@pytest.mark.parametrize("actors", [0, 2], ids=["sync", "async"])
def test_two_minutes_of_training_raise_success_by_20_points(tmp_path: Path, actors: int) -> None:
    result = _run(tmp_path, max_seconds=120.0, actors=actors)
    assert result.train_s >= 120.0
    assert _gain(result) >= 0.20, (result.initial_eval, result.final_eval)
    print(f"2 min, actors={actors}: {result.initial_eval['success']:.0%} -> {result.final_eval['success']:.0%} "
          f"in {result.global_step} steps")
