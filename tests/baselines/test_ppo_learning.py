"""The thin PPO learns Dialog-v0 (easy, no noise, fixed seed), synchronously and with actors (the
tool chains of ToolUse-v0 and CrossTask-v0: `test_ppo_tool_chains.py`).

Success is measured before and after training on the same 100 fixed-seed evaluation episodes,
with the policy sampling (as it acts in training): the untrained policy is then a near-uniform
choice among the candidates, a baseline that does not depend on the luck of the initial weights.

* The issue's 2-minute runs (asserting +20 points) are marked ``slow``: two of them take over
  four minutes on two cores, the whole default budget of these tests.
* The default run trains for a fixed number of steps instead of a fixed time (so a loaded
  machine changes how long it takes, not what it learns): 2048 steps, 10 to 25 s on two cores.
  The synchronous run is deterministic (seeded) and asserts +15 points (it gains 62: 10% to
  72%); the asynchronous run's order of arrivals varies, so it asserts +10.
* The asynchronous run learns only from segments acted with the learner's current weights
  (``max_lag=0``: stale ones are dropped and collected again). With the default lag of 2, most
  segments are one update stale, and 4096 steps gained a median of 18 points over twelve runs
  (8 to 37, two under 10 on a loaded machine); with ``max_lag=0`` nine runs gained 41 to 84, so
  the bound holds whatever the machine's load does to the order of arrivals.
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
    # Success rates are whole episodes over the evaluation's count: the gain is rounded back to
    # them, so 0.18 - 0.08 is the 0.10 it is, not 0.0999... below a bound of 0.10.
    return round(result.final_eval["success"] - result.initial_eval["success"], 9)


def test_synchronous_training_raises_success(tmp_path: Path) -> None:
    result = _run(tmp_path, total_timesteps=2048)
    assert result.global_step == 2048
    assert _gain(result) >= 0.15, (result.initial_eval, result.final_eval)
    print(f"sync: {result.initial_eval['success']:.0%} -> {result.final_eval['success']:.0%}")


def test_asynchronous_training_raises_success(tmp_path: Path) -> None:
    result = _run(tmp_path, total_timesteps=4096, actors=2, max_lag=0)
    assert result.global_step >= 4096 and result.dropped > 0  # the first granted batch is stale by then
    assert _gain(result) >= 0.10, (result.initial_eval, result.final_eval)
    print(f"async: {result.initial_eval['success']:.0%} -> {result.final_eval['success']:.0%}, lag dropped "
          f"{result.dropped}")


@pytest.mark.slow
@pytest.mark.parametrize("actors", [0, 2], ids=["sync", "async"])
def test_two_minutes_of_training_raise_success_by_20_points(tmp_path: Path, actors: int) -> None:
    result = _run(tmp_path, max_seconds=120.0, actors=actors)
    assert result.train_s >= 120.0
    assert _gain(result) >= 0.20, (result.initial_eval, result.final_eval)
    print(f"2 min, actors={actors}: {result.initial_eval['success']:.0%} -> {result.final_eval['success']:.0%} "
          f"in {result.global_step} steps")
