"""`ToolUseCandidates`: the next calls of a tool chain, each tool with its arguments filled from
what is known (`agentgym.agents.candidates.tool_chains`), a question for each detail the tools
need that nothing has given, and the final answer. It knows no domain: the test split's unseen
domain gets its candidates from its own schemas and results.
"""

from __future__ import annotations

from typing import Any

from agentgym.agents.candidates.base import CandidateBuilder
from agentgym.agents.candidates.tool_chains import CHAIN_REPLIES, ToolChainCandidates
from agentgym.agents.transcript import brief_of

__all__ = ["ToolUseCandidates"]


class ToolUseCandidates(CandidateBuilder):
    """Candidates for tool chains: each tool with arguments filled from what is known, the
    questions worth asking, and the final answer (see `agentgym.agents.candidates.tool_chains`)."""

    family = "tooluse"

    def _start(self, view: dict[str, Any]) -> None:
        brief = brief_of(view.get("messages", ()))
        self._chain = ToolChainCandidates(self.config.max_entities, self.config.values_per_argument,
                                          self.config.calls_per_tool)
        self._chain.start(view.get("tools", ()), brief)

    def _acted(self, action: Any) -> None:
        self._chain.acted(action)

    def _observe(self, messages: Any) -> None:
        self._chain.observe([m for m in messages if m.get("role") != "system"])

    def _build(self) -> list[str]:
        return [*self._chain.calls(), *self._chain.questions(), *CHAIN_REPLIES]
