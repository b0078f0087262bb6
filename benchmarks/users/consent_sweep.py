"""Does the hard tier's customer read other assistants' plans as it reads the expert's?

    .venv/bin/python benchmarks/users/consent_sweep.py [--seeds 40] [--variants 500] [--show 3] [--json FILE]

For each domain of the ToolUse hard tier (orders, finance, calendar on train; ops on test), dev
seeds 0..N-1 (never the playtest seeds 5000-5999), the `expert` plays up to its plan message
(the one that asks for the customer's yes). That message is replaced by the same plan written
as other capable assistants write it: PLAN_STYLES layouts (tables, numbered lists, bold labels,
nested bullets per order, prose, one-liners) x ASKS confirmation questions (before or after the
plan, two in one message, a note after the plan), amounts, dates and times in several forms,
combined pseudo-randomly but deterministically (variant k of a domain uses seed k mod N). The
customer's answer is recorded (yes / asks about what is missing / presses for what a policy
forbids / other), then the expert plays on (any re-ask of its plan replaced again) and the
episode's outcome is recorded. Flawed plans are sent too: one write left out (the customer must
ask about it), one amount or value wrong (its yes may come, but the write must then be refused).

A customer who presses is refused by the plan itself (each layout says the refusal its own way)
and, each time it presses, by one of AGAIN before the plan again.

Targets: every correct plan gets a yes (a pressing customer's presses first, then its yes) and
succeeds; no plan that leaves a write out gets a yes; no write whose value a plan stated wrongly
goes through. Exits 1 when one is missed. Known: where two writes carry the same amount (a
finance report's total and its payout) and the whole message is one part, a plan that states
one of them wrongly still covers both, through the other's figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.envs.tooluse.domains.consent_rules import RULES

DOMAINS = {"orders": "train", "finance": "train", "calendar": "train", "ops": "test"}
ASK_PREFIXES = ("Here is what I'm about to do:", "I'm sorry, but I can only do what the policies allow.")
WHAT_ABOUT = "Before I say yes"


# ------------------------------------------------------------------------------ the plan as data


@dataclass
class Line:
    """One outcome of a plan: `kind` (refund, credit, exchange, refuse, report, transfer, total,
    book, invite, incident, rollback), what it is about, and its values."""

    kind: str
    subject: str
    ident: str = ""
    amount: float | None = None
    currency: str = "USD"
    group: str = ""
    values: dict[str, str] = field(default_factory=dict)


def plan_lines(task: Any) -> list[Line]:
    """The plan the expert states, as data: the gold's writes and, for the items a customer asked
    about that no write serves, a refusal (noise off, the expert's plan is the gold's)."""
    world, domain = task.world, task.domain
    out: list[Line] = []
    for step in task.gold.plan:
        a = step.arguments
        if domain == "orders" and step.name in ("refund_item", "issue_store_credit", "exchange_item"):
            item = next(i for o in world.orders.values() for i in o.items if i.id == a["item_id"])
            kind = {"refund_item": "refund", "issue_store_credit": "credit", "exchange_item": "exchange"}[step.name]
            out.append(Line(kind, item.product, item.id, a.get("amount"), group=a["order_id"],
                            values={"variant": str(a.get("new_variant", ""))}))
        elif step.name == "file_expense_report":
            out.append(Line("report", world.employees[a["employee_id"]], a["employee_id"], a["total"], a["currency"],
                            values={"month": a["month"], "claims": ", ".join(a["expense_ids"])}))
        elif step.name == "create_transfer":
            out.append(Line("transfer", world.employees[a["employee_id"]], a["employee_id"], a["amount"],
                            a["currency"], values={"account": a["from_account"]}))
        elif step.name == "submit_answer" and domain == "finance":
            out.append(Line("total", "the total", amount=a["amount"], currency=a["currency"]))
        elif step.name == "book_meeting":
            out.append(Line("book", a["title"], values={"date": a["date"], "time": a["start_utc"],
                                                        "minutes": str(a["duration_minutes"])}))
        elif step.name == "send_invitation":
            out.append(Line("invite", "the invitation", a["meeting_id"]))
        elif step.name == "file_incident":
            out.append(Line("incident", a["root_cause_service"], values={"severity": a["severity"],
                                                                         "version": a["cause_version"]}))
        elif step.name == "rollback":
            out.append(Line("rollback", a["service"], values={"version": a["to_version"]}))
    if domain == "orders":
        served = {line.ident for line in out}
        for t in RULES["orders"].targets(world, task.goal):
            item_id = t.names[1]
            if item_id not in served:
                order = next(o.id for o in world.orders.values() for i in o.items if i.id == item_id)
                out.append(Line("refuse", t.names[0], item_id, group=order))
    return out


# ------------------------------------------------------------------------------ value forms

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£"}


def money(amount: float, currency: str, form: int) -> str:
    """An amount as assistants write it: "$12.50", "12.50 USD", "USD 12.50", "12.5", "$1,234.50"."""
    plain = f"{amount:.2f}"
    forms = [f"{_SYMBOL.get(currency, currency + ' ')}{plain}", f"{plain} {currency}", f"{currency} {plain}",
             f"{amount:g}" if currency == "USD" else f"{amount:g} {currency}", f"{_SYMBOL.get(currency, '')}{amount:,.2f}"
             + ("" if currency in _SYMBOL else f" {currency}")]
    return forms[form % len(forms)]


def date(iso: str, form: int) -> str:
    """A date: "2026-03-03", "March 3", "3 Mar", "Tuesday, March 3", "Mar 3, 2026", "3rd March"."""
    y, m, d = (int(x) for x in iso.split("-"))
    month = _MONTHS[m - 1]
    forms = [iso, f"{month} {d}", f"{d} {month[:3]}", f"{month[:3]} {d}, {y}", f"{d} {month} {y}",
             f"{month} {d}{'th' if 10 < d < 14 else {1: 'st', 2: 'nd', 3: 'rd'}.get(d % 10, 'th')}"]
    return forms[form % len(forms)]


def clock(hhmm: str, form: int) -> str:
    """A time of day in UTC: "14:00 UTC", "2pm UTC", "2:00 PM UTC", "14:00 (UTC)", "2:00 p.m. UTC"."""
    h, m = (int(x) for x in hhmm.split(":"))
    h12, half = h % 12 or 12, "am" if h < 12 else "pm"
    short = f"{h12}{half}" if m == 0 else f"{h12}:{m:02d}{half}"
    forms = [f"{hhmm} UTC", f"{short} UTC", f"{h12}:{m:02d} {half.upper()} UTC", f"{hhmm} (UTC)",
             f"{h12}:{m:02d} {half[0]}.m. UTC", f"{hhmm}Z"]
    return forms[form % len(forms)]


def severity(sev: str, form: int) -> str:
    n = sev[-1]
    return [sev, sev.upper(), f"SEV-{n}", f"Sev {n}", f"severity {n}"][form % 5]


# ------------------------------------------------------------------------------ what each line says


@dataclass
class Fmt:
    """The value forms one variant uses."""

    money: int
    date: int
    clock: int
    sev: int

    def amount(self, line: Line) -> str:
        return money(line.amount or 0.0, line.currency, self.money)


def clause(line: Line, f: Fmt, n: int) -> str:
    """One outcome as a verb phrase; `n` picks the wording."""
    s, amt = line.subject, (f.amount(line) if line.amount is not None else "")
    v = line.values
    if line.kind == "refund":
        return [f"refund {amt} for the {s}", f"issue a refund of {amt} for the {s} ({line.ident})",
                f"process a {amt} refund on the {s}", f"refund the {s} in full ({amt})"][n % 4]
    if line.kind == "credit":
        return [f"issue {amt} in store credit for the {s}", f"give you store credit of {amt} for the {s}",
                f"credit {amt} to your store account for the {s}",
                f"offer store credit for the {s} ({amt}), since it is past the return window"][n % 4]
    if line.kind == "exchange":
        return [f"exchange the {s} for the {v['variant']} one", f"swap the {s} for a {v['variant']}",
                f"process an exchange of the {s} to {v['variant']}"][n % 3]
    if line.kind == "refuse":
        return [f"not refund the {s}: it is a final-sale item", f"decline the {s}, which is final sale",
                f"leave the {s} as is (final sale, so it isn't eligible for a return)"][n % 3]
    if line.kind == "report":
        return [f"file an expense report for {s} ({line.ident}) totalling {amt}",
                f"submit an expense report of {amt} for {s}",
                f"file {s}'s expense report for {v['month']} ({amt}; claims {v['claims']})"][n % 3]
    if line.kind == "transfer":
        return [f"transfer {amt} to {s} from {v['account']}", f"pay {s} {amt} by bank transfer",
                f"send a payment of {amt} to {s} ({line.ident}) from account {v['account']}",
                f"reimburse {s} {amt}"][n % 4]
    if line.kind == "total":
        return [f"submit {amt} as the total", f"submit the total of {amt}",
                f"submit the answer: the claims come to {amt}"][n % 3]
    if line.kind == "book":
        when = f"{date(v['date'], f.date)} at {clock(v['time'], f.clock)}"
        return [f"book \"{s}\" on {when} for {v['minutes']} minutes",
                f"schedule the {v['minutes']}-minute meeting \"{s}\" for {when}",
                f"book the meeting {s} ({v['minutes']} min) on {when}"][n % 3]
    if line.kind == "invite":
        return ["send the invitation to all attendees", "send out the invites", "send the calendar invitation"][n % 3]
    if line.kind == "incident":
        sev = severity(v["severity"], f.sev)
        return [f"file a {sev} incident naming {s} {v['version']} as the root cause",
                f"open an incident ({sev}) with {s} {v['version']} as the cause",
                f"file an incident: root cause {s} {v['version']}, severity {sev}"][n % 3]
    if line.kind == "rollback":
        return [f"roll {s} back to {v['version']}", f"revert {s} to {v['version']}",
                f"roll back {s} to {v['version']}"][n % 3]
    raise ValueError(line.kind)


def cells(line: Line, f: Fmt) -> tuple[str, str, str]:
    """One outcome as (what, action, value) for tables and labelled lists."""
    v = line.values
    amt = f.amount(line) if line.amount is not None else ""
    if line.kind in ("refund", "credit", "refuse", "exchange"):
        action = {"refund": "Refund", "credit": "Store credit", "refuse": "No refund (final sale)",
                  "exchange": f"Exchange for {v.get('variant', '')}"}[line.kind]
        return (f"{line.subject.title()} ({line.ident})", action, amt or "-")
    if line.kind == "report":
        return (f"{line.subject} ({line.ident})", "File expense report", amt)
    if line.kind == "transfer":
        return (f"{line.subject} ({line.ident})", "Transfer payment", f"{amt} from {v['account']}")
    if line.kind == "total":
        return ("Total", "Submit the answer", amt)
    if line.kind == "book":
        return (f"\"{line.subject}\"", "Book meeting",
                f"{date(v['date'], f.date)}, {clock(v['time'], f.clock)}, {v['minutes']} min")
    if line.kind == "invite":
        return ("Invitation", "Send invitation", "all attendees")
    if line.kind == "incident":
        return (f"{line.subject} {v['version']}", "File incident", severity(v["severity"], f.sev))
    return (line.subject, "Roll back", f"to {v['version']}")


# ------------------------------------------------------------------------------ plan layouts


def _numbered(ls: list[Line], f: Fmt) -> str:
    return "Here's the plan:\n" + "\n".join(f"{i}. {clause(x, f, i).capitalize()}." for i, x in enumerate(ls, 1))


def _bullets(ls: list[Line], f: Fmt) -> str:
    return "I'll do the following:\n" + "\n".join(f"- {clause(x, f, 1)}" for x in ls)


def _bold_labels(ls: list[Line], f: Fmt) -> str:
    return "\n".join(f"- **{c[0]}**: {c[1]} — {c[2]}" for c in (cells(x, f) for x in ls))


def _table(ls: list[Line], f: Fmt) -> str:
    rows = [f"| {c[0]} | {c[1]} | {c[2]} |" for c in (cells(x, f) for x in ls)]
    return "Proposed actions:\n\n| Item | Action | Details |\n|---|---|---|\n" + "\n".join(rows)


def _table_bold(ls: list[Line], f: Fmt) -> str:
    rows = [f"| **{c[0]}** | {c[1]} | {c[2]} |" for c in (cells(x, f) for x in ls)]
    return "| What | Action | Amount / details |\n|:--|:--|--:|\n" + "\n".join(rows)


def _prose(ls: list[Line], f: Fmt) -> str:
    said = [clause(x, f, i) for i, x in enumerate(ls)]
    body = said[0] if len(said) == 1 else f"{', '.join(said[:-1])}, and {said[-1]}"
    return f"I've reviewed everything. I will {body}."


def _prose_sentences(ls: list[Line], f: Fmt) -> str:
    return "Thanks for your patience. " + " ".join(f"I'll {clause(x, f, i + 2)}." for i, x in enumerate(ls))


def _terse(ls: list[Line], f: Fmt) -> str:
    return "Plan: " + "; ".join(clause(x, f, 0) for x in ls) + "."


def _arrows(ls: list[Line], f: Fmt) -> str:
    return "\n".join(f"{c[0]} → {c[1]} ({c[2]})" for c in (cells(x, f) for x in ls))


def _grouped(ls: list[Line], f: Fmt) -> str:
    """Nested bullets per order (per kind elsewhere)."""
    out, groups = [], dict.fromkeys(x.group or x.kind for x in ls)
    for g in groups:
        out.append(f"- **Order {g}**" if g.startswith("O-") else f"- **{g.title()}**")
        out += [f"  - {cells(x, f)[0]}: {cells(x, f)[1]}, {cells(x, f)[2]}" for x in ls if (x.group or x.kind) == g]
    return "\n".join(out)


def _grouped_headed(ls: list[Line], f: Fmt, colon: bool = True) -> str:
    """Sections per kind of outcome, each under a bold heading line of its own (with a colon or
    without one)."""
    names = {"refund": "Refunds", "credit": "Store credit", "refuse": "Final sale, no refund", "exchange": "Exchanges"}
    out = []
    for kind in dict.fromkeys(x.kind for x in ls):
        first = next(y for y in ls if y.kind == kind)
        out.append(f"**{names.get(kind, cells(first, f)[1])}{':' if colon else ''}**")
        out += [f"- {cells(x, f)[0]} ({cells(x, f)[2]})" for x in ls if x.kind == kind]
        out.append("")
    return "\n".join(out).strip()


def _markdown_heading(ls: list[Line], f: Fmt) -> str:
    return "### Proposed plan\n\n" + "\n".join(f"* {clause(x, f, 3).capitalize()}" for x in ls)


def _step_labels(ls: list[Line], f: Fmt) -> str:
    return "\n".join(f"Step {i}: {clause(x, f, i)}" for i, x in enumerate(ls, 1))


def _key_value(ls: list[Line], f: Fmt) -> str:
    out = []
    for x in ls:
        c = cells(x, f)
        out += [f"Item: {c[0]}", f"Action: {c[1]}", f"Value: {c[2]}", ""]
    return "\n".join(out).strip()


def _summary_then_list(ls: list[Line], f: Fmt) -> str:
    return f"I've looked into your request and here is what I can do ({len(ls)} actions):\n\n" + \
        "\n".join(f"{i}) {clause(x, f, i)}" for i, x in enumerate(ls, 1))


def _checklist(ls: list[Line], f: Fmt) -> str:
    return "\n".join(f"- [ ] {clause(x, f, 2)}" for x in ls)


def _first_person_plural(ls: list[Line], f: Fmt) -> str:
    return "Here's what we'll do: " + " Then ".join(f"we'll {clause(x, f, i)}." for i, x in enumerate(ls))


def _bold_lead(ls: list[Line], f: Fmt) -> str:
    return "**Plan**\n" + "\n".join(f"• {clause(x, f, 0)}" for x in ls)


def _one_line(ls: list[Line], f: Fmt) -> str:
    return " | ".join(f"{c[0]}: {c[1]} {c[2]}" for c in (cells(x, f) for x in ls))


def _emoji(ls: list[Line], f: Fmt) -> str:
    return "\n".join(f"✅ {clause(x, f, 1)}" for x in ls)


def _dashes(ls: list[Line], f: Fmt) -> str:
    return "Summary of changes —\n" + "\n".join(f"– {cells(x, f)[0]} – {cells(x, f)[1]} – {cells(x, f)[2]}"
                                               for x in ls)


def _after_findings(ls: list[Line], f: Fmt) -> str:
    return "I've checked the records and the policies.\n\nNext steps:\n" + \
        "\n".join(f"{i}. {clause(x, f, i + 1)}" for i, x in enumerate(ls, 1))


def _going_to(ls: list[Line], f: Fmt) -> str:
    return " ".join(f"I'm going to {clause(x, f, i)}." for i, x in enumerate(ls))


def _would(ls: list[Line], f: Fmt) -> str:
    return "I would like to " + ", then ".join(clause(x, f, i) for i, x in enumerate(ls)) + "."


def _bold_values(ls: list[Line], f: Fmt) -> str:
    return "\n".join(f"{i}. **{cells(x, f)[1]}** for {cells(x, f)[0]}: **{cells(x, f)[2]}**"
                     for i, x in enumerate(ls, 1))


def _semicolons(ls: list[Line], f: Fmt) -> str:
    return "To summarise: " + "; ".join(f"{c[0]} — {c[1].lower()} ({c[2]})" for c in (cells(x, f) for x in ls))


PLAN_STYLES: dict[str, Callable[[list[Line], Fmt], str]] = {
    "numbered": _numbered, "bullets": _bullets, "bold-labels": _bold_labels, "table": _table,
    "table-bold": _table_bold, "prose": _prose, "prose-sentences": _prose_sentences, "terse": _terse,
    "arrows": _arrows, "grouped": _grouped, "grouped-headed": _grouped_headed,
    "grouped-headed-nocolon": lambda ls, f: _grouped_headed(ls, f, colon=False), "markdown-heading": _markdown_heading,
    "step-labels": _step_labels, "key-value": _key_value, "summary-then-list": _summary_then_list,
    "checklist": _checklist, "we": _first_person_plural, "bold-lead": _bold_lead, "one-line": _one_line,
    "emoji": _emoji, "dashes": _dashes, "after-findings": _after_findings, "going-to": _going_to,
    "would": _would, "bold-values": _bold_values, "semicolons": _semicolons,
}

#: Confirmation questions: (before the plan, after the plan); "{plan}" marks where the plan goes.
ASKS: tuple[str, ...] = (
    "{plan}\n\nShall I go ahead?", "{plan}\n\nWant me to proceed?", "{plan}\n\nPlease confirm and I'll process these.",
    "{plan}\n\nLet me know if that works.", "{plan}\n\nOK to submit?", "{plan}\n\nShould I proceed?",
    "{plan}\n\nWould you like me to go ahead with this?", "{plan}\n\nCan I go ahead?",
    "{plan}\n\nDoes this look right? If so, I'll proceed.", "{plan}\n\nDo I have your go-ahead?",
    "{plan}\n\nIs it okay if I proceed with these changes?", "{plan}\n\nReply yes and I'll take care of it.",
    "Before I make any changes, please review the plan below and confirm.\n\n{plan}",
    "Can you confirm the following?\n\n{plan}",
    "{plan}\n\nDoes that look right to you? Shall I go ahead?",
    "{plan}\n\nNote: these changes are final once made, so please double-check the amounts.\n\n"
    "Do you want me to proceed?",
    "{plan}\n\nShall I proceed with all of the above?", "{plan}\n\nMay I proceed?",
    "{plan}\n\nGood to go?", "{plan}\n\nWould you like me to proceed with this plan?",
    "{plan}\n\nJust say the word and I'll get started.", "{plan}\n\nIs that alright with you?",
    "{plan}\n\nAre you happy for me to go ahead?", "{plan}\n\nConfirm?",
    "{plan}\n\nShall I go ahead and make these changes, or would you like to change anything first?",
)


# ------------------------------------------------------------------------------ flaws


def flawed(lines: list[Line], domain: str, k: int, task: Any) -> tuple[str, list[Line]] | None:
    """A plan with one flaw: an outcome the customer asked about left out ("omit"), or an amount
    or value stated wrongly ("wrong"); None when the plan has nothing to get wrong that way."""
    if k % 2 == 0:
        targets = RULES[domain].targets(task.world, task.goal)
        if not targets:
            return None
        # Leave out the lines that give one target an outcome.
        t = targets[(k // 2) % len(targets)]
        keep = [x for x in lines if not _serves(x, t.label)]
        return ("omit", keep) if 0 < len(keep) < len(lines) else None
    i = (k // 2) % len(lines)
    x = lines[i]
    if x.amount is not None:
        bad = replace(x, amount=round(x.amount + 10.0, 2))
    elif x.kind == "book":
        h = (int(x.values["time"][:2]) + 1) % 24
        bad = replace(x, values={**x.values, "time": f"{h:02d}{x.values['time'][2:]}"})
    elif x.kind == "rollback":
        bad = replace(x, values={**x.values, "version": x.values["version"] + "1"})
    else:
        return None
    return ("wrong", [*lines[:i], bad, *lines[i + 1:]])


def _serves(line: Line, label: str) -> bool:
    words = {"the expense report": ("report",), "the payment": ("transfer",), "the total": ("total",),
             "the meeting": ("book",), "the invitation": ("invite",), "the incident": ("incident",),
             "the rollback": ("rollback",)}
    if label in words:
        return line.kind in words[label]
    return f"the {line.subject}" == label


# ------------------------------------------------------------------------------ playing


def _prefix(split: str, seed: int) -> tuple[list[str], Any] | None:
    """The expert's actions up to (not including) its first plan message, and the task."""
    env = gym.make("AgentRL/ToolUse-v0", difficulty="hard", split=split)
    agent = make_agent("expert")
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    actions: list[str] = []
    for _ in range(60):
        a = agent.act(obs, info)
        if a.startswith(ASK_PREFIXES[0]):
            return actions, env.unwrapped._task
        actions.append(a)
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return None
    return None


