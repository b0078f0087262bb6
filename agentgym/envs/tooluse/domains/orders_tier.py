"""The orders domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

A bulk return (`orders_bulk`): the customer names six to ten items over two or three of its
orders, each order by its placing date, and would rather have its money back for every one. Each
item gets exactly what the policies allow, decided by itself, and the episode succeeds only when
every item does. Policies that interact (``data/policies.json``, ``orders_tier``; the brief and
`list_policies` show them, `find_customer` shows the tier, `get_order` each item's row): a Plus
member has more days on every return window (whose last day counts) and a higher refund approval
limit, and no approval may be asked for a refund that does not need one; past the window an item
gets store credit for its full price; a refund of an opened item of a category with a restocking
fee (electronics, home) is its price less the fee, the approval limit judged on that amount; a
final-sale item gets nothing, unless it arrived damaged, which also waives the restocking fee.
Delivery ages are drawn on, beside or near window ends, across month ends. Also: the customer's
orders come in pages, and a near-duplicate order, placed a few days after one asked about, holds
the same product. The reference solver is `orders_bulk.solve_bulk`.
"""

from __future__ import annotations

from typing import Annotated, Any

from agentgym.core.tools import READ, WRITE, MaxLen, tool
from agentgym.envs.tooluse.base import Detail, Draws, Goal, Gold, Step, cents, money, restated, turn_budget
from agentgym.envs.tooluse.consent import Press
from agentgym.envs.tooluse.domains import Generated
from agentgym.envs.tooluse.domains.orders import (
    _PRODUCTS,
    _V,
    Amount,
    Category,
    Id,
    Item,
    Order,
    OrdersToolkit,
    OrdersWorld,
    Request,
    _brief,
    _make_world,
    _Retry,
    _solvable,
)
from agentgym.envs.tooluse.domains.orders import shifts as order_shifts
from agentgym.envs.tooluse.domains.orders_bulk import BulkRequest, build, dates, solve_bulk
from agentgym.envs.tooluse.domains.orders_bulk import shifts as bulk_shifts
from agentgym.envs.tooluse.paging import Page, PagedList, named_row, paged, read_on
from agentgym.envs.tooluse.policies import policy, policy_lines, policy_rows

__all__ = ["OrdersTierToolkit", "harden", "TIER", "EXTRA_DAYS", "PLUS_LIMIT", "FEE"]

#: A Plus member's extra days on every return window, and its refund approval limit (cents).
EXTRA_DAYS = int(policy("orders_tier", "member_window").params["extra_days"])
PLUS_LIMIT = round(float(policy("orders_tier", "member_approval").params["limit"]) * 100)
#: The restocking fee of an opened item refunded, in percent of its price, by category.
FEE = {category: int(pct) for category, pct in policy("orders_tier", "restocking_fee").params.items()}
#: The turn budget the brief states (`agentgym.envs.tooluse.tasks` gives the tier's orders tasks as
#: many; a test keeps the two equal).
_TURNS = turn_budget(30)
#: What the customer says, asked what it would accept: the same for every item.
_EACH_ITEM = ("For each item, my money back where the policy allows it; where it doesn't, store credit is fine, "
              "and where the policy gives nothing, that's that.")
#: What a customer of the tier adds to its request: it would rather have a refund (past an
#: item's window, the policy forbids one).
_PREFER_REFUND = " I'd much rather have my money back than store credit."


