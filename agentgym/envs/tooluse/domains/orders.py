"""Order support: look up an order, check the return policy, refund, credit or exchange.

The chain: find the customer by email, list their orders, open the right one, read the return
policy of each item's category, then refund (after an approval over the limit), issue store
credit (past the return window) or check the stock and exchange. Traps: items past their window,
where a refund breaks the policy and store credit is due instead. `get_order` reads back what
the writes did (each item's after-sales action); refunds, credits and exchanges are final.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Annotated, Any, Literal

from agentgym.core.tools import READ, WRITE, Bounds, MaxLen, ToolError, tool
from agentgym.envs.tooluse.base import (
    DAY_ISO,
    Detail,
    Draws,
    Effect,
    Goal,
    Gold,
    Step,
    ToolUseToolkit,
    World,
    WorldRecord,
    cents,
    compose_brief,
    money,
)
from agentgym.envs.tooluse.data import domain_split, read_json, str_list, strict
from agentgym.envs.tooluse.domains import DomainSpec, Generated, Shift
from agentgym.envs.tooluse.policies import policy, policy_lines
from agentgym.envs.tooluse.review import ReviewWords, parse_review

__all__ = ["OrdersToolkit", "OrdersWorld", "Order", "Item", "DOMAIN", "vocab", "money_back"]


@dataclass(frozen=True)
class OrdersVocab:
    split: str
    role: str
    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    catalog: dict[str, tuple[tuple[str, int, tuple[str, ...]], ...]]  # category -> (product, cents, variants)
    windows: dict[str, int]
    templates: dict[str, Any]
    review: ReviewWords


@lru_cache(maxsize=None)
def vocab() -> OrdersVocab:
    """The order-support vocabulary, parsed strictly from ``data/orders.json``."""
    d = strict(read_json("orders.json"), {"name", "split", "role", "first_names", "last_names", "catalog", "windows",
                                          "templates", "review"}, "orders.json")
    t = strict(d["templates"], {"refund", "exchange", "two", "two_refund", "two_exchange", "order_inline",
                                "email_inline", "email_answer"}, "orders.json.templates")
    catalog: dict[str, tuple[tuple[str, int, tuple[str, ...]], ...]] = {}
    for cat, products in d["catalog"].items():
        rows = []
        for p in products:
            if not (isinstance(p, list) and len(p) == 3 and isinstance(p[0], str) and isinstance(p[1], (int, float))):
                raise ValueError(f"orders.json.catalog.{cat}: expected [product, price, [variants]]")
            rows.append((p[0], round(p[1] * 100), str_list(p[2], f"catalog.{cat}.{p[0]}", 2)))
        catalog[cat] = tuple(rows)
    windows = d["windows"]
    if set(windows) != set(catalog) or not all(isinstance(v, int) and v > 2 for v in windows.values()):
        raise ValueError("orders.json.windows: one window (days > 2) per catalog category")
    return OrdersVocab(
        split=domain_split(d, "orders"), role=d["role"], first_names=str_list(d["first_names"], "first_names", 4),
        last_names=str_list(d["last_names"], "last_names", 4), catalog=catalog, windows=dict(windows),
        templates={k: (tuple(v) if isinstance(v, list) else v) for k, v in t.items()},
        review=parse_review(d["review"], "orders.json.review"),
    )


_V = vocab()
Category = Literal[tuple(_V.catalog)]  # type: ignore[valid-type]
Id = Annotated[str, MaxLen(32)]
Amount = Annotated[float, Bounds(ge=0, le=1_000_000)]
_LIMIT = round(float(policy("orders", "refund_approval").params["limit"]) * 100)
_PRODUCTS = {p: (cat, price, variants) for cat, rows in _V.catalog.items() for p, price, variants in rows}


@dataclass(slots=True)
class Item:
    id: str
    product: str
    category: str
    variant: str
    price: int
    final_sale: bool
    #: Whether the customer opened it (the hard tier's restocking fee; shown in its rows); None elsewhere.
    opened: bool | None = None
    #: Whether it arrived damaged (the hard tier's: no restocking fee, final sale or not; its
    #: rows show it); None, and not shown, elsewhere.
    damaged: bool | None = None

    def row(self) -> dict[str, Any]:
        row = {"item_id": self.id, "product": self.product, "category": self.category, "variant": self.variant,
               "price": money(self.price), "final_sale": self.final_sale}
        if self.opened is not None:
            row["opened"] = self.opened
        if self.damaged is not None:
            row["arrived_damaged"] = self.damaged
        return row


@dataclass(slots=True)
class Order:
    id: str
    placed: int
    delivered: int | None
    items: list[Item]

    @property
    def status(self) -> str:
        return "delivered" if self.delivered is not None else "shipped"


class OrdersWorld(World):
    """One customer's orders, the stock of the variants they might swap to, and today's date."""

    __slots__ = ("today", "customer_id", "customer_name", "email", "orders", "salt", "in_stock", "approvals",
                 "tier", "extra_days", "limit", "fee")

    def __init__(self, id_base: int, today: int, customer: tuple[str, str, str], orders: list[Order],
                 salt: int, in_stock: set[tuple[str, str]]) -> None:
        super().__init__(id_base)
        self.today = today
        self.customer_id, self.customer_name, self.email = customer
        self.orders = {o.id: o for o in orders}
        self.salt = salt
        self.in_stock = in_stock  # variants surely in stock; the others are by a stable 60% draw
        self.approvals: dict[str, tuple[str, str, int]] = {}
        #: The customer's membership tier, its extra days on every return window and its refund
        #: approval limit (cents): the hard tier's (`orders_tier`) sets them; None, 0 and the
        #: policy's limit elsewhere.
        self.tier: str | None = None
        self.extra_days = 0
        self.limit = _LIMIT
        #: The restocking fee of an opened item of a category refunded, in percent of its price:
        #: the hard tier's (`orders_tier`); none elsewhere.
        self.fee: dict[str, int] = {}

    def owned(self, detail_id: str) -> frozenset[str]:
        """The current variant of the item an exchange detail (``variant:<item id>``) is about."""
        item = self.item(detail_id.partition(":")[2]) if detail_id.startswith("variant:") else None
        return frozenset((item.variant.lower(),)) if item else frozenset()

    def choices(self, detail_id: str) -> tuple[str, ...]:
        """The variants of the item an exchange detail is about."""
        item = self.item(detail_id.partition(":")[2]) if detail_id.startswith("variant:") else None
        return _PRODUCTS[item.product][2] if item else ()

    def item(self, item_id: Any) -> Item | None:
        """The item of that id, of any order, or None."""
        return next((i for o in self.orders.values() for i in o.items if i.id == item_id), None)

    def refund_amount(self, item: Item) -> int:
        """What a refund of `item` pays (cents): its price, less the restocking fee of an opened
        item where its category has one (the fee rounded to the cent, half up); an item that
        arrived damaged carries no fee."""
        pct = self.fee.get(item.category, 0) if item.opened and not item.damaged else 0
        return item.price - (item.price * pct + 50) // 100

    def window(self, category: str) -> int:
        """The customer's return window for a category, in days from delivery."""
        return _V.windows[category] + self.extra_days

    def stocked(self, product: str, variant: str) -> bool:
        """Whether a variant is in stock (a crc32 draw: the same in every process)."""
        if (product, variant) in self.in_stock:
            return True
        return zlib.crc32(f"{self.salt}|{product}|{variant}".encode()) % 10 < 6

    def age(self, order: Order) -> int:
        assert order.delivered is not None
        return self.today - order.delivered


