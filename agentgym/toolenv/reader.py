"""How the default user of a built env reads an assistant's message: which details it asks about,
whether it asks an open question, asks to confirm, or claims the work is done.

Deliberately small: whole-word, case-insensitive matching of each detail's phrases (a final
"s" or "es" allowed, so "amounts" asks about the amount; "address" is not inside "addressee"),
and a few fixed English cues. `Reading` has the field names of the shared understanding engine's
reading (`asked`, `open`, `question`, `confirm`, `said`), so a reader built on that engine can
take this one's place without the user changing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Reading", "DetailReader", "reader_for"]

#: Words that open a question.
_QUESTION_START = ("what", "which", "where", "when", "how", "who", "whose", "why", "could", "can", "would", "will",
                   "do", "does", "did", "is", "are", "may", "might", "shall", "should", "have", "has", "any")
#: Phrases that ask without a question mark.
_REQUESTS = ("tell me", "let me know", "please provide", "please share", "please give", "please confirm",
             "please send", "need your", "need to know", "need the", "i need a few", "give me", "send me",
             "share your", "provide your", "confirm your")
#: An open question: "anything else I should know?"
_OPEN = ("anything else", "anything more", "what else", "any other", "more details", "other details",
         "more information", "everything i need")
#: Asking for the go-ahead before committing.
_CONFIRM = ("shall i", "should i", "go ahead", "proceed", "confirm", "ok to", "okay to", "do you want me to",
            "would you like me to", "is that right", "is that correct", "sound good", "sounds good")
#: Claims that the work is done.
_DONE = ("done", "completed", "taken care of", "all set", "finished", "processed")


def _phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """Any of `phrases` as whole words (inner spaces match any whitespace; a plural ending is allowed)."""
    parts = sorted({r"\s+".join(re.escape(w) for w in p.lower().split()) for p in phrases if p.split()},
                   key=len, reverse=True)
    return re.compile(r"(?<![a-z0-9_])(?:" + "|".join(parts) + r")(?:e?s)?(?![a-z0-9_])")


_QUESTION_RE = re.compile(r"^\W*(?:" + "|".join(_QUESTION_START) + r")\b")
_REQUEST_RE = _phrase_pattern(_REQUESTS)
_OPEN_RE = _phrase_pattern(_OPEN)
_CONFIRM_RE = _phrase_pattern(_CONFIRM)
_DONE_RE = _phrase_pattern(_DONE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


@dataclass(frozen=True, slots=True)
class Reading:
    """What one assistant message says, as the user reads it."""

    #: Ids of the details it asks about, in the order the reader was given them.
    asked: tuple[str, ...] = ()
    #: An open question ("anything else?") and no detail named.
    open: bool = False
    #: Whether any sentence asks or requests something.
    question: bool = False
    #: It asks for the go-ahead ("shall I refund it?").
    confirm: bool = False
    #: Statements it makes outside questions: ``"done"`` for a claim the work is done.
    said: frozenset[str] = frozenset()


class DetailReader:
    """Reads messages for a fixed set of details.

    Args:
        phrases: per detail id, the phrases that ask about it.
    """

    def __init__(self, phrases: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
        self._details = tuple((did, _phrase_pattern(ps)) for did, ps in phrases if ps)

    def read(self, message: str) -> Reading:
        """The `Reading` of `message`."""
        text = message.lower()
        asking = [s for s in _SENTENCE.findall(text) if _asks(s)]
        said = frozenset() if asking or not _DONE_RE.search(text) else frozenset({"done"})
        if not asking:
            return Reading(said=said)
        question_text = " ".join(asking)
        asked = tuple(did for did, pattern in self._details if pattern.search(question_text))
        return Reading(asked=asked, open=not asked and _OPEN_RE.search(question_text) is not None, question=True,
                       confirm=_CONFIRM_RE.search(question_text) is not None, said=said)


def _asks(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith("?") or _QUESTION_RE.match(s) is not None or _REQUEST_RE.search(s) is not None


@lru_cache(maxsize=256)
def reader_for(phrases: tuple[tuple[str, tuple[str, ...]], ...]) -> DetailReader:
    """The reader of a set of details (compiled once per distinct set: tasks of one env share it)."""
    return DetailReader(phrases)
