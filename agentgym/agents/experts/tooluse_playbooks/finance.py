"""Finance: reimburse an employee's approved expenses of a month, or quote their total.

As the brief says: only the claims whose status the policy names count; each is converted on
its own at its own date's rate; the total is added up to the cent; the transfer goes from the
account in its own currency, with an approval when it is over the limit; a report, when the
user asks for one, covers exactly those claims. The expense list is read twice before anything
is paid (a transfer is final), and a conversion whose amount is not its amount times its rate
is converted again.
"""

from __future__ import annotations

import re
from typing import Any

from agentgym.agents.experts.briefs import figure, year
from agentgym.agents.experts.casefile import CaseFile, Read
from agentgym.agents.experts.tooluse_playbooks.base import Playbook, allowed, find_named, standing
from agentgym.agents.experts.words import has_word
from agentgym.agents.transcript import NAME
from agentgym.agents.turns import Call

__all__ = ["FinancePlaybook"]

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_EMPLOYEE_ID = re.compile(r"\bE-\d+\b")
#: A proper name of one or more capitalised words ("Research", "New York").
_PROPER = r"[A-Z][a-z]+(?: [A-Z][a-z]+)*"


def _cents(amount: float) -> int:
    return round(amount * 100)


def _money(cents: int) -> float:
    return cents / 100


def _converted(call: dict[str, Any]) -> Any:
    """A check of a conversion against itself: its amount is the amount given times its rate,
    rounded to the cent (half up), as the tool says."""
    def valid(result: Any) -> bool:
        try:
            rate_e6 = round(float(result["rate"]) * 1_000_000)
            return _cents(result["amount"]) == (_cents(call["amount"]) * rate_e6 + 500_000) // 1_000_000
        except (KeyError, TypeError, ValueError):
            return False
    return valid


