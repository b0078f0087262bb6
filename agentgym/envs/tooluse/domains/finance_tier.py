"""The finance domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

Arithmetic the work needs: a meals expense counts for at most a cap in EUR (``data/policies.json``,
``finance_tier``; the brief and `list_policies` show it). In a reimbursement, one approved expense
is a meal well over the cap and sometimes another a meal well under it, so the report's total and
the transfer are a sum the assistant computes: each meal's smaller amount of the expense and the
cap, both converted into the payout currency at the expense's date; neither the sum of the
expenses nor the cap can be copied from a result. The user asks for the claims to be paid in
full, which the cap forbids for the capped meal. The reference solver computes the gold
(`finance.solve` reads the cap from the world). Also: accounts and expenses come in pages.
"""

from __future__ import annotations

from typing import Any

from agentgym.core.tools import READ, tool
from agentgym.envs.tooluse.base import Draws, Gold
from agentgym.envs.tooluse.domains import Generated
from agentgym.envs.tooluse.domains.finance import (
    _CODES,
    _MONTH_START,
    _STATUS,
    _V,
    Expense,
    FinanceToolkit,
    FinanceWorld,
    Id,
    Month,
    solve,
)
from agentgym.envs.tooluse.paging import PAGE_SIZE, Page, PagedList, every_row, named_row, paged
from agentgym.envs.tooluse.policies import policy, policy_lines, policy_rows

__all__ = ["FinanceTierToolkit", "harden", "TIER", "MEAL_CAP"]

#: What a meals expense counts for at most, in EUR cents.
MEAL_CAP = round(float(policy("finance_tier", "meal_cap").params["cap"]) * 100)
#: Every approved expense of the month counts (every page); the account in the payout currency
#: settles the accounts.
_PAGED = {"list_accounts": PagedList("accounts", named_row("account_id")),
          "list_expenses": PagedList("expenses", every_row)}
#: The tier's plan length with every page read (`agentgym.envs.tooluse.tasks.TIER_CALLS`, which this
#: module cannot import, before the gold stops reading the accounts at the payout one).
_CALLS = (8, 15)
#: What the user adds to a reimbursement: the claims paid in full (the cap may forbid it).
_IN_FULL = " I'd like the claims paid in full, please."


class FinanceTierToolkit(FinanceToolkit):
    """The hard tier's toolkit: the tier's policies; accounts and expenses in pages."""

    @tool(kind=READ)
    def list_accounts(self, page: Page = 1) -> dict[str, Any]:
        """The company's bank accounts and their currencies, a page at a time.

        Args:
            page: The page to read (1 is the first; the result says how many there are).
        """
        return paged(super().list_accounts(), "accounts", page)

    @tool(kind=READ)
    def list_expenses(self, employee_id: Id, month: Month, page: Page = 1) -> dict[str, Any]:
        """An employee's expense claims dated in one month, oldest first, with their status, a page at a time.

        Args:
            employee_id: The employee's id, as find_employee returns it.
            month: The month, as YYYY-MM.
            page: The page to read (1 is the first; the result says how many there are).
        """
        return paged(super().list_expenses(employee_id, month), "expenses", page)

    @tool(kind=READ)
    def list_policies(self) -> dict[str, Any]:
        """The domain's policies: what a write must respect, by policy id."""
        return {"policies": policy_rows("finance") + policy_rows("finance_tier")}


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of a reimbursement: the meal cap in its brief, a meal it binds (and maybe
    one it does not) among the approved expenses, the gold by the cap, and a user who asks for
    the claims in full (see the module docstring). A quote, which asks what the approved claims
    add up to, is left as it is (its brief has no cap)."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, FinanceWorld)
    if req.by_name:
        gen = _namesake(d, world, req, gen)
    if req.kind != "reimburse":
        return gen
    rules = policy_lines("finance")
    world.meal_cap = MEAL_CAP
    approved = [e for e in world.month_expenses(req.employee_id, req.month) if e.status == _STATUS]
    others = [c for c in _V.categories if c != "meals"]
    for e in approved:  # only the meals drawn below are meals
        if e.category == "meals":
            e.category = d.pick(others)

    def value(e: Any) -> float:  # the expense over the cap, both in the payout currency
        return world.convert(e.amount, e.currency, req.currency, e.day) / world.convert(
            MEAL_CAP, "EUR", req.currency, e.day)

    over = [e for e in approved if value(e) >= 1.25]
    meals = [d.pick(over)] if over else []
    added = None
    if meals and d.chance(0.5):  # and a meal well under the cap, which counts in full
        added = _small_meal(d, world, req)
        meals.append(added)
        approved.append(added)
    for e in meals:
        e.category = "meals"
    gold = solve(world, req)
    # One meal fewer while the plan, every page read, is not of the tier's length.
    while meals and not _CALLS[0] <= len(gold.plan) + _later_pages(world, req) <= _CALLS[1]:
        meal = meals.pop()
        if meal is added:
            world.expenses.remove(meal)
            approved.remove(meal)
        else:
            meal.category = d.pick(others)
        gold = solve(world, req)
    traps = (*gen.gold.traps, "meal_cap") if any(e.category == "meals" for e in approved) else gen.gold.traps
    gen.gold = Gold(gen.gold.kind, gold.plan, gold.effects, traps, gen.gold.superseded)
    gen.brief = gen.brief.replace(rules, f"{rules}\n{policy_lines('finance_tier')}")
    gen.goal.request += _IN_FULL
    gen.goal.blurred = {k: v + _IN_FULL for k, v in gen.goal.blurred.items()}
    return gen