class OrdersToolkit(ToolUseToolkit):
    """Customer, order, policy, stock and after-sales tools over an `OrdersWorld`."""

    world: OrdersWorld
    domain = "orders"

    def _item(self, order_id: str, item_id: str) -> tuple[Order, Item]:
        order = self.world.orders.get(order_id)
        if order is None:
            raise ToolError(f"no order with id '{order_id}'")
        for item in order.items:
            if item.id == item_id:
                return order, item
        raise ToolError(f"order {order_id} has no item '{item_id}'")

    def _check(self, order: Order, item: Item, action: str, window: bool) -> None:
        """Refuse a second after-sales action on an item; enforce the policies of `action`."""
        if any(r.active and r.data.get("item_id") == item.id for r in self.world.records):
            raise ToolError(f"item {item.id} was already refunded, credited or exchanged")
        if order.delivered is None:
            raise self.violation("delivered_only", f"order {order.id} has not been delivered yet")
        if item.final_sale and not item.damaged:  # the hard tier's damaged items are returned all the same
            raise self.violation("final_sale", f"{item.product} ({item.id}) was a final-sale item")
        if window:
            age, limit = self.world.age(order), self.world.window(item.category)
            if age > limit:
                raise self.violation("return_window", f"{item.product} was delivered {age} days ago; the "
                                                      f"{item.category} window is {limit} days, so no {action}")

    @tool(kind=READ)
    def get_return_policy(self, category: Category) -> dict[str, Any]:
        """The return policy of a product category.

        Args:
            category: The product category.
        """
        return {"category": category, "return_window_days": _V.windows[category], "counted_from": "delivery date",
                "refund_approval_over": money(_LIMIT), "past_window": "store credit for the full price",
                "final_sale": "no refund, credit or exchange"}

    @tool(kind=READ)
    def find_customer(self, email: Annotated[str, MaxLen(120)]) -> dict[str, Any]:
        """Find a customer by email address.

        Args:
            email: The customer's email address.
        """
        if email.strip().lower() != self.world.email:
            raise ToolError(f"no customer with email '{email}'")
        return {"customer_id": self.world.customer_id, "name": self.world.customer_name}

    @tool(kind=READ)
    def list_orders(self, customer_id: Id) -> dict[str, Any]:
        """A customer's orders, newest first, with the products in each.

        Args:
            customer_id: The customer's id, from find_customer.
        """
        if customer_id != self.world.customer_id:
            raise ToolError(f"no customer with id '{customer_id}'")
        orders = sorted(self.world.orders.values(), key=lambda o: -o.placed)
        return {"orders": [{"order_id": o.id, "placed_on": DAY_ISO[o.placed], "status": o.status,
                            "products": [i.product for i in o.items]} for o in orders]}

    @tool(kind=READ)
    def get_order(self, order_id: Id) -> dict[str, Any]:
        """An order's details: dates, status and items with their prices.

        Args:
            order_id: The order's id.
        """
        o = self.world.orders.get(order_id)
        if o is None:
            raise ToolError(f"no order with id '{order_id}'")
        done = {r.data["item_id"]: r for r in self.world.records if r.active and r.data.get("order_id") == o.id}
        return {"order_id": o.id, "placed_on": DAY_ISO[o.placed],
                "delivered_on": DAY_ISO[o.delivered] if o.delivered is not None else None, "status": o.status,
                "items": [{**i.row(), "after_sales": _after_sales(done.get(i.id))} for i in o.items]}

    @tool(kind=READ)
    def check_stock(self, product: Annotated[str, MaxLen(80)], variant: Annotated[str, MaxLen(40)]) -> dict[str, Any]:
        """Whether a variant of a product is in stock.

        Args:
            product: The product's name.
            variant: The variant (size, colour, edition ...).
        """
        info = _PRODUCTS.get(product)
        if info is None:
            raise ToolError(f"unknown product '{product}'")
        if variant not in info[2]:
            raise ToolError(f"{product} comes in {', '.join(info[2])}, not '{variant}'")
        return {"product": product, "variant": variant, "in_stock": self.world.stocked(product, variant)}

    @tool(kind=WRITE)
    def request_refund_approval(self, order_id: Id, item_id: Id, amount: Amount) -> dict[str, Any]:
        """Ask a manager to approve a refund over the limit.

        Args:
            order_id: The order's id.
            item_id: The item to refund.
            amount: The refund's amount in USD.
        """
        self._item(order_id, item_id)
        if self.world.tier is not None and cents(amount) <= self.world.limit:  # the hard tier's rule
            raise self.violation("member_approval", f"a refund of {amount:.2f} is not over this customer's "
                                                    f"limit of {money(self.world.limit):.2f}, so it needs no approval")
        aid = self.world.new_id("AP")
        self.world.approvals[aid] = (order_id, item_id, cents(amount))
        return {"approval_id": aid, "status": "approved"}

    @tool(kind=WRITE)
    def refund_item(self, order_id: Id, item_id: Id, amount: Amount, approval_id: Id | None = None) -> dict[str, Any]:
        """Refund an item of an order to the customer's payment method.

        Args:
            order_id: The order's id.
            item_id: The item to refund.
            amount: The amount in USD, at most the item's price.
            approval_id: The manager's approval, needed over the limit.
        """
        order, item = self._item(order_id, item_id)
        c = cents(amount)
        if not 0 < c <= item.price:
            raise ToolError(f"the refund must be more than 0 and at most the price, {money(item.price):.2f}")
        self._check(order, item, "refund", True)
        if c > self.world.limit:
            appr = self.world.approvals.get(approval_id or "")
            if appr is None or appr[:2] != (order_id, item_id) or appr[2] < c:
                raise self.violation("refund_approval", f"a refund of {amount:.2f} is over {money(self.world.limit):.2f} "
                                                        "and has no approval covering it")
        rid = self.world.new_id("RF")
        self.world.add("refund", {"refund_id": rid, "order_id": order_id, "item_id": item_id, "amount": c})
        return {"refund_id": rid, "status": "refunded", "amount": money(c)}

    @tool(kind=WRITE)
    def issue_store_credit(self, order_id: Id, item_id: Id, amount: Amount) -> dict[str, Any]:
        """Give the customer store credit for an item of an order.

        Args:
            order_id: The order's id.
            item_id: The item the credit is for.
            amount: The credit in USD, at most the item's price.
        """
        order, item = self._item(order_id, item_id)
        c = cents(amount)
        if not 0 < c <= item.price:
            raise ToolError(f"the credit must be more than 0 and at most the price, {money(item.price):.2f}")
        self._check(order, item, "credit", False)
        cid = self.world.new_id("SC")
        self.world.add("credit", {"credit_id": cid, "order_id": order_id, "item_id": item_id, "amount": c})
        return {"credit_id": cid, "status": "issued", "amount": money(c)}

    @tool(kind=WRITE)
    def exchange_item(self, order_id: Id, item_id: Id, new_variant: Annotated[str, MaxLen(40)]) -> dict[str, Any]:
        """Exchange an item for another variant of the same product (ships when in stock).

        Args:
            order_id: The order's id.
            item_id: The item to exchange.
            new_variant: The variant to send instead.
        """
        order, item = self._item(order_id, item_id)
        variants = _PRODUCTS[item.product][2]
        if new_variant not in variants or new_variant == item.variant:
            raise ToolError(f"{item.product} can be swapped to {', '.join(v for v in variants if v != item.variant)}")
        if not self.world.stocked(item.product, new_variant):
            raise ToolError(f"{item.product} in {new_variant} is out of stock")
        self._check(order, item, "exchange", True)
        xid = self.world.new_id("EX")
        self.world.add("exchange", {"exchange_id": xid, "order_id": order_id, "item_id": item_id,
                                    "new_variant": new_variant})
        return {"exchange_id": xid, "status": "exchange shipped", "new_variant": new_variant}


