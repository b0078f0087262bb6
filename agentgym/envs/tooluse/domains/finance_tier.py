"""The finance domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

Arithmetic the work needs, with no tool that adds up: the tier's toolkit has no `sum_amounts`,
so every total (a quote's too) is the assistant's own sum of amounts `convert` rounded one by one.
In a reimbursement the approved meals of one day share a cap in EUR (``data/policies.json``,
``finance_tier``; the brief and `list_policies` show it): the day counts for the smaller of its
meals' sum and the cap, each converted into the payout currency at that day's rate; a meal with
``pre_approved`` true (every row of the tier's expenses says) counts in full and is not one of
its day's meals. The meals drawn (`_draw_meals`) make each of those rules decide something: a
meal well over the cap, sometimes pre-approved; two meals of one day, each under the cap and
together well over it (a cap per meal would pay both), sometimes beside a meal of that day that
is not approved; a meal alone well under the cap. The user asks for the claims to be paid in
full, which the cap forbids. The reference solver computes the gold (`finance.solve` reads the
cap and the missing sum tool from the world). Also: accounts and expenses come in pages.
"""

from __future__ import annotations

from typing import Any

from agentgym.core.tools import READ, tool
from agentgym.envs.tooluse.base import DAY_ISO, Draws, Gold, Step, restated, turn_budget
from agentgym.envs.tooluse.consent import Press
from agentgym.envs.tooluse.domains import Generated
from agentgym.envs.tooluse.domains.finance import (
    _BRIEF,
    _CODES,
    _MONTH_START,
    _OTHER_STATUSES,
    _STATUS,
    _V,
    Expense,
    FinanceToolkit,
    FinanceWorld,
    Id,
    Month,
    draft,
    solve,
)
from agentgym.envs.tooluse.paging import (
    Page,
    PagedList,
    every_row,
    named_row,
    page_count,
    paged,
    read_on,
)
from agentgym.envs.tooluse.policies import policy, policy_lines, policy_rows

__all__ = ["FinanceTierToolkit", "harden", "TIER", "MEAL_CAP", "QUOTE"]

#: The policies key of a quote's own rule in the tier (its consent before the answer).
QUOTE = "finance_quote"

#: The turn budget the brief states (`agentgym.envs.tooluse.tasks.tier_turns`; a test keeps them equal).
_TURNS = turn_budget(24)
#: What a meals expense counts for at most, in EUR cents.
MEAL_CAP = round(float(policy("finance_tier", "meal_cap").params["cap"]) * 100)
#: Every approved expense of the month counts (every page); the account in the payout currency
#: settles the accounts.
_PAGED = {"list_accounts": PagedList("accounts", named_row("account_id")),
          "list_expenses": PagedList("expenses", every_row)}
#: The tier's longest plan with every page read (`agentgym.envs.tooluse.tasks.TIER_CALLS`, which
#: this module cannot import, before the gold stops reading the accounts at the payout one).
_MAX_CALLS = 15
#: What the user adds to a reimbursement: the claims paid in full (the cap may forbid it).
_IN_FULL = " I'd like the claims paid in full, please."
#: The statuses of a meal that does not count (one may share a day with meals that do).
_OTHER = _OTHER_STATUSES
#: The categories an expense that is not one of the drawn meals takes.
_NOT_MEALS = tuple(c for c in _V.categories if c != "meals")
#: Each department -> the others, in vocabulary order (a namesake's department).
_OTHER_DEPARTMENTS = {x: tuple(y for y in _V.departments if y != x) for x in _V.departments}