#: How the plan is put again to a customer who presses for what a policy forbids.
AGAIN = ("I understand, but I can only do what the policies allow.", "I'm afraid that isn't something I can do.",
         "Sorry, our policy doesn't allow that, so the plan stays as it is.",
         "I hear you, but I'm not able to make an exception here.", "Unfortunately that's not possible.",
         "I can't do that, I'm sorry: the records don't allow it.", "That isn't an option under the policy.",
         "I'm not permitted to do that.")


def play(split: str, seed: int, prefix: list[str], message: str, again: str = AGAIN[0]) -> tuple[str, bool, str, bool]:
    """Replay `prefix`, send `message` in place of the expert's plan (and of each re-ask of it),
    let the expert play on; (the customer's first answer, whether it was a yes that records the
    plan, the episode's end, success)."""
    env = gym.make("AgentRL/ToolUse-v0", difficulty="hard", split=split)
    agent = make_agent("expert")
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    for a in prefix:
        agent.act(obs, info)
        obs, *_, info = env.step(a)
    first, granted, r = "", False, 0.0
    consent = env.unwrapped._task.world.consent
    for _ in range(40):
        a = agent.act(obs, info)
        if a.startswith(ASK_PREFIXES):
            a = message if a.startswith(ASK_PREFIXES[0]) else f"{again}\n\n{message}"
        before = len(consent.plans)
        obs, r, term, trunc, info = env.step(a)
        if not first and a.endswith(message):
            first, granted = obs, len(consent.plans) > before
        if term or trunc:
            break
    success = bool(info.get("episode_summary", {}).get("success", r >= 1.0))
    return first, granted, str(info.get("episode_summary", {}).get("outcome", "")), success