#: How `get_order` names each after-sales record, and the field it shows beside the record's id.
_AFTER_SALES = {"refund": ("refunded", "refund_id", "amount"), "credit": ("store credit issued", "credit_id", "amount"),
                "exchange": ("exchanged", "exchange_id", "new_variant")}


def _after_sales(record: WorldRecord | None) -> dict[str, Any] | None:
    """What was done about an item, as `get_order` shows it (None: nothing yet)."""
    if record is None:
        return None
    action, key, detail = _AFTER_SALES[record.kind]
    value = record.data[detail]
    return {"action": action, key: record.data[key], detail: money(value) if detail == "amount" else value}


def names(world: World, fields: Any) -> dict[str, str]:
    """The product an item id stands for (the user's word for it, in review phrases)."""
    item = world.item(fields.get("item_id")) if isinstance(world, OrdersWorld) else None
    return {"product": item.product if item else "item"}


# ------------------------------------------------------------------------------- generation

_LENGTHS = {"easy": (3, 4), "medium": (5, 6), "hard": (7, 8)}
_KNOBS = {
    "easy": {"trap": 0.15, "ask": 0.0, "orders": (1, 2)},
    "medium": {"trap": 0.45, "ask": 0.4, "orders": (2, 3)},
    "hard": {"trap": 0.7, "ask": 0.5, "orders": (3, 4)},
}
_CATEGORIES = tuple(_V.catalog)
#: (category or None, expensive or None) -> the (category, product) pairs that qualify.
_POOLS: dict[tuple[str | None, bool | None], tuple[tuple[str, str], ...]] = {
    (cat, exp): tuple((c, p) for c, rows in _V.catalog.items() if cat is None or c == cat
                      for p, price, _ in rows if exp is None or (price > _LIMIT) == exp)
    for cat in (None, *_CATEGORIES) for exp in (None, True, False)
}


