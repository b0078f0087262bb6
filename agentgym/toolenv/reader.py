"""How the default user of a built env reads an assistant's message: the shared understanding
engine of every simulated user (`agentgym.users.understanding`), over a lexicon made from the
task's details.

Each detail is a slot of the lexicon, asked about by its id's words and its ``ask`` phrases, as
whole words (stemmed: "amounts" asks about the amount, "address" is not inside "addressee"), in a
sentence that asks; the engine's grammar tells questions, requests, exclusions ("no need for the
amount"), confirmations ("shall I go ahead?") and keyword lists apart. A few phrases of an open
question ("anything else?") and of a claim that the work is done complete the lexicon.
"""

from __future__ import annotations

from functools import lru_cache

from agentgym.users.understanding import Understanding, compile_understanding, parse_lexicon

__all__ = ["OPEN", "DONE", "reader_for"]

#: An open question: "is there anything else I should know?"
OPEN: tuple[str, ...] = ("anything else", "anything more", "something else", "what else", "any other",
                         "more details", "other details", "more information", "else i should know")
#: Claims that the work is done.
DONE: tuple[str, ...] = ("done", "completed", "taken care of", "all set", "finished", "processed")


@lru_cache(maxsize=256)
def reader_for(phrases: tuple[tuple[str, tuple[str, ...]], ...]) -> Understanding:
    """The engine compiled for a set of details, ``((detail id, phrases that ask about it), ...)``:
    once per distinct set (an env's tasks share theirs): compiling costs far more than reading."""
    slots = {did: list(dict.fromkeys(p.lower() for p in ps)) for did, ps in phrases}
    lexicon = parse_lexicon({"slots": slots, "values": {}, "open": list(OPEN), "statements": {"done": list(DONE)}},
                            "the task's details")
    return compile_understanding(lexicon)
