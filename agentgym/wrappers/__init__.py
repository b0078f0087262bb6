"""Gymnasium wrappers that are not noise: helpers for agents and trainers."""

from agentgym.wrappers.candidates import ActionCandidates, CandidateBuilder, CandidateConfig, make_builder

__all__ = ["ActionCandidates", "CandidateBuilder", "CandidateConfig", "make_builder"]
