"""What the dialog user says: its stock sentences and how it states a need, in one place.

The user's reply logic (`agentgym.envs.dialog.user`) decides what to say; this module says it, in
the domain's own words ("an event venue", "I'd like to check in on Friday evening"). The
sentences agents and tests key on (`REPHRASE`, `KEYWORDS`, `SMALL_TALK`, `WHICH_ONE`) are
exported from the user module too.
"""

from __future__ import annotations

from functools import lru_cache

from agentgym.envs.dialog.domain import DAYS, Domain
from agentgym.envs.dialog.tasks import Constraint
from agentgym.users.stock import KEYWORDS, REPHRASE

__all__ = ["statement", "WISH_FORM", "relative_time", "RELATIVE_DAYS", "come_back", "also_need", "clause", "REPHRASE", "KEYWORDS", "SMALL_TALK", "WHICH_ONE", "GO_CHECK",
           "GREETINGS", "ACCEPT", "GIVE_UP", "WARNING", "EVERYTHING", "PROCEED", "NO_PREFERENCE", "SLOT_NOUN",
           "VAGUE", "QUESTION_FOR", "EMPTY", "RIGHT", "WHICH_PLACE", "CANCELLED", "CANCELLED_NONE", "stock"]

_STATEMENTS: dict[str, tuple[str, ...]] = {
    "category": ("The {label} should be {value}.", "I'd like the {label} to be {value}.",
                 "I need the {label} to be {value}."),
    "area": ("It should be in {value}.", "Somewhere in {value}, please.", "I'd like it to be in the {value} area."),
    "price": ("My budget is at most {value} {unit}.", "Nothing above {value} {unit}, please.",
              "I can spend up to {value} {unit}."),
    "rating": ("It should be rated at least {value}.", "I want a rating of {value} or more.",
               "Nothing rated below {value}, please."),
    "amenity": ("It needs to {phrase}.", "It must {phrase}.", "I'd like it to {phrase}."),
}
#: The phrasing of `_STATEMENTS` that says a need as a wish ("I'd like it to have wifi"), by kind;
#: the price's and the rating's are all firm.
WISH_FORM = {"category": 1, "area": 2, "amenity": 2}
#: What the user says of a slot it has no need about.
NO_PREFERENCE = {
    "category": "No preference on the {label}.",
    "area": "I don't mind which area.",
    "price": "Price doesn't matter much to me.",
    "rating": "The rating doesn't matter much.",
    "amenity": "No special amenities needed.",
    "time": "Any time works.",
}
#: What a slot is called when the user has nothing to say about it yet.
SLOT_NOUN = {"category": "{label}", "area": "area", "price": "price", "rating": "rating",
             "amenity": "amenities", "time": "time"}
GREETINGS = ("Hi! I'm looking for {a_noun}.", "Hello, can you help me book {a_noun}?", "Hey, I need to find {a_noun}.")
#: How a need that arrives later is introduced.
_LATE = ("Oh, one more thing: ", "Actually, I just remembered something: ", "My friend just told me something: ")
ACCEPT = ("Perfect, that's exactly what I wanted. Thank you!", "Great, thanks a lot!",
          "Wonderful, that's booked then. Thank you!")
