"""What the tool-use user says: its stock replies, and which of them are a yes (the hard tier's
consent rests on those)."""

from __future__ import annotations

from typing import Callable, Sequence

from agentgym.users.stock import ACCEPT, CONFIRMED, EMPTY, EVERYTHING, GIVE_UP, GO_AHEAD, KEYWORDS, REPHRASE
from agentgym.users.understanding.look_up import asks_leave_to_look

__all__ = ["AS_SAID", "CHOSEN", "FIX", "GIVE_IN", "GO_LOOK", "NOTED", "NOT_DONE", "ONLY_ASKED", "PUT_AGAIN", "RIGHT", "SMALL_TALK", "STOCK", "UNKNOWN",
           "VIOLATION", "WHAT_ABOUT", "WITH_VALUES", "WRONG", "WRONG_PLAIN", "YES", "YES_ONLY_ASKED", "before_yes",
           "chosen", "then_yes", "what_about", "with_leave", "with_values"]

UNKNOWN = ("I don't know more than what I told you; please work it out with your tools.",
            "I'm not sure about that. Please go ahead with what you have.")
NOT_DONE = ("Not quite yet: {reason}.", "It's not done on my side yet: {reason}.")
#: A wrong record, with the user's reason, and what it asks then.
WRONG = "Hmm, that's not right: {reason}."
FIX = "Could you put it right?"
WRONG_PLAIN = "Hmm, that's not what I asked for."
#: A broken policy fails the task (the brief says so): the user has been told and leaves.
VIOLATION = ("I've just been told that a request of yours broke one of our policies, so I'll take it "
              "from here. Goodbye.")
NOTED = "Okay, noted."
#: A pressing customer, refused as often as it presses: it accepts the plan.
GIVE_IN = "Alright, I understand. Please go ahead with that."
#: The yes that names its choice between plans: every item asked about, as the plan set it out
#: (one given nothing included: "go ahead with the watch" alone would read as a request for it).
CHOSEN = "{lead}Please go ahead with {what}, as you set it out."
#: The hard tier's answer to a plan that gives no outcome for something asked about.
WHAT_ABOUT = "Before I say yes: what will you do about {what}?"
#: The hard tier's answer to a plan that gives every outcome but leaves out values its writes carry
#: ("Shall I file the incident and do the rollback?"): the whole plan again, with them.
WITH_VALUES = "Before I say yes to any write, please put the whole plan to me with {what}."
#: After a detail asked beside a yes to a plan that gives every outcome: the yes is for the plan
#: with the detail in it.
PUT_AGAIN = "With that, please put the whole plan to me and I'll give you my answer."
#: The reply to small talk ("How's your day going?"): friendly, and back to the task.
SMALL_TALK = "All good here, thanks! Could we get back to my request?"
#: The reply to a question that restates what the user said, to check it ("in CHF, right?").
RIGHT = "Yes, that's right."
#: The reply to questions about what is so, asked before any plan ("is it right that ...? did any
#: arrive damaged?"): what it said stands, and the rest is for the tools; never a yes to work.
AS_SAID = "What I told you is right; anything else, please check with your tools."
#: The reply to a confirmation that proposes more than the request ("should I also include the
#: pending claims?"): a person who asked for one thing does not say yes to another unread.
ONLY_ASKED = "Just what I asked for, please."
#: The reply to a plan asked apart from an offer of more ("Shall I go ahead? Shall I also ...?").
YES_ONLY_ASKED = "Yes, please go ahead with that, but just what I asked for."
#: Leave to look something up: a read needs no yes to any plan (never one of `YES`).
GO_LOOK = "Sure, go ahead."
#: Replies that carry nothing the agent needs (typos never touch them).
STOCK = frozenset({*GO_AHEAD, *UNKNOWN, *ACCEPT, GIVE_UP, VIOLATION, NOTED, REPHRASE, SMALL_TALK, KEYWORDS,
                    EVERYTHING, CONFIRMED, EMPTY, WRONG_PLAIN, RIGHT, ONLY_ASKED, YES_ONLY_ASKED, GIVE_IN, AS_SAID,
                    GO_LOOK})
#: The replies that say yes to what the message before them said (the hard tier's consent).
YES = frozenset({*GO_AHEAD, CONFIRMED, EVERYTHING, RIGHT, GIVE_IN, YES_ONLY_ASKED})
#: How a change of mind said where a yes would be begins (`before_yes`).
_CHANGE_LEAD = "Before you go ahead:"
#: Stock replies that give no leave: a plea to rephrase, and "Yes, that's right." to a question
#: that restates what the user said on its way ("OK if I have a quick look at pricing's logs?").
_NO_LEAVE = frozenset({REPHRASE, RIGHT})
#: How replies that say something of the work, or of a plan, begin: no leave is put before them.
_OF_THE_WORK = tuple(t.split("{")[0] for t in (*NOT_DONE, WRONG, WHAT_ABOUT, WITH_VALUES)) + (WRONG_PLAIN, _CHANGE_LEAD)


def listed(labels: list[str]) -> str:
    """"the atlas", "the atlas and the lamp", "the atlas, the lamp and the mug"."""
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"


def what_about(labels: list[str]) -> str:
    """The hard tier's question about what a plan gives no outcome for."""
    return WHAT_ABOUT.format(what=listed(labels))


def with_values(labels: list[str]) -> str:
    """The hard tier's request for the values a plan leaves out (their labels)."""
    return WITH_VALUES.format(what=listed(labels))


def then_yes(detail: str, left: list[str]) -> str:
    """A detail asked beside a yes ("which currency? ... is that acceptable?"), then what the yes
    waits for: what the plan leaves out (`left`, its labels), or the whole plan with the detail in
    it; a person answers both questions."""
    return f"{detail} {what_about(left) if left else PUT_AGAIN}"


def chosen(lead: str, labels: list[str]) -> str:
    """The yes to a choice of plans, in the customer's words (`lead` before it)."""
    return CHOSEN.format(lead=lead, what=listed(labels))


def before_yes(change: str) -> str:
    """A change of mind said where a yes would be ("Before you go ahead: actually, don't roll
    anything back; just file the incident."): no yes beside a change, so the plan is not taken
    whole; the change is the customer's word on the rest of it (`ToolUseUser.reply`)."""
    return f"{_CHANGE_LEAD} {change[0].lower()}{change[1:]}" if change.startswith("Actually") else \
        f"{_CHANGE_LEAD} {change}"


def with_leave(message: str, reply: str, said: Callable[[], Sequence[str]] = tuple) -> str:
    """`reply` to `message` as a person gives it to a question that only asks leave to look
    something up (`asks_leave_to_look`: "May I look into shipping next?"): leave first, then what
    the reply says (a detail the question's words asked for: "May I look up your account with your
    email?" still gets the e-mail), and leave alone where the reply could not place the message or
    holds only what the user had said before (the statements `said()` gives). A stock reply
    already answers, but for `_NO_LEAVE`; a reply about the work or a plan says what matters more."""
    if reply in STOCK and reply not in _NO_LEAVE or reply.startswith(_OF_THE_WORK) or not asks_leave_to_look(message):
        return reply
    rest = reply
    for statement in said():
        rest = rest.replace(statement, "")
    return GO_LOOK if reply in _NO_LEAVE or not rest.strip() else f"{GO_LOOK} {reply}"
