"""What one assistant message says, as the simulated user understands it: the `Reading` that
`Understanding.read` (`agentgym.users.understanding.reading`) returns."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reading"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What one assistant message says, as the simulated user understands it."""

    #: Slots the message asks about, in order of first mention (exclusions removed).
    asked: tuple[str, ...] = ()
    #: Slots the message explicitly sets aside ("no need to tell me the price").
    excluded: frozenset[str] = frozenset()
    #: An open question ("anything else I should know?") naming no slot, or asking beyond the
    #: slots it names ("anything else about the order?"; those are in `asked` too: a user with
    #: nothing new to say about them answers the open question).
    open: bool = False
    #: Whether any sentence asks or requests something.
    question: bool = False
    #: A confirmation question ("shall I book it?", "do you want me to go ahead?").
    confirm: bool = False
    #: Places proposed, in order of mention: each the lower-cased name or id as written,
    #: with any number or "ii" that follows it (`resolve_place` finds the longest real name).
    places: tuple[str, ...] = ()
    #: Values named beside a proposal (e.g. the day and time a place is proposed for): slot -> values.
    details: tuple[tuple[str, str], ...] = ()
    #: Every value named outside an exclusion, in order: (slot, value).
    values: tuple[tuple[str, str], ...] = ()
    #: Of `places`, those recommended ("I'd go with A", "Top pick: A", "Shall I book A?") and
    #: those offered as alternatives ("B is also an option", "Runner-up: B"): how a message
    #: naming several places says which one it proposes.
    recommended: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()
    #: Statement concepts the message makes outside questions (e.g. ``done``).
    said: frozenset[str] = frozenset()
    #: A keyword list rather than a question: many slot words, the same slots over and over.
    salad: bool = False
    #: Whether the user recognises anything in the message at all (False: garbage).
    placed: bool = False
    #: Whether a typo had to be forgiven to read it.
    corrected: bool = False
    #: Small talk ("how are you today?", "is it sunny where you are?"): about the person, not
    #: the task; it asks about no slot it names.
    chatter: bool = False
