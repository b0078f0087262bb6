"""`DialogOracle`: the dialog family's privileged oracle policy. It reads the env's hidden task
(the gold the reference solver, `agentgym.envs.dialog.tasks.satisfying_places`, fixed when the
task was generated) and plays the gold plan from the world state, recovering from noise."""

from __future__ import annotations

from typing import Any

from agentgym.core.gold import call_matches
from agentgym.core.render import to_json
from agentgym.envs.dialog.hard_tier import after_booking_of, flexible_of
from agentgym.envs.dialog.tasks import satisfying_places

__all__ = ["DialogOracle"]


def _calls(*calls: tuple[str, dict[str, Any]]) -> str:
    """One turn of several tool calls, in the OpenAI ``tool_calls`` form the env accepts."""
    if len(calls) == 1:
        name, arguments = calls[0]
        return to_json({"name": name, "arguments": arguments})
    return to_json({"tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls]})


class DialogOracle:
    """Plays the gold plan (`Gold.plan`): search with the goal's filters, check a gold place at
    the goal's time, book it; one call per turn, the shortest dialog a sound agent can have.

    It re-derives its move from the world state every turn, which is the obvious recovery from
    each fault: a failed call is simply made again, a booking the user no longer wants (after a
    goal shift) is cancelled and the new gold is checked and booked, and a
    blurred detail is asked about first, as a careful assistant would. Of the gold places it
    books one whose id a corrupted result misreported, if there is one (it reads the noise log,
    as only a privileged agent can), so it recovers that fault too: the upper bound of recovery.
    """

    def __init__(self, env: Any) -> None:
        self._env = env
        self._done: list[dict[str, Any]] = []

    def _completed(self, step: dict[str, Any]) -> bool:
        return any(call_matches(c["name"], c.get("arguments"), step) for c in self._done)

    def _target(self, items: tuple[str, ...]) -> str:
        log = getattr(self._env, "noise_log", ())
        misreported = [e["detail"]["from"] for e in log if e.get("kind") == "corruption"
                       and isinstance(e.get("detail"), dict) and e["detail"].get("from") in items]
        return misreported[0] if misreported else items[0]

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._done += [c for c in info.get("calls", ()) if c.get("valid") and c.get("error") is None]
        task, user = self._env.task, self._env.user
        g = task.gold
        if task.extra.get("kind") == "itinerary":
            return _plan_move(task)
        search, check, book = g.plan()
        items = g.items
        after = after_booking_of(task)
        if after is not None:
            # The hard tier: the user remembers a need only once a place is booked, so the
            # place to book first is one of those it settles on before (`hard_user`).
            items = satisfying_places(task.world, [c for c in g.constraints if c.id != after], g.day, g.slot)
        active = task.world.active_bookings()
        wrong = [b for b in active if b.item_id not in items or (b.day, b.slot) != (g.day, g.slot)]
        if flexible_of(task) is not None and not wrong:
            # The hard tier: no place meets every need until the user gives one up; it says
            # first what it has not said yet, so the question is asked until it does.
            return "No place meets all of your needs at once. Which one could give way?"
        if wrong:
            # Cancelled alone: booked in the same turn, a cancel that failed would leave two bookings.
            return _calls(*[("cancel_booking", {"booking_id": b.id}) for b in wrong])
        item = self._target(items)
        unclear = user.unclarified()
        if unclear:
            return user.clarifying_question(unclear[0])
        if active:
            return "Your booking is confirmed."
        if not self._completed(search):
            return _calls(("search", _filters(g)))
        # The check has a turn of its own: sent with the booking, a check that failed would be
        # overtaken by the booking and never made again.
        if not self._completed(check):
            return _calls(("check_availability", {"item_id": item, "day": g.day, "slot": g.slot}))
        return _calls(("book", {"item_id": item, "day": g.day, "slot": g.slot}))


def _filters(gold: Any) -> dict[str, Any]:
    """The search filters of the goal's constraints."""
    out: dict[str, Any] = {}
    amenities: list[str] = []
    for c in gold.constraints:
        if c.kind in ("category", "area"):
            out[c.kind] = c.value
        elif c.kind == "price":
            out["max_price"] = c.value
        elif c.kind == "rating":
            out["min_rating"] = c.value
        elif c.kind == "amenity":
            amenities.append(c.value)
    if amenities:
        out["amenities"] = amenities
    return out


def _plan_move(task: Any) -> str:
    """The oracle's move on an itinerary: cancel what is not in the first accepted plan (alone,
    as above), book what is missing (one turn), read the plan to the user until it says yes to
    it (a changed mind changes the gold first), then submit (a moved world changes it again)."""
    g = task.gold
    want = {(item, leg.day, leg.slot) for item, leg in zip(g.accepted[0], g.legs)}
    active = task.world.active_bookings()
    wrong = [b for b in active if (b.item_id, b.day, b.slot) not in want]
    if wrong:
        return _calls(*[("cancel_booking", {"booking_id": b.id}) for b in wrong])
    have = {(b.item_id, b.day, b.slot) for b in active}
    missing = [w for w in sorted(want) if w not in have]
    if missing:
        return _calls(*[("book", {"item_id": i, "day": d, "slot": s}) for i, d, s in missing])
    agreed = task.extra["plan"].agreed
    if agreed is None or sorted(agreed) != sorted(g.accepted[0]):
        by_id = task.world.by_id
        lines = [f"Booking {leg.label}: {by_id[item].name} ({item}), {leg.day} {leg.slot}"
                 for item, leg in zip(g.accepted[0], g.legs)]
        return "Here is the plan: " + "; ".join(lines) + ". Shall I submit this plan?"
    return _calls(("submit_plan", {}))
