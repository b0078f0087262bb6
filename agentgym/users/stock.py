"""The stock replies every rule-based user gives in the same words (agents and tests match them)."""

from __future__ import annotations

__all__ = ["GO_AHEAD", "CONFIRMED", "EVERYTHING", "ACCEPT", "GIVE_UP", "CANNOT_UNDO", "EMPTY", "REPHRASE", "KEYWORDS"]

#: Go on with the work (picked by the user's draws).
GO_AHEAD = ("Please go ahead.", "Okay, go ahead with that.", "Sounds good, please continue.")
#: The answer to a confirmation question about what was asked.
CONFIRMED = "Yes, please go ahead."
#: The answer to an open question when every detail has been stated.
EVERYTHING = "That's everything I can think of. Please go ahead."
#: The task is done as asked: the user accepts and the episode ends.
ACCEPT = ("Great, that's everything I needed. Thank you!", "Perfect, that's all done. Thanks!")
#: Out of patience with wrong writes: the user leaves.
GIVE_UP = "This isn't working out. I'll sort it out myself. Goodbye."
#: A wrong write no tool can undo: no fix could succeed, so the user leaves at once.
CANNOT_UNDO = "That can't be undone, so I'll sort it out myself. Goodbye."
#: The reply to an empty message.
EMPTY = "Sorry, I didn't get that. Could you help me with my request?"
#: The reply to a message the user cannot place.
REPHRASE = "I'm not sure what you mean. Could you rephrase that?"
#: The reply to a list of keywords with no question around them.
KEYWORDS = "That's just a list of words to me. Could you ask me in a full sentence?"
