"""The tool-use family's final state, for goal consistency.

A tool-use assistant commits only through write tools (their calls are judged when made); the
final state is the world's active records (a transfer, a meeting, an incident ...), each judged by
the user as the write that made it (`ToolUseUser.contradictions`, on the record's fields).
"""

from __future__ import annotations

from typing import Any

from agentgym.core.commitments import CommitmentJudge
from agentgym.core.task import SimulatedUser, Task
from agentgym.envs.tooluse.base import World

__all__ = ["final_state", "JUDGE"]

#: Record fields stored under another name than the write's argument that set them.
_ARGUMENT_OF_FIELD = {"duration": "duration_minutes"}


def final_state(task: Task, user: SimulatedUser) -> list[str] | None:
    """The stated details the world's active records break; None when the world holds none."""
    world = task.world
    if not isinstance(world, World):
        return None
    active = [r for r in world.records if r.active]
    if not active:
        return None
    broken: list[str] = []
    for record in active:
        arguments: dict[str, Any] = dict(record.data)
        for field, argument in _ARGUMENT_OF_FIELD.items():
            if field in arguments:
                arguments[argument] = arguments[field]
        for cid in user.contradictions(record.kind, arguments):
            if cid not in broken:
                broken.append(cid)
    return broken


#: The tool-use family's judge (`EnvParts.judge`): no proposals (answers are submitted by tool).
JUDGE = CommitmentJudge(final_state=final_state)