@dataclass(slots=True)
class Want:
    """One thing the customer wants done with one item."""

    item_id: str
    action: str  # "return" or "exchange"
    variant: str | None = None


@dataclass(slots=True)
class Request:
    order_id: str
    by_email: bool
    wants: tuple[Want, ...]


class _Retry(Exception):
    """A drawn task that cannot be realised or misses the length range; the generator draws again."""


def _product(d: Draws, exclude: set[str], category: str | None = None, expensive: bool | None = None
             ) -> tuple[str, str]:
    """A (category, product) not in `exclude`; _Retry when none qualifies."""
    pool = _POOLS[category, expensive]
    for _ in range(6):
        pick = d.pick(pool) if pool else None
        if pick is not None and pick[1] not in exclude:
            return pick
    rest = [cp for cp in pool if cp[1] not in exclude]
    if not rest:
        raise _Retry
    return d.pick(rest)


#: Categories with a return window short enough (or long enough) that one delivery date can be
#: past the first and inside the second, and those that sell items over the approval limit.
_SHORT = tuple(c for c in _CATEGORIES if _V.windows[c] <= min(_V.windows.values()) + 2)
_LONG = tuple(c for c in _CATEGORIES if _V.windows[c] >= max(_V.windows.values()) - 2)
_HAS_EXPENSIVE = tuple(c for c in _CATEGORIES if _POOLS[c, True])
Shape = list[tuple[str, bool, bool]]  # (action, in_window, approval) per wanted item


