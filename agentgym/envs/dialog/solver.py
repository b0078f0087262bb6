"""The dialog family's oracle: plays the gold from the world state, recovering from noise."""

from __future__ import annotations

from typing import Any

from agentgym.core.render import call_text as call

__all__ = ["Oracle"]


class Oracle:
    """Books a gold place at the goal's time: the shortest correct dialog (one turn).

    It re-derives its move from the world state every turn, which is the obvious recovery from
    each fault: a failed call is simply made again, a booking the user no longer wants (after a
    goal shift) is cancelled and the new gold is booked, and a blurred detail is asked about
    first, as a careful assistant would.
    """

    def __init__(self, env: Any) -> None:
        self._env = env

    def act(self, obs: str, info: dict[str, Any]) -> str:
        task, user = self._env.task, self._env.user
        g = task.gold
        active = task.world.active_bookings()
        wrong = [b for b in active if b.item_id not in g.items or (b.day, b.slot) != (g.day, g.slot)]
        if wrong:
            return call("cancel_booking", booking_id=wrong[0].id)
        unclear = user.unclarified()
        if unclear:
            return user.clarifying_question(unclear[0])
        if active:
            return "Your booking is confirmed."
        return call("book", item_id=g.items[0], day=g.day, slot=g.slot)
