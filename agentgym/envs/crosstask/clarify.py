"""What a come-back's user hears asked beyond a place or a time: whether to cancel the booking
instead, whether to cancel the old booking once the new one is in place (a move's own second
step, not an either/or), whether to keep it as it is, whether its other needs still hold. A
person asked answers, so the user of a come-back (`agentgym.envs.crosstask.comeback`) answers
each of these from its own rule, never by naming a place.

Only questions count: a message that says it will cancel the old booking after booking the new
one ("I'll book X and cancel the old one; shall I?") asks none of them.
"""

from __future__ import annotations

import re

from agentgym.users.understanding.words import SENTENCE_BREAK, without_abbreviation_stops

__all__ = ["CANCEL", "KEEP", "NEEDS", "REPLACE", "asked"]

CANCEL, KEEP, NEEDS, REPLACE = "cancel", "keep", "needs", "replace"

_ASKS = re.compile(r"\?|\b(?:should|shall|would|do|does|can|could|may) (?:i|we|you|it|they|these|those|that)\b"
                   r"|\blet me know\b|\bwhich do you\b|\bwhat would you\b|\bplease confirm\b")
_TOPICS = (
    (CANCEL, re.compile(r"\bor\b[^.?!]{0,80}\bcancel|\bcancel\w*\b[^.?!]{0,40}\b(?:instead|altogether|entirely|"
                        r"outright|rather)\b|\b(?:should|shall|can|may) (?:i|we) (?:just |simply )?cancel"
                        r"|\bme to (?:just |simply )?cancel|\bjust cancel"
                        # a plan that is the cancel itself ("1. Cancel the booking at X (B2). Yes?",
                        # "Plan: cancel B2. OK?"),
                        # not a move that ends with one ("Cancel B2 and book X")
                        r"|^[\W\d]*(?:[a-z ]{1,20}:[\W\d]*)?cancel\b(?![^.?!]*\b(?:book|move|rebook|switch)\b)")),
    (KEEP, re.compile(r"\bor\b[^.?!]{0,60}\b(?:keep|leave|stay with|stick with)\b|\b(?:keep|leave) (?:it|the booking|"
                      r"things|everything) (?:as it is|as is|where it is|unchanged)|\bkeep the current\b"
                      r"|\b(?:keep|leave)\b[^.?!]{0,30}\b(?:booking|reservation)\b")),
    (NEEDS, re.compile(r"\b(?:other|earlier|previous|original|first|remaining|existing|initial)\s+(?:\w+\s+)?"
                       r"(?:needs?|wish(?:es)?|requirements?|must-haves?|criteria|preferences?|conditions?|"
                       r"requests?)\b|\bstill (?:apply|applies|hold|holds|matter|matters|count|counts|stand|"
                       r"stands|needed|required|important)\b|\beverything else\b|\brest of (?:your|my|the) "
                       r"(?:needs|wishes|requirements|list)\b")),
)


#: A cancellation asked about as the move's second step: the old booking, once the new one is
#: in place ("should I cancel the Saturday booking once the new one is in place, as last time?").
_REPLACE = re.compile(r"\bcancel\w*\b[^.?!]{0,80}\b(?:(?:once|after|when|as soon as)\b[^.?!]{0,60}\b(?:new|moved?|"
                      r"booked|in place|confirmed|rebook\w*)\b|afterwards?\b|as (?:we did )?(?:last time|before)\b)"
                      r"|\bcancel\w*\s+(?:the\s+)?(?:old|previous|original|earlier|former)\b")
#: The move's second step said outright ("... and then cancel the Monday booking?", "once the new
#: one is booked, should I cancel ...?"), also beside the alternative ("book the new one and then
#: cancel the old one, or would you rather just cancel?" asks both).
_THEN_CANCEL = re.compile(r"\b(?:then|afterwards?|after that)\s+cancel\w*\b|\b(?:once|when|after)\b[^.?!]{0,40}"
                          r"\b(?:new|moved?|booked|in place|confirmed)\b[^.?!]{0,30}\bcancel\w*\b")
#: Words that make a cancellation the alternative to the move ("or should I just cancel it?").
_INSTEAD = re.compile(r"\bor\b[^.?!]{0,80}\bcancel|\bcancel\w*\b[^.?!]{0,40}\b(?:instead|altogether|entirely|"
                      r"outright|rather)\b|\b(?:just|simply) cancel")


#: Per topic, words one of which every match of its pattern holds; every match of `_REPLACE`,
#: `_THEN_CANCEL` and `_INSTEAD` holds "cancel". The sentences are read in lower case, and the
#: patterns are case-sensitive, so a sentence with none of a pattern's words is one it does not
#: match.
_TOPIC_WORDS = {CANCEL: ("cancel",), KEEP: ("keep", "leave", "stay with", "stick with"),
                NEEDS: ("need", "wish", "requirement", "must-have", "criteria", "preference", "condition", "request",
                        "still ", "everything else", "rest of ")}
_ANY_TOPIC = tuple(w for words in _TOPIC_WORDS.values() for w in words)


def _topics(sentence: str) -> set[str]:
    """The topics a lower-cased sentence puts, whether it asks or not."""
    if not any(map(sentence.__contains__, _ANY_TOPIC)):
        return set()  # a sentence with no word of any topic puts none
    topics = {topic for topic, words in _TOPICS
              if any(map(sentence.__contains__, _TOPIC_WORDS[topic])) and words.search(sentence)}
    if "cancel" in sentence:
        outright = _THEN_CANCEL.search(sentence) is not None
        if not _INSTEAD.search(sentence) and (outright or _REPLACE.search(sentence)):
            topics = (topics - {CANCEL}) | {REPLACE}
        elif outright:
            topics |= {REPLACE}
    return topics


def asked(message: str) -> frozenset[str]:
    """The topics (`CANCEL`, `REPLACE`, `KEEP`, `NEEDS`) that a sentence of `message` asks
    about, and a cancel that one puts and a bare question after it asks for the yes to ("1.
    Cancel the booking at X (B2). Yes?"); an abbreviation's full stop ("e.g.") ends no sentence."""
    sentences = SENTENCE_BREAK.split(without_abbreviation_stops(message).lower())
    put = [_topics(sentence) for sentence in sentences]
    if not any(put):
        return frozenset()  # most messages: no topic put, nothing asked
    out: set[str] = set()
    bare_ask_after = False  # whether a later sentence asks and puts no topic
    for sentence, topics in zip(reversed(sentences), reversed(put)):
        asks = _ASKS.search(sentence) is not None
        if asks:
            out |= topics
        elif bare_ask_after:
            # Only a cancel is put for the yes that way: "I'll book the new one and then cancel
            # the old booking. Shall I go ahead?" says how the move goes and asks nothing of it.
            out |= topics & {CANCEL}
        bare_ask_after = bare_ask_after or (asks and not topics)
    return frozenset(out)
