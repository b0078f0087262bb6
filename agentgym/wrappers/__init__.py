"""`agentgym.wrappers`: the public import path of `ActionCandidates`, the one wrapper that is not
noise (the noise wrappers are in `agentgym.noise`).

It holds no wrapper of its own: `ActionCandidates` lives with the candidate builders it serves
(`agentgym.agents.candidates.wrapper`), and every name here is that module's object. The path
stays because users import it and because specs recorded before the move name the wrapper's
entry point as ``agentgym.wrappers.candidates:ActionCandidates``.
"""

from agentgym.wrappers.candidates import ActionCandidates, CandidateBuilder, CandidateConfig, make_builder

__all__ = ["ActionCandidates", "CandidateBuilder", "CandidateConfig", "make_builder"]
