"""The floor: the least a Gymnasium text env can do, timed beside every measurement.

Every ratio of the results is over this env's step (or reset), measured in the same run,
interleaved with what it is compared with, so a machine's speed and load cancel out.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Callable

import gymnasium as gym

FLOOR_ID = "PeersBench/Floor-v0"
#: Steps per floor episode before an untimed reset (as the best-case AgentRL units do).
STEPS_PER_EPISODE = 8
#: Seeds of the floor's resets cycle over 0..N-1.
N_SEEDS = 100
#: What each timed floor call is, for the results.
WHAT = {"step": "env.step('go')", "reset": "env.reset(seed=s)"}


class FloorEnv(gym.Env):
    """A constant text observation, no state, no info."""

    metadata = {"render_modes": []}
    OBS = "ok"

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Text(64)
        self.action_space = gym.spaces.Text(64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        return self.OBS, {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        return self.OBS, 0.0, False, False, {}


def make_floor() -> gym.Env:
    """``gym.make`` of the floor, registered as the AgentRL ids are (env checker off, no
    TimeLimit), so it carries the same Gymnasium wrapper stack."""
    if FLOOR_ID not in gym.registry:
        gym.register(id=FLOOR_ID, entry_point=FloorEnv, disable_env_checker=True)
    return gym.make(FLOOR_ID)


def step_block() -> Callable[[int], list[int]]:
    """A timer of floor steps: ``block(n)`` -> the ns of `n` timed ``env.step('go')`` calls on
    live episodes (an untimed reset every `STEPS_PER_EPISODE` steps)."""
    env = make_floor()
    seeds = itertools.cycle(range(N_SEEDS))
    step, ns = env.step, time.perf_counter_ns
    left = 0

    def block(n: int) -> list[int]:
        nonlocal left
        wall: list[int] = []
        for _ in range(n):
            if left <= 0:
                env.reset(seed=next(seeds))
                left = STEPS_PER_EPISODE
            t0 = ns()
            step("go")
            t1 = ns()
            wall.append(t1 - t0)
            left -= 1
        return wall

    return block


def reset_block(env: Any = None) -> Callable[[int], list[int]]:
    """A timer of resets: ``block(n)`` -> the ns of `n` timed ``env.reset(seed=s)`` calls, seeds
    cycling over 0..N-1 (default env: the floor)."""
    env = env if env is not None else make_floor()
    seeds = itertools.cycle(range(N_SEEDS))
    reset, ns = env.reset, time.perf_counter_ns

    def block(n: int) -> list[int]:
        wall: list[int] = []
        for _ in range(n):
            s = next(seeds)
            t0 = ns()
            reset(seed=s)
            t1 = ns()
            wall.append(t1 - t0)
        return wall

    return block
