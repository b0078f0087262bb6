"""The hard tier's tasks are the same, byte for byte, whatever speeds their generation up.

A digest of the first 1,000 hard-tier tasks of each split: the task card, the brief, the goal,
the gold (each plan step with its produced ids, each effect, the traps), each goal shift's gold
as the task plays it, and what every call of the gold plan returns on the task's world (played
in order, so the writes show in later reads). Pinned from the plain generator; a change of the
tier's tasks is a new version, never a side effect of making them faster.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pytest

from agentgym.core.tools import ToolError
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.tasks import generate_task, make_toolkit, shift_gold

#: The digests of seeds 0-999 (hard tier) per split.
DIGESTS = {
    "train": "3cbf232be0314498133ffeb6b2e7cb55",
    "test": "0e30637759000a145c8abfaf7e66ce3a",
}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def _dump(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, default=_plain).encode("utf-8")


def _task_bytes(seed: int, split: str) -> bytes:
    task = generate_task(seed, {"split": split, "difficulty": "hard"})
    spec = load_domains()[task.domain]
    shifts = spec.shifts(task.world, task.goal.job) if spec.shifts is not None else []
    parts: list[Any] = [task.public(), task.brief, task.goal, task.gold, task.max_turns,
                        [(s.detail, s.new, shift_gold(task, s.gold)) for s in shifts]]
    toolkit = make_toolkit(task)
    task.world.consent = None  # the gold's writes as the reference solver makes them (no plan to say yes to)
    for step in task.gold.plan:
        try:
            parts.append(toolkit.invoke(step.name, dict(step.arguments)))
        except ToolError as e:
            parts.append(f"ToolError: {e}")
    return _dump(parts)


def digest(split: str, n: int = 1000) -> str:
    """The digest of the first `n` hard-tier tasks of `split`."""
    h = hashlib.blake2b(digest_size=16)
    for seed in range(n):
        h.update(_task_bytes(seed, split))
    return h.hexdigest()


@pytest.mark.parametrize("split", sorted(DIGESTS))
def test_hard_tier_tasks_are_unchanged(split: str) -> None:
    assert digest(split) == DIGESTS[split]


if __name__ == "__main__":
    for name in sorted(DIGESTS):
        print(name, digest(name))
