"""Your own tools, with agentgym's noise, metrics and board: `make_tool_env`.

    env = make_tool_env(tools=[find_order, refund], task_generator=make_task, scorer=refunded)

Tools are plain typed functions with Google docstrings (or a `Toolkit` subclass); a task
generator turns the episode seed into a `ToolTask` (the request, the `Detail`s the user
knows, the gold plan of `gold_call`s, the `Shift`s it offers); the default user (`DetailUser`)
is built from the details, and the scorer judges the final world. The result is an `AgentEnv`:
every noise kind injects into it and every metric has what it needs. docs/own-env.md walks
through a complete example (`envs/examples/own_env.py`) and says which field feeds which metric.
"""

from agentgym.core.task import Score
from agentgym.core.tools import READ, WRITE, ToolError, tool
from agentgym.toolenv.env import ToolEnv, make_tool_env
from agentgym.toolenv.task import Detail, GoldPlan, Shift, ToolTask, gold_call
from agentgym.toolenv.user import DetailUser

__all__ = [
    "Detail",
    "DetailUser",
    "GoldPlan",
    "READ",
    "Score",
    "Shift",
    "ToolEnv",
    "ToolError",
    "ToolTask",
    "WRITE",
    "gold_call",
    "make_tool_env",
    "tool",
]