class FinancePlaybook(Playbook):
    """See the module docstring."""

    domain = "finance"
    reads = frozenset({"find_employee", "list_expenses", "convert", "sum_amounts", "list_accounts", "list_reports",
                       "list_transfers", "list_policies"})
    writes = frozenset({"file_expense_report", "withdraw_expense_report", "request_approval", "create_transfer",
                        "submit_answer"})

    def __init__(self, brief: str, request: str, tools: list[dict[str, Any]]) -> None:
        super().__init__(brief, request, tools)
        self.codes = [str(c) for c in allowed(tools, "convert", "to_currency")] or re.findall(
            r"\b[A-Z]{3}\b", re.search(r"Currencies: ([A-Z, ]+)", self.brief).group(1)
            if "Currencies:" in self.brief else "")
        self.limit = figure(self.brief, r"more than ([\d.]+)")
        # The meals of one day share a cap (bar a pre-approved meal), where the brief has one.
        self.meal_cap = figure(self.brief, r"meals expenses of one day count together for at most ([\d.]+) EUR")
        status = re.search(r"status '(\w+)'", self.brief)
        self.status = status.group(1) if status else "approved"
        ident = _EMPLOYEE_ID.search(request)
        self.employee_id = ident.group(0) if ident else None
        name = NAME.search(_EMPLOYEE_ID.sub("", request))
        self.name = name.group(0) if name else ""
        # A department after the name, "Lars Becker (Research)", tells them from a namesake.
        dept = re.search(rf"{re.escape(self.name)} \(({_PROPER})\)", request) if self.name else None
        self.department = dept.group(1) if dept else None
        lowered = request.lower()
        month = next((i + 1 for i, m in enumerate(_MONTHS) if re.search(rf"\b{m}\b", lowered)), None)
        self.month = f"{year(self.brief) or 2025}-{month or 1:02d}"
        self.month_name = _MONTHS[(month or 1) - 1].capitalize()
        self.currency = self._code(request)
        self.quote = has_word(request, "submit", "answer", "figure")
        self.answer = ""  # the figure submitted, as the report tells it
        self.report = not self.quote and has_word(request, "report")

    def _code(self, text: str, other_than: str | None = None) -> str | None:
        """The first currency code in `text` other than `other_than`."""
        for m in re.finditer(r"\b[A-Z]{3}\b", text):
            if m.group(0) in self.codes and m.group(0) != other_than:
                return m.group(0)
        return None

    def hear(self, text: str) -> bool:
        # A code other than the one in hand is the currency the user wants (an answer, a
        # correction, a change of mind: "pay it in USD instead of EUR").
        code = self._code(text, self.currency)
        if code is None:
            return False
        self.currency = code
        return True

    # ------------------------------------------------------------------------------- plan
    def plan(self, case: CaseFile) -> None:
        if self.currency is None:
            case.ask("currency", "Which currency do you need the total in?" if self.quote
                     else "Which currency should I pay it in?")
            if self.currency is None:
                case.ask("currency again", f"Sorry, I still need the currency: {', '.join(self.codes)}?")
                self.stop(case, "I still don't know which currency you need.")
        emp = self.employee_id or self._employee(case)
        expenses_read = Read("list_expenses", {"employee_id": emp, "month": self.month}, copies=2)
        if self.quote:
            (listed,) = case.get(expenses_read)
            accounts = None
        else:
            listed, accounts = case.get(expenses_read, Read("list_accounts"))
        claims = [e for e in listed["expenses"] if e.get("status") == self.status]
        if not claims:
            self.stop(case, f"{self.name or emp} has no {self.status} expenses in {self.month_name}.")
        total = self._total(case, claims)
        ccy = self.currency
        assert ccy is not None
        if self.quote:
            self.confirm(case, f"the {self.status} {self.month_name} expenses of {self.name or emp} add up to "
                               f"{_money(total):.2f} {ccy}; I'll submit that figure.")
            # Submitted once: in a session the user waits to hear it (the episode goes on).
            if not case.made("submit_answer"):
                case.write("submit_answer", {"amount": _money(total), "currency": ccy})
            self.answer = f"{_money(total):.2f} {ccy}"
            return
        self._reimburse(case, emp, claims, total, ccy, accounts)

    def _employee(self, case: CaseFile) -> str:
        found = find_named(case, "find_employee", self.name, ("department", self.department) if self.department else None)
        if found is None:
            self.stop(case, f"I can't find {self.name} in the directory.")
        return found["employee_id"]

    def _total(self, case: CaseFile, claims: list[dict[str, Any]]) -> int:
        """The claims' total in the payout currency, in cents: each foreign claim converted at
        its own date's rate (all in one turn), then added up exactly."""
        ccy = self.currency
        foreign = [e for e in claims if e["currency"] != ccy]
        calls = [{"amount": e["amount"], "from_currency": e["currency"], "to_currency": ccy, "date": e["date"]}
                 for e in foreign]
        # The meals of a day (bar pre-approved ones) count together for at most the cap, where
        # the brief has one: the cap converted at that day's rate too (in the same turn).
        days: dict[str, list[int]] = {}
        for k, e in enumerate(claims):
            if self.meal_cap is not None and e.get("category") == "meals" and e.get("pre_approved") is not True:
                days.setdefault(e["date"], []).append(k)
        caps = [{"amount": self.meal_cap, "from_currency": "EUR", "to_currency": ccy, "date": day}
                for day in days if ccy != "EUR"]
        got = case.get(*(Read("convert", c, valid=_converted(c)) for c in calls + caps))
        converted = iter(got[:len(calls)])
        capped = iter(got[len(calls):])
        parts = [_cents(e["amount"]) if e["currency"] == ccy else _cents(next(converted)["amount"]) for e in claims]
        shared = {k for ks in days.values() for k in ks}
        total = sum(p for k, p in enumerate(parts) if k not in shared)
        for ks in days.values():
            cap = _cents(next(capped)["amount"]) if ccy != "EUR" else _cents(self.meal_cap or 0)
            total += min(sum(parts[k] for k in ks), cap)
        return total

    def _reimburse(self, case: CaseFile, emp: str, claims: list[dict[str, Any]], total: int, ccy: str,
                   accounts: Any) -> None:
        account = next((a["account_id"] for a in accounts.get("accounts", []) if a.get("currency") == ccy), None)
        if account is None:
            self.stop(case, f"There is no company account in {ccy}, so I can't pay in {ccy}.")
        ids = [e["expense_id"] for e in claims]
        report = {"employee_id": emp, "month": self.month, "expense_ids": ids, "total": _money(total),
                  "currency": ccy}
        # A report that is not the one wanted (filed before a change of currency, or on a figure
        # the user says is wrong) is withdrawn before anything else.
        reports = standing(case, "file_expense_report", "withdraw_expense_report", "report_id")
        for args, res in reports:
            if not _same_report(args, report):
                self.agree(case, f"withdraw report {res['report_id']}, which is not the one wanted.")
                case.write("withdraw_expense_report", {"report_id": res["report_id"]})
        approval = total > self.limit * 100 if self.limit is not None else False
        transfers = case.made("create_transfer")
        if not transfers:
            steps = []
            if self.report and not reports:
                who = f"for {self.name or emp} ({emp}) " if self.consent else ""
                steps.append(f"file an expense report {who}for {len(ids)} {self.status} claim"
                             f"{'s' if len(ids) > 1 else ''} ({', '.join(ids)}) totalling {_money(total):.2f} {ccy}")
            steps.append(f"{'get an approval and ' if approval else ''}transfer {_money(total):.2f} {ccy} to "
                         f"{self.name or emp} ({emp}) from account {account}")
            self.confirm(case, f"I'll {', then '.join(steps)}.", steps)
        if self.report and not any(_same_report(args, report) for args, _ in reports):
            case.write("file_expense_report", report, Call("list_reports", {"employee_id": emp}),
                       lambda back: _landed_report(back, report))
        if transfers:
            return  # a transfer is final: made is made
        args: dict[str, Any] = {"from_account": account, "employee_id": emp, "amount": _money(total), "currency": ccy}
        if approval:
            granted = [res for a, res in case.made("request_approval")
                       if (_cents(a.get("amount", 0)), a.get("currency"), a.get("employee_id")) == (total, ccy, emp)]
            if not granted:
                case.write("request_approval", {"amount": _money(total), "currency": ccy, "employee_id": emp})
            args["approval_id"] = granted[-1]["approval_id"] if granted else None
        case.write("create_transfer", args, Call("list_transfers", {"employee_id": emp}),
                   lambda back: _landed_transfer(back, args))

    def summary(self) -> str:
        if self.quote:
            return f"I've submitted the total: {self.answer}." if self.answer else "I've submitted the total."
        return "The transfer is made" + (" and the expense report is filed." if self.report else ".")


def _same_report(args: dict[str, Any], want: dict[str, Any]) -> bool:
    return (args.get("employee_id"), args.get("month"), sorted(args.get("expense_ids", [])),
            _cents(args.get("total", 0)), args.get("currency")) == (
        want["employee_id"], want["month"], sorted(want["expense_ids"]), _cents(want["total"]), want["currency"])


def _landed_report(back: Any, want: dict[str, Any]) -> Any:
    """The report a read-back shows that a failed filing would have made, or None."""
    for r in back.get("reports", []):
        if r.get("status") == "filed" and _same_report({**r, "employee_id": want["employee_id"]}, want):
            return {"report_id": r["report_id"], "status": "filed"}
    return None


def _landed_transfer(back: Any, args: dict[str, Any]) -> Any:
    """The transfer a read-back shows that a failed transfer call would have made, or None."""
    for t in back.get("transfers", []):
        if (t.get("from_account"), _cents(t.get("amount", 0)), t.get("currency")) == (
                args["from_account"], _cents(args["amount"]), args["currency"]):
            return {"transfer_id": t["transfer_id"], "status": "sent"}
    return None
