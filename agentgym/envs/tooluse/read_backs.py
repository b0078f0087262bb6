"""The looks at what a plan's writes left: a useful read once a write of the plan went through,
and again after each later write, never required.

A careful assistant reads back what it wrote: the meeting on its date (is it booked, and was the
invitation sent?), the incident filed and the deploy history of the service rolled back, the expense
report and the transfer, the order whose items it refunded or exchanged. Dialog counts its
`list_bookings` so (`agentgym.envs.dialog.tasks`); the tool-use tasks count their own read-backs
the same way (``after_plan_write``: docs/METRICS.md). A repeat with no write between counts as
any read's repeat: padding with read-backs cannot raise efficiency. Before any write of the plan
such a read shows nothing the task wrote, but the lists a write would add to (the meetings on the
date, the incidents, the employee's reports and transfers) show whether the work was done
already: a careful assistant looks once before it books, files or pays (``before_plan_write``:
useful where a write of the plan follows).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

__all__ = ["read_backs"]


class _PlanStep(Protocol):
    """A gold plan's step as read here (`agentgym.envs.tooluse.base.Step`, which imports this
    module: a protocol, not an import, so the two import no circle)."""

    name: str
    arguments: dict[str, Any]


def _meetings(plan: Sequence[_PlanStep]) -> list[tuple[str, dict[str, Any]]]:
    dates = dict.fromkeys(s.arguments["date"] for s in plan if s.name == "book_meeting")
    return [("list_meetings", {"date": date}) for date in dates]


def _incidents(plan: Sequence[_PlanStep]) -> list[tuple[str, dict[str, Any]]]:
    filed = [("list_incidents", {})] if any(s.name == "file_incident" for s in plan) else []
    # A rollback shows in the service's deploy history, the one read of it.
    return filed + [("get_deploys", {"service": s}) for s in dict.fromkeys(s.arguments["service"] for s in plan
                                                                          if s.name == "rollback")]


def _payments(plan: Sequence[_PlanStep]) -> list[tuple[str, dict[str, Any]]]:
    employees = dict.fromkeys(s.arguments["employee_id"] for s in plan
                              if s.name in ("file_expense_report", "create_transfer"))
    return [(name, {"employee_id": e}) for e in employees for name in ("list_reports", "list_transfers")]


#: The writes that change an order's items (what `get_order` shows of each item afterwards).
_ORDER_WRITES = frozenset({"refund_item", "issue_store_credit", "exchange_item"})


def _orders(plan: Sequence[_PlanStep]) -> list[tuple[str, dict[str, Any]]]:
    if not any(s.name in _ORDER_WRITES for s in plan):
        return []
    return [("get_order", {"order_id": o}) for o in dict.fromkeys(s.arguments["order_id"] for s in plan
                                                                  if s.name == "get_order")]


#: The read-backs that also guard against doing the work twice: a read of them before the first
#: write of the plan is useful too (the rest are the plan's own reads before its writes).
_GUARDS = frozenset({"list_meetings", "list_incidents", "list_reports", "list_transfers"})


def read_backs(plan: Sequence[_PlanStep]) -> list[dict[str, Any]]:
    """The gold's ``useful_calls`` entries of the read-backs a plan's writes call for (see the
    module docstring), each marked ``after_plan_write``, the guards ``before_plan_write`` too;
    read off the plan's own steps, so a combined job ("exchange+return") or a plan a goal shift
    rebuilt has them too."""
    return [{"name": n, "arguments": a, "after_plan_write": True, **({"before_plan_write": True} if n in _GUARDS else {})}
            for of in (_meetings, _incidents, _payments, _orders) for n, a in of(plan)]
