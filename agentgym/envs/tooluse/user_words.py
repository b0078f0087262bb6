"""What the tool-use users know of a domain's words and tools, compiled once per domain: how they
read a message, the words typos never touch, and the writes (and undoing writes) they watch."""

from __future__ import annotations

import re
from functools import lru_cache

from agentgym.envs.tooluse.data import load_lexicon
from agentgym.envs.tooluse.domains import load_domains
from agentgym.users.understanding import Understanding, compile_understanding

__all__ = ["VERBATIM", "understanding", "plan_said_as_such", "protected_words", "write_tools"]

#: Values a message may hold that the agent must copy as they are: e-mails, ids, quoted titles,
#: and capitalised names (typos never land inside them).
VERBATIM = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[A-Z]{1,5}-\d+\b|\"[^\"]*\"|\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")


@lru_cache(maxsize=None)
def write_tools(domain: str) -> tuple[frozenset[str], frozenset[str]]:
    """The write tools of `domain`, and those among them that undo a record."""
    specs = load_domains()[domain].toolkit.tool_specs()
    writes = frozenset(name for name, spec in specs.items() if spec.kind.value == "write")
    return writes, frozenset(name for name, _ in load_domains()[domain].undo.values()) & writes


@lru_cache(maxsize=None)
def understanding(domain: str) -> Understanding:
    """How the users of tool-use `domain` read messages: the family lexicon and the domain's own
    words for detail values (compiled once per domain)."""
    return compile_understanding(load_lexicon(), load_domains()[domain].vocabulary)


@lru_cache(maxsize=None)
def protected_words(domain: str) -> re.Pattern[str]:
    """The domain's own words for detail values (services, products, variants, codes, months),
    longest first, as one pattern: typos never land inside them."""
    words = sorted({w for values in load_domains()[domain].vocabulary.values() for w in values}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b" if words else r"(?!)")


#: "What I'd do: ...", "What I would do next is ...": the assistant's plan, said, which the
#: shared engine would read as a question that opens with "what".
_WHAT_I_DO = re.compile(r"\bwhat (?:i|we)(?:'d|\u2019d| would| will|'ll|\u2019ll) do(?: next)?(?: is)?\b:?", re.I)


def plan_said_as_such(message: str) -> str:
    """`message` with "What I'd do" said as what it is ("my plan:", a plan's heading), so that no
    reader takes a plan put for a question; the same text where it holds none (most messages)."""
    low = message.lower()
    if "what i" not in low and "what we" not in low:  # most messages, "what you need" among them
        return message
    return _WHAT_I_DO.sub("my plan:", message)
