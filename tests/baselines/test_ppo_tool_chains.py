"""The thin PPO learns tool chains (ToolUse-v0, CrossTask-v0) from the tool-chain candidates; a
file of its own beside `test_ppo_learning.py` (Dialog), so the two share no test worker."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from agentgym.baselines.ppo import Args, train  # noqa: E402


# The ToolUse case is `slow`: its gain over 100 episodes (0.042) is within one paired standard
# error (0.047) of none, so 4,096 steps cannot show that ToolUse is learned; it passes only
# because the run is seeded. `test_a_fixed_number_of_steps_learns_tool_chains` shows it.
@pytest.mark.parametrize(("env_id", "floor", "episodes", "steps"),
                         [pytest.param("AgentRL/ToolUse-v0", 0.015, 100, 4096, marks=pytest.mark.slow),
                          ("AgentRL/CrossTask-v0", 0.03, 30, 8192)],
                         ids=["tooluse", "crosstask"])
def test_tool_chains_are_learned(tmp_path: Path, env_id: str, floor: float, episodes: int, steps: int) -> None:
    """ToolUse and CrossTask (easy): 4,096 and 8,192 synchronous steps raise the mean score of the
    same sampled evaluation episodes (100 and 30; deterministic: the run is seeded; with features
    version 4, 0.100 -> 0.142 on ToolUse, and 0.106 -> 0.290 on CrossTask since its users wait to
    be told that a request is done, which a session of several requests asks for each time and
    4,096 steps did not yet learn; a policy that learns nothing gains 0). A score, not success: in
    a few thousand steps
    the policy completes more of each chain before it completes whole ones. The default run has
    the CrossTask case only: this budget does not show ToolUse learning (see above)."""
    args = Args(env=(env_id,), difficulty="easy", seed=1, eval_episodes=episodes, eval_greedy=False,
                eval_every=10_000, total_timesteps=steps, out=str(tmp_path), run_name=env_id[8:12], plot=False,
                tensorboard=False, progress=False)
    result = train(args)
    assert result.initial_eval is not None and result.final_eval is not None
    gain = result.final_eval["score"] - result.initial_eval["score"]
    print(f"{env_id}: score {result.initial_eval['score']:.3f} -> {result.final_eval['score']:.3f}")
    assert gain >= floor, (env_id, result.initial_eval["score"], result.final_eval["score"])


@pytest.mark.slow
def test_a_fixed_number_of_steps_learns_tool_chains(tmp_path: Path) -> None:
    """ToolUse-v0, every difficulty, seeded: 56,320 synchronous steps take greedy success on 100
    fixed train-split seeds from 0 to 18% with features version 4 (25% with version 3, which read
    a value's place off the rendered text; the same on every run of this configuration). The
    floor of 15% asks that the chains are learned, not that version 4 matches 3: closing that gap
    belongs to the PPO work of `benchmarks/ppo/RESULTS.md` (its version-4 section compares the two
    at equal steps)."""
    args = Args(env=("AgentRL/ToolUse-v0",), seed=1, eval_episodes=100, eval_every=10_000, total_timesteps=56_320,
                out=str(tmp_path), run_name="tooluse", plot=False, tensorboard=False, progress=False)
    result = train(args)
    assert result.final_eval is not None and result.initial_eval is not None
    assert result.initial_eval["success"] <= 0.05 and result.final_eval["success"] >= 0.15, (
        result.initial_eval, result.final_eval)
