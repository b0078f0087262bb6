"""`make_tool_env`: your tools, tasks, user and scorer as an agentgym env, with every noise kind
and all four metrics of the benchmark."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from agentgym.core.action_types import HOW_TO_CALL
from agentgym.core.env import AgentEnv, EnvParts
from agentgym.core.task import SimulatedUser, Task
from agentgym.core.tools import Toolkit
from agentgym.toolenv.scoring import JUDGE, Scorer, make_scorer
from agentgym.toolenv.task import GoldPlan, ToolTask
from agentgym.toolenv.tools import ToolSet, tool_set
from agentgym.toolenv.user import DetailUser

__all__ = ["ToolEnv", "make_tool_env", "TaskGenerator", "UserFactory"]

#: ``task_generator(seed) -> ToolTask``: the episode seed; derive every draw from it (e.g.
#: ``random.Random(seed)``), so a seed always gives the same task.
TaskGenerator = Callable[[int], ToolTask]
#: ``user(task, rng) -> SimulatedUser``: `task.goal` is the `ToolTask`, `task.world` its world.
UserFactory = Callable[[Task, Any], SimulatedUser]

#: The first line of the system brief unless one is given.
DEFAULT_BRIEF = "You are a helpful assistant with tools. Carry out the user's request."
_HOWTO = HOW_TO_CALL


class ToolEnv(AgentEnv):
    """
    ## Description
    An env made by `agentgym.make_tool_env` (which documents its arguments) from your tools, a task generator, a simulated user
    and a scorer. Each episode draws a `ToolTask` (the request, the details the user knows, the
    gold plan of calls, the goal shifts it offers) from the episode seed; the agent carries out
    the request with the tools.

    ## Observation
    Text (`UnicodeText`): on reset the system brief and the user's opening; on each step only what
    is new (tool results, errors, the user's reply). `info["messages"]` holds the same as OpenAI
    chat messages, `info["tools"]` the tool schemas (derived from the functions' signatures and
    docstrings), `info["task"]` the public card (family: the env's name, domain, difficulty,
    split, id).

    ## Actions and tools
    A string: the assistant's turn. Tool calls as JSON `{"name": ..., "arguments": {...}}`, in
    `<tool_call>` tags or OpenAI `tool_calls`; anything else is a message to the user. Invalid
    calls come back as `[error CODE] ...` and count against the agent; a tool's `ToolError`
    comes back as `[error TOOL_ERROR] ...`.

    ## Reward
    0 on every step but the last; then the score of the final world from the scorer.

    ## Termination
    Terminated when the user sees the task done ("accepted", exactly when the scorer says
    success; it says so at the assistant's next message after the write that did it, as every
    user hears the outcome from the assistant), when a terminal tool commits ("committed"), or
    when the user gives up ("gave_up"):
    with the default scorer at the first write that fits no gold step (writes are final, so
    success is then out of reach), with your own after 2 such writes; truncated at the task's
    turn budget.

    ## Noise
    Every `agentgym.noise` kind (`gym.make(id, noise="medium")` once registered with
    `agentgym.register_env`, or `agentgym.noise.apply_noise(env, "medium")`), each a Gymnasium
    wrapper acting only in its own `reset` and `step` (`env.unwrapped` is the env without noise):
    tool failures and corrupted read results are tied to the gold step they hit, ambiguity leaves an
    up-front detail out of the opening, goal shifts come from the task's `shifts`, distractors are
    derived from your tools, typos never touch a detail's value, latency charges simulated time.

    ## Version history
    * v0: initial release of the builder.
    """

    family = "tools"

    def __init__(self, *, parts: EnvParts, tools: ToolSet, name: str, split: str = "train",
                 max_turns: int | None = None, render_mode: str | None = None) -> None:
        """An env of `parts` (made by `make_tool_env`, which documents the arguments)."""
        self.family = name
        #: The env's tools: their specs, and how a toolkit over a task's world is made.
        self.tool_set = tools
        super().__init__(task_generator=parts.task_generator, toolkit_factory=parts.toolkit_factory,
                         user_factory=parts.user_factory, scorer=parts.scorer, judge=parts.judge, split=split,
                         max_turns=max_turns, render_mode=render_mode)


def _generator(task_generator: TaskGenerator, toolset: ToolSet, name: str,
               brief: str) -> Callable[[int, dict[str, Any]], Task]:
    def generate(seed: int, options: dict[str, Any]) -> Task:
        fixed = [k for k in ("difficulty", "domain") if options.get(k) is not None]
        if fixed:
            raise ValueError(f"reset options {fixed}: a built env's tasks set their own difficulty and domain")
        spec = task_generator(seed)
        if not isinstance(spec, ToolTask):
            raise TypeError(f"task_generator must return a ToolTask, got {type(spec).__name__}")
        _check_gold(spec, toolset)
        return Task(
            family=name,
            domain=spec.domain,
            difficulty=spec.difficulty,
            split=options.get("split", "train"),
            seed=seed,
            task_id=f"{name}/{spec.domain}/{seed}",
            brief=brief,
            world=spec.world,
            goal=spec,
            gold=GoldPlan(tuple(spec.gold_calls)),
            max_turns=spec.max_turns,
            extra={"writes": []},
        )

    return generate


def _check_gold(task: ToolTask, toolset: ToolSet) -> None:
    """A gold plan that names a tool or an argument that does not exist is a bug in the task generator."""
    for i, step in enumerate(task.gold_calls):
        spec = toolset.specs.get(step["name"])
        if spec is None:
            raise ValueError(f"gold_calls[{i}] calls {step['name']!r}, which is not one of the tools "
                             f"({', '.join(toolset.names)})")
        unknown = sorted(set(step["arguments"]) - set(spec.parameters["properties"]))
        if unknown:
            raise ValueError(f"gold_calls[{i}] gives {step['name']} arguments it does not take: {unknown}")


def make_tool_env(
    *,
    tools: Sequence[Callable[..., Any]] | type[Toolkit],
    task_generator: TaskGenerator,
    user: UserFactory | None = None,
    scorer: Scorer | None = None,
    name: str = "tools",
    brief: str = DEFAULT_BRIEF,
    split: str = "train",
    max_turns: int | None = None,
    render_mode: str | None = None,
) -> ToolEnv:
    """An agentgym env over your own tools, with every noise kind and all four metrics.

    Args:
        tools: plain typed functions with Google docstrings (a first parameter named ``world``
            gets the task's world; ``@tool(kind=WRITE)`` marks a write), or a `Toolkit` subclass
            whose ``__init__`` takes the world.
        task_generator: ``seed -> ToolTask``, deterministic in the episode seed.
        user: ``(task, rng) -> SimulatedUser`` (default: `DetailUser`, built from the task's details).
        scorer: ``(task, world) -> bool | float | Score`` on the final world, `task` as it stands
            after any goal shift (default: the gold plan's writes; required with a Toolkit subclass).
        name: the env's family name, in the public task card and the task ids.
        brief: the first line of the system brief (how to call tools is added).
        split: ``train`` or ``test``, in the public task card (suites evaluate on ``test``). The
            task generator is the same for both: to hold out tasks, pick the generator by split
            in the function you register.
        max_turns: the turn budget (None: each task's own `max_turns`).
        render_mode: None or ``ansi``.

    Returns:
        A `ToolEnv` (an `AgentEnv`). Register it with `agentgym.register_env` for `gym.make`,
        ``noise=`` and the `agentgym` command (docs/own-env.md).

    Raises:
        TypeError: a tool does not fit (see `agentgym.toolenv.tools`), a part is not callable, or a
            Toolkit subclass comes without a scorer.
        ValueError: `name` is empty.
    """
    toolset = tool_set(tools)
    if scorer is None and not toolset.functions:
        raise TypeError("a Toolkit subclass keeps its own world: pass scorer=... (the default scorer "
                        "reads the writes of plain-function tools)")
    if not callable(task_generator):
        raise TypeError(f"task_generator must be a function seed -> ToolTask, got {task_generator!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if not isinstance(brief, str):
        raise TypeError("brief must be a string")
    score = make_scorer(scorer, frozenset(toolset.writes()))
    parts = EnvParts(
        task_generator=_generator(task_generator, toolset, name, f"{brief.strip()}\n{_HOWTO}"),
        toolkit_factory=lambda task: toolset.toolkit(task.world, task.extra.setdefault("writes", [])),
        user_factory=user or (lambda task, rng: DetailUser(task, rng, score, writes_are_final=scorer is None)),
        scorer=lambda task, toolkit: score(task),
        judge=JUDGE,
    )
    return ToolEnv(parts=parts, tools=toolset, name=name, split=split, max_turns=max_turns,
                   render_mode=render_mode)
