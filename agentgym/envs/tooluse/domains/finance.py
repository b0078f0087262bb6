"""Finance: reimburse an employee's expenses in several currencies, or quote their total.

The chain: find the employee, list their expenses of the month, convert each approved one at
the rate of its own date, add them up, then (reimburse) file a report, find the account in the
payout currency, get an approval over the limit and make the transfer; or (quote) submit the
total through the terminal `submit_answer` tool. Traps: pending and rejected expenses in the list.
`list_transfers` and `list_reports` read back what the writes did; a report filed in error can
be withdrawn, a transfer is final.
"""

from __future__ import annotations

import datetime as _dt
import re
import zlib
from dataclasses import dataclass, replace
from functools import lru_cache
from operator import attrgetter
from typing import Annotated, Any, Literal

from agentgym.core.task import WorldEvent
from agentgym.core.tools import READ, WRITE, Bounds, MaxLen, ToolError, tool
from agentgym.envs.tooluse.base import (
    DAY_ISO,
    YEAR,
    Detail,
    Draws,
    Effect,
    Goal,
    Gold,
    Step,
    ToolUseToolkit,
    World,
    cents,
    compose_brief,
    money,
    parse_day,
)
from agentgym.envs.tooluse.data import domain_split, read_json, str_list, strict
from agentgym.envs.tooluse.domains import DomainSpec, Generated, Shift, solved
from agentgym.envs.tooluse.policies import policy, policy_lines
from agentgym.envs.tooluse.review import ReviewWords, parse_review

__all__ = ["FinanceToolkit", "FinanceWorld", "Expense", "DOMAIN", "vocab"]


@dataclass(frozen=True)
class FinanceVocab:
    split: str
    role: str
    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    currencies: dict[str, float]
    payout: tuple[str, ...]
    categories: tuple[str, ...]
    departments: tuple[str, ...]
    months: tuple[str, ...]
    templates: dict[str, Any]
    review: ReviewWords


@lru_cache(maxsize=None)
def vocab() -> FinanceVocab:
    """The finance vocabulary, parsed strictly from ``data/finance.json``."""
    d = strict(read_json("finance.json"), {"name", "split", "role", "first_names", "last_names", "currencies",
                                           "payout_currencies", "categories", "departments", "months", "templates",
                                           "review"},
               "finance.json")
    t = strict(d["templates"], {"reimburse", "quote", "report", "ccy_inline", "ccy_answer", "ccy_answer_quote"},
               "finance.json.templates")
    cur = d["currencies"]
    if not isinstance(cur, dict) or not all(isinstance(v, (int, float)) and v > 0 for v in cur.values()):
        raise ValueError("finance.json.currencies: expected {code: positive value in EUR}")
    payout = str_list(d["payout_currencies"], "finance.json.payout_currencies")
    if not set(payout) <= set(cur):
        raise ValueError("finance.json.payout_currencies: every payout currency must be a currency")
    return FinanceVocab(
        split=domain_split(d, "finance"), role=d["role"], first_names=str_list(d["first_names"], "first_names", 8),
        last_names=str_list(d["last_names"], "last_names", 8), currencies={k: float(v) for k, v in cur.items()},
        payout=payout, categories=str_list(d["categories"], "categories"),
        departments=str_list(d["departments"], "departments", 2),
        months=str_list(d["months"], "months", 2),
        templates={k: (tuple(v) if isinstance(v, list) else v) for k, v in t.items()},
        review=parse_review(d["review"], "finance.json.review"),
    )


_V = vocab()
Currency = Literal[tuple(_V.currencies)]  # type: ignore[valid-type]
Id = Annotated[str, MaxLen(32)]
Month = Annotated[str, MaxLen(16)]
Amount = Annotated[float, Bounds(ge=0, le=10_000_000)]
#: An amount to add up, negative to subtract (what is left of an allowance once a payment is out).
Term = Annotated[float, Bounds(ge=-10_000_000, le=10_000_000)]
DateStr = Annotated[str, MaxLen(16)]