def _shape(d: Draws, difficulty: str) -> tuple[bool, Shape, list[str | None]]:
    """(by_email, shape, a category per item or None), sized to the difficulty's plan length."""
    trap = _KNOBS[difficulty]["trap"]

    def one(p_exchange: float, p_approval: float) -> tuple[str, bool, bool]:
        if d.chance(p_exchange):
            return ("exchange", True, False)
        late = d.chance(trap)
        return ("return", not late, (not late) and d.chance(p_approval))

    if difficulty != "hard":
        return difficulty == "medium", [one(0.35, 0.5)], [None]
    # Hard: two items of one order (at least one return): 3 look-ups, one policy read per
    # category, and per item its action (+ approval, + stock check): 7-8 calls in all.
    while True:
        shape = [one(0.3, 0.4), one(0.3, 0.4)]
        if shape[0][0] == shape[1][0] == "exchange":
            continue
        calls = 3 + sum(2 if a == "exchange" else 1 + int(ap) for a, _, ap in shape)
        mixed = shape[0][1] != shape[1][1]
        n_cats = [n for n in (1, 2) if 7 <= calls + n <= 8 and not (mixed and n == 1)]
        if not n_cats:
            continue
        if d.pick(n_cats) == 1:
            both_expensive = shape[0][2] and shape[1][2]
            cat = "electronics" if both_expensive else d.pick(_HAS_EXPENSIVE if any(ap for *_, ap in shape)
                                                              else _CATEGORIES)
            return True, shape, [cat, cat]
        if mixed:  # the late item needs the shorter window
            cats = [d.pick(_SHORT) if not ok else d.pick(_LONG) for _, ok, _ in shape]
        else:
            cats = d.sample(_CATEGORIES, 2)
        if all(c in _HAS_EXPENSIVE or not ap for c, (_, _, ap) in zip(cats, shape)):
            return True, shape, cats


