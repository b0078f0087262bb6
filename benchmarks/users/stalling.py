"""Stalling earns nothing: an agent that stalls for the first half of its turn budget and then
plays as before must gain at most 1 point of success over playing at once.

    .venv/bin/python benchmarks/users/stalling.py [--episodes 200] [--env AgentRL/Dialog-v0] [--json FILE]

Each staller sends one kind of message for the first half of the episode's turn budget (filler,
an open question asked again and again, open questions in turn, small talk), then hands every
user message it has seen to a fresh heuristic, which plays on. The baseline is the heuristic
playing at once. Per split and difficulty (seeds 0..N-1, noise off), it prints the success of
each and the gap in points; it exits 1 when a staller gains more than `MAX_GAIN` points.

A user whose late needs arrive only at a fixed turn rewards stalling (an agent that waits hears
them before it commits); one whose late needs arrive at the first commitment at the latest,
and who tires of questions it already answered, does not.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents.base import Agent
from agentgym.agents.heuristic import HeuristicAgent
from agentgym.eval.episode import run_episode

#: The most points of success a staller may gain over the heuristic playing at once.
MAX_GAIN = 1.0
STALLERS: dict[str, tuple[str, ...]] = {
    "filler": ("Let me look into that for you.",),
    "open-again": ("Is there anything else I should know?",),
    "open-varied": ("Anything else?", "Tell me more about what you have in mind.", "What else matters to you?",
                    "Is there something you haven't mentioned yet?"),
    "small-talk": ("How's your day going?", "Lovely weather today, isn't it?"),
}


class Staller(Agent):
    """Sends `lines` in turn for the first half of the turn budget, then plays the heuristic,
    handing it everything the user said so far as if said at once."""

    name = "staller"

    def __init__(self, lines: tuple[str, ...]) -> None:
        self.lines = lines

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._first = (obs, info)
        self._seen = list(info.get("messages", ()))
        self._turn = 0
        self._half = int(info.get("max_turns", 20)) // 2
        self._inner: HeuristicAgent | None = None

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._turn += 1
        said = [m for m in info.get("messages", ()) if m.get("role") == "user"]
        if self._inner is None:
            self._seen += said
            if self._turn <= self._half:
                return self.lines[(self._turn - 1) % len(self.lines)]
            obs0, info0 = self._first
            self._inner = HeuristicAgent()
            self._inner.reset(obs0, {**info0, "messages": self._seen})
            return self._inner.act(obs, {**info, "messages": []})
        return self._inner.act(obs, info)


def _success(env_id: str, split: str, difficulty: str, make: Any, n: int) -> float:
    env = gym.make(env_id, split=split, difficulty=difficulty)
    wins = sum(bool(run_episode(env, make(), seed).episode["success"]) for seed in range(n))
    env.close()
    return 100.0 * wins / n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=200, help="seeds per split and difficulty (default: 200)")
    p.add_argument("--env", default="AgentRL/Dialog-v0", help="the env id (default: AgentRL/Dialog-v0)")
    p.add_argument("--json", default=None, metavar="FILE", help="write every figure as JSON here")
    args = p.parse_args(argv)
    rows = []
    worst = -100.0
    for split in ("train", "test"):
        for difficulty in ("easy", "medium", "hard"):
            base = _success(args.env, split, difficulty, HeuristicAgent, args.episodes)
            row: dict[str, Any] = {"split": split, "difficulty": difficulty, "heuristic": base}
            for name, lines in STALLERS.items():
                got = _success(args.env, split, difficulty, lambda lines=lines: Staller(lines), args.episodes)
                row[name] = got
                worst = max(worst, got - base)
            rows.append(row)
            print(f"{split:5s} {difficulty:6s} heuristic {base:5.1f}% | " + " | ".join(
                f"{name} {row[name]:5.1f}% ({row[name] - base:+.1f})" for name in STALLERS), flush=True)
    print(f"largest gain of a staller: {worst:+.1f} points (at most {MAX_GAIN:+.1f} allowed)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"env": args.env, "episodes": args.episodes, "max_gain": MAX_GAIN, "rows": rows}, f, indent=1)
    return 0 if worst <= MAX_GAIN else 1


if __name__ == "__main__":
    sys.exit(main())