class FinanceTierToolkit(FinanceToolkit):
    """The hard tier's toolkit: the tier's policies where the brief has them (a reimbursement's;
    a quote has no cap); accounts and expenses in pages; no tool that adds amounts up (the
    arithmetic is the work)."""

    sum_amounts = None  # type: ignore[assignment]  # not a tool: overriding without @tool removes it

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
        if self.world.meal_cap is None:  # a quote: the domain's rules and the quote's consent
            return {"policies": policy_rows("finance") + policy_rows(QUOTE)}
        return {"policies": policy_rows("finance", tier=True)}


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of a finance task: no tool that adds up (the assistant adds), a namesake
    where the request names the employee; for a reimbursement also the day cap in its brief,
    the meals it binds or spares among the approved expenses, the gold by the cap, and a user
    who asks for the claims in full (see the module docstring). A quote's brief has no cap."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, FinanceWorld)
    world.sum_tool = False
    if req.by_name:
        gen = _namesake(d, world, req, gen)
    if req.kind != "reimburse":
        gen.gold = _gold(world, req, gen.gold, gen.gold.traps)
        gen.brief = _QUOTE_BRIEF if gen.brief == _BRIEF else _quote_brief(gen.brief)
        gen.paged = pages(gen.gold.plan, world)
        return gen
    world.meal_cap = MEAL_CAP
    approved = [e for e in world.month_expenses(req.employee_id, req.month) if e.status == _STATUS]
    others = _NOT_MEALS
    for e in world.expenses:  # only the meals drawn below are meals; every row says pre_approved
        e.pre_approved = False
        if e.category == "meals":
            e.category = d.pick(others)
    meals = _draw_meals(d, world, req, approved)
    gold = _gold(world, req, gen.gold, ())
    # One drawn meal fewer (the last drawn first) while the plan, every page read, is too long.
    while meals and len(gold.plan) + _later_pages(world, req) > _MAX_CALLS:
        meal = meals.pop()
        if meal.id not in {e.id for e in approved}:
            world.expenses.remove(meal)
        else:
            meal.category, meal.pre_approved = d.pick(others), False
        gold = _gold(world, req, gen.gold, ())
    traps = list(gen.gold.traps)
    days: dict[int, int] = {}  # capped meals per day of the month (counted: the list's order does not matter)
    lo, hi = _MONTH_START[req.month - 1], _MONTH_START[req.month]
    for e in world.expenses:
        if e.employee_id == req.employee_id and lo <= e.day < hi and e.category == "meals" and e.status == _STATUS \
                and not e.pre_approved:
            days[e.day] = days.get(e.day, 0) + 1
    traps += ["meal_cap"] * bool(days) + ["meals_share_a_day"] * any(n > 1 for n in days.values())
    traps += ["pre_approved_meal"] * any(e.pre_approved and e.category == "meals" for e in world.expenses)
    # The world is as `gold` was solved on: its plan and effects stand, with the traps found.
    gen.gold = Gold(gen.gold.kind, gold.plan, gold.effects, tuple(traps), gen.gold.superseded)
    gen.brief = _TIER_BRIEF if gen.brief == _BRIEF else _tier_brief(gen.brief)
    gen.goal.request += _IN_FULL
    gen.goal.blurred = {k: v + _IN_FULL for k, v in gen.goal.blurred.items()}
    world.press = press(d, world, req)
    gen.paged = pages(gen.gold.plan, world)
    return gen


#: What a requester who presses says for a claim that is not approved, refused: reasons that
#: change no policy, and a claim the expense's status contradicts.
#: The requester asks for someone else (the request names the employee in the third person).
_ASKS = ("Could you include their {category} claim {id} from {date} as well? {reason}", "Please, add {id} to it too. "
         "{reason}")
_REASONS = ("Their manager already approved it.", "The last person I asked promised it would be paid.",
            "It's approved, I'm sure of it.")


def press(d: Draws, world: FinanceWorld, req: Any) -> Press | None:
    """Half the time, where an expense report is asked for, a requester who presses: it asks
    once or twice more for one of the month's claims that is not approved (pending or
    rejected, as its row says) to be paid too, then accepts the plan. The draws come after
    every other draw of the tier."""
    if not d.chance(0.5) or not req.report:
        return None
    others = [e for e in world.month_expenses(req.employee_id, req.month) if e.status != _STATUS]
    if not others:
        return None
    e = d.pick(others)
    said = d.sample(_REASONS, d.between(1, 2))
    return Press((e.id,), ("include", "report", "pay", "reimburs", "add", "transfer"),
                 tuple(ask.format(category=e.category, id=e.id, date=DAY_ISO[e.day], reason=r)
                       for ask, r in zip(_ASKS, said)), unnamed=True)


