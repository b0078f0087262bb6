"""The task families agentgym ships, in one table that every part reads.

A family is an env class and the parts that other layers provide for it: the heuristic agent's
strategy, the `expert` agent's strategy, the candidate builder a trained policy acts through, and
the privileged oracle policy that plays the gold. Registration (`agentgym.registration`) registers each family's id from here;
the heuristic, the candidate builders, the oracle agent and CrossTask's sessions look their
family's parts up here; the command line, the env server and the tests list `ENV_IDS`.

Every part is named by its import path (``"module:attr"``) and imported only when asked
(`load`), as Gymnasium's string entry points are, so this module imports nothing of agentgym and
sits below every layer: a name may point to any layer, since nothing here imports it.

A family's card is its env class's docstring (`Family.card`); adding a family is one entry here
and its package (docs/adding-an-env.md).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any

__all__ = ["ENV_IDS", "FAMILIES", "Family", "by_id", "get", "load"]


@dataclass(frozen=True)
class Family:
    """One task family and where its parts live (each ``"module:attr"``, imported on use)."""

    name: str
    """The family's name, as ``info["task"]["family"]`` says it."""
    env_id: str
    """The registered Gymnasium id (its behaviour frozen per version)."""
    env: str
    """The env class; its docstring is the family's card."""
    strategy: str
    """The heuristic agent's strategy class (`agentgym.agents.heuristic`)."""
    oracle: str
    """The privileged oracle policy: a class made with the unwrapped env, ``act(obs, info) -> str``."""
    candidates: str | None = None
    """The candidate builder class (`agentgym.agents.candidates`; None: the generic builder)."""
    domains: str | None = None
    """``split -> domain names``, for a family whose tasks CrossTask sessions mix in."""
    expert: str | None = None
    """The `expert` agent's strategy class (`agentgym.agents.expert`): a careful assistant that
    reads only observations, the proof that every task is solvable from what the agent is shown."""

    def card(self) -> str:
        """The family's card: its env class's docstring (the env module is imported)."""
        return inspect.getdoc(load(self.env)) or ""


#: Every family, in the order `ENV_IDS` lists them.
FAMILIES: tuple[Family, ...] = (
    # Dialog: find and book for a user whose constraints arrive over turns.
    Family(
        name="dialog",
        env_id="AgentRL/Dialog-v0",
        env="agentgym.envs.dialog.env:DialogEnv",
        strategy="agentgym.agents.strategies.dialog:DialogStrategy",
        oracle="agentgym.envs.dialog.oracle:DialogOracle",
        candidates="agentgym.agents.candidates.dialog:DialogCandidates",
        domains="agentgym.envs.dialog.tasks:domains_for",
        expert="agentgym.agents.experts.dialog:DialogExpert",
    ),
    # ToolUse: chains of dependent tool calls under domain policies (finance, calendar, orders, ops).
    Family(
        name="tooluse",
        env_id="AgentRL/ToolUse-v0",
        env="agentgym.envs.tooluse.env:ToolUseEnv",
        strategy="agentgym.agents.strategies.tooluse:ToolUseStrategy",
        oracle="agentgym.envs.tooluse.oracle:ToolUseOracle",
        candidates="agentgym.agents.candidates.tooluse:ToolUseCandidates",
        domains="agentgym.envs.tooluse.tasks:domains_for",
        expert="agentgym.agents.experts.tooluse:ToolUseExpert",
    ),
    # CrossTask: one session that switches between dialog and tool-use tasks and comes back.
    Family(
        name="crosstask",
        env_id="AgentRL/CrossTask-v0",
        env="agentgym.envs.crosstask.env:CrossTaskEnv",
        strategy="agentgym.agents.strategies.crosstask:CrossTaskStrategy",
        oracle="agentgym.envs.crosstask.oracle:CrossTaskOracle",
        candidates="agentgym.agents.candidates.crosstask:CrossTaskCandidates",
        expert="agentgym.agents.experts.crosstask:CrossTaskExpert",
    ),
)

#: Every family's id (`agentgym.ENV_IDS`): what the command line, the server and the tests list.
ENV_IDS: tuple[str, ...] = tuple(f.env_id for f in FAMILIES)

_BY_NAME = {f.name: f for f in FAMILIES}
_BY_ID = {f.env_id: f for f in FAMILIES}


def get(name: str) -> Family:
    """The family called `name`.

    Raises:
        KeyError: no family has that name (the message lists those that do).
    """
    family = _BY_NAME.get(name)
    if family is None:
        raise KeyError(f"no task family {name!r}; the families: {', '.join(_BY_NAME)}")
    return family


def by_id(env_id: str) -> Family | None:
    """The family registered as `env_id` (None for any other id)."""
    return _BY_ID.get(env_id)


def load(path: str) -> Any:
    """The object a ``"module:attr"`` path names, its module imported."""
    module, sep, attr = path.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"expected 'module:attr', got {path!r}")
    return getattr(importlib.import_module(module), attr)
