"""The expert's dialog strategy (being written: the heuristic's strategy until then)."""

from agentgym.agents.strategies.dialog import DialogStrategy as DialogExpert

__all__ = ["DialogExpert"]
