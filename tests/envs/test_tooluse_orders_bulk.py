"""The orders hard tier's bulk return (`agentgym.envs.tooluse.domains.orders_bulk`): six to nine
items over two or three orders, each decided by itself under interacting policies.

Each item's gold outcome is recomputed here from what the tools show; every move the policies
forbid (a refund past the window or of a final-sale item, the full price of an opened item, an
approval not needed) is refused and fails the task; the window's last day counts; an item that
arrived damaged is returned though final sale and without the fee; the brief states the turns.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

import pytest

from agentgym.core.tools import PolicyViolation
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.domains.consent_rules import RULES
from agentgym.envs.tooluse.domains.orders_bulk import BulkRequest, outcome
from agentgym.envs.tooluse.domains.orders_tier import EXTRA_DAYS, FEE, PLUS_LIMIT
from agentgym.envs.tooluse.policies import policy
from agentgym.envs.tooluse.tasks import generate_task, make_toolkit, tier_calls, tier_turns

LIMIT = round(float(policy("orders", "refund_approval").params["limit"]) * 100)


def _task(seed: int, consent: bool = False) -> Any:
    """An orders task of the tier; without `consent`, its writes need no yes (the tests here
    call the tools directly: the consent rule has tests of its own)."""
    task = generate_task(seed, {"domain": "orders", "difficulty": "hard"})
    if not consent:
        task.world.consent = None
    return task


def _expected(task: Any) -> dict[str, tuple[str, int, bool]]:
    """Per item asked about: (outcome, cents, approval first), worked out from what the tools show."""
    toolkit = make_toolkit(task)
    world = task.world
    tier = toolkit.invoke("find_customer", {"email": world.email})["tier"]
    today = dt.date.fromisoformat(task.brief.split("Today is ", 1)[1][:10])
    out = {}
    for order_id in task.goal.job.orders:
        order = toolkit.invoke("get_order", {"order_id": order_id})
        age = (today - dt.date.fromisoformat(order["delivered_on"])).days
        for row in order["items"]:
            if (order_id, row["item_id"]) not in task.goal.job.wants:
                continue
            window = toolkit.invoke("get_return_policy", {"category": row["category"]})["return_window_days"]
            window += EXTRA_DAYS if tier == "plus" else 0
            price = round(row["price"] * 100)
            if row["final_sale"] and not row["arrived_damaged"]:
                out[row["item_id"]] = ("none", 0, False)
            elif age > window:
                out[row["item_id"]] = ("credit", price, False)
            else:
                pct = FEE.get(row["category"], 0) if row["opened"] and not row["arrived_damaged"] else 0
                amount = price - (price * pct + 50) // 100
                out[row["item_id"]] = ("refund", amount, amount > (PLUS_LIMIT if tier == "plus" else LIMIT))
    return out


def test_every_item_gets_the_one_outcome_the_policies_give_and_the_draw_varies_them() -> None:
    seen: Counter[str] = Counter()
    for seed in range(60):
        task = _task(seed)
        req = task.goal.job
        assert isinstance(req, BulkRequest) and 6 <= len(req.wants) <= 10 and len(req.orders) in (2, 3)
        lo, hi = tier_calls("orders")
        assert lo <= len(task.gold.plan) <= hi
        expected = _expected(task)
        effects = {e.fields["item_id"]: e for e in task.gold.effects}
        approvals = {s.arguments["item_id"] for s in task.gold.plan if s.name == "request_refund_approval"}
        for item_id, (kind, amount, approval) in expected.items():
            if kind == "none":
                assert item_id not in effects
            else:
                assert (effects[item_id].kind, effects[item_id].fields["amount"]) == (kind, amount)
            assert (item_id in approvals) == approval
            seen[kind] += 1
        seen.update(task.gold.traps)
        # A product and a date name one item: no product is asked about twice.
        products = [i.product for o in req.orders for i in task.world.orders[o].items]
        assert len(products) == len(set(products))
        assert all(p in task.goal.request for p in products)
    for mechanic in ("refund", "credit", "none", "restocking_fee", "approval", "member_window", "window_last_day",
                     "damaged_final_sale", "damaged_opened", "final_sale_asked", "past_return_window"):
        assert seen[mechanic] >= 3, (mechanic, seen)


def test_the_window_s_last_day_counts_and_the_next_day_does_not() -> None:
    last = after = 0
    for seed in range(80):
        task = _task(seed)
        world = task.world
        for order_id, item_id in task.goal.job.wants:
            order = world.orders[order_id]
            item = next(i for i in order.items if i.id == item_id)
            if item.final_sale and not item.damaged:
                continue
            gap = world.age(order) - world.window(item.category)
            if gap not in (0, 1):
                continue
            fresh = _task(seed)
            toolkit = make_toolkit(fresh)
            args = {"order_id": order_id, "item_id": item_id, "amount": 1.0}
            if gap == 0:  # on the last day: a refund is allowed
                toolkit.invoke("refund_item", args)
                assert fresh.world.violations == []
                last += 1
            else:
                with pytest.raises(PolicyViolation):
                    toolkit.invoke("refund_item", args)
                assert fresh.world.violations == ["return_window"]
                after += 1
    assert last >= 3 and after >= 3


def test_what_the_policies_forbid_is_refused_as_a_violation() -> None:
    refused: Counter[str] = Counter()
    for seed in range(40):
        task = _task(seed)
        for item_id, (kind, amount, approval) in _expected(task).items():
            order_id = next(o for o, i in task.goal.job.wants if i == item_id)
            price = next(i.price for i in task.world.orders[order_id].items if i.id == item_id)
            args = {"order_id": order_id, "item_id": item_id}
            if kind == "none":
                tries = [("refund_item", {**args, "amount": price / 200}, "final_sale"),
                         ("issue_store_credit", {**args, "amount": price / 200}, "final_sale")]
            elif kind == "credit":
                tries = [("refund_item", {**args, "amount": 0.5}, "return_window")]
            elif amount < price:
                tries = [("refund_item", {**args, "amount": price / 100, "approval_id": None}, "restocking_fee")]
            elif not approval:
                tries = [("request_refund_approval", {**args, "amount": amount / 100}, "member_approval")]
            else:
                tries = []
            for name, arguments, rule in tries:
                fresh = _task(seed)
                with pytest.raises(PolicyViolation):
                    make_toolkit(fresh).invoke(name, arguments)
                assert fresh.world.violations == [rule]
                refused[rule] += 1
    assert all(refused[rule] >= 5 for rule in ("final_sale", "return_window", "restocking_fee", "member_approval"))


def test_a_damaged_final_sale_item_is_refunded_in_full() -> None:
    done = 0
    for seed in range(80):
        task = _task(seed)
        for order_id, item_id in task.goal.job.wants:
            order = task.world.orders[order_id]
            item = next(i for i in order.items if i.id == item_id)
            kind, amount = outcome(task.world, order, item)
            if not (item.damaged and item.final_sale and kind == "refund"):
                continue
            assert amount == item.price
            fresh = _task(seed)
            toolkit = make_toolkit(fresh)
            if amount > fresh.world.limit:
                aid = toolkit.invoke("request_refund_approval", {"order_id": order_id, "item_id": item_id,
                                                                 "amount": amount / 100})["approval_id"]
            else:
                aid = None
            toolkit.invoke("refund_item", {"order_id": order_id, "item_id": item_id, "amount": amount / 100,
                                           "approval_id": aid})
            assert fresh.world.violations == []
            done += 1
    assert done >= 3


def test_the_near_duplicate_order_holds_a_product_asked_about_and_gets_nothing() -> None:
    for seed in range(30):
        task = _task(seed)
        world, req = task.world, task.goal.job
        first = world.orders[req.orders[0]]
        product = next(i.product for i in first.items if i.id == req.wants[0][1])
        twins = [o for o in world.orders.values() if o.id not in req.orders and any(i.product == product for i in o.items)]
        assert len(twins) == 1 and twins[0].placed > first.placed
        assert all(e.fields["order_id"] in req.orders for e in task.gold.effects)
        # Its rows have the fields every row of the customer's orders has: no tell in their shape
        # (ToolUse playtest 5903 T3).
        assert {tuple(i.row()) for o in world.orders.values() for i in o.items} == {tuple(twins[0].items[0].row())}


def test_the_brief_states_the_turns_the_task_has() -> None:
    task = _task(3)
    assert task.max_turns == tier_turns("orders") and f"You have {task.max_turns} turns" in task.brief
    assert "the window's last day still counts" in task.brief and "arrived damaged" in task.brief


def test_keeping_an_item_after_all_drops_its_effect_and_only_that() -> None:
    spec = load_domains()["orders"]
    for seed in range(10):
        task = _task(seed)
        for shift in spec.shifts(task.world, task.goal.job):
            kept = shift.detail.split(":", 1)[1]
            assert {e.id for e in shift.gold.effects} == {e.id for e in task.gold.effects if e.fields["item_id"] != kept}


def _user(task: Any) -> Any:
    import random

    from agentgym.envs.tooluse.user import make_user

    return make_user(task, random.Random(0))


def test_asked_what_it_would_accept_the_customer_says_one_thing_for_every_item() -> None:
    # The same words whatever the policies give each item: the answer tells the agent nothing of
    # which items are past their windows.
    answers = set()
    for seed in range(40):
        task = _task(seed)
        reply = _user(task).reply("Would store credit be acceptable where a refund isn't possible?", 1).text
        assert "store credit is fine" in reply and "It's about" not in reply
        answers.add(reply)
    assert len(answers) == 1


def test_a_confirmation_naming_the_items_is_answered_once_not_item_by_item() -> None:
    for seed in range(20):
        task = _task(seed)
        products = [i.product for o in task.goal.job.orders for i in task.world.orders[o].items
                    if (o, i.id) in task.goal.job.wants]
        plan = (f"I can't refund them to your card; what I can do is give you store credit for the full price of "
                f"each: the {', the '.join(products)}. I know you would prefer your money back; shall I go ahead "
                "with the store credit?")
        reply = _user(task).reply(plan, 1).text
        assert reply.count("It's about") == 0 and reply.count("store credit is fine") <= 1, reply
        assert len(reply) < 200, reply


def test_asked_for_the_email_beside_the_orders_the_customer_gives_the_email_alone() -> None:
    asked = 0
    for seed in range(40):
        task = _task(seed)
        if "My email is" in task.goal.request or "@" in task.goal.request:
            continue
        asked += 1
        reply = _user(task).reply("Could you give me the email on your account so I can look up your orders?", 1).text
        assert task.world.email in reply and "order I placed" not in reply, reply
    assert asked >= 5


def test_a_plan_that_says_also_or_extra_is_confirmed_and_only_a_question_adding_something_is_not() -> None:
    # The tier's account of the work says "also past its window" and "15 extra days"; only the
    # question itself proposing more ("shall I also ...?") is more than the customer asked for.
    from agentgym.users.stock import CONFIRMED

    task = _task(3, consent=True)
    task.world.press = None  # a customer who does not press
    said = "Would store credit be acceptable where a refund isn't possible?"
    items = " ".join(f"The {t.label[4:]}: store credit of 10.00 USD." for t in RULES["orders"].targets(task.world, task.goal))
    plan = ("As a Plus member you get 15 extra days on every window. The lamp is also past its window, so it gets "
            f"store credit for its full price. {items} Shall I go ahead with all of this?")
    user = _user(task)
    user.reply(said, 1)
    assert user.reply(plan, 2).text == CONFIRMED
    extra = "I'll refund what the policies allow. Shall I also issue a gift card for the trouble?"
    assert user.reply(extra, 3).text != CONFIRMED
