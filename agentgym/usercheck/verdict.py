"""The verdict on one probe: what the user revealed beyond the paired control, and what that means.

Pure functions of what was observed (the holding before the message, the user's reply to the
phrasing and to the neutral control message at the same turn), so the measuring logic is
tested on hand-made observations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentgym.usercheck.goals import Holding, says

__all__ = ["Observed", "Verdict", "revealed_beyond_control", "judge", "reply_kind", "CONTROL_MESSAGE"]

#: The neutral message of the paired control: it asks for nothing.
CONTROL_MESSAGE = "Okay."

# A reply that says it did not understand and asks the assistant to say it again.
_REPHRASE = re.compile(
    r"\b(rephrase|re-phrase|reword|not sure what you mean|what do you mean|didn'?t (get|understand|catch)|"
    r"don'?t (understand|follow)|(say|ask|put) (that|it) (again|another way|differently)|could you clarify|"
    r"not sure i follow|which do you mean|what (are|were) you asking|not sure what you'?re asking)\b")


@dataclass(frozen=True, slots=True)
class Observed:
    """One step's outcome: the user's words and the ids it had stated after it."""

    text: str
    known: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one probe showed.

    Attributes:
        held: the concepts the user held before the message.
        asked_held: the asked concepts among them (the ones an answer must reveal).
        revealed: the concepts revealed beyond the control.
        n_revealed: how many slots were revealed beyond the control.
        answered: the asked, held concepts revealed.
        wrong: concepts revealed that were not asked.
        excluded_revealed: concepts the message excluded that were revealed.
        opportunity: some concept not asked was held (a wrong answer was possible).
        reply: ``answer`` (something revealed), ``rephrase`` (asks to say it again) or
            ``proceeds`` (neither).
    """

    held: tuple[str, ...]
    asked_held: tuple[str, ...]
    revealed: tuple[str, ...]
    n_revealed: int
    answered: tuple[str, ...]
    wrong: tuple[str, ...]
    excluded_revealed: tuple[str, ...]
    opportunity: bool
    reply: str


def revealed_beyond_control(before: Holding, probe: Observed, control: Observed, message: str) -> list[str]:
    """Ids of the slots the phrasing made the user reveal and the control did not.

    A slot counts when its id joined the stated ids, or, where the ids do not tell, when its
    value reads in the reply but neither in the control's reply nor in the message itself (a
    user echoing the assistant's words reveals nothing).
    """
    known = set(before.known)
    by_control = set(control.known) - known
    out = [i for i in probe.known if i not in known and i not in by_control]
    for slot in before.slots:
        if slot.id in known or slot.id in by_control or slot.id in out:
            continue
        if any(says(probe.text, t) and not says(control.text, t) and not says(message, t) for t in slot.texts):
            out.append(slot.id)
    return out


def reply_kind(text: str, revealed: bool) -> str:
    """``answer``, ``rephrase`` or ``proceeds``: how the user's reply reads."""
    if revealed:
        return "answer"
    return "rephrase" if _REPHRASE.search(text.lower()) else "proceeds"


def judge(before: Holding, probe: Observed, control: Observed, message: str,
          asks: tuple[str, ...], excludes: tuple[str, ...] = ()) -> Verdict:
    """The verdict on a message asking for `asks` (and ruling out `excludes`)."""
    ids = revealed_beyond_control(before, probe, control, message)
    concept_of = {s.id: s.concept for s in before.slots}
    revealed = tuple(dict.fromkeys(concept_of[i] for i in ids if i in concept_of))
    held = before.held()
    asked = tuple(c for c in asks if c in held)
    return Verdict(
        held=tuple(sorted(held)),
        asked_held=asked,
        revealed=revealed,
        n_revealed=len(ids),
        answered=tuple(c for c in asked if c in revealed),
        wrong=tuple(c for c in revealed if c not in asks),
        excluded_revealed=tuple(c for c in excludes if c in revealed),
        opportunity=bool(held - set(asks)),
        reply=reply_kind(probe.text, bool(ids)),
    )