class OrdersTierToolkit(OrdersToolkit):
    """The hard tier's toolkit: the customer's tier, the tier's policies, orders in pages."""

    @tool(kind=READ)
    def find_customer(self, email: Annotated[str, MaxLen(120)]) -> dict[str, Any]:
        """Find a customer by email address; the result shows the customer's membership tier.

        Args:
            email: The customer's email address.
        """
        return {**super().find_customer(email), "tier": self.world.tier}

    @tool(kind=READ)
    def list_orders(self, customer_id: Id, page: Page = 1) -> dict[str, Any]:
        """A customer's orders, newest first, with the products in each, a page at a time.

        Args:
            customer_id: The customer's id, from find_customer.
            page: The page to read (1 is the first; the result says how many there are).
        """
        return paged(super().list_orders(customer_id), "orders", page)

    @tool(kind=READ)
    def get_return_policy(self, category: Category) -> dict[str, Any]:
        """The return policy of a product category, with what a Plus member gets and the
        restocking fee of an opened item refunded.

        Args:
            category: The product category.
        """
        return {**super().get_return_policy(category), "plus_member_extra_days": EXTRA_DAYS,
                "plus_member_refund_approval_over": money(PLUS_LIMIT),
                "opened_item_restocking_fee_percent": self.world.fee.get(category, 0)}

    @tool(kind=READ)
    def list_policies(self) -> dict[str, Any]:
        """The domain's policies: what a write must respect, by policy id."""
        return {"policies": policy_rows("orders", tier=True)}

    @tool(kind=WRITE)
    def refund_item(self, order_id: Id, item_id: Id, amount: Amount, approval_id: Id | None = None) -> dict[str, Any]:
        """Refund an item of an order to the customer's payment method.

        Args:
            order_id: The order's id.
            item_id: The item to refund.
            amount: The amount in USD: the item's price, less a restocking fee where the policy charges one.
            approval_id: The manager's approval, needed over the limit.
        """
        order, item = self._item(order_id, item_id)
        self._check(order, item, "refund", True)  # the other policies first, as the refund itself checks them
        due = self.world.refund_amount(item)
        if due < cents(amount) <= item.price:
            raise self.violation("restocking_fee", f"{item.product} ({item.id}) was opened: a refund is at most "
                                                   f"{money(due):.2f} after the restocking fee")
        return super().refund_item(order_id, item_id, amount, approval_id)


def draft(d: Draws, difficulty: str) -> Generated:
    """The orders domain's `generate`'s world and brief, by the same draws, for the tier, which
    words its own request and solves its own gold: the goal is only the request's job (no words,
    no details) and the gold only its kind. What generate draws after the world only words its
    request, so it is not drawn here."""
    if difficulty != "easy":
        world, req, _, _ = _solvable(d, difficulty)
    else:  # `_solvable`'s world and request: every easy plan has 3 or 4 calls, the easy length, so none is drawn again
        world, req = _realised(d, difficulty)
    kind = "+".join(w.action for w in req.wants)
    return Generated(world, Goal(kind, "", (), job=req), Gold(kind, (), ()), _brief(world))


def _realised(d: Draws, difficulty: str) -> tuple[OrdersWorld, Request]:
    """The first world and request `_make_world` realises (an easy plan reads the order and a
    policy, then makes one exchange, store credit or refund, with or without an approval first:
    `solve` and `_solvable` need not run to tell its length)."""
    while True:
        try:
            world, req, _ = _make_world(d, difficulty)
        except _Retry:
            continue
        return world, req


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of an orders task: the customer's tier, a bulk return of six to ten items
    over two or three orders (`orders_bulk`), a near-duplicate order, the gold by the tier's
    rules, and a request that prefers a refund for every item (see the module docstring)."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, OrdersWorld)
    world.tier = d.pick(("standard", "plus"))
    if world.tier == "plus":
        world.extra_days, world.limit = EXTRA_DAYS, PLUS_LIMIT
    world.fee = dict(FEE)
    # Every row of the customer's orders has the same fields: a row's shape tells nothing of
    # whether the request is about it (no draw: the orders nobody asks about were not opened).
    # The items `build` and `_twin` make say both, so the world's items before them are all
    # that need saying, but for the order the request is about, whose items `build` replaces.
    target = world.orders[req.order_id]
    for order in world.orders.values():
        if order is not target:
            for item in order.items:
                item.opened = bool(item.opened)
                item.damaged = bool(item.damaged)
    bulk = build(d, world, target)
    # `build` numbers its items after every other item, in the order the request names them.
    _twin(d, world, world.orders[req.order_id], bulk.wants[0][1], int(bulk.wants[-1][1][2:]) + 1)
    gold = solve_bulk(world, bulk)
    gen.gold = Gold(gold.kind, gold.plan, gold.effects, _traps(world, bulk, gold), gen.gold.superseded)
    email = Detail("email", "email", d.pick(_V.templates["email_answer"]).format(email=world.email),
                   "ask" if d.chance(0.5) else "upfront")
    gen.goal = _goal(world, bulk, email)
    world.press = press(d, world, bulk, gold)
    # The tier's policies in the domain's place, the turn budget before them.
    gen.brief = restated(gen.brief, policy_lines("orders"), policy_lines("orders", tier=True), _TURNS)
    gen.paged = pages(gen.gold.plan, world)
    return gen


