"""Orders: refund, credit or exchange the items a customer asks about, as the policies say.

As the brief says: an item can be refunded or exchanged only within its category's return
window, counted in days from its delivery date to today (the brief says what day it is); past
it, store credit for the full price instead; a refund over the limit needs a manager's approval
first; final-sale items and orders not yet delivered get nothing (the customer is told, and the
other items asked about are done). Where the brief charges a restocking fee, an opened item of
a category it names is refunded its price less the fee, and the approval follows that amount; an
item that arrived damaged carries no fee and is not final sale. A request that names several
orders by their placing dates ("From my order placed on ...: the lamp and the atlas.") is worked
order by order, each item decided by itself. The orders and the policies are read twice before
anything is done (refunds, credits and exchanges are final), and a variant the stock check says
is out of stock is checked again before the customer is told.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from agentgym.agents.experts.briefs import figure, today
from agentgym.agents.experts.casefile import CaseFile, Read
from agentgym.agents.experts.tooluse_playbooks.base import Playbook
from agentgym.agents.experts.words import has_phrase, has_word, near, sentences
from agentgym.agents.transcript import DATE, EMAIL
from agentgym.agents.turns import Call

__all__ = ["OrdersPlaybook"]

_ORDER_ID = re.compile(r"\bO-\d+\b")
_AFTER_SALES = {"refund_item": "refunded", "issue_store_credit": "store credit issued", "exchange_item": "exchanged"}


def _mentions(text: str, product: str) -> bool:
    """Whether `text` names `product`, as it is or with a slip in a word."""
    exact = re.search(rf"(?<![\w-]){re.escape(product)}(?![\w-])", text, re.I) is not None
    return exact or has_phrase(text, product)


def _kept(text: str, product: str) -> bool:
    """Whether a message says the customer keeps `product` after all ("I'll keep the lamp"): a
    clause that says keep and names it (another clause may still ask about another item)."""
    return any(has_word(clause, "keep", "keeping") and _mentions(clause, product)
               for clause in re.split(r"[.;!?]\s*", text))


def _variant_asked(text: str) -> str | None:
    """The variant a sentence asks to swap to: "... for the L one", "... for the 8 inch variant"."""
    for m in re.finditer(r"\bfor the (.+?) ([A-Za-z]+)\s*[?.!]", text):
        if m.group(2).lower() == "one" or near(m.group(2).lower(), "variant"):
            return m.group(1)
    return None


def _variant_named(text: str, product: str) -> str | None:
    """The variant a message names before a product ("the black smart watch"), or None."""
    m = re.search(rf"\bthe ((?:[\w'-]+ ){{1,3}}?){re.escape(product)}\b", text)
    return m.group(1).strip() if m else None


class OrdersPlaybook(Playbook):
    """See the module docstring."""

    domain = "orders"
    reads = frozenset({"get_return_policy", "find_customer", "list_orders", "get_order", "check_stock",
                       "list_policies"})
    writes = frozenset({"request_refund_approval", "refund_item", "issue_store_credit", "exchange_item"})

    def __init__(self, brief: str, request: str, tools: list[dict[str, Any]]) -> None:
        super().__init__(brief, request, tools)
        email = EMAIL.search(request)
        self.email = email.group(0).rstrip(".") if email else None
        order = _ORDER_ID.search(request)
        self.order_id = order.group(0) if order else None
        placed = DATE.search(request)
        self.placed = placed.group(0) if placed else None
        self.today = today(self.brief)
        self.limit = figure(self.brief, r"more than ([\d.]+) USD")
        # A membership tier's rules, where the brief has them: a Plus member's extra days on
        # every window and its approval limit; the tier itself is what find_customer shows.
        self.plus_days = figure(self.brief, r"Plus members .*? get (\d+) more days")
        self.plus_limit = figure(self.brief, r"For a Plus member, a refund needs a manager's approval only when it is "
                                             r"more than ([\d.]+) USD")
        # The restocking fee of an opened item refunded, in percent by category, where the brief
        # has one ("20% of the price for electronics, 10% for home items").
        fees = re.search(r"restocking fee: ([^;]*?)(?:, the fee|\.)", self.brief)
        self.fees = {c: int(p) for p, c in re.findall(r"(\d+)% (?:of the price )?for (\w+)", fees.group(1))} if fees else {}
        self.tier: str | None = None
        self.products: list[str] = []
        #: The stock check of each (product, variant) asked for, as last read.
        self._stock: dict[tuple[str, str], Any] = {}

    def hear(self, text: str) -> bool:
        email = EMAIL.search(text)
        if email and email.group(0).rstrip(".") != self.email:  # an answer, or a correction
            self.email = email.group(0).rstrip(".")
            return True
        return any(_kept(text, p) or _variant_named(text, p) for p in self.products)

    # ------------------------------------------------------------------------------- plan
    def plan(self, case: CaseFile) -> None:
        asked = self._asked(case)
        orders = case.get(*(Read("get_order", {"order_id": o}, copies=2) for o, _ in asked))
        self.products = [i["product"] for order in orders for i in order.get("items", [])]
        wants = [(order, *want) for order, (_, about) in zip(orders, asked)
                 for want in self._wants(case, order.get("items", []), about)]
        if not wants:
            self.stop(case, f"I can't tell which item of order {asked[0][0]} you mean.")
        # The policies and the stock of every variant asked for are read in one turn.
        categories = list(dict.fromkeys(i["category"] for _, i, _, _ in wants))
        stock = [(i["product"], v) for _, i, a, v in wants if a == "exchange" and v is not None]
        got = case.get(*(Read("get_return_policy", {"category": c}, copies=2) for c in categories),
                       *(Read("check_stock", {"product": p, "variant": v}, valid=lambda r: bool(r.get("in_stock")))
                         for p, v in stock))
        window = {p["category"]: p["return_window_days"] for p in got[:len(categories)]}
        self._stock = dict(zip(stock, got[len(categories):]))
        done = {a.get("item_id") for name in _AFTER_SALES for a, _ in case.made(name)}
        # A final-sale item gets nothing (unless it arrived damaged, where the brief says so):
        # the customer is told, and the other items are done.
        finals = [i["product"] for _, i, _, _ in wants if _final(i)]
        refused = (f"The {' and the '.join(finals)} {'was a final-sale item' if len(finals) == 1 else 'were final-sale items'},"
                   " so I can't refund, credit or exchange "
                   f"{'it' if len(finals) == 1 else 'them'}.") if finals else ""
        steps: list[tuple[str, dict[str, Any], str]] = []
        for order, item, action, variant in wants:
            if item["item_id"] in done or _final(item):
                continue
            steps.append(self._step(case, order, item, action, variant, window[item["category"]]))
        if not steps:
            if refused and not done:
                self.stop(case, refused)
            return
        parts = [refused] * bool(refused) + [what for _, _, what in steps]
        self.confirm(case, " ".join(parts), parts)
        name, args, _ = steps[0]
        order_id = args["order_id"]
        base = {"order_id": order_id, "item_id": args["item_id"]}
        limit = self._limit()
        if name == "refund_item" and limit is not None and args["amount"] > limit:
            granted = [res for a, res in case.made("request_refund_approval")
                       if (a.get("order_id"), a.get("item_id")) == (order_id, args["item_id"])]
            if not granted:
                case.write("request_refund_approval", {**base, "amount": args["amount"]})
            args = {**args, "approval_id": granted[-1]["approval_id"]}
        case.write(name, args, Call("get_order", {"order_id": order_id}),
                   lambda back: _landed(back, args["item_id"], _AFTER_SALES[name]))

    def _asked(self, case: CaseFile) -> list[tuple[str, str]]:
        """The orders asked about, each with the words about it: the one order (its id given,
        or found by date and products), or, where the request names several orders by their
        placing dates ("From my order placed on ...: the lamp and the atlas."), each of them."""
        if self.order_id is not None:
            return [(self.order_id, self.request)]
        clauses = [s for s in sentences(self.request) if DATE.search(s)]
        if len(clauses) < 2:
            return [(self._order(case), self.request)]
        return [(self._order(case, clause, DATE.search(clause).group(0)), clause)  # type: ignore[union-attr]
                for clause in clauses]

    def _order(self, case: CaseFile, about: str | None = None, placed: str | None = None) -> str:
        """The order the customer means, found from their email: the one placed on the date
        they give (`placed`, else the request's) that holds the products they name in `about`
        (the request when None), or whichever of the two tells."""
        if self.email is None:
            case.ask("email", "Could you tell me the email address of your account, so I can find your order?")
            if self.email is None:
                case.ask("email again", "Sorry, I still need the email address on your account.")
                self.stop(case, "I can't find your order without the email address of your account.")
        if case.refused("find_customer", email=self.email):
            case.ask("email check", f"I can't find an account under {self.email}. Could you check the email address?")
            if case.refused("find_customer", email=self.email):
                self.stop(case, f"I can't find an account under {self.email}.")
        customer = case.read("find_customer", email=self.email or "")
        self.tier = customer.get("tier")
        listed = case.read("list_orders", customer_id=customer["customer_id"]).get("orders", [])
        by_date = [o for o in listed if o.get("placed_on") == (placed or self.placed)]
        # The orders that hold the most of the products named (an order of the same product
        # alone is a near-duplicate of one that holds both products asked about).
        named = [sum(_mentions(about or self.request, p) for p in o.get("products", [])) for o in listed]
        by_product = [o for o, n in zip(listed, named) if n and n == max(named)]
        both = [o for o in by_date if o in by_product]
        pick = both or by_product or by_date
        if not pick:
            case.ask("which order", "I can't find that order. Which order do you mean (its id or the date you "
                                    "placed it)?")
            said = " ".join(case.said_since("which order"))
            said_id = _ORDER_ID.search(said)
            return said_id.group(0) if said_id else ""
        return pick[0]["order_id"]

    def _wants(self, case: CaseFile, items: list[dict[str, Any]], request: str
               ) -> list[tuple[dict[str, Any], str, str | None]]:
        """(item, "exchange" or "return", the variant wanted) for each item the customer asks
        about in `request`, as they want it now (a change of mind: another variant, or keeping an item)."""
        named = [i for i in items if _mentions(request, i["product"])]
        out = []
        for item in named:
            product = item["product"]
            said = [s for s in sentences(request) if _mentions(s, product)]
            about = request if len(named) == 1 else " ".join(said)
            if has_word(about, "swap", "exchange"):
                at = about.lower().find(product.lower())
                variant = _variant_asked(about[max(at, 0):]) or _variant_asked(about)
                out.append([item, "exchange", variant])
            else:
                out.append([item, "return", None])
        for text in case.heard:
            for want in list(out):
                product = want[0]["product"]
                if _kept(text, product):
                    out.remove(want)
                elif want[1] == "exchange":
                    variant = _variant_named(text, product)
                    if variant and variant != want[0]["variant"]:
                        want[2] = variant
        return [(i, a, v) for i, a, v in out]

    def _step(self, case: CaseFile, order: dict[str, Any], item: dict[str, Any], action: str, variant: str | None,
              window: int) -> tuple[str, dict[str, Any], str]:
        """The write one item needs (name, arguments, the words for the user); where the
        policies allow nothing, the user is told why and the plan halts."""
        product, price = item["product"], item["price"]
        base = {"order_id": order["order_id"], "item_id": item["item_id"]}
        if order.get("status") != "delivered" or not order.get("delivered_on"):
            self.stop(case, f"Order {order['order_id']} hasn't been delivered yet, so nothing can be returned.")
        age = (self.today - _dt.date.fromisoformat(order["delivered_on"])).days if self.today else 0
        if self.tier == "plus" and self.plus_days is not None:
            window += int(self.plus_days)
        inside = age <= window
        if action == "exchange":
            if not inside or variant is None:
                self.stop(case, f"The {product} was delivered {age} days ago, past its {window}-day window, so it "
                                "can't be exchanged." if not inside else f"Which variant of the {product} would "
                                                                         "you like instead?")
            if not self._stock[product, variant].get("in_stock"):
                self.stop(case, f"The {variant} {product} is out of stock.")
            return ("exchange_item", {**base, "new_variant": variant},
                    f"exchange the {product} ({item['item_id']}) for the {variant} one.")
        if inside:
            limit = self._limit()
            pct = self.fees.get(item["category"], 0) if item.get("opened") and not item.get("arrived_damaged") else 0
            fee = (round(price * 100) * pct + 50) // 100
            amount = (round(price * 100) - fee) / 100
            approval = limit is not None and amount > limit
            what = (f"the full price of the {product} ({price:.2f} USD)" if not fee else
                    f"{amount:.2f} USD for the opened {product} (its price {price:.2f} less the {pct}% restocking fee)")
            return ("refund_item", {**base, "amount": amount},
                    f"refund {what}, delivered {age} days ago, inside its "
                    f"{window}-day window{' (with a manager approval first)' if approval else ''}.")
        return ("issue_store_credit", {**base, "amount": price},
                f"issue store credit for the full price of the {product} ({price:.2f} USD): it was delivered {age} "
                f"days ago, past its {window}-day window, so it can't be refunded.")

    def _limit(self) -> float | None:
        """The refund approval limit of this customer's tier."""
        return self.plus_limit if self.tier == "plus" and self.plus_limit is not None else self.limit

    def summary(self) -> str:
        return "Everything you asked about is taken care of."


def _final(item: dict[str, Any]) -> bool:
    """Whether the policies give an item nothing as final sale (one that arrived damaged counts
    as not final sale, as the hard tier's brief says)."""
    return bool(item.get("final_sale")) and not item.get("arrived_damaged")


def _landed(back: Any, item_id: str, action: str) -> Any:
    """The after-sales record a read-back of the order shows for an item, or None."""
    for item in back.get("items", []):
        done = item.get("after_sales")
        if item.get("item_id") == item_id and isinstance(done, dict) and done.get("action") == action:
            return done
    return None
