"""Instructions per best-case step unit, counted with cachegrind (the method of RESULTS-steps.md).

Two modes, run with the checkout under test on ``PYTHONPATH`` (this file's own directory supplies
``envbench``):

``plan ID NOISE OP EPISODES FILE``
    Natively: the seeds, the action and the number of steps of each episode of a best-case unit
    (``perf.subjects.step_unit_agentrl``'s rules: the message or the episode's read-only tool call,
    at most ``STEPS_PER_EPISODE`` steps and never one that ends the episode), written to FILE.
``run FILE STEPS``
    Replays FILE's episodes once with their steps (warming), then again: every reset, and every
    planned step when STEPS is 1. Run it under
    ``valgrind --tool=cachegrind`` with STEPS 1 and 0: the difference of the two counts over the
    number of planned steps is the instructions of one step.

``record ID NOISE AGENT EPISODES FILE``
    Natively: real episodes, the actions an agent (``heuristic``, ``expert``, ``lm-mix``) plays
    on seeds 0..EPISODES-1, written to FILE; ``run`` replays each episode's actions in turn.

``cpu FILE ROUNDS`` times the same steps in CPU time (``thread_time_ns``), printing each
round's median in ns; `compare` interleaves two checkouts' processes.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402
from envbench import MESSAGE, STEPS_PER_EPISODE, choose_tool_action  # noqa: E402

import agentgym  # noqa: E402,F401


def make(env_id: str, noise: str) -> gym.Env:
    return gym.make(env_id) if noise == "off" else gym.make(env_id, noise=noise)


def plan(env_id: str, noise: str, op: str, episodes: int, out: str) -> None:
    env, probe = make(env_id, noise), make(env_id, noise)
    rows = []
    seed = 0
    while len(rows) < episodes:
        obs, info = env.reset(seed=seed)
        action = MESSAGE if op == "message" else choose_tool_action(env, obs, info)[0]
        probe.reset(seed=seed)
        allowed = STEPS_PER_EPISODE
        for k in range(STEPS_PER_EPISODE):
            o = probe.step(action)
            if o[2] or o[3]:
                allowed = k
                break
        if allowed:
            rows.append({"seed": seed, "action": action, "steps": allowed})
        seed += 1
    Path(out).write_text(json.dumps({"id": env_id, "noise": noise, "op": op, "episodes": rows}))


def record(env_id: str, noise: str, agent_name: str, episodes: int, out: str) -> None:
    from perf.episodes import make_player

    from agentgym.eval.episode import run_episode

    env, agent = make(env_id, noise), make_player(agent_name)
    rows = []
    for seed in range(episodes):
        actions = list(run_episode(env, agent, seed).actions)
        rows.append({"seed": seed, "actions": actions, "steps": len(actions)})
    Path(out).write_text(json.dumps({"id": env_id, "noise": noise, "op": agent_name, "episodes": rows}))


def _actions(ep: dict) -> list:
    """The episode's actions: its recorded ones, or its one action `steps` times."""
    return ep["actions"] if "actions" in ep else [ep["action"]] * ep["steps"]


def run(path: str, with_steps: bool) -> None:
    p = json.loads(Path(path).read_text())
    env = make(p["id"], p["noise"])
    # One untimed pass first, steps included, in both runs: lazy imports and the per-domain
    # tables (compiled once per process) count in neither.
    for ep in p["episodes"]:
        env.reset(seed=ep["seed"])
        for action in _actions(ep):
            env.step(action)
    n = 0
    for ep in p["episodes"]:
        env.reset(seed=ep["seed"])
        if with_steps:
            for action in _actions(ep):
                env.step(action)
                n += 1
    print(f"steps {n}")


def cpu(path: str, rounds: int) -> None:
    p = json.loads(Path(path).read_text())
    env = make(p["id"], p["noise"])
    step, tt = env.step, time.thread_time_ns
    for r in range(rounds + 1):
        times = []
        for ep in p["episodes"]:
            env.reset(seed=ep["seed"])
            action = ep["action"]
            for _ in range(ep["steps"]):
                t0 = tt()
                step(action)
                times.append(tt() - t0)
        if r:
            print(statistics.median(times), flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "plan":
        plan(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    elif mode == "record":
        record(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    elif mode == "run":
        run(sys.argv[2], sys.argv[3] == "1")
    elif mode == "cpu":
        cpu(sys.argv[2], int(sys.argv[3]))
