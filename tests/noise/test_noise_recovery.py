"""Recoverability: the oracle, which recovers the obvious way (retry, ask, follow the new goal,
re-query), still solves every task whose injected faults were all recoverable; the faults that
leave no way out are marked ``recoverable: False`` in the log."""

from __future__ import annotations

from collections import Counter

import gymnasium as gym
import pytest
from noise_helpers import LIVE_IDS, supports

from agentgym.agents import make_agent
from agentgym.eval.episode import run_episode

RECOVERABLE_MIX = "tool_failure=0.3,corruption=0.3,ambiguity=0.5,goal_shift=0.5"
N_EPISODES = 300


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_the_oracle_recovers_from_every_recoverable_fault(env_id: str) -> None:
    env = gym.make(env_id, noise=RECOVERABLE_MIX)
    oracle = make_agent("oracle")
    fired: Counter[str] = Counter()
    unrecoverable: Counter[str] = Counter()
    failures = []
    recoverable_episodes = 0
    for seed in range(N_EPISODES):
        result = run_episode(env, oracle, seed)
        log = result.episode["noise"]
        assert all("recoverable" in e["detail"] for e in log), log
        fired.update(e["kind"] for e in log)
        bad = [e for e in log if not e["detail"]["recoverable"]]
        unrecoverable.update(e["kind"] for e in bad)
        if not bad:
            recoverable_episodes += 1
            if not result.success:
                failures.append((seed, result.episode["outcome"], [(e["step"], e["kind"], e["target"]) for e in log]))
    print(f"\n{env_id}: {N_EPISODES} episodes, {recoverable_episodes} with only recoverable faults; "
          f"faults {dict(fired)}, unrecoverable {dict(unrecoverable)}")
    expected = {"tool_failure"} | {k for k in ("ambiguity", "goal_shift") if supports(env_id, k)}
    assert expected <= set(fired), f"the mix should have fired {expected}, fired {dict(fired)}"
    # Each fault alone leaves a turn to recover in, but a long run of them can still use up the
    # budget: such an episode ends truncated, never wrong, and only rarely.
    wrong = [f for f in failures if f[1] != "truncated"]
    assert not wrong, f"{len(wrong)} recoverable episodes failed (seed, outcome, faults): {wrong[:5]}"
    assert len(failures) <= 0.005 * recoverable_episodes, f"{len(failures)} episodes ran out of turns: {failures[:5]}"
    env.close()


def test_faults_with_no_turn_left_are_marked_unrecoverable() -> None:
    """On a one-turn budget nothing can be retried: every call-level fault is unrecoverable."""
    env = gym.make("AgentRL/Dialog-v0", noise="tool_failure=1", max_turns=1)
    oracle = make_agent("oracle")
    result = run_episode(env, oracle, 0)
    (event,) = result.episode["noise"]
    assert event["kind"] == "tool_failure" and event["detail"]["recoverable"] is False
    assert not result.success
