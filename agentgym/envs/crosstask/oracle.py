"""`CrossTaskOracle`: the cross-task privileged oracle policy: each sub-task's own family oracle
(`agentgym.families`), on a view of that sub-task."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym import families
from agentgym.core.render import call_text as call

__all__ = ["CrossTaskOracle"]


@dataclass
class _SubEnv:
    """What a family oracle reads of its env: the sub-task and its user."""

    task: Any
    user: Any


class _Checks:
    """The reads of a follow-up's gold plan (the checks its user asks for), played before the
    writes, each until it goes through (an injected failure is retried, as any agent would)."""

    def __init__(self, move: Any) -> None:
        self._reads = [step for step in move.plan() if step["name"] == "check_availability"]
        self._sent: dict[str, Any] | None = None

    def next_read(self, info: dict[str, Any]) -> str | None:
        """The read to play now (the last one again when it failed), or None once all went through."""
        sent, self._sent = self._sent, None
        # The oracle sees the noise log: a read that failed, or whose result came back corrupted,
        # is read again, as a careful agent checks again a result a decision rests on.
        if sent is not None and (
                any(c.get("name") == sent["name"] and c.get("arguments") == sent["arguments"]
                    and c.get("error") is not None for c in info.get("calls", ()))
                or any(e.get("kind") == "corruption" and e.get("target") == sent["name"]
                       for e in info.get("noise", ()))):
            self._reads.insert(0, sent)
        if not self._reads:
            return None
        self._sent = step = self._reads.pop(0)
        return call(step["name"], **step["arguments"])


class _FollowUpOracle:
    """Checks the new time when its user asks, cancels the booking to move, then books the
    same place at the new time."""

    def __init__(self, world: Any, move: Any) -> None:
        self._world, self._move = world, move
        self._checks = _Checks(move)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        read = self._checks.next_read(info)
        if read is not None:
            return read
        m = self._move
        active = self._world.active_bookings()
        wrong = [b for b in active if (b.item_id, b.day, b.slot) != (m.place, m.day, m.slot)]
        if wrong:
            return call("cancel_booking", booking_id=wrong[0].id)
        if active or not m.place:
            return "It's moved." if active else "It's cancelled."
        return call("book", item_id=m.place, day=m.day, slot=m.slot)


class _SeriesOracle:
    """Checks each day of a series come-back, then books each that is still missing
    (`Series.stays`), one a turn."""

    def __init__(self, world: Any, move: Any) -> None:
        self._world, self._move = world, move
        self._checks = _Checks(move)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        read = self._checks.next_read(info)
        if read is not None:
            return read
        have = {(b.item_id, b.day, b.slot) for b in self._world.active_bookings()}
        for place, day, slot in self._move.stays:
            if (place, day, slot) not in have:
                return call("book", item_id=place, day=day, slot=slot)
        return "They're all booked."


class CrossTaskOracle:
    """Plays the active sub-task with its family's oracle; a fresh one per sub-task."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self._policies: dict[int, Any] = {}

    def act(self, obs: str, info: dict[str, Any]) -> str:
        user = self._env.user
        seg = user.active
        if seg is None:
            return "Thank you!"
        policy = self._policies.get(seg.index)
        if policy is None:
            if seg.family == "followup":
                ref = user.session.segments[seg.refers_to]
                kind = _SeriesOracle if hasattr(seg.move, "stays") else _FollowUpOracle
                policy = kind(ref.task.world, seg.move)
            else:
                oracle = families.load(families.get(seg.family).oracle)
                policy = oracle(_SubEnv(seg.task, user.user_of(seg.index)))
            self._policies[seg.index] = policy
        return policy.act(obs, info)
