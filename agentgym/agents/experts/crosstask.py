"""The expert's cross-task strategy (being written: the heuristic's strategy until then)."""

from agentgym.agents.strategies.crosstask import CrossTaskStrategy as CrossTaskExpert

__all__ = ["CrossTaskExpert"]