def _traps(world: OrdersWorld, req: BulkRequest, gold: Gold) -> tuple[str, ...]:
    """The tier's traps a bulk return holds, each named once (the outcomes are the gold's)."""
    got = {e.fields["item_id"]: (e.kind, e.fields["amount"]) for e in gold.effects}
    out = {"near_duplicate_order": None}  # each trap once, in the order first found
    windows, extra = _V.windows, world.extra_days  # `world.window`'s: the category's days and the tier's
    for order_id in req.orders:
        order = world.orders[order_id]
        age = world.age(order)
        for item in order.items:
            kind, amount = got.get(item.id, ("none", 0))
            window = windows[item.category] + extra
            if kind == "credit":
                out["past_return_window"] = None
            # The two days a count off by one decides: the last day (a refund) and the day after.
            if kind != "none" and age - window in (0, 1):
                out["window_last_day"] = None
            if kind == "refund" and age > window - extra:
                out["member_window"] = None
            if item.final_sale and not item.damaged:
                out["final_sale_asked"] = None
            if kind != "none" and item.final_sale:
                out["damaged_final_sale"] = None
            if kind == "refund" and amount < item.price:
                out["restocking_fee"] = None
            if kind == "refund" and item.opened and item.damaged and item.category in world.fee:
                out["damaged_opened"] = None
            if kind == "refund" and amount > world.limit:
                out["approval"] = None
    return tuple(out)


def _goal(world: OrdersWorld, req: BulkRequest, email: Detail) -> Goal:
    """What the customer says: the items of each order, named by its placing date; its email
    (up front, or only when asked as the task drew it); and, asked, what it wants per item."""
    items = {i.id: i for o in req.orders for i in world.orders[o].items}
    placed = list(zip(req.orders, dates(world, req)))
    named: dict[str, list[str]] = {o: [] for o in req.orders}  # each order's items, as the request names them
    for order_id, item_id in req.wants:
        named[order_id].append(f"the {items[item_id].product}")
    parts = []
    for order_id, date in placed:
        them = named[order_id]
        parts.append(f"From my order placed on {date}: {', '.join(them[:-1])} and {them[-1]}.")
    text = f"Hi, I'd like to return several things. {' '.join(parts)}{_PREFER_REFUND}"
    blurred = {}
    if email.reveal == "upfront":
        blurred["email"] = text
        text += _V.templates["email_inline"].format(email=world.email)
    details = [email]
    details += [Detail(f"order:{o}", "order", f"One is the order I placed on {date}.", "upfront")
                for o, date in placed]
    details += [Detail(f"product:{item_id}", "product", f"It's about the {items[item_id].product}.", "upfront")
                for _, item_id in req.wants]
    # One wish for every item, worded alike whatever the policies give each: asked what it would
    # accept, the customer must not tell the agent which items are past their windows.
    details.append(Detail("refund", "refund", _EACH_ITEM, "ask"))
    return Goal("bulk_return", text, tuple(details), blurred, job=req)


#: What a customer who presses says for the item, refused: reasons that change no policy, and
#: claims the records settle (`press`).
_LOYAL = "I've been a customer here for ten years."
_PROMISED = "The last agent I spoke to promised me a refund for it."
_DAMAGED = "It arrived damaged, you know."
_MEMBER = "I'm a Plus member, so I get more days."
_ASKS = ("Can't you refund the {product} anyway? {reason}", "Please, I'd really like my money back for the {product}. "
         "{reason}")