def _make_world(d: Draws, difficulty: str) -> tuple[OrdersWorld, Request, bool]:
    knobs = _KNOBS[difficulty]
    by_email, shape, categories = _shape(d, difficulty)
    today = d.between(120, 330)
    used: set[str] = set()
    item_base = d.between(1000, 8000)
    made: list[Item] = []

    def new_item(category: str, product: str, final_sale: bool = False) -> Item:
        _, price, variants = _PRODUCTS[product]
        used.add(product)
        made.append(Item(f"I-{item_base + len(made)}", product, category, d.pick(variants), price, final_sale))
        return made[-1]

    targets: list[Item] = []
    for cat, (action, in_window, approval) in zip(categories, shape):
        expensive = True if approval else (False if action == "return" and in_window else None)
        targets.append(new_item(*_product(d, used, cat, expensive)))
    # Delivery age: inside every on-time item's window, past every late item's window.
    windows = [_V.windows[t.category] for t in targets]
    in_w = [w for w, (_, ok, _) in zip(windows, shape) if ok]
    out_w = [w for w, (_, ok, _) in zip(windows, shape) if not ok]
    lo_age = max(out_w) + 2 if out_w else 1
    hi_age = min(in_w) - 2 if in_w else lo_age + 40
    if lo_age > hi_age:
        raise _Retry
    delivered = today - d.between(lo_age, hi_age)
    placed = delivered - d.between(2, 5)
    others = [new_item(*_product(d, used), final_sale=d.chance(0.2))
              for _ in range(d.between(0, 1 if len(shape) == 2 else 2))]
    order_base = d.between(10000, 89999)
    items = targets + others
    if len(items) > 1 and d.chance(0.5):  # the wanted item is not always listed first
        items.reverse()
    orders = [Order(f"O-{order_base}", placed, delivered, items)]
    days = {placed}
    for k in range(d.between(*knobs["orders"])):
        day = today - d.between(1, 90)
        while day in days:
            day -= 1
        days.add(day)
        o_items = [new_item(*_product(d, used), final_sale=d.chance(0.25)) for _ in range(d.between(1, 2))]
        orders.append(Order(f"O-{order_base + 37 * (k + 1)}", day,
                            None if today - day < 6 else day + d.between(2, 5), o_items))
    in_stock: set[tuple[str, str]] = set()
    wants = []
    for it, (action, _, _) in zip(targets, shape):
        if action == "exchange":
            variants = _PRODUCTS[it.product][2]
            v = d.pick([v for v in variants if v != it.variant])
            in_stock.add((it.product, v))
            # Another variant in stock too, where the product has one (no draw: the first such).
            alt = next((x for x in variants if x not in (it.variant, v)), None)
            if alt is not None:
                in_stock.add((it.product, alt))
            wants.append(Want(it.id, "exchange", v))
        else:
            wants.append(Want(it.id, "return"))
    first, last = d.pick(_V.first_names), d.pick(_V.last_names)
    email = f"{first}.{last}{d.between(1, 99)}@example.com".lower()
    world = OrdersWorld(d.between(100, 899), today, (f"C-{d.between(1000, 9999)}", f"{first} {last}", email),
                        orders, d.below(1 << 30), in_stock)
    return world, Request(orders[0].id, by_email, tuple(wants)), any(not ok for _, ok, _ in shape)


