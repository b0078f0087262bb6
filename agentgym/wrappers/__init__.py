"""`agentgym.wrappers`: the wrappers that are not noise (the noise wrappers are in `agentgym.noise`).

- `ActionCandidates` lives with the candidate builders it serves
  (`agentgym.agents.candidates.wrapper`); its names here are that module's objects. The path stays
  because users import it and because specs recorded before the move name the wrapper's entry
  point as ``agentgym.wrappers.candidates:ActionCandidates``.
- `SubtaskRewards` pays a cross-task session's reward as its sub-tasks end, for trainers that
  discount (the return stays the env's).
"""

from agentgym.wrappers.candidates import ActionCandidates, CandidateBuilder, CandidateConfig, make_builder
from agentgym.wrappers.subtask_rewards import SubtaskRewards

__all__ = ["ActionCandidates", "CandidateBuilder", "CandidateConfig", "SubtaskRewards", "make_builder"]