def press(d: Draws, world: OrdersWorld, req: BulkRequest, gold: Gold) -> Press | None:
    """Half the time, a customer who presses: for one item asked about that the policies give
    no refund (past its window, or final sale), it asks once or twice more for its money back
    when a plan refuses it, with a reason that changes no policy or a claim the records
    contradict (the item's row says it did not arrive damaged; find_customer says standard),
    then accepts. The draws come after every other draw of the tier."""
    if not d.chance(0.5):
        return None
    refunded = {e.fields["item_id"] for e in gold.effects if e.kind == "refund"}
    items = [(o, i) for o, item_id in req.wants if item_id not in refunded and world.orders[o].delivered is not None
             for i in world.orders[o].items if i.id == item_id]
    if not items:
        return None
    order_id, item = d.pick(items)
    reasons = [_LOYAL, _PROMISED]
    if item.final_sale and not item.damaged:
        reasons.append(_DAMAGED)
        item.damaged = False  # its row says so: the claim is checked against it
    elif world.tier == "standard":
        reasons.append(_MEMBER)
    said = d.sample(reasons, d.between(1, 2))
    return Press((item.product, item.id), ("refund",), tuple(ask.format(product=item.product, reason=r)
                                                          for ask, r in zip(_ASKS, said)))


def _twin(d: Draws, world: OrdersWorld, target: Order, item_id: str, number: int) -> None:
    """The near-duplicate: another order of the customer's, placed 1-3 days after the one the
    request is about (so it is listed first), that holds the same product, as item `number`
    (one past the highest item number). Only the date the customer gives tells the two apart:
    its row has the same fields as the item's (opened, arrived damaged, from the item: no
    draw), so its shape gives nothing away."""
    item = next(i for i in target.items if i.id == item_id)
    taken = {o.placed for o in world.orders.values()}
    day = target.placed + d.between(1, 3)
    while day in taken:
        day += 1
    twin = Item(f"I-{number}", item.product, item.category, d.pick(_PRODUCTS[item.product][2]), item.price, False,
                item.opened, item.damaged)
    order = Order(f"O-{int(target.id[2:]) + 37 * len(world.orders)}", day,
                  None if world.today - day < 6 else min(day + d.between(2, 5), world.today), [twin])
    world.orders[order.id] = order


def pages(plan: tuple[Step, ...], world: OrdersWorld) -> tuple[Step, ...]:
    """The gold `plan` of a bulk return with the pages it reads (`Generated.paged`): the customer's orders,
    newest first as `list_orders` lists them, up to the page of the last one a later call names.
    Of the values `solve_bulk`'s calls name, only an order id is an order's (the others are
    items, categories, amounts, approvals: ``I-``, ``AP-``, words, numbers), and only the
    `order_id` argument holds one; its `get_order` calls, right after the list, read every
    order its writes are for."""
    for k, step in enumerate(plan):
        if step.name != "list_orders":
            continue
        if step.arguments.get("customer_id") != world.customer_id:
            return plan  # the call fails: one page is read
        listed = {o.id: i for i, o in enumerate(sorted(world.orders.values(), key=_newest))}
        named = []  # the orders the plan reads, right after the list: each order its writes name
        for later in plan[k + 1:]:
            if later.name != "get_order":
                break
            named.append(listed.get(later.arguments["order_id"], -1))
        last = max(named, default=-1)
        return read_on(plan, k, len(listed), last if last >= 0 else None, [i for i in named if i >= 0])
    return plan


def _newest(order: Order) -> int:
    """`list_orders`' order: newest first."""
    return -order.placed


def _shifts(world: OrdersWorld, job: Any) -> list[Any]:
    """The goal shifts of a task: a bulk return's (`orders_bulk.shifts`) or the domain's."""
    return bulk_shifts(world, job) if isinstance(job, BulkRequest) else order_shifts(world, job)


#: What `load_domains` adds to the orders domain's spec.
TIER: dict[str, Any] = {
    "hard_toolkit": OrdersTierToolkit,
    # Newest first: the order of the date asked about settles it (its near-duplicate differs in
    # the date).
    "paged": {"list_orders": PagedList("orders", named_row("order_id"))},
    "harden": harden,
    "shifts": _shifts,
    # The bulk return replaces the request and the orders it is about; an easy task's world
    # (the customer, today, an order or two besides) is all it keeps.
    "tier_base": "easy",
    "draft": draft,
}
