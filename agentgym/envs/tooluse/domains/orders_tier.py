"""The orders domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

Policies that interact: what a return may get depends on the item's price, the days since its
delivery and the customer's membership tier. A Plus member has more days on every return window
and a higher refund approval limit, and no approval may be asked for a refund that does not need
one (``data/policies.json``, ``orders_tier``; the brief and `list_policies` show them,
`find_customer` shows the tier). The order is mostly delivered so that an item's age falls
between its window and the window with the Plus days: a refund for a Plus member, store credit
for a standard one. The customer always prefers a refund, so for a standard member it asks for
what the policy forbids: the assistant must not refund and must issue the credit the policy
allows instead. The reference solver computes the gold with the tier's rules (`orders.solve`
reads them from the world). More decisions per item: every item says whether it was opened, and
a refund of an opened item of a category with a restocking fee (electronics, home) is its price
less the fee, the approval limit judged on that amount; half the time the order also holds a
final-sale item the customer asks to return too, which gets nothing. Also: the customer's orders
come in pages, and a near-duplicate order holds the same product.
"""

from __future__ import annotations

from typing import Annotated, Any

from agentgym.core.tools import READ, WRITE, MaxLen, tool
from agentgym.envs.tooluse.base import DAY_ISO, Detail, Draws, Gold, cents, money
from agentgym.envs.tooluse.domains import Generated
from agentgym.envs.tooluse.domains.orders import (
    _CREDIT_IS_FINE,
    _LIMIT,
    _PRODUCTS,
    _REFUND_PLEASE,
    _V,
    Amount,
    Category,
    Id,
    Item,
    Order,
    OrdersToolkit,
    OrdersWorld,
    solve,
)
from agentgym.envs.tooluse.paging import Page, PagedList, named_row, paged
from agentgym.envs.tooluse.policies import policy, policy_lines, policy_rows

__all__ = ["OrdersTierToolkit", "harden", "TIER", "EXTRA_DAYS", "PLUS_LIMIT", "FEE"]

#: A Plus member's extra days on every return window, and its refund approval limit (cents).
EXTRA_DAYS = int(policy("orders_tier", "member_window").params["extra_days"])
PLUS_LIMIT = round(float(policy("orders_tier", "member_approval").params["limit"]) * 100)
#: The restocking fee of an opened item refunded, in percent of its price, by category.
FEE = {category: int(pct) for category, pct in policy("orders_tier", "restocking_fee").params.items()}
#: What a customer adds about a final-sale item of the order, which the policy gives nothing for.
_ALSO_FINAL = " I'd also like to return the {product}."
_FINAL_SAID = "I'd like my money back for the {product} too, if the policy allows anything for it."
#: What a customer of the tier adds to a request with a return: it would rather have a refund
#: (for a standard member past the window, the policy forbids one).
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


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of an orders task: the customer's tier, a delivery date that makes the tier
    decide, a near-duplicate order, the gold by the tier's rules, and a request that prefers a
    refund (see the module docstring)."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, OrdersWorld)
    world.tier = d.pick(("standard", "plus"))
    if world.tier == "plus":
        world.extra_days, world.limit = EXTRA_DAYS, PLUS_LIMIT
    target = world.orders[req.order_id]
    before = DAY_ISO[target.placed]
    retimed = d.chance(0.8) and _retime(d, world, target, req)
    assert target.delivered is not None
    age = world.today - target.delivered
    if not retimed and any(abs(age - world.window(i.category)) < 2 for i in target.items):
        world.tier, world.extra_days, world.limit = "standard", 0, _LIMIT  # no Plus window ends at the age
    _twin(d, world, target, req.wants[0].item_id)
    final = _open_and_finalise(d, world, target, req)
    gold = solve(world, req)
    credit = {e.fields["item_id"] for e in gold.effects if e.kind == "credit"}
    traps = [t for t in gen.gold.traps if t != "past_return_window"]
    traps += ["past_return_window"] * bool(credit) + ["member_window"] * retimed + ["near_duplicate_order"]
    refunded = {e.fields["item_id"]: e.fields["amount"] for e in gold.effects if e.kind == "refund"}
    traps += ["restocking_fee"] * any(refunded[i.id] < i.price for i in target.items if i.id in refunded)
    traps += ["final_sale_asked"] * (final is not None)
    gen.gold = Gold(gen.gold.kind, gold.plan, gold.effects, tuple(traps), gen.gold.superseded)
    items = {i.id: i for i in target.items}
    for det in gen.goal.details:  # the goal is the task's own, made fresh
        slot, _, item_id = det.id.partition(":")
        if slot == "refund":
            said = _CREDIT_IS_FINE if item_id in credit else _REFUND_PLEASE
            det.statement = said.format(product=items[item_id].product)
    gen.rename(before, DAY_ISO[target.placed])
    rules = policy_lines("orders")
    gen.brief = gen.brief.replace(rules, policy_lines("orders", tier=True))
    if final is not None:  # asked about too; the policy gives it nothing
        also = _ALSO_FINAL.format(product=final.product)
        gen.goal.request += also
        gen.goal.blurred = {k: v + also for k, v in gen.goal.blurred.items()}
        gen.goal.details = (*gen.goal.details,
                            Detail(f"product:{final.id}", "product", f"It's about the {final.product}.", "upfront"),
                            Detail(f"refund:{final.id}", "refund", _FINAL_SAID.format(product=final.product), "ask"))
    if any(w.action == "return" for w in req.wants):
        gen.goal.request += _PREFER_REFUND
        gen.goal.blurred = {k: v + _PREFER_REFUND for k, v in gen.goal.blurred.items()}
    return gen


