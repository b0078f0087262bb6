"""Each domain's consent rule in the hard tier (`agentgym.envs.tooluse.consent`): what a plan must
say of each write, and what the customer asked about, which a plan must give an outcome.

The words are the policy's (``consent`` in each tier's ``data/policies.json`` entry): a write's
target, its kind of outcome and its values; a quote's answer (`submit_answer`) names its total.
"""

from __future__ import annotations

from typing import Any

from agentgym.envs.tooluse.consent import Consent, Need, Rules, Target, Want, date_forms, time_forms

__all__ = ["RULES", "ORDER_OUTCOMES", "plan_reader"]

#: Words that give an item of a return an outcome, a refusal included.
ORDER_OUTCOMES = ("refund", "store credit", "credit", "exchange", "swap", "nothing", "no refund", "can't", "cannot",
                  "not eligible", "final sale", "final-sale", "decline", "unable", "won't", "keep", "not possible")
_CREDIT = ("store credit", "credit")
_PAY = ("transfer", "pay", "reimburs", "payout", "payment")
_BOOK = ("book", "schedul", "set up", "set it up")
_UNDO = ("withdraw", "cancel", "retract")
_TOTAL = ("total", "add", "submit", "come")
#: Words by which a plan's part gives an item no money back: no amount is asked of it.
_NO_MONEY = ("no refund", "not", "can't", "cannot", "can not", "won't", "unable", "decline", "final sale", "final-sale")


def _cents(value: Any) -> int:
    return round(float(value) * 100) if isinstance(value, (int, float)) else -1


def _money(value: Any) -> str:
    return f"{float(value):.2f}" if isinstance(value, (int, float)) else str(value)


# ------------------------------------------------------------------------------------ orders


def _item(world: Any, item_id: Any) -> Any:
    for order in world.orders.values():
        for item in order.items:
            if item.id == item_id:
                return item
    return None


def _orders_want(world: Any, name: str, args: dict[str, Any]) -> Want | None:
    item_id = str(args.get("item_id", ""))
    item = _item(world, item_id)
    names = (item.product, item_id) if item is not None else (item_id,)
    amount = (_cents(args.get("amount")),)
    if name in ("refund_item", "request_refund_approval"):  # an approval is the refund's, covered by its yes
        return Want(names, ("refund",), amount)
    if name == "issue_store_credit":
        return Want(names, _CREDIT, amount)
    if name == "exchange_item":
        return Want(names, ("exchange", "swap"), values=((str(args.get("new_variant", "")),),))
    return None


def _asked_items(world: Any, goal: Any) -> list[Any]:
    """The items the customer asks about and has not said it keeps."""
    # Each id's first item, as `_item` finds it (the last written of each id wins).
    items = {item.id: item for order in reversed(world.orders.values()) for item in reversed(order.items)}
    out = []
    for d in goal.details:
        if d.id.startswith("product:") and "keep" not in d.statement.lower():
            item = items.get(d.id[8:])
            if item is not None:
                out.append(item)
    return out


def _orders_targets(world: Any, goal: Any) -> list[Target]:
    return [Target(f"the {i.product}", (i.product, i.id), ORDER_OUTCOMES,
                   (Need(("refund", "store credit", "credit"), "amount", f"the amount for the {i.product}", _NO_MONEY),))
            for i in _asked_items(world, goal)]


def _orders_anchors(world: Any, goal: Any) -> tuple[str, ...]:
    out: list[str] = []
    for item in _asked_items(world, goal):
        out += (item.product, item.id)
    return tuple(out)


def _orders_describe(world: Any, name: str, args: dict[str, Any]) -> str:
    item = _item(world, args.get("item_id"))
    what = f"the {item.product} ({item.id})" if item is not None else f"item {args.get('item_id')}"
    if name == "refund_item":
        return f"Refund {_money(args.get('amount'))} USD for {what}."
    if name == "issue_store_credit":
        return f"Issue store credit of {_money(args.get('amount'))} USD for {what}."
    if name == "exchange_item":
        return f"Exchange {what} for the {args.get('new_variant')} one."
    return ""