def _later_pages(world: FinanceWorld, req: Any) -> int:
    """How many calls for later pages a reimbursement's plan makes (`paging.paged_plan` would
    find as many, by calling the tools): the employee's expenses of the month and the accounts."""
    rows = len(world.month_expenses(req.employee_id, req.month))
    return sum(max(1, -(-n // PAGE_SIZE)) - 1 for n in (rows, len(world.accounts)))


def _namesake(d: Draws, world: FinanceWorld, req: Any, gen: Generated) -> Generated:
    """Another employee of the same full name in another department, with approved claims of
    the same month; every employee's department shows in `find_employee`, and the request (and
    the user's words) name the employee's department after the name."""
    for emp in world.employees:
        world.departments[emp] = d.pick(_V.departments)
    twin = f"E-{max(int(e[2:]) for e in world.employees) + 7}"
    world.employees[twin] = req.name
    world.departments[twin] = d.pick([x for x in _V.departments if x != world.departments[req.employee_id]])
    lo, hi = _MONTH_START[req.month - 1], _MONTH_START[req.month]
    number = max(int(e.id[2:]) for e in world.expenses)
    for k in range(d.between(1, 2)):
        world.expenses.append(Expense(f"X-{number + 1 + k}", twin, lo + d.below(hi - lo), d.pick(_CODES),
                                      d.between(40, 400) * 100, d.pick(_V.categories), _STATUS))
    gen.rename(req.name, f"{req.name} ({world.departments[req.employee_id]})")
    gen.gold = Gold(gen.gold.kind, gen.gold.plan, gen.gold.effects, (*gen.gold.traps, "namesake_in_another_department"),
                    gen.gold.superseded)
    return gen


def _small_meal(d: Draws, world: FinanceWorld, req: Any) -> Expense:
    """A new approved meal of the employee's month, worth 30-70% of the cap (under an id after
    all the others, so no other expense's id changes)."""
    lo, hi = _MONTH_START[req.month - 1], _MONTH_START[req.month]
    day, currency = lo + d.below(hi - lo), d.pick(_CODES)
    cap = world.convert(MEAL_CAP, "EUR", currency, day)
    number = max(int(e.id[2:]) for e in world.expenses) + 1 + d.below(9)
    meal = Expense(f"X-{number}", req.employee_id, day, currency,
                   max(100, round(cap * (0.3 + 0.4 * d.random()))), "meals", _STATUS)
    world.expenses.append(meal)
    return meal


#: What `load_domains` adds to the finance domain's spec.
TIER: dict[str, Any] = {"hard_toolkit": FinanceTierToolkit, "paged": _PAGED, "harden": harden}
