"""Bookings a re-plan keeps as they were: "A, B and D stay the same.", "Keep booking C as it
is.", "No change to A.", "B: unchanged", "Everything else stays as before."

A person who has heard a plan and is told that some of its bookings stay the same hears those
bookings' places from that plan; the itinerary's user (`agentgym.envs.dialog.itinerary_user`)
fills them in from the last plan it heard. Labels are read as written (capital letters: "a"
is an article), the words around them in any case.
"""

from __future__ import annotations

import re

from agentgym.envs.dialog.itinerary import LABELS

__all__ = ["kept_bookings", "ALL"]

#: What `kept_bookings` gives for "everything else stays the same": every booking it did not
#: hear a place for.
ALL = frozenset(range(len(LABELS)))

_ONE = rf"(?:(?i:booking)\s+)?[{''.join(LABELS)}](?![\w'’])"
#: A list of labels: "A", "A and B", "A, B and D", "A, B, & D", "bookings B/D".
_LIST = rf"(?<![\w'’])(?:(?i:bookings)\s+)?{_ONE}(?:\s*(?:,\s*(?:(?i:and)\s+)?|\s+(?i:and)\s+|\s*[&/]\s*){_ONE})*"
#: How a booking is said to stay: "stay(s) the same", "remain unchanged", "are as before",
#: "will stay as planned", "can stay where they are", "stay booked", "stay as in the plan above".
_STAYS = (r"(?i:(?:all\s+|both\s+)?(?:(?:will|would|can|should|shall)\s+)?(?:stay|stays|remain|remains|are|is|be|stand|stands)"
          r"\s+(?:exactly\s+)?(?:the same(?!\s+(?:area|place|day|price|rating|category|time|slot)\b|\s+as\s+(?!before|planned|agreed|proposed))|unchanged|untouched|in place|booked|as[- ](?:is|they are|it is|they were|it was|"
          r"before|planned|proposed|agreed|booked|submitted|above)|as in (?:the|my|our) (?:plan|proposal|itinerary)|"
          r"where (?:they|it) (?:are|is|were|was)))")
#: Where the plan to keep is: the labels, then how they stay; "keep A, B and D (as they are)";
#: "no change(s) to A"; "B: unchanged"; "same as before for A and D".
_KEPT = re.compile(
    rf"(?P<stay>{_LIST})\s+{_STAYS}"
    rf"|(?i:\bkeep(?:s|ing)?\s+)(?P<keep>{_LIST})"
    rf"|(?i:\bno\s+changes?\s+(?:to|for|on)\s+)(?P<change>{_LIST})"
    rf"|(?P<colon>{_LIST})\s*(?::|\s[-–—]|[–—])\s*(?i:unchanged|no change|(?:the )?same(?: as before)?|as before)\b"
    rf"|(?i:\b(?:the )?same as before (?:for|on)\s+)(?P<same>{_LIST})")
#: "Everything else stays the same", "the rest remain as planned", "keep everything else",
#: "no other changes", "nothing else changes", "the other four stay as in the plan above", and a
#: request that points back to the plan put before ("Good to go with the above?"): every booking.
_REST = (r"(?:everything else|all else|the rest|the others|the other bookings?|the remaining bookings?|"
         r"all (?:the )?other bookings|other bookings|every other booking|all (?:of )?the others|"
         r"the other (?:two|three|four|five|\d)(?: bookings| places)?)")
_KEPT_REST = re.compile(rf"(?i:\b{_REST}\s+){_STAYS}|(?i:\bkeep(?:s|ing)?\s+{_REST}\b|\bno other changes?\b|"
                        r"\bnothing else (?:changes|has changed|is changing)\b|"
                        # a request that points back to the plan put before ("Good to go with the above?",
                        # "shall I book that plan?", "the plan I described")
                        r"\b(?:with|book|submit|do|approve|is|for) (?:the )?above\b|\babove plan\b|\bthe plan above\b|"
                        r"\bas (?:above|described|proposed)\b|\b(?:book|submit|go ahead with|approve) that plan\b|"
                        r"\b(?:plan|what|changes?|update) I (?:just )?(?:described|proposed|gave|laid out|set out)\b)")
_LABEL_IN = re.compile(rf"[{''.join(LABELS)}](?![\w'’])")


def kept_bookings(message: str) -> frozenset[int]:
    """The bookings (indices into `LABELS`) `message` says stay as they were: those it names
    so, or `ALL` where it says everything else does."""
    if _KEPT_REST.search(message):
        return ALL
    kept: set[int] = set()
    for match in _KEPT.finditer(message):
        said = next(group for group in match.groups() if group is not None)
        # "booking" holds no capital label; the labels are the list's capitals
        kept.update(LABELS.index(label) for label in _LABEL_IN.findall(re.sub(r"(?i)\bbookings?\b", "", said)))
    return frozenset(kept)