# ----------------------------------------------------------------------------------- finance


def _employee(world: Any, args: dict[str, Any]) -> tuple[str, ...]:
    eid = str(args.get("employee_id", ""))
    name = world.employees.get(eid)
    return (name, eid) if isinstance(name, str) else (eid,)


def _employee_names(world: Any, args: dict[str, Any]) -> tuple[str, ...]:
    """What names the employee in a plan: the full name, the id, and the first name where no one
    of another full name has it ("the report for Kavya": a namesake of the same full name is
    told apart by neither; ToolUse 8705 T7)."""
    names = _employee(world, args)
    if len(names) < 2:
        return names
    first = names[0].split(" ", 1)[0]
    if all(other == names[0] or other.split(" ", 1)[0] != first for other in world.employees.values()):
        return (*names, first)
    return names


def _finance_want(world: Any, name: str, args: dict[str, Any]) -> Want | None:
    if name == "file_expense_report":
        return Want(_employee_names(world, args), ("report",), (_cents(args.get("total")),))
    if name in ("create_transfer", "request_approval"):  # an approval is the transfer's, covered by its yes
        return Want(_employee_names(world, args), _PAY, (_cents(args.get("amount")),))
    if name == "withdraw_expense_report":
        return Want((str(args.get("report_id", "")),), _UNDO)
    if name == "submit_answer" and world.meal_cap is None:  # a quote's answer (a reimbursement has a cap)
        return Want((str(args.get("currency", "")),), _TOTAL, (_cents(args.get("amount")),))
    return None


def _said_yes(goal: Any, detail: str) -> bool:
    """Whether the customer's request asks for the optional write of `detail` (its statement of
    that detail is a yes: "Yes, file an expense report ...")."""
    return any(d.id == detail and d.statement.lower().startswith("yes") for d in goal.details)


def _finance_targets(world: Any, goal: Any) -> list[Target]:
    if world.meal_cap is None:
        return [Target("the total", _TOTAL, needs=(Need(_TOTAL, "amount", "the total"),))]
    report = Target("the expense report", ("report",), needs=(Need(("report",), "amount", "the report's total"),))
    out = [report] if _said_yes(goal, "report") else []
    return [*out, Target("the payment", _PAY, needs=(Need(_PAY, "amount", "the amount you'll pay"),))]


def _finance_describe(world: Any, name: str, args: dict[str, Any]) -> str:
    who = " ".join(dict.fromkeys(_employee(world, args)))
    if name == "file_expense_report":
        return f"File an expense report for {who} ({args.get('month')}) of {_money(args.get('total'))} " \
               f"{args.get('currency')}."
    if name == "create_transfer":
        return f"Pay {who} {_money(args.get('amount'))} {args.get('currency')} by transfer from {args.get('from_account')}."
    if name == "withdraw_expense_report":
        return f"Withdraw report {args.get('report_id')}."
    if name == "submit_answer":
        return f"The total is {_money(args.get('amount'))} {args.get('currency')}; I'll submit it."
    return ""


# ---------------------------------------------------------------------------------- calendar


def _forms(make: Any, value: Any) -> tuple[str, ...]:
    try:
        return make(str(value))
    except (ValueError, IndexError):  # a malformed value: only itself names it
        return (str(value),)


def _meeting(world: Any, meeting_id: Any) -> dict[str, Any] | None:
    return next((r.data for r in world.records if r.kind == "meeting" and r.data.get("meeting_id") == meeting_id), None)


def _calendar_want(world: Any, name: str, args: dict[str, Any]) -> Want | None:
    if name == "book_meeting":
        names = (str(args.get("title", "")), "meeting")
        return Want(names, _BOOK, values=(_forms(date_forms, args.get("date")), _forms(time_forms, args.get("start_utc"))))
    if name in ("send_invitation", "cancel_meeting"):
        mid = str(args.get("meeting_id", ""))
        m = _meeting(world, mid)
        named = (mid, *(_forms(time_forms, m["start"]) if m else ()))
        names = (mid, "meeting", "invitation", *((m["title"],) if m else ()))
        return Want(names, ("invit",) if name == "send_invitation" else ("cancel",), values=(named,))
    return None


