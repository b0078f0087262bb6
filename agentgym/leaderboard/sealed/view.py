"""What the client of a sealed run sees: what an ordinary agent sees, less anything that names the seed.

The harness shows an ordinary agent `agentgym.eval.episode.agent_view` of each info: no noise log
(its details may carry true values) and no end-of-episode summary (it carries the gold). A
sealed client sees that, and also:

- no ``seed`` (with it, anyone could make the episode locally and read its hidden goal);
- the task's ``id`` with the seed's digits replaced by ``sealed`` (a task id is
  ``family/domain/difficulty/seed``): no label of an episode ties it to another of its task;
- a reward of 0 at every step until the run is complete: an agent in the harness never sees
  rewards, and a sealed run's numbers are the board's, published with the records.

Every sealed seed has 19 digits (`agentgym.leaderboard.sealed.seeds.SEED_FLOOR`), so a payload
can be checked for them: `encode` replaces them in any string that still holds them and refuses
to send one that does otherwise (`SealLeak`, a bug of the board's, never sent).
"""

from __future__ import annotations

from typing import Any

from agentgym.eval.episode import agent_view
from agentgym.server.wire import json_bytes

__all__ = ["SealLeak", "SEALED", "WITHHELD_REWARD", "client_info", "reset_view", "step_view", "encode"]

#: The reward a sealed client is told at every step.
WITHHELD_REWARD = 0.0


class SealLeak(RuntimeError):
    """A payload for a sealed client still holds its episode's seed."""


def client_info(info: dict[str, Any]) -> dict[str, Any]:
    """`info` as a sealed client sees it: the agent's view, without the seed (a copy; `info` is untouched)."""
    view = agent_view(info)
    if view is info:
        view = info.copy()
    view.pop("seed", None)
    return view


#: What a seed's digits are replaced by, in a task id and in any other string.
SEALED = "sealed"


def reset_view(obs: str, info: dict[str, Any], *, sealed: dict[str, Any]) -> dict[str, Any]:
    """The payload of a sealed reset: ``{"obs", "info"}`` with ``info["sealed"]`` = `sealed`."""
    view = client_info(info)
    task = view.get("task")
    if isinstance(task, dict) and "id" in task:
        seed = info.get("seed")
        view["task"] = {**task, "id": str(task["id"]).replace(str(seed), SEALED)}
    view["sealed"] = sealed
    return {"obs": obs, "info": view}


def step_view(obs: str, terminated: bool, truncated: bool, info: dict[str, Any]) -> dict[str, Any]:
    """The payload of a sealed step, its reward withheld."""
    return {"obs": obs, "reward": WITHHELD_REWARD, "terminated": bool(terminated), "truncated": bool(truncated),
            "info": client_info(info)}


def _replaced(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _replaced(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v, old, new) for v in value]
    return value


def encode(payload: dict[str, Any], seed: int, token: str = SEALED) -> bytes:
    """The JSON bytes of `payload`, holding no trace of `seed`.

    A string that holds the seed's digits gets `token` in their place (the check is one search
    of the encoded bytes; the walk runs only when it finds them).

    Raises:
        SealLeak: the seed is still there (as a number, or in a key).
    """
    data = json_bytes(payload)
    digits = str(seed).encode("ascii")
    if digits not in data:
        return data
    data = json_bytes(_replaced(payload, str(seed), token))
    if digits in data:
        raise SealLeak("a sealed payload holds its episode's seed outside any string value")
    return data
