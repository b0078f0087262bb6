"""Speed of `reset`, a message step and a read-only tool step, for every live AgentRL/* id.

Each benchmark is parametrised over the registry (remote ids excluded) and over the noise presets
(off, and ``medium`` once ``gym.make(id, noise=...)`` accepts it). Setup (untimed) resets the env
whenever needed, so every timed step runs on a live episode, and none ends it (without noise;
with noise a few may, e.g. on a simulated-time budget: see MAX_ENDED_SHARE).

    .venv/bin/pytest benchmarks --benchmark-only
    .venv/bin/python benchmarks/report.py        # the same, plus benchmarks/RESULTS-env.md
"""

from __future__ import annotations

import itertools

from envbench import MAX_ENDED_SHARE, MESSAGE, N_SEEDS, ROUNDS, WARMUP_ROUNDS, StepDriver, choose_tool_action


def _check_ended(driver: StepDriver, noise: str | None, what: str) -> None:
    """No timed step may end an episode without noise; with noise (time budget, faults), at most 5%."""
    allowed = 0 if noise is None else MAX_ENDED_SHARE * driver.steps
    assert driver.ended <= allowed, f"{driver.ended} of {driver.steps} timed {what} steps ended their episode"


def _label(benchmark, env_id: str, noise: str | None, operation: str, **extra) -> None:
    benchmark.group = f"{env_id} noise={noise or 'off'}"
    benchmark.extra_info.update({"env_id": env_id, "noise": noise or "off", "operation": operation, **extra})


def test_reset(benchmark, env, env_id, noise):
    """``env.reset(seed=s)`` with s cycling over N_SEEDS fixed seeds."""
    _label(benchmark, env_id, noise, "reset", seeds=N_SEEDS)
    seeds = itertools.cycle(range(N_SEEDS))

    def setup():
        return (), {"seed": next(seeds)}

    obs, info = benchmark.pedantic(env.reset, setup=setup, rounds=ROUNDS, warmup_rounds=WARMUP_ROUNDS,
                                   iterations=1)
    assert isinstance(obs, str) and info["turn"] == 0


def test_step_message(benchmark, env, env_id, noise):
    """``env.step(MESSAGE)``: a plain assistant message, answered by the simulated user."""
    _label(benchmark, env_id, noise, "step:message", action=MESSAGE)
    driver = StepDriver(env)
    benchmark.pedantic(driver.timed_step(MESSAGE), setup=driver.setup, rounds=ROUNDS,
                       warmup_rounds=WARMUP_ROUNDS, iterations=1)
    driver.finish()
    _check_ended(driver, noise, "message")
    benchmark.extra_info.update({"episodes": driver.resets, "steps": driver.steps, "ended": driver.ended})


def test_step_tool(benchmark, env, env_id, noise):
    """``env.step(<valid read-only tool call>)``; the call is chosen per env (see
    `envbench.choose_tool_action`)."""
    driver = StepDriver(env)
    driver.reset()
    action, how = choose_tool_action(env, driver.obs, driver.info)
    # One untimed probe: the call must be accepted (valid) and must not end the episode.
    _obs, _r, terminated, truncated, info = env.step(action)
    assert info["calls"] and all(c["valid"] for c in info["calls"]), (action, info["calls"])
    assert not (terminated or truncated), f"{action} ended the episode"
    driver.done = True  # start the timed part from a fresh episode
    _label(benchmark, env_id, noise, "step:tool", action=action, chosen_by=how)
    benchmark.pedantic(driver.timed_step(action), setup=driver.setup, rounds=ROUNDS,
                       warmup_rounds=WARMUP_ROUNDS, iterations=1)
    driver.finish()
    _check_ended(driver, noise, "tool")
    assert all(c["valid"] for c in driver.last_info["calls"]), driver.last_info["calls"]
    benchmark.extra_info.update({"episodes": driver.resets, "steps": driver.steps, "ended": driver.ended})
