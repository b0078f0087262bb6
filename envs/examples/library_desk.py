"""A library desk on your own tools: find a member's loan and renew it for the weeks they ask."""

import random

import agentgym
from agentgym.toolenv import WRITE, Detail, Shift, ToolError, ToolTask, gold_call, make_tool_env, tool


def find_loan(world: dict, card_number: str) -> dict:
    """Find the book a library member has on loan.

    Args:
        card_number: The member's library card number, e.g. "LC-2041".
    """
    if card_number != world["card"]:
        raise ToolError(f"no member with card '{card_number}'")
    return world["loan"]


@tool(kind=WRITE)
def renew(world: dict, loan_id: str, weeks: int) -> dict:
    """Renew a loan.

    Args:
        loan_id: The loan's id, e.g. "loan-311".
        weeks: For how many weeks to renew it.
    """
    if loan_id != world["loan"]["loan_id"]:
        raise ToolError(f"no loan '{loan_id}'")
    world["renewals"].append({"loan_id": loan_id, "weeks": weeks})
    return {"status": "renewed", "loan_id": loan_id, "weeks": weeks}


def make_task(seed: int) -> ToolTask:
    rng = random.Random(seed)
    card, loan_id, weeks = f"LC-{rng.randrange(1000, 9999)}", f"loan-{rng.randrange(100, 999)}", rng.randrange(1, 4)
    return ToolTask(
        request="Hello, I'd like to keep my library book a bit longer.",
        details=[Detail("card", card, "My card number is {value}.", ask=("card", "number")),
                 Detail("weeks", weeks, "For {value} more weeks, please.", reveal="ask", ask=("how long", "weeks"))],
        gold_calls=[gold_call("find_loan", card_number=card), gold_call("renew", loan_id=loan_id, weeks=weeks)],
        world={"card": card, "loan": {"loan_id": loan_id, "title": "The Left Hand of Darkness"}, "renewals": []},
        shifts=[Shift("weeks", weeks + 1)])


def renewed(task: ToolTask, world: dict) -> bool:
    return world["renewals"] == [{"loan_id": world["loan"]["loan_id"], "weeks": task.value("weeks")}]


def make_env(**kwargs) -> agentgym.toolenv.ToolEnv:
    """The library desk: find the member's loan and renew it for as long as they ask."""
    return make_tool_env(tools=[find_loan, renew], task_generator=make_task, scorer=renewed, name="library", **kwargs)


agentgym.register_env("MyOrg/Library-v0", make_env)
