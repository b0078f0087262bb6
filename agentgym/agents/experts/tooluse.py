"""The expert's tool-use strategy (being written: the heuristic's strategy until then)."""

from agentgym.agents.strategies.tooluse import ToolUseStrategy as ToolUseExpert

__all__ = ["ToolUseExpert"]
