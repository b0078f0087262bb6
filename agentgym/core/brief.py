"""The turn budget in the brief: an agent plays to a limit it is told, whatever its difficulty."""

from __future__ import annotations

import re

from agentgym.core.action_types import MAX_CALLS_PER_TURN

__all__ = ["with_turn_budget"]


def _states_turns(brief: str) -> bool:
    """Whether `brief` states a turn budget in its own words ("You have 24 turns for this
    request", "at most 76 turns in all"): a number before " turns". A scan for the words, not a
    regular expression: a pattern that opens with a number is tried at every place of the brief,
    at every reset."""
    at = brief.find(" turns")
    while at > 0:
        if brief[at - 1].isdigit():
            return True
        at = brief.find(" turns", at + 1)
    return False


def with_turn_budget(brief: str, max_turns: int, own: int | None = None) -> str:
    """`brief`, stating the episode's turn budget `max_turns`: where the brief states its task's
    own budget (`own`) and the env was made with another, that one instead; where it states none,
    a sentence at its end. The episode ends at the budget, so an agent that plans its turns must
    be told it."""
    if _states_turns(brief):
        if own is not None and own != max_turns:
            brief = re.sub(rf"(?<!\d){own} turns\b", f"{max_turns} turns", brief)
        return brief
    return (f"{brief}\nYou have {max_turns} turns: a turn is one message to the user, or one set of up to "
            f"{MAX_CALLS_PER_TURN} tool calls; after the last one the episode ends where it stands.")