#: First day number and length of each month of the vocabulary (January = month 1).
_MONTH_START = tuple((_dt.date(YEAR + m // 13, m % 13 or 1, 1) - _dt.date(YEAR, 1, 1)).days for m in range(1, 14))
_MONTH_RE = re.compile(rf"{YEAR}-(0[1-9]|1[0-2])")
_LIMIT = round(float(policy("finance", "approval_over_limit").params["limit"]) * 100)
_STATUS = policy("finance", "reimburse_approved_only").params["status"]
_OTHER_STATUSES = ("pending", "rejected")


def month_key(m: int) -> str:
    """Month number `m` as the ``YYYY-MM`` the tools take."""
    return f"{YEAR}-{m:02d}"


@dataclass(slots=True)
class Expense:
    id: str
    employee_id: str
    day: int
    currency: str
    amount: int  # cents
    category: str
    status: str
    #: Whether a meal was approved in advance, which the hard tier's day cap leaves out (and its
    #: rows show); None, and not shown, elsewhere.
    pre_approved: bool | None = None

    def row(self) -> dict[str, Any]:
        row = {"expense_id": self.id, "date": DAY_ISO[self.day], "amount": money(self.amount),
               "currency": self.currency, "category": self.category, "status": self.status}
        if self.pre_approved is not None:
            row["pre_approved"] = self.pre_approved
        return row


class FinanceWorld(World):
    """Employees, their expense claims, the company accounts, and dated exchange rates."""

    __slots__ = ("salt", "employees", "accounts", "expenses", "approvals", "meal_cap", "departments", "sum_tool",
                 "_values")

    def __init__(self, id_base: int, salt: int, employees: dict[str, str], accounts: dict[str, str],
                 expenses: list[Expense]) -> None:
        super().__init__(id_base)
        self.salt = salt
        self.employees = employees  # id -> full name
        self.accounts = accounts  # id -> currency
        self.expenses = expenses
        self.approvals: dict[str, tuple[int, str, str]] = {}
        #: What the meals of one day (bar pre-approved ones) count for at most together, in EUR
        #: cents: the hard tier's rule (`finance_tier`); None elsewhere.
        self.meal_cap: int | None = None
        #: Whether the toolkit adds amounts up (`sum_amounts`); the hard tier's has no such tool.
        self.sum_tool = True
        #: Each employee's department, which `find_employee` then shows: the hard tier's, where
        #: two employees share a name; empty elsewhere.
        self.departments: dict[str, str] = {}
        #: (currency, day) -> its value in EUR, as `_value` computed it: a function of the salt,
        #: which no tool changes, so a value once computed holds for the whole episode.
        self._values: dict[tuple[str, int], float] = {}

    def _value(self, currency: str, day: int) -> float:
        value = self._values.get((currency, day))
        if value is None:
            value = self._values[currency, day] = self._value_of(currency, day)
        return value

    def _value_of(self, currency: str, day: int) -> float:
        base = _V.currencies[currency]
        if currency == "EUR":
            return base
        # A stable pseudo-random daily wobble of +-3%: crc32 is the same in every process.
        wobble = zlib.crc32(f"{self.salt}|{currency}|{day}".encode()) % 601 - 300
        return base * (1 + wobble / 10_000)

    def rate_e6(self, frm: str, to: str, day: int) -> int:
        """The rate from `frm` to `to` on `day`, in millionths."""
        if frm == to:
            return 1_000_000
        return round(self._value(frm, day) / self._value(to, day) * 1_000_000)

    def convert(self, amount: int, frm: str, to: str, day: int) -> int:
        """`amount` cents of `frm` in cents of `to` at the rate of `day`, rounded half up."""
        return (amount * self.rate_e6(frm, to, day) + 500_000) // 1_000_000

    def expense(self, expense_id: str) -> Expense | None:
        """The expense of an id, or None (a scan: a world has about ten, and only a report reads
        them by id, so no index is kept per episode)."""
        for e in self.expenses:
            if e.id == expense_id:
                return e
        return None

    def month_expenses(self, employee_id: str, month: int) -> list[Expense]:
        lo, hi = _MONTH_START[month - 1], _MONTH_START[month]
        rows = [e for e in self.expenses if e.employee_id == employee_id and lo <= e.day < hi]
        rows.sort(key=_DAY_AND_ID)
        return rows


#: An expense's place in a month's list: its day, then its id.
_DAY_AND_ID = attrgetter("day", "id")


def _month(text: str) -> int:
    if not _MONTH_RE.fullmatch(text):
        raise ToolError(f"month must be YYYY-MM within {YEAR}, got {text!r}")
    return int(text[5:])


class FinanceToolkit(ToolUseToolkit):
    """Expense, exchange-rate, accounting and payment tools over a `FinanceWorld`."""

    world: FinanceWorld
    domain = "finance"

    def _employee(self, employee_id: str) -> str:
        if employee_id not in self.world.employees:
            raise ToolError(f"no employee with id '{employee_id}'")
        return employee_id

    def _made(self, kind: str, employee_id: str) -> list[tuple[dict[str, Any], bool]]:
        """The data of the records of `kind` your writes made for an employee, and whether each
        still stands, oldest first."""
        return [(r.data, r.active) for r in self.world.records if r.kind == kind and r.data["employee_id"] == employee_id]

    @tool(kind=READ)
    def list_accounts(self) -> dict[str, Any]:
        """The company's bank accounts and their currencies."""
        return {"accounts": [{"account_id": a, "currency": c} for a, c in self.world.accounts.items()]}

    @tool(kind=READ)
    def find_employee(self, query: Annotated[str, MaxLen(80)]) -> dict[str, Any]:
        """Find employees whose name contains the given text (case-insensitive).

        Args:
            query: A full or partial name.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("query must not be empty")
        dept = self.world.departments
        hits = [{"employee_id": i, "name": n, **({"department": dept[i]} if i in dept else {})}
                for i, n in self.world.employees.items() if q in n.lower()]
        if not hits:
            raise ToolError(f"no employee matches '{query}'")
        return {"matches": hits}

    @tool(kind=READ)
    def list_expenses(self, employee_id: Id, month: Month) -> dict[str, Any]:
        """An employee's expense claims dated in one month, oldest first, with their status.

        Args:
            employee_id: The employee's id, as find_employee returns it.
            month: The month, as YYYY-MM.
        """
        rows = self.world.month_expenses(self._employee(employee_id), _month(month))
        return {"employee_id": employee_id, "month": month, "expenses": [e.row() for e in rows]}

    @tool(kind=READ)
    def convert(self, amount: Amount, from_currency: Currency, to_currency: Currency, date: DateStr) -> dict[str, Any]:
        """Convert an amount between currencies at the exchange rate of a date, rounded to cents.

        Args:
            amount: The amount to convert, in from_currency (at most 2 decimals).
            from_currency: The currency of the amount.
            to_currency: The currency to convert to.
            date: The date whose rate applies, as YYYY-MM-DD.
        """
        c, day = cents(amount), parse_day(date)
        out = self.world.convert(c, from_currency, to_currency, day)
        rate = self.world.rate_e6(from_currency, to_currency, day) / 1_000_000
        return {"amount": money(out), "currency": to_currency, "rate": rate, "date": date}

    @tool(kind=READ)
    def sum_amounts(self, amounts: Annotated[list[Term], MaxLen(50)]) -> dict[str, Any]:
        """Add up amounts exactly, to the cent (a negative amount subtracts).

        Args:
            amounts: The amounts to add (at most 2 decimals each; negative to subtract).
        """
        return {"total": money(sum(cents(a) for a in amounts)), "count": len(amounts)}

    @tool(kind=WRITE)
    def file_expense_report(self, employee_id: Id, month: Month, expense_ids: Annotated[list[Id], MaxLen(50)],
                            total: Amount, currency: Currency) -> dict[str, Any]:
        """File an expense report covering some of an employee's expenses of a month.

        Args:
            employee_id: The employee's id.
            month: The month the expenses are from, as YYYY-MM.
            expense_ids: The ids of the expenses the report covers.
            total: The report's total, in currency.
            currency: The currency of the total.
        """
        emp, m = self._employee(employee_id), _month(month)
        if not expense_ids:
            raise ToolError("a report must cover at least one expense")
        if len(set(expense_ids)) != len(expense_ids):
            raise ToolError("expense_ids lists an expense twice")
        lo, hi = _MONTH_START[m - 1], _MONTH_START[m]
        statuses = []
        for eid in expense_ids:
            e = self.world.expense(eid)
            if e is None or e.employee_id != emp or not lo <= e.day < hi:
                raise ToolError(f"expense '{eid}' is not one of {emp}'s expenses of {month}")
            statuses.append(e.status)
        bad = [eid for eid, status in zip(expense_ids, statuses) if status != _STATUS]
        if bad:
            raise self.violation("reimburse_approved_only",
                                 f"expenses {', '.join(bad)} are not {_STATUS} and cannot be reported")
        rid = self.world.new_id("R")
        self.world.add("report", {"report_id": rid, "employee_id": emp, "month": month,
                                  "expense_ids": tuple(sorted(expense_ids)), "total": cents(total, "total"),
                                  "currency": currency})
        return {"report_id": rid, "status": "filed"}

    @tool(kind=READ)
    def list_reports(self, employee_id: Id) -> dict[str, Any]:
        """Expense reports you filed for an employee, oldest first.

        Args:
            employee_id: The employee's id.
        """
        emp = self._employee(employee_id)
        return {"employee_id": emp, "reports": [
            {"report_id": d["report_id"], "month": d["month"], "expense_ids": list(d["expense_ids"]),
             "total": money(d["total"]), "currency": d["currency"], "status": "filed" if active else "withdrawn"}
            for d, active in self._made("report", emp)]}

    @tool(kind=WRITE)
    def withdraw_expense_report(self, report_id: Id) -> dict[str, Any]:
        """Withdraw an expense report you filed in error.

        Args:
            report_id: The report's id.
        """
        for r in self.world.records:
            if r.kind == "report" and r.active and r.data["report_id"] == report_id:
                r.active = False
                self.world.events.append(WorldEvent("withdrawn", {"report_id": report_id}))
                return {"report_id": report_id, "status": "withdrawn"}
        raise ToolError(f"no filed report of yours with id '{report_id}'")

    @tool(kind=WRITE)
    def request_approval(self, amount: Amount, currency: Currency, employee_id: Id) -> dict[str, Any]:
        """Get the finance manager's approval for a transfer over the limit.

        Args:
            amount: The amount of the transfer to approve.
            currency: The transfer's currency.
            employee_id: The employee the transfer goes to.
        """
        emp = self._employee(employee_id)
        aid = self.world.new_id("AP")
        self.world.approvals[aid] = (cents(amount), currency, emp)
        return {"approval_id": aid, "amount": amount, "currency": currency, "status": "approved"}

    @tool(kind=WRITE)
    def create_transfer(self, from_account: Id, employee_id: Id, amount: Amount, currency: Currency,
                        approval_id: Id | None = None) -> dict[str, Any]:
        """Transfer money from a company account to an employee. Transfers are final.

        Args:
            from_account: The id of the company account to pay from.
            employee_id: The employee to pay.
            amount: The amount, in currency (at most 2 decimals).
            currency: The transfer's currency.
            approval_id: The approval of a transfer over the limit, from request_approval.
        """
        acc = self.world.accounts.get(from_account)
        if acc is None:
            raise ToolError(f"no account with id '{from_account}'")
        emp, c = self._employee(employee_id), cents(amount)
        if c <= 0:
            raise ToolError("amount must be positive")
        if acc != currency:
            raise self.violation("account_currency", f"account {from_account} holds {acc}, not {currency}")
        if c > _LIMIT:
            appr = self.world.approvals.get(approval_id or "")
            if appr is None or appr[0] < c or appr[1] != currency or appr[2] != emp:
                raise self.violation("approval_over_limit",
                                     f"{amount:.2f} {currency} is over the {_LIMIT / 100:.2f} limit and has no "
                                     "approval covering it")
        tid = self.world.new_id("T")
        self.world.add("transfer", {"transfer_id": tid, "from_account": from_account, "employee_id": emp,
                                    "amount": c, "currency": currency})
        return {"transfer_id": tid, "status": "sent", "amount": money(c), "currency": currency}

    @tool(kind=READ)
    def list_transfers(self, employee_id: Id) -> dict[str, Any]:
        """Transfers you made to an employee, oldest first.

        Args:
            employee_id: The employee's id.
        """
        emp = self._employee(employee_id)
        return {"employee_id": emp, "transfers": [
            {"transfer_id": d["transfer_id"], "from_account": d["from_account"], "amount": money(d["amount"]),
             "currency": d["currency"], "status": "sent"} for d, _ in self._made("transfer", emp)]}

    @tool(kind=WRITE, terminal=True)
    def submit_answer(self, amount: Amount, currency: Currency) -> dict[str, Any]:
        """Submit the answer to a question about an amount; this ends the task.

        Args:
            amount: The amount (at most 2 decimals).
            currency: Its currency.
        """
        self.world.add("answer", {"amount": cents(amount), "currency": currency})
        return {"status": "submitted"}


# ------------------------------------------------------------------------------- generation

#: Plan-length knobs per (kind, difficulty): (by_name, n_approved, n_foreign, report, approval).
def _designs() -> dict[tuple[str, str], list[tuple[int, int, int, int, int]]]:
    ranges = {"easy": (3, 4), "medium": (5, 6), "hard": (7, 8)}
    out: dict[tuple[str, str], list[tuple[int, int, int, int, int]]] = {}
    for kind in ("reimburse", "quote"):
        for diff, (lo, hi) in ranges.items():
            combos = []
            for g in (0, 1):
                for n in range(1, 7):
                    for k in range(n + 1):
                        for r in (0, 1):
                            for a in (0, 1):
                                if kind == "quote" and (r or a):
                                    continue
                                if diff != "easy" and not g:
                                    continue
                                if diff == "easy" and (r or a):
                                    continue
                                if diff == "hard" and kind == "reimburse" and not r:
                                    continue
                                s = int(n >= 2)
                                length = g + 1 + k + s + (r + 1 + a + 1 if kind == "reimburse" else 1)
                                if lo <= length <= hi:
                                    combos.append((g, n, k, r, a))
            out[kind, diff] = combos
    return out


_DESIGNS = _designs()
#: Per difficulty: chance of the pending/rejected trap, how many such expenses, chance the user
#: leaves the currency to be asked, and of a second employee with the same first name.
_KNOBS = {
    "easy": {"trap": 0.1, "decoys": (1, 1), "ask": 0.0, "namesake": 0.0},
    "medium": {"trap": 0.45, "decoys": (1, 2), "ask": 0.25, "namesake": 0.3},
    "hard": {"trap": 0.75, "decoys": (1, 3), "ask": 0.5, "namesake": 0.6},
}


@dataclass(slots=True)
class Request:
    kind: str
    employee_id: str
    name: str
    by_name: bool
    month: int
    currency: str
    report: bool


_CODES = tuple(_V.currencies)


def _make_world(d: Draws, design: tuple[int, int, int, int, int], kind: str, difficulty: str
                ) -> tuple[FinanceWorld, Request, bool]:
    g, n, k, r, a = design
    knobs = _KNOBS[difficulty]
    rnd = d.random
    n_emp = 4 + int(rnd() * 3)
    firsts = d.sample(_V.first_names, n_emp)
    lasts = d.sample(_V.last_names, n_emp)
    if rnd() < knobs["namesake"]:
        firsts[1] = firsts[0]
    emp_base = 100 + int(rnd() * 800)
    emp_ids = [f"E-{emp_base + 7 * i}" for i in range(n_emp)]
    employees = {emp_ids[i]: f"{firsts[i]} {lasts[i]}" for i in range(n_emp)}
    target = emp_ids[0]
    acc_base = 1000 + int(rnd() * 8000)
    accounts = {f"ACC-{acc_base + 13 * i}": c for i, c in enumerate(_V.payout)}
    month = 1 + int(rnd() * len(_V.months))
    currency = d.pick(_V.payout)
    lo, span = _MONTH_START[month - 1], _MONTH_START[month] - _MONTH_START[month - 1]
    limit = _LIMIT / 100
    # The approved claims add up (in the payout currency) to well over the approval limit or
    # well under it, so rates moving a few percent never cross it.
    total = (1.35 + rnd()) * limit if a else (0.15 + 0.6 * rnd()) * limit
    weights = [0.5 + rnd() for _ in range(n)]
    wsum = sum(weights)
    foreign = tuple(c for c in _CODES if c != currency)
    values, cats, base_rate = _V.currencies, _V.categories, _V.currencies[currency]
    exp_base = 1000 + int(rnd() * 7000)
    expenses: list[Expense] = []

    def add(emp: str, day: int, ccy: str, value: float, status: str) -> None:
        amount = max(500, round(value * base_rate / values[ccy] * 100))
        expenses.append(Expense(f"X-{exp_base + len(expenses)}", emp, day, ccy, amount,
                                cats[int(rnd() * len(cats))], status))

    for i in range(n):
        ccy = foreign[int(rnd() * len(foreign))] if i < k else currency
        add(target, lo + int(rnd() * span), ccy, total * weights[i] / wsum, _STATUS)
    trap = rnd() < knobs["trap"]
    if trap:
        lo_n, hi_n = knobs["decoys"]
        for _ in range(lo_n + int(rnd() * (hi_n - lo_n + 1))):
            add(target, lo + int(rnd() * span), _CODES[int(rnd() * len(_CODES))], (0.04 + 0.4 * rnd()) * limit,
                _OTHER_STATUSES[int(rnd() * 2)])
    # A claim of a colleague and one of another month: the world around the task.
    add(emp_ids[1 + int(rnd() * (n_emp - 1))], lo + int(rnd() * span), _CODES[int(rnd() * len(_CODES))],
        (0.05 + 0.5 * rnd()) * limit, _STATUS if rnd() < 0.7 else "pending")
    other_month = month % len(_V.months) + 1
    add(target, _MONTH_START[other_month - 1] + int(rnd() * 20), currency, (0.03 + 0.3 * rnd()) * limit, _STATUS)
    world = FinanceWorld(100 + int(rnd() * 800), int(rnd() * (1 << 30)), employees, accounts, expenses)
    return world, Request(kind, target, employees[target], bool(g), month, currency, bool(r)), trap


def solve(world: FinanceWorld, req: Request) -> Gold:
    """The reference solver: the calls a careful assistant makes, and the effects they leave."""
    plan: list[Step] = []
    if req.by_name:
        plan.append(Step("find_employee", {"query": req.name}))
    month = month_key(req.month)
    plan.append(Step("list_expenses", {"employee_id": req.employee_id, "month": month}))
    approved = [e for e in world.month_expenses(req.employee_id, req.month) if e.status == _STATUS]
    parts: list[int] = []
    for e in approved:
        if e.currency == req.currency:
            parts.append(e.amount)
        else:
            parts.append(world.convert(e.amount, e.currency, req.currency, e.day))
            plan.append(Step("convert", {"amount": money(e.amount), "from_currency": e.currency,
                                         "to_currency": req.currency, "date": DAY_ISO[e.day]}))
    if world.meal_cap is not None:
        parts = _capped(world, req, approved, parts, plan)
    if len(parts) >= 2 and world.sum_tool:
        # Arithmetic, not an effect or a read of the world: an agent that adds the amounts up to
        # the cent itself needs no call (the writes check the total), so the step is optional.
        plan.append(Step("sum_amounts", {"amounts": [money(p) for p in parts]}, optional=True))
    total = sum(parts)
    units = money(total)  # the total in currency units, as the calls and texts give it
    if req.kind == "quote":
        plan.append(Step("submit_answer", {"amount": units, "currency": req.currency}))
        effects = (Effect("answer", "answer", "answer", {"amount": total, "currency": req.currency},
                          f"submit {units:.2f} {req.currency}"),)
        return Gold("quote", tuple(plan), effects)
    effects_list: list[Effect] = []
    ids = [e.id for e in approved]
    if req.report:
        plan.append(Step("file_expense_report", {"employee_id": req.employee_id, "month": month, "expense_ids": ids,
                                                 "total": units, "currency": req.currency},
                         {"report_id": world.predict_id("R")}))
        effects_list.append(Effect("report", "report", "report",
                                   {"employee_id": req.employee_id, "month": month, "expense_ids": tuple(sorted(ids)),
                                    "total": total, "currency": req.currency},
                                   f"expense report of {req.employee_id} for {month}: {', '.join(ids)}, "
                                   f"{units:.2f} {req.currency}"))
    plan.append(Step("list_accounts", {}))
    account = next(a for a, c in world.accounts.items() if c == req.currency)
    args: dict[str, Any] = {"from_account": account, "employee_id": req.employee_id, "amount": units,
                            "currency": req.currency}
    if total > _LIMIT:
        approval = world.predict_id("AP")
        plan.append(Step("request_approval", {"amount": units, "currency": req.currency,
                                              "employee_id": req.employee_id}, {"approval_id": approval}))
        args["approval_id"] = approval
    plan.append(Step("create_transfer", args, {"transfer_id": world.predict_id("T")}))
    effects_list.append(Effect("transfer", "transfer", "transfer",
                               {"from_account": account, "employee_id": req.employee_id, "amount": total,
                                "currency": req.currency},
                               f"transfer of {units:.2f} {req.currency} to {req.employee_id} from {account}"))
    return Gold("reimburse", tuple(plan), tuple(effects_list))


def _capped(world: FinanceWorld, req: Request, approved: list[Expense], parts: list[int], plan: list[Step]
            ) -> list[int]:
    """`parts` (what each approved expense counts for) with the hard tier's day cap applied: the
    meals of a day that were not pre-approved count together for at most the cap converted at
    that day's rate (one part per day, in place of its meals); the cap's conversions join `plan`."""
    assert world.meal_cap is not None
    days: dict[int, list[int]] = {}
    for k, e in enumerate(approved):
        if e.category == "meals" and not e.pre_approved:
            days.setdefault(e.day, []).append(k)
    capped = {k for ks in days.values() for k in ks}
    out = [p for k, p in enumerate(parts) if k not in capped]
    for day, ks in days.items():
        out.append(min(sum(parts[k] for k in ks), world.convert(world.meal_cap, "EUR", req.currency, day)))
        if req.currency != "EUR":
            plan.append(Step("convert", {"amount": money(world.meal_cap), "from_currency": "EUR",
                                         "to_currency": req.currency, "date": DAY_ISO[day]}))
    return out


_BRIEF = compose_brief(
    _V.role,
    "Handle the user's request about employee expenses with the tools, step by step; when the user "
    "asks a question about an amount, answer it with submit_answer.",
    [f"Currencies: {', '.join(_V.currencies)}. Amounts are in currency units with at most 2 decimals; "
     f"dates are YYYY-MM-DD and months YYYY-MM, all in {YEAR}."],
    policy_lines("finance"),
)


_REPORT_SAID = "Yes, file an expense report for those expenses first, then make the transfer."
_NO_REPORT_SAID = "No report needed; just make the transfer."


def generate(d: Draws, difficulty: str) -> Generated:
    """A finance task: the world, the user's request, and the reference solver's gold."""
    return solved(draft(d, difficulty), solve)


def draft(d: Draws, difficulty: str) -> Generated:
    """`generate`'s task but for its gold's plan and effects (left empty): what the hard tier
    starts from, which solves its own world. The solver makes no draw and changes nothing in
    the world, so every draw and everything else is generate's; its gold's kind is the request's."""
    kind = "quote" if d.chance(0.3) else "reimburse"
    design = d.pick(_DESIGNS[kind, difficulty])
    world, req, trap = _make_world(d, design, kind, difficulty)
    ask = d.chance(_KNOBS[difficulty]["ask"])
    t = _V.templates
    name = req.name if req.by_name else f"{req.name} ({req.employee_id})"
    ccy = "" if ask else d.pick(t["ccy_inline"]).format(ccy=req.currency)
    template = d.pick(t[kind])
    text = template.format(name=name, month=_V.months[req.month - 1], ccy=ccy)
    blurred = {} if ask else {"currency": template.format(name=name, month=_V.months[req.month - 1], ccy="")}
    if req.report:
        text += t["report"]
        blurred = {k: v + t["report"] for k, v in blurred.items()}
    answers = t["ccy_answer_quote"] if kind == "quote" else t["ccy_answer"]
    details = (
        Detail("employee", "employee", f"It's for {name}.", "upfront"),
        Detail("month", "month", f"The expenses are from {_V.months[req.month - 1]} {YEAR}.", "upfront"),
        Detail("currency", "currency", d.pick(answers).format(ccy=req.currency), "ask" if ask else "upfront"),
    )
    if kind == "reimburse":  # asked about a report, a user who did not ask for one says no
        details += (Detail("report", "report", _REPORT_SAID if req.report else _NO_REPORT_SAID,
                           "upfront" if req.report else "ask"),)
    traps = ("unapproved_expenses",) if trap else ()
    return Generated(world, Goal(kind, text, details, blurred, job=req), Gold(kind, (), (), traps), _BRIEF)


def shifts(world: FinanceWorld, req: Request) -> list[Shift]:
    """Goal shifts the task offers: the money (or the quoted total) in another payout currency."""
    answers = _V.templates["ccy_answer_quote"] if req.kind == "quote" else _V.templates["ccy_answer"]
    out = []
    for new in _V.payout:
        if new == req.currency:
            continue
        announce = (f"Actually, I need the total in {new} instead of {req.currency}." if req.kind == "quote"
                    else f"Actually, could you pay it in {new} instead of {req.currency}?")
        out.append(Shift("currency", "currency", req.currency, new, announce, answers[0].format(ccy=new),
                         solve(world, replace(req, currency=new))))
    return out


DOMAIN = DomainSpec(
    name="finance",
    split=_V.split,
    toolkit=FinanceToolkit,
    generate=generate,
    description="reimburse expenses in several currencies or quote their total",
    vocabulary={"currency": tuple(_V.currencies), "month": _V.months},
    shifts=shifts,
    undo={"report": ("withdraw_expense_report", "report_id")},
    review=_V.review,
    # The hard tier's parts live in `finance_tier`, which `load_domains` adds to this spec.
)