def solve(world: OrdersWorld, req: Request) -> Gold:
    """The reference solver: the calls a careful support agent makes, and the effects they leave."""
    plan: list[Step] = []
    if req.by_email:
        plan.append(Step("find_customer", {"email": world.email}))
        plan.append(Step("list_orders", {"customer_id": world.customer_id}))
    order = world.orders[req.order_id]
    plan.append(Step("get_order", {"order_id": order.id}))
    items = {i.id: i for i in order.items}
    seen: list[str] = []
    for w in req.wants:
        cat = items[w.item_id].category
        if cat not in seen:
            seen.append(cat)
            plan.append(Step("get_return_policy", {"category": cat}))
    effects: list[Effect] = []
    approvals = 0
    for w in req.wants:
        item = items[w.item_id]
        base = {"order_id": order.id, "item_id": item.id}
        if w.action == "exchange":
            plan.append(Step("check_stock", {"product": item.product, "variant": w.variant}))
            plan.append(Step("exchange_item", {**base, "new_variant": w.variant}))
            effects.append(Effect(f"exchange:{item.id}", item.id, "exchange", {**base, "new_variant": w.variant},
                                  f"exchange {item.product} ({item.id}) for {w.variant}"))
        else:
            inside = world.age(order) <= world.window(item.category)
            approvals = money_back(world, order, item, "refund" if inside else "credit", plan, effects, approvals)
    return Gold("after_sales", tuple(plan), tuple(effects))


def money_back(world: OrdersWorld, order: Order, item: Item, kind: str, plan: list[Step], effects: list[Effect],
               approvals: int) -> int:
    """Add to `plan` and `effects` a refund of `item` (what `refund_amount` pays; an approval
    first over the limit) or, `kind` "credit", store credit for its full price; the number of
    approvals the plan then asks for."""
    oid, iid = order.id, item.id  # the call's and the effect's first fields
    if kind == "credit":
        plan.append(Step("issue_store_credit", {"order_id": oid, "item_id": iid, "amount": money(item.price)}))
        effects.append(Effect(f"credit:{iid}", iid, "credit", {"order_id": oid, "item_id": iid, "amount": item.price},
                              f"store credit {money(item.price):.2f} for {item.product} ({iid})"))
        return approvals
    amount = world.refund_amount(item)
    args: dict[str, Any] = {"order_id": oid, "item_id": iid, "amount": money(amount)}
    if amount > world.limit:
        aid = world.predict_id("AP", approvals)
        approvals += 1
        plan.append(Step("request_refund_approval", dict(args), {"approval_id": aid}))
        args["approval_id"] = aid
    plan.append(Step("refund_item", args))
    effects.append(Effect(f"refund:{iid}", iid, "refund", {"order_id": oid, "item_id": iid, "amount": amount},
                          f"refund {money(amount):.2f} for {item.product} ({iid})"))
    return approvals


_REFUND_PLEASE = "I'd like my money back for the {product}, please."
_CREDIT_IS_FINE = "A refund for the {product} if you can; if its return window has passed, store credit is fine."


def _solvable(d: Draws, difficulty: str) -> tuple[OrdersWorld, Request, bool, Gold]:
    """A world and request whose gold's plan has the difficulty's length (drawn again until it
    has), whether it holds the trap, and the gold."""
    lo, hi = _LENGTHS[difficulty]
    while True:
        try:
            world, req, trap = _make_world(d, difficulty)
        except _Retry:
            continue
        gold = solve(world, req)
        if lo <= len(gold.plan) <= hi:
            return world, req, trap, gold


def _brief(world: OrdersWorld) -> str:
    return compose_brief(
        _V.role,
        "Resolve the customer's request with the tools, step by step.",
        [f"Today is {DAY_ISO[world.today]}. Prices are in USD; dates are YYYY-MM-DD. Product categories: "
         f"{', '.join(_CATEGORIES)}."],
        policy_lines("orders"),
    )