def _open_and_finalise(d: Draws, world: OrdersWorld, target: Order, req: Any) -> Item | None:
    """The restocking fee and a final-sale item asked about: every item says whether it was
    opened (a returned item 75% of the time, the others 30%); half the time the order also holds
    a final-sale item of a product no order has, which the customer asks to return too (it is
    returned as that item, or None)."""
    world.fee = dict(FEE)
    wanted = {w.item_id for w in req.wants if w.action == "return"}
    for order in world.orders.values():
        for item in order.items:
            item.opened = d.chance(0.75 if item.id in wanted else 0.3)
    if not d.chance(0.5):
        return None
    held = {i.product for o in world.orders.values() for i in o.items}
    product = d.pick([p for p in _PRODUCTS if p not in held])
    category, price, variants = _PRODUCTS[product]
    number = max(int(i.id[2:]) for o in world.orders.values() for i in o.items) + 1
    final = Item(f"I-{number}", product, category, d.pick(variants), price, True, d.chance(0.5))
    target.items.insert(d.below(len(target.items) + 1), final)
    return final


def _retime(d: Draws, world: OrdersWorld, target: Order, req: Any) -> bool:
    """Move the order's delivery (and its placing, as many days) so that a returned item's age
    lies past its window but within the window with a Plus member's days; False (nothing moved)
    where an exchange would then fall out of its window or the placing date is another order's."""
    items = {i.id: i for i in target.items}
    returns = [items[w.item_id] for w in req.wants if w.action == "return"]
    if not returns:
        return False
    age = world.window(d.pick(returns).category) - world.extra_days + d.between(2, EXTRA_DAYS - 2)
    # Never within a day of a window's end, with or without the Plus days (no off-by-one reading).
    ends = {_V.windows[items[w.item_id].category] + extra for w in req.wants for extra in (0, EXTRA_DAYS)}
    if any(abs(age - end) < 2 for end in ends) or any(
            age > world.window(items[w.item_id].category) for w in req.wants if w.action == "exchange"):
        return False
    assert target.delivered is not None
    placed = world.today - age - (target.delivered - target.placed)
    if any(o.placed == placed for o in world.orders.values() if o is not target):
        return False
    target.placed, target.delivered = placed, world.today - age
    return True


def _twin(d: Draws, world: OrdersWorld, target: Order, item_id: str) -> None:
    """The near-duplicate: another order of the customer's, placed 1-3 days after the one the
    request is about (so it is listed first), that holds the same product. Only the date the
    customer gives tells the two apart."""
    item = next(i for i in target.items if i.id == item_id)
    taken = {o.placed for o in world.orders.values()}
    day = target.placed + d.between(1, 3)
    while day in taken:
        day += 1
    number = max(int(i.id[2:]) for o in world.orders.values() for i in o.items) + 1
    twin = Item(f"I-{number}", item.product, item.category, d.pick(_PRODUCTS[item.product][2]), item.price, False)
    order = Order(f"O-{int(target.id[2:]) + 37 * len(world.orders)}", day,
                  None if world.today - day < 6 else min(day + d.between(2, 5), world.today), [twin])
    world.orders[order.id] = order


#: What `load_domains` adds to the orders domain's spec.
TIER: dict[str, Any] = {
    "hard_toolkit": OrdersTierToolkit,
    # Newest first: the order of the date asked about settles it (its near-duplicate differs in
    # the date).
    "paged": {"list_orders": PagedList("orders", named_row("order_id"))},
    "harden": harden,
}
