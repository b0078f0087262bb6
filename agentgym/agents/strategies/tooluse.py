"""The heuristic's tool-use strategy: parse the request, run the natural chain, commit.

It reads only what any agent sees (the brief, the user's messages, tool results). Per domain it
knows the happy path: which look-ups feed which, the explicit numeric rules the brief states (the
approval limits, the severity thresholds), and how to ask the user for a detail the request
leaves out. It does not read the fine print the traps hide in: it sums every expense listed (not
only the approved ones), books the first free start (without checking the other attendees'
working hours), refunds without checking the return window, and blames a culprit's latest
deploy (not the last one before the onset). So it solves most easy tasks and fewer hard ones.

When the user changes their mind mid-task (a goal shift: "can we make it 45 minutes instead of
60?", "pay it in EUR instead", "I'll keep the lamp after all", "don't roll anything back"), it
takes the change into its plan and plans again: the new chain is replayed against the answers it
already has, so a look-up or a write it made is never sent twice, and only what the change
alters is done anew (a meeting booked at the old length is cancelled first, an expense report
filed in the old currency withdrawn).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Generator

from agentgym.agents.transcript import DATE, EMAIL, FULL_NAME, MONTHS, brief_of, tool_results
from agentgym.core.render import to_json

__all__ = ["ToolUseStrategy"]

Chain = Generator[str, dict[str, Any], None]

_UPSTREAM = re.compile(r"(?:calls to|waiting for|breaker open for) ([a-z]+)|\b([a-z]+) returned \d{3}")


def _call(name: str, arguments: dict[str, Any]) -> str:
    return to_json({"name": name, "arguments": arguments})


def _result(info: dict[str, Any]) -> Any:
    """The first tool result of a step, decoded; None when it was an error or is not JSON."""
    first = next(iter(tool_results(info.get("messages", ()))), None)
    return None if first is None or first.failed else first.data


def _user_text(info: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in info.get("messages", ()) if m.get("role") == "user")


def _number(pattern: str, text: str, default: float) -> float:
    m = re.search(pattern, text)
    return float(m.group(1)) if m else default


#: What the user says when they change one parameter of the job, and the change it makes.
_CHANGES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[str, Any]]], ...] = (
    (re.compile(r"make it (\d+) minutes instead of \d+"), lambda m: ("duration", int(m.group(1)))),
    (re.compile(r"\bin ([A-Z]{3}) instead of [A-Z]{3}\b"), lambda m: ("currency", m.group(1))),
    (re.compile(r"get the ([^.?!]+?) instead of the [^.?!]+? one"), lambda m: ("variant", m.group(1))),
    (re.compile(r"keep the ([^.?!;,]+?) after all"), lambda m: (f"keep:{m.group(1)}", True)),
    (re.compile(r"don't roll anything back"), lambda m: ("rollback", False)),
    (re.compile(r"please roll the culprit back"), lambda m: ("rollback", True)),
)
#: Per domain, a write a change of the job can leave unwanted and how to undo it: (the write, the
#: change's key, the argument it carries, the id its result gives, the tool that undoes it).
_UNDO_ON_CHANGE = {
    "calendar": ("book_meeting", "duration", "duration_minutes", "meeting_id", "cancel_meeting"),
    "finance": ("file_expense_report", "currency", "currency", "report_id", "withdraw_expense_report"),
}
#: What it says when its plan has nothing left to do.
DONE = "I have done what I can for this request."


class ToolUseStrategy:
    """A rule-based tool-use agent; see the module docstring."""

    def __init__(self) -> None:
        self._chain: Chain | None = None
        self._started = False
        self.brief = ""
        self.request = ""
        self._domain = ""
        #: What the user changed since the request (`_CHANGES`): the plan reads these first.
        self.changes: dict[str, Any] = {}
        #: Every action sent and the step that answered it, in order (a re-plan replays them).
        self._log: list[tuple[str, dict[str, Any]]] = []
        self._sent: str | None = None
        #: Actions to send before the chain's own (the undoing of a change's old records).
        self._queue: list[str] = []
        #: The action a replayed chain stopped at, to be sent next.
        self._pending: str | None = None

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self.brief = brief_of(info.get("messages", ()))
        self.request = next((m["content"] for m in info.get("messages", ()) if m["role"] == "user"), "")
        self._domain = info.get("task", {}).get("domain", "")
        self.changes, self._log, self._sent, self._queue, self._pending = {}, [], None, [], None
        self._chain = self._plan()
        self._started = False

    def _plan(self) -> Chain | None:
        make = getattr(self, f"_{self._domain}", None)
        return make() if make is not None else None

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._sent is not None:
            self._log.append((self._sent, info))
        action = self._next(info)
        self._sent = action
        return DONE if action is None else action

    def _next(self, info: dict[str, Any]) -> str | None:
        if self._started and self._changed(_user_text(info)):
            self._queue = self._undo()
            self._pending = self._replay()
        if self._queue:
            return self._queue.pop(0)
        if self._pending is not None:
            action, self._pending = self._pending, None
            return action
        if self._chain is None:
            return None
        try:
            if not self._started:
                self._started = True
                return next(self._chain)
            return self._chain.send(info)
        except StopIteration:
            self._chain = None
            return None

    # ----------------------------------------------------------------------------- goal shifts
    def _changed(self, text: str) -> bool:
        """Take in what a user message changes (`_CHANGES`); True when the plan must change."""
        new = False
        for pattern, change in _CHANGES:
            for m in pattern.finditer(text):
                key, value = change(m)
                if self.changes.get(key) != value:
                    self.changes[key] = value
                    new = True
        return new

    def _replay(self) -> str | None:
        """Plan anew and feed the new chain the answers already had to each action it repeats;
        the first action it has not taken yet (None: nothing left to do)."""
        self._chain, self._started = self._plan(), True
        if self._chain is None:
            return None
        used: dict[str, int] = {}
        try:
            action = next(self._chain)
            while True:
                answers = [i for a, i in self._log if a == action]
                k = used.get(action, 0)
                if k >= len(answers):
                    return action
                used[action] = k + 1
                action = self._chain.send(answers[k])
        except StopIteration:
            self._chain = None
            return None

    def _undo(self) -> list[str]:
        """Calls that undo the records a change made unwanted and a tool can undo: a meeting
        booked at another length, an expense report filed in another currency."""
        undo = _UNDO_ON_CHANGE.get(self._domain)
        if undo is None or self.changes.get(undo[1]) is None:
            return []
        tool, key, arg, id_key, undo_tool = undo
        want = self.changes[key]
        out = []
        for action, info in self._log:
            sent = json.loads(action) if action.startswith("{") else {}
            res = _result(info) if sent.get("name") == tool else None
            if res and sent["arguments"].get(arg) != want:
                call = _call(undo_tool, {id_key: res[id_key]})
                if call not in out and all(a != call for a, _ in self._log):
                    out.append(call)
        return out

    # ----------------------------------------------------------------------------- finance
    def _finance(self) -> Chain:
        text = self.request
        currencies = re.search(r"Currencies: ([A-Z, ]+)\.", self.brief)
        codes = currencies.group(1).split(", ") if currencies else []
        limit = _number(r"more than ([\d.]+)", self.brief, float("inf"))
        year = re.search(r"in (\d{4})", self.brief)
        month_no = next((i + 1 for i, m in enumerate(MONTHS) if m in text.lower()), 1)
        month = f"{year.group(1) if year else '2025'}-{month_no:02d}"
        ccy = self.changes.get("currency") or next((c for c in codes if re.search(rf"\b{c}\b", text)), None)
        if ccy is None:
            info = yield "Which currency should the amount be in?"
            ccy = next((c for c in codes if re.search(rf"\b{c}\b", _user_text(info))), codes[0] if codes else "EUR")
        emp = re.search(r"\b(E-\d+)\b", text)
        if emp is not None:
            emp_id = emp.group(1)
        else:
            name = FULL_NAME.search(text)
            info = yield _call("find_employee", {"query": name.group(1) if name else text.split()[0]})
            res = _result(info)
            if not res:
                return
            exact = [m for m in res["matches"] if name and m["name"] == name.group(1)]
            emp_id = (exact or res["matches"])[0]["employee_id"]
        info = yield _call("list_expenses", {"employee_id": emp_id, "month": month})
        res = _result(info)
        if not res or not res["expenses"]:
            return
        expenses = res["expenses"]  # every claim listed, whatever its status
        amounts = []
        for e in expenses:
            if e["currency"] == ccy:
                amounts.append(e["amount"])
                continue
            info = yield _call("convert", {"amount": e["amount"], "from_currency": e["currency"], "to_currency": ccy,
                                           "date": e["date"]})
            res = _result(info)
            if not res:
                return
            amounts.append(res["amount"])
        total = amounts[0]
        if len(amounts) > 1:
            info = yield _call("sum_amounts", {"amounts": amounts})
            res = _result(info)
            if not res:
                return
            total = res["total"]
        if "submit" in text.lower():
            yield _call("submit_answer", {"amount": total, "currency": ccy})
            return
        if "report" in text.lower():
            info = yield _call("file_expense_report", {"employee_id": emp_id, "month": month,
                                                       "expense_ids": [e["expense_id"] for e in expenses],
                                                       "total": total, "currency": ccy})
            if not _result(info):
                return
        info = yield _call("list_accounts", {})
        res = _result(info)
        if not res:
            return
        account = next((a["account_id"] for a in res["accounts"] if a["currency"] == ccy), None)
        if account is None:
            return
        args: dict[str, Any] = {"from_account": account, "employee_id": emp_id, "amount": total, "currency": ccy}
        if total > limit:
            info = yield _call("request_approval", {"amount": total, "currency": ccy, "employee_id": emp_id})
            res = _result(info)
            if not res:
                return
            args["approval_id"] = res["approval_id"]
        yield _call("create_transfer", args)

    # ----------------------------------------------------------------------------- calendar
    def _calendar(self) -> Chain:
        text = self.request
        me = re.search(r"person id (P-\d+)", self.brief)
        title = re.search(r'"([^"]+)"', text)
        names = FULL_NAME.findall(re.sub(r'"[^"]*"', "", text))
        date = DATE.search(text)
        minutes = re.search(r"(\d+)-minute", text)
        if minutes is None and "duration" not in self.changes:
            info = yield "How long should the meeting be?"
            minutes = re.search(r"(\d+) minutes", _user_text(info))
        duration = self.changes.get("duration") or (int(minutes.group(1)) if minutes else 30)
        ids = []
        for name in names:
            info = yield _call("find_person", {"query": name})
            res = _result(info)
            if not res:
                return
            exact = [m for m in res["matches"] if m["name"] == name]
            ids.append((exact or res["matches"])[0]["person_id"])
        pids = [me.group(1) if me else "", *ids]
        day = date.group(0) if date else ""
        info = yield _call("get_free_slots", {"person_ids": pids, "date": day, "duration_minutes": duration})
        res = _result(info)
        if not res or not res["free_starts_utc"]:
            return
        info = yield _call("book_meeting", {"title": title.group(1) if title else "Meeting", "attendee_ids": pids,
                                            "date": day, "start_utc": res["free_starts_utc"][0],
                                            "duration_minutes": duration})
        res = _result(info)
        if not res:
            return
        yield _call("send_invitation", {"meeting_id": res["meeting_id"]})

    # ----------------------------------------------------------------------------- orders
    def _orders(self) -> Chain:
        text = self.request
        limit = _number(r"more than ([\d.]+) USD", self.brief, float("inf"))
        order_id = re.search(r"\b(O-\d+)\b", text)
        placed = DATE.search(text)
        if order_id is None:
            email = EMAIL.search(text)
            if email is None:
                info = yield "Could you tell me the email address of your account?"
                email = EMAIL.search(_user_text(info))
            info = yield _call("find_customer", {"email": email.group(0).rstrip(".") if email else ""})
            res = _result(info)
            if not res:
                return
            info = yield _call("list_orders", {"customer_id": res["customer_id"]})
            res = _result(info)
            if not res:
                return
            lowered = text.lower()
            match = [o for o in res["orders"] if placed and o["placed_on"] == placed.group(0)] or [
                o for o in res["orders"] if any(p in lowered for p in o["products"])]
            if not match:
                return
            oid = match[0]["order_id"]
        else:
            oid = order_id.group(1)
        info = yield _call("get_order", {"order_id": oid})
        order = _result(info)
        if not order:
            return
        sentences = re.split(r"(?<=[.?!])\s+", text)
        wanted = []
        for item in order["items"]:
            said = [s for s in sentences if item["product"] in s]
            if said and not self.changes.get(f"keep:{item['product']}"):
                wanted.append((item, said[0]))
        if len(wanted) == 1:  # one item: the whole request is about it
            wanted = [(wanted[0][0], text)]
        seen = set()
        for item, _ in wanted:
            if item["category"] not in seen:
                seen.add(item["category"])
                info = yield _call("get_return_policy", {"category": item["category"]})
        for item, sentence in wanted:
            base = {"order_id": oid, "item_id": item["item_id"]}
            if "swap" in sentence or "exchange" in sentence:
                variant = (re.search(r"for the (.+?) (?:variant|one)\b", sentence)
                           or re.search(r"for ([^.?]+)[.?]", sentence))
                if variant is None:
                    return
                v = variant.group(1)
                other = self.changes.get("variant", "")
                if other.endswith(" " + item["product"]):
                    v = other[: -len(item["product"]) - 1]
                info = yield _call("check_stock", {"product": item["product"], "variant": v})
                res = _result(info)
                if not res or not res["in_stock"]:
                    return
                info = yield _call("exchange_item", {**base, "new_variant": v})
                continue
            args = {**base, "amount": item["price"]}
            if item["price"] > limit:
                info = yield _call("request_refund_approval", dict(args))
                res = _result(info)
                if not res:
                    return
                args["approval_id"] = res["approval_id"]
            info = yield _call("refund_item", args)

    # ----------------------------------------------------------------------------- ops
    def _ops(self) -> Chain:
        text = self.request
        sev1 = _number(r"sev1 at (\d+)%", self.brief, 25)
        sev2 = _number(r"sev2 at (\d+)%", self.brief, 5)
        named = re.search(r"\bon ([a-z]+)\b|the ([a-z]+) alert", text)
        if named:
            service = named.group(1) or named.group(2)
        else:
            info = yield _call("list_alerts", {})
            res = _result(info)
            alerts = [a for a in (res or {}).get("alerts", []) if a["metric"] == "error_rate_pct"]
            if not alerts:
                return
            service = alerts[0]["service"]
        symptom = service
        sev = re.search(r"\b(sev[123])\b", text)
        if sev:
            severity = sev.group(1)
        else:
            info = yield _call("get_metrics", {"service": service})
            res = _result(info)
            if not res:
                return
            rate = res.get("error_rate_pct", 0.0)  # the hard tier's metrics give counts, which it does not read
            severity = "sev1" if rate >= sev1 else "sev2" if rate >= sev2 else "sev3"
        for _ in range(8):
            info = yield _call("search_logs", {"service": service})
            res = _result(info)
            if not res:
                return
            blamed = [m.group(1) or m.group(2) for line in res["lines"] if (m := _UPSTREAM.search(line))]
            if not blamed:
                break
            service = blamed[0]
        info = yield _call("get_deploys", {"service": service})
        res = _result(info)
        if not res or len(res["deploys"]) < 2:
            return
        cause, previous = res["deploys"][-1]["version"], res["deploys"][-2]["version"]
        info = yield _call("file_incident", {"root_cause_service": service, "cause_version": cause,
                                             "severity": severity,
                                             "summary": f"{service} {cause} caused errors on {symptom}"})
        res = _result(info)
        if not res or not self.changes.get("rollback", "roll" in text.lower()):
            return
        yield _call("rollback", {"service": service, "to_version": previous, "incident_id": res["incident_id"]})