def generate(d: Draws, difficulty: str) -> Generated:
    """An order-support task: the world, the user's request, and the reference solver's gold."""
    world, req, trap, gold = _solvable(d, difficulty)
    knobs = _KNOBS[difficulty]
    t = _V.templates
    order = world.orders[req.order_id]
    items = {i.id: i for i in order.items}
    order_txt = "" if req.by_email else t["order_inline"].format(order_id=order.id)
    placed = DAY_ISO[order.placed]
    if len(req.wants) == 1:
        w = req.wants[0]
        product = items[w.item_id].product
        if w.action == "exchange":
            text = d.pick(t["exchange"]).format(product=product, placed=placed, order=order_txt, variant=w.variant)
        else:
            text = d.pick(t["refund"]).format(product=product, placed=placed, order=order_txt)
    else:
        parts = [t["two_exchange"].format(product=items[w.item_id].product, variant=w.variant)
                 if w.action == "exchange" else t["two_refund"].format(product=items[w.item_id].product)
                 for w in req.wants]
        text = d.pick(t["two"]).format(placed=placed, order=order_txt, first=parts[0], second=parts[1])
    ask = req.by_email and d.chance(knobs["ask"])
    blurred = {}
    if req.by_email and not ask:
        blurred["email"] = text
        text += t["email_inline"].format(email=world.email)
    details = [Detail("email", "email", d.pick(t["email_answer"]).format(email=world.email),
                      "ask" if ask else "upfront")]
    details.append(Detail("order", "order", f"It's the order I placed on {placed}{order_txt}.", "upfront"))
    for w in req.wants:
        it = items[w.item_id]
        details.append(Detail(f"product:{it.id}", "product", f"It's about the {it.product}.", "upfront"))
        if w.action == "exchange":
            details.append(Detail(f"variant:{it.id}", "variant", f"I'd like the {w.variant} {it.product} instead.",
                                  "upfront"))
        else:
            # Asked whether store credit would do, a customer who wants a refund says so; past the
            # window it takes what the policy gives (never a yes to what breaks it).
            late = any(e.id == f"credit:{it.id}" for e in gold.effects)
            details.append(Detail(f"refund:{it.id}", "refund", (_CREDIT_IS_FINE if late else _REFUND_PLEASE).format(
                product=it.product), "ask"))
    kind = "+".join(w.action for w in req.wants)
    gold = Gold(kind, gold.plan, gold.effects, ("past_return_window",) if trap else ())
    return Generated(world, Goal(kind, text, tuple(details), blurred, job=req), gold, _brief(world))


def shifts(world: OrdersWorld, req: Request) -> list[Shift]:
    """Goal shifts the task offers: another variant in an exchange (one that is in stock), or,
    with two items in the request, keeping one of them after all."""
    items = {i.id: i for i in world.orders[req.order_id].items}
    out = []
    for k, w in enumerate(req.wants):
        product = items[w.item_id].product
        if w.action == "exchange":
            for v in _PRODUCTS[product][2]:
                if v not in (w.variant, items[w.item_id].variant) and (product, v) in world.in_stock:
                    wants = tuple(Want(x.item_id, x.action, v) if i == k else x for i, x in enumerate(req.wants))
                    out.append(Shift(f"variant:{w.item_id}", "variant", w.variant, v,
                                     f"Actually, could I get the {v} {product} instead of the {w.variant} one?",
                                     f"I'd like the {v} {product} instead.", solve(world, replace(req, wants=wants))))
        if len(req.wants) == 2:
            out.append(Shift(f"product:{w.item_id}", "product", w.action, "keep",
                             f"Actually, I'll keep the {product} after all; please just take care of the other item.",
                             f"I'm keeping the {product}.", solve(world, replace(req, wants=(req.wants[1 - k],)))))
    return out


DOMAIN = DomainSpec(
    name="orders",
    split=_V.split,
    toolkit=OrdersToolkit,
    generate=generate,
    description="refund, credit or exchange items of a customer's order under a return policy",
    vocabulary={"product": tuple(_PRODUCTS), "variant": tuple(sorted({v for _, _, vs in _PRODUCTS.values() for v in vs}))},
    shifts=shifts,
    review=_V.review,
    names=names,
    # The hard tier's parts live in `orders_tier`, which `load_domains` adds to this spec.
)