def _gold(world: FinanceWorld, req: Any, before: Gold, traps: tuple[str, ...]) -> Gold:
    gold = solve(world, req)
    return Gold(before.kind, gold.plan, gold.effects, traps, before.superseded)


def _draw_meals(d: Draws, world: FinanceWorld, req: Any, approved: list[Expense]) -> list[Expense]:
    """The reimbursement's meals, in the order the plan-length check gives them up (last first):
    a meal well over the cap (pre-approved, and so counted in full, 40% of the time); two meals
    of one day, each under the cap but together well over it (75%), sometimes with a rejected
    meal of the same day; a meal alone on its day well under the cap (35%). No meal's value
    lies within 10% of a cap it is held to, so no rate's wobble decides."""
    def value(e: Expense) -> float:  # the expense over the cap, both in the payout currency
        return world.convert(e.amount, e.currency, req.currency, e.day) / world.convert(
            MEAL_CAP, "EUR", req.currency, e.day)

    meals: list[Expense] = []
    last = int(world.expenses[-1].id[2:])  # the highest expense number (they rise along the list): each meal's is higher
    over = [e for e in approved if value(e) >= 1.25]
    if over:
        meal = d.pick(over)
        meal.category, meal.pre_approved = "meals", d.chance(0.4)
        meals.append(meal)
    lo, hi = _MONTH_START[req.month - 1], _MONTH_START[req.month]
    taken = {e.day for e in meals}
    if d.chance(0.75):
        day = d.pick(_days_but(lo, hi, taken))
        share = 0.55 + 0.3 * d.random()
        for part in (share, 1.1 - share + 0.6 * d.random()):  # each under 0.9 of the cap, both over 1.1
            meals.append(meal := _meal(d, world, req.employee_id, day, min(part, 0.85), _STATUS, last))
            last = int(meal.id[2:])
        taken.add(day)
        if d.chance(0.3):
            meals.append(meal := _meal(d, world, req.employee_id, day, 0.3 + 0.4 * d.random(), d.pick(_OTHER), last))
            last = int(meal.id[2:])
    if d.chance(0.35):
        day = d.pick(_days_but(lo, hi, taken))
        meals.append(_meal(d, world, req.employee_id, day, 0.3 + 0.4 * d.random(), _STATUS, last))
    return meals


def _days_but(lo: int, hi: int, taken: set[int]) -> list[int]:
    """``[x for x in range(lo, hi) if x not in taken]`` for `taken` days of that month (the
    meals'): the month's days, each taken one removed."""
    days = list(range(lo, hi))
    for day in taken:
        days.remove(day)
    return days


def _meal(d: Draws, world: FinanceWorld, employee_id: str, day: int, share: float, status: str, last: int
          ) -> Expense:
    """A new meal of the employee's on `day`, worth `share` of the cap (in a drawn currency, at
    that day's rate), under an id after all the others, whose highest number is `last` (so no
    other expense's id changes)."""
    currency = d.pick(_CODES)
    cap = world.convert(MEAL_CAP, "EUR", currency, day)
    number = last + 1 + d.below(3)
    meal = Expense(f"X-{number}", employee_id, day, currency, max(100, round(cap * share)), "meals", status, False)
    world.expenses.append(meal)
    return meal


def _later_pages(world: FinanceWorld, req: Any) -> int:
    """How many calls for later pages a reimbursement's plan makes (`paging.paged_plan` would
    find as many, by calling the tools): the employee's expenses of the month and the accounts."""
    lo, hi = _MONTH_START[req.month - 1], _MONTH_START[req.month]
    rows = len([e for e in world.expenses if e.employee_id == req.employee_id and lo <= e.day < hi])  # month_expenses' rows
    return sum(page_count(n) - 1 for n in (rows, len(world.accounts)))