GIVE_UP = "I think I'll look elsewhere. Goodbye."
#: Said once the user can take only one more miss.
WARNING = "Please be careful: I'm starting to lose my patience."
EVERYTHING = "That's everything I can think of for now."
PROCEED = ("Okay. Please find something that fits and book it.", "Sounds good, go ahead and book something that fits.")
#: The reply to small talk ("How's your day going?"): friendly, and back to the task.
SMALL_TALK = "All good here, thanks! Can we get back to finding {a_noun}?"
#: The reply to a message naming several places with no recommendation among them.
WHICH_ONE = "You've named more than one place. Which one would you recommend?"
#: The reply to a question that only asks leave to look something up ("May I check X?").
GO_CHECK = "Sure, go ahead and check."
#: The reply to an empty message.
EMPTY = "Sorry, I didn't get that. Can you help me find {a_noun}?"
#: The reply to a restatement of values that are the user's own.
RIGHT = "Yes, that's right."
#: The reply to a confirmation question before any place was named.
WHICH_PLACE = "Which place do you mean? Please tell me its name first."
#: The reply to a cancellation that leaves a booking, and to one that leaves none.
CANCELLED = "Okay, that one is cancelled."
CANCELLED_NONE = "Okay, that one is cancelled. Please book one that fits."
#: The same where the user has agreed to a place not booked yet: it asks for that one.
CANCELLED_BOOK = "Okay, that one is cancelled. Please book {name}."
#: How an ambiguous user blurs a detail it states up front (the `ambiguity` noise).
VAGUE = {
    "time": "Sometime soon would be good, at my usual time.",  # soon: the day may be next week
    "area": "Somewhere near the usual place.",
    "category": "The kind of place I usually like.",
    "price": "Nothing too expensive.",
}
QUESTION_FOR = {
    "time": "Which day and what time of day would you like?",
    "area": "Which area would you like?",
    "category": "Which {label} would you like?",
    "price": "What is your budget?",
}
#: Replies that carry nothing beyond the reply itself, with ``{a_noun}`` still to fill in.
_STOCK = (*ACCEPT, GIVE_UP, WARNING, EVERYTHING, *PROCEED, REPHRASE, SMALL_TALK, KEYWORDS, WHICH_ONE, GO_CHECK, EMPTY, RIGHT,
          WHICH_PLACE, CANCELLED, CANCELLED_NONE)
#: Words that stay capitalised after a colon.
_KEEP_CASE = ("I ", "I'", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def statement(c: Constraint, domain: Domain, variant: int = 0) -> str:
    """How the user states constraint `c` (variant picks one of the phrasings)."""
    if c.kind == "time":
        form = domain.time_phrases[variant % len(domain.time_phrases)]
        return form.format(day=c.value[0].capitalize(), slot=c.value[1])
    forms = _STATEMENTS[c.kind]
    phrase = domain.amenity_phrases.get(c.value, "") if c.kind == "amenity" else ""
    return forms[variant % len(forms)].format(label=domain.category_label, value=c.value, unit=domain.price_unit,
                                              phrase=phrase)


#: How the hard tier's user names a day by how many days it is after today (the brief says
#: which day today is): one reading only, never a weekday name ("next Friday" has two).
RELATIVE_DAYS = ("today", "tomorrow", "the day after tomorrow", "three days from today", "four days from today",
                 "five days from today", "six days from today")


def relative_time(day: str, slot: str, today: str) -> str:
    """How the hard tier's user states the wanted time, the day counted from `today`
    ("I need it the day after tomorrow, in the evening.")."""
    ahead = (DAYS.index(day) - DAYS.index(today)) % len(DAYS)
    return f"I need it {RELATIVE_DAYS[ahead]}, in the {slot}."


def clause(sentence: str) -> str:
    """A statement as it reads after a colon ("It needs to have wifi." -> "it needs to have wifi.")."""
    return sentence if sentence.startswith(_KEEP_CASE) else sentence[:1].lower() + sentence[1:]


def also_need(said: list[str], lead: int) -> str:
    """New needs the user just thought of, with nothing agreed yet to come back to."""
    return _LATE[lead % len(_LATE)] + " ".join([clause(said[0]), *said[1:]])


def come_back(said: list[str], lead: int, name: str) -> str:
    """New needs the user just thought of, coming back to the place agreed ("Does X still work?")."""
    return f"{also_need(said, lead)} Does {name} still work?"


@lru_cache(maxsize=None)
def stock(domain: Domain) -> frozenset[str]:
    """The user's stock replies in `domain`: whole messages that carry nothing beyond themselves
    ("Okay. Please find something that fits and book it."), where typos could only be noise."""
    return frozenset(text.format(a_noun=domain.a_noun) for text in _STOCK)
