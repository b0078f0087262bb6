"""Calibration: the heuristic agent's success falls monotonically as each kind's level rises.

The same seeds are played at every level, and each kind draws from its own stream, so the levels
differ only by the extra injections (common random numbers): the comparison needs no large sample.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from noise_helpers import LIVE_IDS, supports

from agentgym.agents import make_agent
from agentgym.agents.heuristic import STRATEGIES
from agentgym.eval.episode import run_episode
from agentgym.noise import KINDS

#: Paired seeds compare the levels episode by episode, so a rise is a count of seeds a fault helped
#: on, not sampling noise: 100 seeds find one as well as 200 do (the same TOLERANCE, one episode).
N_EPISODES = 100
#: A level may beat the one below it by at most this much: on paired seeds a fault now and then
#: helps (a failed call makes the agent try another place that happens to fit).
TOLERANCE = 0.01
#: The levels of each kind: rates 0, 0.2, 0.5; for the two kinds without a rate, as many decoys,
#: and a mean call time that makes a 120 s budget bind in some episodes.
LEVELS: dict[str, tuple[float | int, ...]] = {kind: (0, 0.2, 0.5) for kind in KINDS}
LEVELS["distractors"] = (0, 2, 5)
LEVELS["latency"] = (0, 10_000, 40_000)


def _family(env_id: str) -> str:
    env = gym.make(env_id)
    try:
        return env.reset(seed=0)[1]["task"]["family"]
    finally:
        env.close()


def _success(env_id: str, kind: str, level: float | int) -> float:
    env = gym.make(env_id, **({"noise": {kind: level}} if level else {}))
    agent = make_agent("heuristic")
    wins = sum(run_episode(env, agent, seed).success for seed in range(N_EPISODES))
    env.close()
    return wins / N_EPISODES


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_heuristic_success_falls_monotonically_with_each_kind(env_id: str) -> None:
    if _family(env_id) not in STRATEGIES:
        pytest.skip(f"{env_id}: the heuristic agent has no strategy for this family")
    baseline = _success(env_id, "none", 0)
    rows = []
    for kind, levels in LEVELS.items():
        if not supports(env_id, kind):
            rows.append((kind, levels, None))
            continue
        rows.append((kind, levels, [_success(env_id, kind, level) if level else baseline for level in levels]))
    lines = [f"{env_id}: heuristic success over {N_EPISODES} seeds", "| kind | levels | success |", "|---|---|---|"]
    for kind, levels, success in rows:
        shown = "n/a (not offered by this family)" if success is None else " -> ".join(f"{s:.3f}" for s in success)
        lines.append(f"| {kind} | {' -> '.join(map(str, levels))} | {shown} |")
    print("\n" + "\n".join(lines))
    for kind, levels, success in rows:
        if success is not None:
            rises = [b - a for a, b in zip(success, success[1:]) if b > a]
            assert all(r <= TOLERANCE for r in rises), f"{kind}: success {success} at {levels} is not monotone"
