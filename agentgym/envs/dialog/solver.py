"""The dialog family's reference solver: the gold bookings, and the oracle that makes one."""

from __future__ import annotations

from typing import Any

from agentgym.core.render import call_text as call

__all__ = ["Oracle"]


class Oracle:
    """Books the first gold place at the goal's time: the shortest correct dialog (one turn)."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def act(self, obs: str, info: dict[str, Any]) -> str:
        g = self._env.task.gold
        return call("book", item_id=g.items[0], day=g.day, slot=g.slot)