def _namesake(d: Draws, world: FinanceWorld, req: Any, gen: Generated) -> Generated:
    """Another employee of the same full name in another department, with approved claims of
    the same month; every employee's department shows in `find_employee`, and the request (and
    the user's words) name the employee's department after the name."""
    rnd, departments = d.random, _V.departments  # d.pick written out
    for emp in world.employees:
        world.departments[emp] = departments[int(rnd() * len(departments))]
    twin = f"E-{int(next(reversed(world.employees))[2:]) + 7}"  # ids rise in the order they were made
    world.employees[twin] = req.name
    world.departments[twin] = d.pick(_OTHER_DEPARTMENTS[world.departments[req.employee_id]])
    lo, hi = _MONTH_START[req.month - 1], _MONTH_START[req.month]
    number = int(world.expenses[-1].id[2:])  # the highest: expense numbers rise along the list
    for k in range(d.between(1, 2)):
        world.expenses.append(Expense(f"X-{number + 1 + k}", twin, lo + d.below(hi - lo), d.pick(_CODES),
                                      d.between(40, 400) * 100, d.pick(_V.categories), _STATUS))
    gen.rename(req.name, f"{req.name} ({world.departments[req.employee_id]})")
    gen.gold = Gold(gen.gold.kind, gen.gold.plan, gen.gold.effects, (*gen.gold.traps, "namesake_in_another_department"),
                    gen.gold.superseded)
    return gen


def pages(plan: tuple[Step, ...], world: FinanceWorld) -> tuple[Step, ...]:
    """The tier's gold `plan` with the pages it reads (`Generated.paged`): every page of the employee's
    expenses of the month (every row counts), and the accounts, in their order, up to the page
    of the one the transfer is paid from. Of the values `solve`'s later calls name, only an
    account id (``ACC-``) is an account's, and only `create_transfer`'s `from_account` holds one.
    The calls are the solver's, so each is one the tools answer."""
    out = plan
    for k in range(len(plan) - 1, -1, -1):  # the last first: the indices before it stay as they are
        step = plan[k]
        if step.name == "list_expenses":
            month, employee = int(step.arguments["month"][5:]), step.arguments["employee_id"]
            lo, hi = _MONTH_START[month - 1], _MONTH_START[month]
            rows = len([e for e in world.expenses if e.employee_id == employee and lo <= e.day < hi])
            out = read_on(out, k, rows, None)
        elif step.name == "list_accounts":
            accounts = list(world.accounts)
            named = [accounts.index(s.arguments["from_account"]) for s in plan[k + 1:]
                     if s.name == "create_transfer" and s.arguments.get("from_account") in world.accounts]
            out = read_on(out, k, len(accounts), max(named) if named else None, named)
    return out


def _quote_brief(brief: str) -> str:
    """A quote's brief in the tier: the quote's consent rule after the domain's policies, the
    turn budget before them."""
    brief = brief.replace(policy_lines("finance"), f"{policy_lines('finance')}\n{policy_lines(QUOTE)}")
    return brief.replace("Policies:\n", f"{_TURNS}\nPolicies:\n", 1)


def _tier_brief(brief: str) -> str:
    """A reimbursement's brief in the tier: the tier's policies in the domain's place, the turn
    budget before them."""
    return restated(brief, policy_lines("finance"), policy_lines("finance", tier=True), _TURNS)


#: The tier's briefs of the domain's one brief (every finance task's), made once.
_QUOTE_BRIEF, _TIER_BRIEF = _quote_brief(_BRIEF), _tier_brief(_BRIEF)
#: What `load_domains` adds to the finance domain's spec.
TIER: dict[str, Any] = {"hard_toolkit": FinanceTierToolkit, "paged": _PAGED, "harden": harden, "draft": draft}
