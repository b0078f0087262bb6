"""`outer_step_limit`: the TimeLimit wrappers resetting an env, and only those around it."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.wrappers import OrderEnforcing, TimeLimit

from agentgym.core.spaces import UnicodeText
from agentgym.core.time_limit import outer_step_limit


class Probe(gym.Env[str, str]):
    """Records, as it resets, the step limit around itself and around `other`."""

    metadata = {"render_modes": []}

    def __init__(self, other: gym.Env | None = None) -> None:
        self.observation_space = UnicodeText(8)
        self.action_space = UnicodeText(8)
        self.other = other
        self.seen: tuple[Any, Any] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        self.seen = (outer_step_limit(self), None if self.other is None else outer_step_limit(self.other))
        if self.other is not None:
            self.other.reset(seed=seed)
        return "", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        return "", 0.0, False, False, {}


def test_no_time_limit_no_limit() -> None:
    probe = Probe()
    probe.reset()
    assert probe.seen == (None, None)
    OrderEnforcing(probe).reset()
    assert probe.seen == (None, None)


def test_the_tightest_time_limit_around_the_env_counts_through_other_wrappers() -> None:
    probe = Probe()
    TimeLimit(OrderEnforcing(TimeLimit(probe, 7)), 5).reset()
    assert probe.seen == (5, None)
    TimeLimit(TimeLimit(probe, 3), 9).reset(seed=1)
    assert probe.seen == (3, None)


def test_a_time_limit_around_another_env_does_not_count() -> None:
    inner = Probe()
    outer = Probe(other=inner)
    TimeLimit(outer, 4).reset()
    assert outer.seen == (4, None)  # the limit is outer's; inner, reset by outer, has none
    assert inner.seen == (None, None)
