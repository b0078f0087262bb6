"""Whether an assistant's questions only ask leave to look something up: one reading for every user.

Careful assistants ask before they read ("May I check Forge Hub for Tuesday morning?", "Is it all
right if I now check which of these are open?", "May I look into shipping next?"). A person hears
a read asked for, which needs no yes to any plan, and answers "sure, go ahead"; not a proposal of
the place named, a plan to agree to, or a question about the alert. A question that also asks to
act ("May I check it and then book it?", "... and file the incident?") or for the user's word
("Can I check that this is fine with you?") is none, and beside another question ("Is that OK? May
I check availability first?") the other question stands.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentgym.users.understanding.words import without_abbreviation_stops

__all__ = ["asks_leave_to_look"]

#: A look-up: check (not "check out"), verify, look up/into/at, search, review, read (not to the
#: user: "read you the plan"), fetch, pull up, list, a retry of a read, run checks, see if, "start
#: by looking"; in the past tense too, as "would it be all right if I looked into X" puts it.
_CHECKS = r"(?:the\s+|those\s+|these\s+|my\s+|a\s+few\s+)?(?:re-?checks?|checks|look-?ups?|searches)\b"
_READ_NOUN = r"(?:dependenc|metrics|logs?\b|deploy|search|check|look|read|details|availability|page|calendar|order|record)"
_LOOK = (r"(?:(?:re-?|double-)?check(?:ed)?(?!\s*out)|verif(?:y|ied)|look(?:ed)?\s+(?:up|into|at)|"
         r"(?:take|took|have|had)\s+(?:a|another|one\s+more)\s+(?:\w+\s+)?(?:look|peek|glance)|"
         r"search(?:ed)?|review(?:ed)?|re-?read|read(?!\s+(?:you|it\s+back|back|out|aloud))|"
         r"fetch(?:ed)?|pull(?:ed)?\s+up|retriev(?:e|ed)|list(?:ed)?|retr(?:y|ied)(?=[^?]{0,40}?\b" + _READ_NOUN + r")|"
         r"(?:run|ran)\b[^?]{0,40}?\bchecks?|see\s+(?:if|whether)|(?:start|begin)\s+by\s+(?:looking|checking|searching|"
         r"reading|fetching|listing|reviewing|pulling)|go\s+ahead\s+(?:and\s+)?(?:with\s+)?" + _CHECKS + r")\b")
#: Asking leave for it: "may/can/could/shall/should I ...", "is it all right if I ...", "OK if I
#: ...", "OK to ...", "(do you) mind if I ...", "any objection if I ...", at a question's start or
#: after a break ("Before I plan, may I ..."; `_AT_START`).
_LEAVE = re.compile(r"\b(?:(?:may|can|could|shall|should)\s+i|(?:(?:is\s+it|would\s+it\s+be|will\s+it\s+be)\s+)?"
                    r"(?:all\s+right|alright|ok(?:ay)?|fine)\s+(?:if\s+i|for\s+me\s+to|to)|"
                    r"(?:(?:do|would)\s+you\s+)?mind\s+if\s+i|any\s+objections?\s+(?:if\s+i|to\s+me))"
                    r"\s+(?:\w+ly\s+|now\s+|first\s+|also\s+|just\s+)?" + _LOOK)
#: What may stand before the words of leave: nothing but marks, or a break (a dash too: "One more
#: hop - OK if I ...?"), or a joining word.
_AT_START = re.compile(r"(?:^\W*|.*(?:[,;:\u2013\u2014]\s*|\s-\s+|\b(?:so|and|then|now)\s+))$", re.S)
#: Words one of which every question `_LEAVE` reads holds.
_ASKS = ("may i ", "can i ", "could i ", "shall i ", "should i ", "if i ", "for me to ", "ok to ", "okay to ", "right to ",
         "fine to ", "to me ")
#: What makes the question one about acting, or about the user's word, after all.
_NOT_ONLY_LOOKING = re.compile(r"\b(?:with|by|to)\s+you\b|\byour\s+(?:yes|ok|okay|approval|go-ahead|agreement|confirmation)\b|"
                               r"\b(?:book|reserve|submit|cancel|file|roll\s*(?:\w+\s+)?back|rollback|refund|transfer|pay|withdraw|"
                               r"exchange|schedule|invite|send|issue|request|approve|create|"
                               r"(?:move|change|update)\s+(?:the|it|your|my|them|that|this|those|these)|"
                               r"proceed|go\s+ahead(?!\s+(?:and\s+)?(?:with\s+)?" + _CHECKS + r"))\b(?!['\u2019])")


#: One of `_LEAVE`'s look-up verbs, which every question it reads holds.
_VERBS = ("check", "verif", "look", "peek", "glance", "search", "review", "run", "ran ", "see ", "go ahead", "read",
          "fetch", "pull", "retr", "list", "start by", "begin by")


@lru_cache(maxsize=1024)
def asks_leave_to_look(message: str) -> bool:
    """Whether every question of `message` only asks leave to look something up (see the module
    docstring). Memoised: a pure function of the text, read at every message a user answers."""
    end = message.rfind("?")
    if end < 0:
        return False
    last = _questions(message[max(0, end - 400):end + 1].lower())[-1]  # the last question
    if not any(ask in last for ask in _ASKS) or not any(verb in last for verb in _VERBS):
        return False  # most messages: the last question asks no leave to look anything up
    asked = _questions(message.lower())
    return bool(asked) and all(_asks_leave(q) for q in asked)


def _asks_leave(question: str) -> bool:
    """Whether one question asks leave to look something up, and for nothing else."""
    if not any(ask in question for ask in _ASKS):
        return False
    m = _LEAVE.search(question)
    return (m is not None and _AT_START.match(question, 0, m.start()) is not None
            and _NOT_ONLY_LOOKING.search(question) is None)


def _questions(text: str) -> list[str]:
    """The questions of `text`: each stretch before a "?" back to the last sentence end before it
    (a full stop that is no decimal point nor an abbreviation's: `without_abbreviation_stops`, a "!"
    or a line break), stripped of list marks."""
    out = []
    for part in without_abbreviation_stops(text).split("?")[:-1]:
        cut = max(part.rfind("!"), part.rfind("\n"))
        dot = part.rfind(".")
        while dot > cut and part[dot + 1:dot + 2].isdigit():  # "rated 4.5": no sentence end
            dot = part.rfind(".", 0, dot)
        out.append(part[max(cut, dot) + 1:].strip().lstrip("*_#>-\u2022 ") + "?")
    return out