def _calendar_targets(world: Any, goal: Any) -> list[Target]:
    out = [Target("the meeting", _BOOK, needs=(Need(_BOOK, "date", "the meeting's date"),
                                               Need(_BOOK, "time", "its start time")))]
    return [*out, Target("the invitation", ("invit",))] if "invit" in goal.request.lower() else out


def _calendar_describe(world: Any, name: str, args: dict[str, Any]) -> str:
    if name == "book_meeting":
        return f"Book the meeting \"{args.get('title')}\" on {args.get('date')} at {args.get('start_utc')} UTC for " \
               f"{args.get('duration_minutes')} minutes."
    if name == "send_invitation":
        return f"Send the invitation of meeting {args.get('meeting_id')}."
    if name == "cancel_meeting":
        return f"Cancel meeting {args.get('meeting_id')}."
    return ""


# --------------------------------------------------------------------------------------- ops


def _severity_forms(severity: str) -> tuple[str, ...]:
    """How a plan may name a severity: "sev2", "sev-2", "sev 2", "severity 2"."""
    level = severity.removeprefix("sev")
    if not level.isdigit():  # a malformed value: only itself names it
        return (severity,)
    return (severity, f"sev-{level}", f"sev {level}", f"severity {level}", f"severity-{level}")


def _version_forms(version: str) -> tuple[str, ...]:
    """How a plan may name a version: "v4.16.7", or its number alone, "4.16.7"."""
    number = version.removeprefix("v")
    return (version, number) if number[:1].isdigit() and number != version else (version,)


def _ops_want(world: Any, name: str, args: dict[str, Any]) -> Want | None:
    if name == "file_incident":
        return Want((str(args.get("root_cause_service", "")),), ("incident",),
                    values=(_severity_forms(str(args.get("severity", ""))),
                            _version_forms(str(args.get("cause_version", "")))))
    if name == "rollback":
        return Want((str(args.get("service", "")),), ("roll", "revert"),
                    values=(_version_forms(str(args.get("to_version", ""))),))
    if name == "withdraw_incident":
        return Want((str(args.get("incident_id", "")),), _UNDO)
    return None


def _ops_targets(world: Any, goal: Any) -> list[Target]:
    incident = Target("the incident", ("incident",), needs=(Need(("incident",), "severity", "the incident's severity"),
                                                            Need(("incident",), "version", "the version it names as the cause")))
    rollback = Target("the rollback", ("roll", "revert"), needs=(Need(("roll", "revert"), "version",
                                                                      "the version you'll roll back to"),))
    return [incident, rollback] if _said_yes(goal, "rollback") else [incident]


def _ops_describe(world: Any, name: str, args: dict[str, Any]) -> str:
    if name == "file_incident":
        return f"File an incident naming {args.get('root_cause_service')} {args.get('cause_version')} as the cause, " \
               f"severity {args.get('severity')}."
    if name == "rollback":
        return f"Roll {args.get('service')} back to {args.get('to_version')}."
    if name == "withdraw_incident":
        return f"Withdraw incident {args.get('incident_id')}."
    return ""


def _none(world: Any, goal: Any) -> tuple[str, ...]:
    return ()


#: The consent rule of each domain's hard tier.
RULES: dict[str, Rules] = {
    "orders": Rules(_orders_want, _orders_targets, _orders_anchors, _orders_describe),
    "finance": Rules(_finance_want, _finance_targets, _none, _finance_describe),
    "calendar": Rules(_calendar_want, _calendar_targets, _none, _calendar_describe),
    "ops": Rules(_ops_want, _ops_targets, _none, _ops_describe),
}


def plan_reader(task: Any) -> Consent | None:
    """A consent that only reads plans (none is ever granted), for a sub-task a session's tier
    asks to read plans as the tier does; None for a domain with no rules of consent."""
    rules = RULES.get(task.domain)
    return Consent(rules, rules.anchors(task.world, task.goal)) if rules is not None else None
