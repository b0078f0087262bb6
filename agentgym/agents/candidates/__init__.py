"""Candidate builders: a short list of sensible next actions, built only from public information.

A policy that cannot write text can still act in a text env by choosing among candidate actions,
as text-game agents do with admissible commands. A `CandidateBuilder` makes that list (the
`agentgym.wrappers.ActionCandidates` wrapper puts it in ``info["candidates"]``; the PPO agent asks
its builder directly) from what any agent sees: the brief, the tool schemas, the user's
messages, the tool results, and the agent's own actions. It never looks at the hidden goal, the
gold, the noise log or the episode summary, so two tasks that differ only in their hidden goals
get the same lists for the same public transcript.

Builders:

* `DialogCandidates` (family ``dialog``): a clarifying question for each slot the user lexicon
  knows (and one asking everything at once), ``search`` with the needs the user stated,
  ``check_availability``, ``book``, ``get_details`` and a proposal for each place seen in tool
  results, ``cancel_booking`` for each active booking, and a few plain replies.
* `ToolUseCandidates` (family ``tooluse``): the next calls of a tool chain, each tool with its
  arguments filled from what is known (by key, by result record, by set, from the user's and the
  brief's words; see `agentgym.agents.candidates.tool_chains`), a question for each detail the
  tools need that nothing has given, and the final answer. It knows no domain: the test split's unseen
  domain gets its candidates from its own schemas and results.
* `CrossTaskCandidates` (family ``crosstask``): the builder of the active sub-task's family,
  switched at the session's public boundaries (``info["segment"]``, ``info["segment_switch"]``);
  a follow-up goes on with the dialog builder that saw the booking.
* `GenericCandidates` (any other family): each tool of ``info["tools"]`` with arguments filled
  from values seen so far (schema enums, values under the same key in earlier tool results, ids,
  dates, times, numbers and quoted or capitalised phrases in the messages), and plain replies.

The same builder class works from the sequence ``reset(obs, info)``, ``step(action, obs, info)``
that any agent sees, so a trained policy plays through an `Agent` exactly as it trained. Every
list is deterministic in the transcript (no set order or str hashing reaches it).
"""

from __future__ import annotations

from typing import Any, Mapping

from agentgym import families
from agentgym.agents.candidates.base import PLAIN_REPLIES, PUBLIC_KEYS, CandidateBuilder, CandidateConfig, public_view
from agentgym.agents.candidates.generic import GenericCandidates

__all__ = [
    "BUILDERS",
    "CandidateBuilder",
    "CandidateConfig",
    "GenericCandidates",
    "PLAIN_REPLIES",
    "PUBLIC_KEYS",
    "make_builder",
    "public_view",
]


#: Task family -> "module:Class" of its builder (from `agentgym.families`); families without one
#: get `GenericCandidates`.
BUILDERS: dict[str, str] = {f.name: f.candidates for f in families.FAMILIES if f.candidates is not None}


def make_builder(family: str | None, config: CandidateConfig | Mapping[str, Any] | None = None) -> CandidateBuilder:
    """The builder of `family` (``"generic"`` or an unknown family: `GenericCandidates`)."""
    target = BUILDERS.get(family or "")
    if target is None:
        return GenericCandidates(config)
    return families.load(target)(config)
