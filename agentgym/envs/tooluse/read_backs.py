"""The looks at what the writes left, per gold kind: a useful read once a write of the plan went
through, and again after each later write, never required.

A careful assistant reads back what it wrote: the meeting on its date (is it booked, and was the
invitation sent?), the incident filed, the expense report and the transfer, the order whose items
it refunded or exchanged. Dialog counts its `list_bookings` so (`agentgym.envs.dialog.tasks`); the
tool-use tasks count their own read-backs the same way (``after_plan_write``: docs/METRICS.md).
Before any write of the plan such a read shows nothing the task wrote, and a repeat with no write
between counts as any read's repeat: padding with read-backs cannot raise efficiency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from agentgym.envs.tooluse.base import Step

__all__ = ["read_backs"]


def _meeting(plan: tuple[Step, ...]) -> list[tuple[str, dict[str, Any]]]:
    dates = dict.fromkeys(s.arguments["date"] for s in plan if s.name == "book_meeting")
    return [("list_meetings", {"date": date}) for date in dates]


def _incident(plan: tuple[Step, ...]) -> list[tuple[str, dict[str, Any]]]:
    return [("list_incidents", {})] if any(s.name == "file_incident" for s in plan) else []


def _reimburse(plan: tuple[Step, ...]) -> list[tuple[str, dict[str, Any]]]:
    employees = dict.fromkeys(s.arguments["employee_id"] for s in plan
                              if s.name in ("file_expense_report", "create_transfer"))
    return [(name, {"employee_id": e}) for e in employees for name in ("list_reports", "list_transfers")]


def _orders(plan: tuple[Step, ...]) -> list[tuple[str, dict[str, Any]]]:
    return [("get_order", {"order_id": o}) for o in dict.fromkeys(s.arguments["order_id"] for s in plan
                                                                  if s.name == "get_order")]


#: Per gold kind, the read-backs its plan's writes call for (a kind that writes nothing has none).
_READ_BACKS: dict[str, Callable[[tuple["Step", ...]], list[tuple[str, dict[str, Any]]]]] = {
    "meeting": _meeting, "incident": _incident, "reimburse": _reimburse, "return": _orders, "exchange": _orders,
    "after_sales": _orders, "bulk_return": _orders,
}


def read_backs(kind: str, plan: tuple[Step, ...]) -> list[dict[str, Any]]:
    """The gold's ``useful_calls`` entries of the read-backs of a plan of `kind` (see the module
    docstring): each marked ``after_plan_write``."""
    of = _READ_BACKS.get(kind)
    return [] if of is None else [{"name": n, "arguments": a, "after_plan_write": True} for n, a in of(plan)]
