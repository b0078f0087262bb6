"""The names `agentgym.wrappers.candidates` has always exported, each the object of its home module
in `agentgym.agents.candidates` (see `agentgym.wrappers`); a spec recorded with the entry point
``agentgym.wrappers.candidates:ActionCandidates`` loads the wrapper from here."""

from agentgym.agents.candidates import (
    BUILDERS,
    PLAIN_REPLIES,
    PUBLIC_KEYS,
    CandidateBuilder,
    CandidateConfig,
    GenericCandidates,
    make_builder,
    public_view,
)
from agentgym.agents.candidates.crosstask import CrossTaskCandidates
from agentgym.agents.candidates.dialog import DialogCandidates
from agentgym.agents.candidates.tooluse import ToolUseCandidates
from agentgym.agents.candidates.wrapper import ActionCandidates

__all__ = [
    "ActionCandidates",
    "CandidateBuilder",
    "CandidateConfig",
    "DialogCandidates",
    "ToolUseCandidates",
    "CrossTaskCandidates",
    "GenericCandidates",
    "BUILDERS",
    "PLAIN_REPLIES",
    "PUBLIC_KEYS",
    "make_builder",
    "public_view",
]
