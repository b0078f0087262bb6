"""Replay every playtest episode kept here on the installed agentgym and print its verdict.

The turns files are the playtesters' own (one turn a line, as `agentgym play --actions` reads
them); `episodes.json` says how each was played. A playtest is a record of what an agent met on
one version: after a change to a user, an episode may go otherwise. This shows which do, so a
change that breaks what a capable agent said can be read against the transcript.

    .venv/bin/python benchmarks/playtests/replay.py

Turns kept before the users heard the outcome from the assistant (0.19.0) went on straight after
the write that finished a request; where a user now waits to be told, a report (`REPORT`) is
stepped before the next kept turn, and after the last one, as the agent would now have said it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.eval.play_command import read_actions

HERE = Path(__file__).parent
#: What a kept episode is taken to say where the user now waits to hear that the work is done.
REPORT = "All done: it's in place as you asked."


def env_kwargs(episode: dict) -> dict:
    """The make kwargs of one kept episode, as `episodes.json` says it was played."""
    kwargs = {"split": episode["split"]}
    if episode["difficulty"]:
        kwargs["difficulty"] = episode["difficulty"]
    if episode.get("domain"):
        kwargs["domain"] = episode["domain"]
    if episode["noise"] != "none":
        kwargs["noise"] = episode["noise"]
    return kwargs


def kept_actions(env: gym.Env, episode: dict) -> Iterator[str | dict]:
    """The kept turns of `episode`, each preceded by `REPORT` where the user of `env` (stepped
    by the caller between them) waits to hear that the work is done; `REPORT` after the last too."""
    for action in [*read_actions(HERE / episode["turns"]), None]:
        if env.unwrapped.awaiting_report:
            yield REPORT
        if action is None:
            return
        yield action


def play_kept(env: gym.Env, episode: dict) -> tuple[str, int]:
    """Reset `env` (made as `env_kwargs` says) to `episode`'s seed and step its kept turns to the
    end: the outcome ("success", "failure" or "open") and the kept turns it took."""
    env.reset(seed=episode["seed"])
    turns = 0
    for action in kept_actions(env, episode):
        turns += action is not REPORT
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return ("success" if info["episode_summary"]["success"] else "failure"), turns
    return "open", turns


def replay(episode: dict) -> tuple[str, int]:
    """The outcome of one kept episode, in a fresh env, and the kept turns it took (`play_kept`)."""
    env = gym.make(episode["env"], **env_kwargs(episode))
    try:
        return play_kept(env, episode)
    finally:
        env.close()


def main() -> int:
    episodes = json.loads((HERE / "episodes.json").read_text())
    changed = 0
    for ep in episodes:
        outcome, turns = replay(ep)
        changed += outcome != ep["played"]
        mark = "" if outcome == ep["played"] else f"   (played: {ep['played']})"
        print(f"{ep['env']:22} seed {ep['seed']} {ep['split']:5} noise {ep['noise']:6} "
              f"{ep['difficulty'] or 'drawn':6} -> {outcome} in {turns} turns{mark}")
    print(f"{len(episodes) - changed} of {len(episodes)} episodes end as they were played")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
