"""A refund desk on your own tools, with every noise kind and all four metrics (docs/own-env.md)."""

import random

import agentgym
from agentgym.toolenv import WRITE, Detail, Shift, ToolError, ToolTask, gold_call, make_tool_env, tool


def find_order(world: dict, email: str) -> dict:
    """Find the customer's last order.

    Args:
        email: The customer's e-mail address.
    """
    if email != world["email"]:
        raise ToolError(f"no order for '{email}'")
    return world["order"]


@tool(kind=WRITE)
def refund(world: dict, order_id: str, amount: float) -> dict:
    """Refund part of an order.

    Args:
        order_id: The order's id, e.g. "ord-1042".
        amount: How much to refund, in euros.
    """
    if order_id != world["order"]["order_id"]:
        raise ToolError(f"no order '{order_id}'")
    world["refunds"].append({"order_id": order_id, "amount": amount})
    return {"status": "refunded", "order_id": order_id, "amount": amount}


def make_task(seed: int) -> ToolTask:
    rng = random.Random(seed)
    email, order_id = f"user{rng.randrange(100)}@example.com", f"ord-{rng.randrange(1000, 9999)}"
    amount = rng.randrange(10, 60)
    return ToolTask(
        request="Hi, I'd like a refund on my last order.",
        details=[Detail("email", email, "My email is {value}.", ask=("e-mail", "address")),
                 Detail("amount", amount, "Please refund {value} euros.", reveal="ask", ask=("how much",))],
        gold_calls=[gold_call("find_order", email=email), gold_call("refund", order_id=order_id, amount=amount)],
        world={"email": email, "order": {"order_id": order_id, "total": 2 * amount}, "refunds": []},
        shifts=[Shift("amount", amount + 5)])


def refunded(task: ToolTask, world: dict) -> bool:
    return world["refunds"] == [{"order_id": world["order"]["order_id"], "amount": task.value("amount")}]


def make_env(**kwargs) -> agentgym.toolenv.ToolEnv:
    """The refund desk: find the customer's order and refund what they ask for."""
    return make_tool_env(tools=[find_order, refund], task_generator=make_task, scorer=refunded, name="shop", **kwargs)


agentgym.register_env("MyOrg/Shop-v0", make_env)
