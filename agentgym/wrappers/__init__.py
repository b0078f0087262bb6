"""The import path `agentgym.wrappers` has always offered: `ActionCandidates`, the one wrapper that
is not noise, lives with the candidate builders it serves (`agentgym.agents.candidates.wrapper`);
import it from there. The noise wrappers are in `agentgym.noise`."""

from agentgym.wrappers.candidates import ActionCandidates, CandidateBuilder, CandidateConfig, make_builder

__all__ = ["ActionCandidates", "CandidateBuilder", "CandidateConfig", "make_builder"]