def verdict(answer: str, granted: bool, press: Any) -> str:
    """yes / missing / press / other, from the customer's first answer to the plan."""
    text = answer.removeprefix("[user] ").strip()
    if granted:
        return "yes"
    if text.startswith(WHAT_ABOUT):
        return "missing"
    if press is not None and text in press.asks:
        return "press"
    return "other"


def sweep(domain: str, seeds: int, variants: int, show: int) -> dict[str, Any]:
    split = DOMAINS[domain]
    cases = []
    seed = 0
    while len(cases) < seeds and seed < seeds * 8:
        task_seed = seed
        seed += 1
        got = _prefix(split, task_seed)
        if got is None or got[1].domain != domain:
            continue
        cases.append((task_seed, *got))
    styles, asks = list(PLAN_STYLES), ASKS
    rows: list[dict[str, Any]] = []
    for k in range(variants):
        task_seed, prefix, task = cases[k % len(cases)]
        lines = plan_lines(task)
        fmt = Fmt(k * 7 % 5, k * 11 % 6, k * 13 % 6, k * 3 % 5)
        style = styles[(k * 17 + k // len(styles)) % len(styles)]
        ask = asks[(k * 5 + k // len(asks)) % len(asks)]
        kind, shown = "correct", lines
        if k % 4 == 3:
            bad = flawed(lines, domain, k // 4, task)
            if bad is None:
                continue
            kind, shown = bad
        message = ask.format(plan=PLAN_STYLES[style](shown, fmt))
        answer, granted, outcome, success = play(split, task_seed, prefix, message, AGAIN[k % len(AGAIN)])
        rows.append({"seed": task_seed, "style": style, "ask": ask.replace("{plan}", "<plan>").replace("\n", " "),
                     "kind": kind, "pressing": task.world.press is not None,
                     "verdict": verdict(answer, granted, task.world.press), "success": success,
                     "outcome": outcome, "answer": answer, "message": message})
    return {"domain": domain, "seeds": [c[0] for c in cases], "rows": rows}


def report(result: dict[str, Any], show: int) -> list[str]:
    """Printable lines for one domain; the rows that miss a target are listed (up to `show`)."""
    rows, out, bad = result["rows"], [], []
    for kind in ("correct", "omit", "wrong"):
        rs = [r for r in rows if r["kind"] == kind]
        if not rs:
            continue
        n = len(rs)
        counts = {v: sum(r["verdict"] == v for r in rs) for v in ("yes", "missing", "press", "other")}
        ok = sum(r["success"] for r in rs)
        out.append(f"{result['domain']:8} {kind:7} n={n:4} " + " ".join(f"{v} {c / n:6.1%}" for v, c in counts.items())
                   + f" | success {ok / n:6.1%}")
        if kind == "correct":
            pressing = [r for r in rs if r["pressing"]]
            if pressing:
                heard = sum(r["verdict"] == "press" for r in pressing)
                out.append(f"{'':8} {'':7} a pressing customer presses at a plan that refuses it: {heard}/{len(pressing)}")
            bad += [r for r in rs if r["verdict"] != ("press" if r["pressing"] else "yes") or not r["success"]]
        elif kind == "omit":
            bad += [r for r in rs if r["verdict"] == "yes" or r["success"] and r["verdict"] != "missing"]
        else:
            bad += [r for r in rs if r["success"]]
    for r in bad[:show]:
        out.append(f"  MISS seed {r['seed']} {r['kind']} {r['style']} / {r['ask'][:50]!r}: {r['verdict']} "
                   f"{r['answer'][:100]!r} success={r['success']}")
        out.append("    " + r["message"][:600].replace("\n", "\n    "))
    result["misses"] = len(bad)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=40, help="dev seeds per domain (from 0; default 40)")
    p.add_argument("--variants", type=int, default=600, help="plans sent per domain (default 600)")
    p.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=list(DOMAINS))
    p.add_argument("--show", type=int, default=3, help="misses to print per domain")
    p.add_argument("--json", default=None, help="write every row here")
    args = p.parse_args(argv)
    results, misses = [], 0
    for domain in args.domains:
        res = sweep(domain, args.seeds, args.variants, args.show)
        for line in report(res, args.show):
            print(line, flush=True)
        misses += res["misses"]
        results.append(res)
    return finish(results, misses, args.json)


def finish(results: list[dict[str, Any]], misses: int, path: str | None) -> int:
    """Print the misses, write every row to `path` (when given); the exit status."""
    print(f"misses: {misses}")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
