"""The orders hard tier's bulk return: six to ten items over two or three orders, each its own outcome.

The customer asks to return every item it names, from orders it names by their placing dates,
and would rather have its money back. Per item the policies give exactly one outcome, from the
item's row (`get_order`: category, price, final sale, opened, arrived damaged), its order's
delivery date against today, and the customer's tier (`find_customer`):

* final sale and not damaged: nothing (the customer is told);
* past the window (category's days, plus the Plus days; the window's last day counts): store
  credit for the full price;
* inside it: a refund of the price, less the restocking fee of an opened item of a category that
  has one unless it arrived damaged; over the tier's approval limit, an approval first.

An order's delivery age is drawn near one of its items' window ends (on the last day, a day
either side, or a few days off) a third of the time each way, so day counting across month ends
decides items. Which mechanics an episode holds varies with the draw.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentgym.envs.tooluse.base import DAY_ISO, Draws, Effect, Gold, Step
from agentgym.envs.tooluse.domains import Shift
from agentgym.envs.tooluse.domains.orders import _PRODUCTS, Item, Order, OrdersWorld, money_back

__all__ = ["BulkRequest", "outcome", "solve_bulk", "build", "dates", "shifts"]

#: How many orders the request is about, and how many items each holds that it names.
_ORDERS = (2, 2, 3)
_PER_ORDER = {2: (3, 5), 3: (2, 3)}
#: The chance that an item is final sale, arrived damaged, and was opened.
_P_FINAL, _P_DAMAGED, _P_OPENED = 0.2, 0.2, 0.55


@dataclass(frozen=True, slots=True)
class BulkRequest:
    """The items the customer asks to return: (order id, item id) each, in the order it names
    them, and the orders asked about, in the order it names them (`of`: both from the items)."""

    wants: tuple[tuple[str, str], ...]
    orders: tuple[str, ...]

    @classmethod
    def of(cls, wants: tuple[tuple[str, str], ...]) -> BulkRequest:
        """The request for `wants`."""
        return cls(wants, tuple(dict.fromkeys([order_id for order_id, _ in wants])))


def outcome(world: OrdersWorld, order: Order, item: Item) -> tuple[str, int]:
    """What the policies give for returning `item` of `order`: ("refund" | "credit" | "none", cents)."""
    if order.delivered is None or (item.final_sale and not item.damaged):
        return "none", 0
    if world.age(order) > world.window(item.category):
        return "credit", item.price
    return "refund", world.refund_amount(item)


def solve_bulk(world: OrdersWorld, req: BulkRequest) -> Gold:
    """The reference solver of a bulk return: find the customer, read every order asked about
    and the policy of every category, then per item its write (an approval first over the limit)."""
    plan = [Step("find_customer", {"email": world.email}),
            Step("list_orders", {"customer_id": world.customer_id})]
    plan += [Step("get_order", {"order_id": o}) for o in req.orders]
    items = {i.id: (order, i) for order in map(world.orders.__getitem__, req.orders) for i in order.items}
    pairs = [items[item_id] for _, item_id in req.wants]
    plan += [Step("get_return_policy", {"category": c}) for c in dict.fromkeys(i.category for _, i in pairs)]
    effects: list[Effect] = []
    approvals = 0
    for order, item in pairs:
        kind = outcome(world, order, item)[0]
        if kind != "none":
            approvals = money_back(world, order, item, kind, plan, effects, approvals)
    return Gold("bulk_return", tuple(plan), tuple(effects))


def build(d: Draws, world: OrdersWorld, target: Order) -> BulkRequest:
    """Turn `world` into a bulk return's: `target` and one or two new orders of the customer,
    each with the items the request names (products no other order of the world holds, so a
    product and a date name one item), delivered at ages drawn near their windows' ends."""
    n_orders = d.pick(_ORDERS)
    lo, hi = _PER_ORDER[n_orders]
    held = {i.product for o in world.orders.values() if o is not target for i in o.items}
    free = [p for p in _PRODUCTS if p not in held]
    sizes = [d.between(lo, hi) for _ in range(n_orders)]
    while sum(sizes) > len(free):  # too few products left: smaller orders (never below two)
        sizes[sizes.index(max(sizes))] -= 1
    products = d.sample(free, sum(sizes))
    # `_make_world` numbers items and orders in the order it makes them, the target's first: the
    # last order's last item has the highest item number, and the last order the highest number.
    last = next(reversed(world.orders.values()))
    number, order_number = int(last.items[-1].id[2:]) + 1, int(last.id[2:])
    taken = {o.placed for o in world.orders.values() if o is not target}
    wants: list[tuple[str, str]] = []
    rnd = d.random  # the item's draws written out: d.chance(p) is rnd() < p, d.pick(seq) seq[int(rnd() * len(seq))]
    for k, size in enumerate(sizes):
        items = []
        for product in products[:size]:
            category, price, variants = _PRODUCTS[product]
            damaged = rnd() < _P_DAMAGED  # drawn first, then the variant, final sale and opened
            items.append(Item(f"I-{number}", product, category, variants[int(rnd() * len(variants))], price,
                              rnd() < _P_FINAL, rnd() < _P_OPENED, damaged))
            number += 1
        products = products[size:]
        order = target if k == 0 else Order(f"O-{order_number + 37 * k}", 0, 0, [])
        order.items = items
        order.delivered = world.today - _age(d, world, items)
        order.placed = order.delivered - d.between(2, 5)
        while order.placed in taken:
            order.placed -= 1
        taken.add(order.placed)
        world.orders[order.id] = order
        wants += [(order.id, i.id) for i in items]
    return BulkRequest.of(tuple(wants))


def _age(d: Draws, world: OrdersWorld, items: list[Item]) -> int:
    """An order's delivery age: a third of the time on or next to one of its items' window ends
    (the window's last day, or a day either side), a third a few days off one, else anywhere in
    3 to 70 days."""
    end = world.window(d.pick(items).category)
    roll = d.below(3)
    if roll == 0:
        return end + d.pick((-1, 0, 0, 1))
    if roll == 1:
        return end + d.pick((-4, -3, -2, 2, 3, 4))
    return d.between(3, 70)


def dates(world: OrdersWorld, req: BulkRequest) -> list[str]:
    """The placing date of each order asked about, as the request names them."""
    return [DAY_ISO[world.orders[o].placed] for o in req.orders]


def shifts(world: OrdersWorld, req: BulkRequest) -> list[Shift]:
    """Goal shifts a bulk return offers: keeping one item after all that the policies give
    something for (the gold then leaves it alone)."""
    out = []
    for order_id, item_id in req.wants:
        order = world.orders[order_id]
        item = next(i for i in order.items if i.id == item_id)
        if outcome(world, order, item)[0] == "none":
            continue
        rest = BulkRequest.of(tuple(w for w in req.wants if w[1] != item_id))
        out.append(Shift(f"product:{item_id}", "product", "return", "keep",
                         f"Actually, I'll keep the {item.product} after all; please just take care of the other items.",
                         f"I'm keeping the {item.product}.", solve_bulk(world, rest)))
    return out
