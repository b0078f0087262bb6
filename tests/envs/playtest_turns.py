"""A kept playtest's turns (`benchmarks/playtests/turns/`), replayed into a fresh env made as
`episodes.json` says it was played: the tests of the users' readings that playtests found wanting
start where the playtest stood.

Turns kept before users heard the outcome from the assistant (agentgym 0.19.0) went on to the next
thing straight after the write that finished a request; where the user now waits to be told, a
report (`REPORT`) is stepped before the next kept turn, as the agent would now have sent one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
from reporting import DONE

import agentgym  # noqa: F401  (registers the ids)

PLAYTESTS = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests"
#: What a kept episode is taken to say where the user now waits to hear that the work is done.
REPORT = DONE


def step_kept(env: Any, action: str) -> Any:
    """Step a kept turn, after a `REPORT` where the user waits for one (the kept turn came after
    the user had gone on, as it did when the turns were played)."""
    if env.unwrapped.awaiting_report:
        env.step(REPORT)
    return env.step(action)


def played(name: str, turns: int) -> tuple[Any, list[str]]:
    """The env of the kept playtest whose turns file is ``turns/<name>``, after its first `turns`
    turns, and all its turns."""
    episode = next(e for e in json.loads((PLAYTESTS / "episodes.json").read_text()) if e["turns"] == f"turns/{name}")
    lines = [ln for ln in (PLAYTESTS / episode["turns"]).read_text().splitlines() if ln.strip()]

    def action(line: str) -> str:  # a .jsonl line is a JSON value; a .txt line a call's JSON or a message
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            return line
        return value if isinstance(value, str) else json.dumps(value)

    actions = [action(ln) for ln in lines]
    domain = {"domain": episode["domain"]} if episode.get("domain") else {}
    env = gym.make(episode["env"], split=episode["split"], difficulty=episode["difficulty"],
                   noise=None if episode["noise"] == "none" else episode["noise"], **domain)
    env.reset(seed=episode["seed"])
    for step in actions[:turns]:
        step_kept(env, step)
    return env, actions


def summary_of(name: str, *, fill_reports: bool = True) -> dict[str, Any]:
    """The episode summary of the kept playtest whose turns file is ``turns/<name>``, played to its
    end, each turn by `step_kept` (`fill_reports`, for turns kept from earlier users) or as it is."""
    env, actions = played(name, 0)
    step = step_kept if fill_reports else (lambda env, action: env.step(action))
    info: dict[str, Any] = {}
    for action in actions:
        *_, terminated, truncated, info = step(env, action)
        if terminated or truncated:
            break
    return info["episode_summary"]


def reply_to(name: str, turn: int) -> tuple[Any, list[str], str]:
    """The kept playtest's env after its turns up to and including turn `turn` (0-based), all its
    turns, and what the user said last in reply to that turn."""
    env, actions = played(name, turn)
    return env, actions, step_kept(env, actions[turn])[4]["messages"][-1]["content"]
