"""Whether a message says, in the words work done is spelt in, that the assistant's work is done
("refunded", "is booked", "all set"), outside a clause that says it is not done, or not yet, and
beyond having looked into the request ("Triage done.")."""

from __future__ import annotations

import re
from functools import lru_cache

from agentgym.envs.tooluse.prefilter import may_hold as _may_hold

__all__ = ["COMPLETE", "says_done"]

#: "complete" as a word of work done ("completed", "is complete", "all complete").
COMPLETE = r"completed|(?:is|are|now|all|fully|been)\s+complete"


#: The written forms in which a message says work is done (the lexicon's ``done`` statements as
#: they are spelt): the engine reads "refund" and "books" as "refunded" and "booked" too (its
#: stems), which is right for what a message speaks of but no claim that anything was done.
_DONE_FORMS = re.compile(rf"\b(?:done|{COMPLETE}|finished|all set|taken care|processed|booked|filed|refunded|paid|sent|"
                         r"submitted|scheduled|transferred|rolled back|exchanged|issued|handled|sorted out|resolved|"
                         r"fixed)\b", re.I)
#: Where a clause says the work is not done, or not yet: from its opener to the clause's end
#: ("before anything is done", "nothing has been processed", "once it's booked", "I haven't
#: filed it").
_UNDONE = re.compile(r"\b(?:before|until|till|once|if|unless|nothing|not|never|\w+n[’']t|yet to|still to)\b[^.;:!?,()\n]*",
                     re.I)


#: Looking into a request, said done ("Triage done.", "my checks are complete"): no work of it.
_LOOKED_INTO = re.compile(r"\b(?:triage|analysis|investigation|research|checks?|review|search(?:es)?|look-?ups?|"
                          r"homework|digging)\s+(?:is\s+|are\s+)?(?:now\s+)?(?:done|complete|completed|finished)\b",
                          re.I)


@lru_cache(maxsize=4096)
def says_done(text: str) -> bool:
    """Whether `text` says, in a done word as it is spelt ("refunded", "is booked", "done"), that
    work is done, outside a clause that says it is not done, or not yet, and beyond looking into
    it ("Triage done."). A pure function of the text, memoised (agents repeat their messages)."""
    # Each pattern only where a word every match of it holds is: the two that take clauses out
    # put a space where they were, which joins no two words into a done word.
    if not _may_hold(text, _DONE_WORDS):
        return False
    if _may_hold(text, _LOOKED_INTO_WORDS):
        text = _LOOKED_INTO.sub(" ", text)
    if _may_hold(text, _UNDONE_WORDS):
        text = _UNDONE.sub(" ", text)
    return _DONE_FORMS.search(text) is not None


#: Words one of which every match of `_DONE_FORMS`, `_LOOKED_INTO` and `_UNDONE` holds (lower case).
_DONE_WORDS = ("done", "complete", "finished", "all set", "taken care", "processed", "booked", "filed", "refunded", "paid",
               "sent", "submitted", "scheduled", "transferred", "rolled back", "exchanged", "issued", "handled",
               "sorted out", "resolved", "fixed")
_LOOKED_INTO_WORDS = ("done", "complete", "finished")
_UNDONE_WORDS = ("before", "until", "till", "once", "if", "unless", "nothing", "not", "never", "n't", "yet to", "still to")
