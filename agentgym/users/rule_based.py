"""The rule-based user every family's user builds on: what every such user does alike, so each
family keeps only what it does its own way.

A message is read once by the family's `Understanding` (`_reading`; the last reading is kept, so a
judge that reads a message before `reply` does shares it). An empty message, a list of keywords
and one the user cannot place get the same stock replies in every family (the words for an empty
one may be the family's: `_empty`); what it answers otherwise is the family's (`_respond`), and the
reply's end (`_close`) is where a goal shift that has come due is announced.

It remembers in order the details it has stated (`known_constraints`, which goal consistency
judges against), some up front. It picks among phrasings with `Picks` (`agentgym.users.picks`):
four draws made when it is made, for the users of task details, so how many messages it reads
never changes the draws of the rest of the episode; the family passes the picks it draws with.

A goal shift, once planned (`_plan_shift`), is announced at the first reply from a turn drawn in
2-4 on, at a reply to a confirmation question, or on seeing the world change (`react`), whichever
comes first; what the announcement says and changes is the family's (`_fire_shift`), logged as
`shift_event` records it. After a world change the user judges it (`_judge`), and says the shift
first when both come at once. A family whose user hears shifts and world changes its own way
overrides `_close` and `react` (the Dialog user).

Typos (`perturb_text`) never touch a stock reply (`STOCK`) and never a value the agent must copy
(`_kept_patterns`, `_kept_values`); the dialog-domain users keep their family's rule for both
(`agentgym.envs.dialog.typos.slip`, over the same `perturb_keeping`).
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, ClassVar

from agentgym.core.task import NoiseEvent, SimulatedUser, UserTurn, WorldEvent
from agentgym.users.picks import Picks
from agentgym.users.stock import EMPTY, KEYWORDS, REPHRASE
from agentgym.users.typos import perturb_keeping
from agentgym.users.understanding import Reading

__all__ = ["RuleBasedUser", "asks_if_right", "shift_event", "spelled_out"]

#: A sentence that spells out the question before it ("What are you after? Specifically: the
#: area, your budget and any amenities."): it asks what it lists, so it reads as a question.
_SPELLED_OUT = re.compile(r"(\?\s*(?:specifically|in particular|namely|that is to say)\b[^.?!\n]*)(?:[.!]|(?=\n|$))",
                          re.IGNORECASE)


#: A line that asks for what the list under it names ("So that I can find your order, kindly tell
#: me:" above "1. The email address on your account."), and a list item's mark ("1.", "2)", "A)",
#: "(b)", "-", "*", "\u2022").
_ASKS_LIST = re.compile(r"\b(?:tell (?:me|us)|let (?:me|us) know|provide|share|send (?:me|us|over)|give (?:me|us)|"
                        r"(?:i|we)(?:'d|'ll| would| will| still)? need(?: to know)?)\b[^\n]*:\s*$",
                        re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[A-Za-z][)]|\([A-Za-z0-9]\)|[-*\u2022])\s+")
#: A heading (a line in bold, or a markdown heading) that says the assistant needs something of
#: the user ("**What I need from you**", "## Questions for you", "**Information needed**"): it
#: asks for the list under it as a line ending in a colon does. One that restates the user's
#: own needs ("**Your needs**", "**What you need**") asks nothing.
_ASKS_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*|__)[^\n]*(?<![a-z])(?:(?:i|we)(?:'d| would)? (?:still )?need|(?:needed|required) from you|"
    r"(?:info(?:rmation)?|details?|input|answers?) (?:needed|required|missing|requested)|questions? (?:for|to) you|"
    r"before (?:i|we) (?:can )?(?:proceed|start|continue|go ahead)|please (?:provide|share|send|confirm|tell))"
    r"(?![a-z])[^\n]*$", re.IGNORECASE)


#: A markdown table's header and the rule under it, and its rows.
_TABLE = re.compile(r"^[ \t]*(\|[^\n]*\|)[ \t]*\n[ \t]*\|[ \t]*:?-{2,}[-:| \t]*\|?[ \t]*\n((?:[ \t]*\|[^\n]*(?:\n|$))+)",
                    re.M)
#: A column label that makes a table a questionnaire ("| Question | Options |", "| Detail | Your
#: answer |", "| What I need | e.g. |"); a first column labelled as an option ("| Option | Venue
#: | Price |") makes it a table of options, whose rows are what they offer.
_ASKING_LABEL = re.compile(r"^(?:questions?|(?:your )?answers?|your (?:choice|preference)s?|options?|examples?|"
                           r"choices?|e\.g\.?|possible values|what (?:i|we) need|to confirm)$", re.IGNORECASE)
_OPTION_LABEL = re.compile(r"^(?:#|no\.?|options?|choices?|picks?)$", re.IGNORECASE)


def _asked_rows(message: str) -> str:
    """`message` with each row of a table that asks (its labels say so: `_ASKING_LABEL`, and the
    line above it asks or leads in with a colon) as a question: "| Area | Old Town, Riverside |"
    reads "Area (Old Town, Riverside)?", the thing asked and the options it offers. A table of
    places or a plan, under any line, keeps its rows."""

    def rows(m: re.Match[str]) -> str:
        above = message[:m.start()].rstrip()
        last = above.rsplit("\n", 1)[-1].strip()
        labels = [c.strip(" *_") for c in m.group(1).strip().strip("|").split("|")]
        if _OPTION_LABEL.match(labels[0]) or not any(_ASKING_LABEL.match(c) for c in labels) \
                or not last.endswith(("?", ":")):
            return m.group(0)
        out = []
        for row in m.group(2).splitlines():
            cells = [c.strip() for c in row.strip().strip("|").split("|") if c.strip()]
            asked = cells[0].rstrip("?") if cells else ""
            out.append(f"{asked} ({'; '.join(cells[1:])})?" if len(cells) > 1 else f"{asked}?" if cells else "")
        return "\n".join(out) + ("\n" if m.group(2).endswith("\n") else "")

    return _TABLE.sub(rows, message)


@lru_cache(maxsize=4096)
def spelled_out(message: str) -> str:
    """`message` with what spells out a question asked as a question: a sentence that spells out
    the question before it ("What are you after? Specifically: the area, your budget."), the
    items of a list under a line or a heading that asks for them ("kindly tell me:" or "**What I
    need from you**" above "1. The email on your account."), each ended by a question mark, and
    the rows of a table of questions (`_asked_rows`).

    A pure function of the text, memoised: every reader of a message asks it of the same text
    (the tool-use user, then its reading), and agents send the same messages again and again."""
    if "?" in message:  # the pattern's own search: no lower-cased copy of every message
        message = _SPELLED_OUT.sub(r"\1?", message)
    if "|" in message and "--" in message:
        message = _asked_rows(message)
    if ":\n" in message or ":\r\n" in message or "\n" in message and ("**" in message or "#" in message or "__" in message):
        lines, asking = message.split("\n"), False
        for k, line in enumerate(lines):
            if asking and _LIST_ITEM.match(line):
                if not line.rstrip().endswith("?"):
                    lines[k] = line.rstrip().rstrip(".") + "?"
            elif line.strip():
                # Only a line that ends in a colon, but for white space, may match `_ASKS_LIST`:
                # the others skip its scan.
                asking = line.rstrip().endswith(":") and _ASKS_LIST.search(line) is not None \
                    or _ASKS_HEADING.match(line) is not None
        message = "\n".join(lines)
    return message


#: A yes-or-no question whether the assistant has what it said right ("Have I got that right?",
#: "Am I right?", "Does that sound right?", "Is this accurate?"): about what the message, or the
#: one before it, restates.
_ASKS_IF_RIGHT = re.compile(
    r"\b(?:(?:have|did|do) (?:i|we) (?:got|get|have|understood|understand) (?:that|this|it|you|all that|all of (?:that|it))"
    r"(?: all)? (?:right|correctly|correct|straight)|(?:am i|are we) (?:right|correct)|"
    r"(?:is|was) (?:that|this|it|all (?:of )?(?:that|this)) (?:right|correct|accurate)|"
    r"(?:does|do) (?:that|this|it|all (?:of )?(?:that|this)) (?:sound|look|seem) (?:right|correct|accurate))\b[^?]*\?",
    re.I)


def asks_if_right(message: str) -> bool:
    """Whether a message asks if the assistant has it right, in so many words (`_ASKS_IF_RIGHT`)."""
    return _ASKS_IF_RIGHT.search(message) is not None


def shift_event(target: str, old: Any, new: Any, recoverable: bool) -> NoiseEvent:
    """How the noise log records an announced goal shift: detail `target` changed from `old` to
    `new`, and whether an agent can still recover (the turns left suffice to act on it)."""
    return NoiseEvent(target=target, detail={"from": old, "to": new, "recoverable": recoverable},
                      recoverable=recoverable)


def _picks_nothing(n: int) -> int:
    raise TypeError("this user was made without picks, so it picks no phrasing")


class RuleBasedUser(SimulatedUser):
    """The shared part of a family's rule-based user (see the module docstring).

    Args:
        read: the family's reader of a message (`Understanding.read`).
        upfront: the ids of the details stated in the opening, in order.
        picks: where the user's picks among phrasings come from (`DrawnPicks` of the episode's
            user stream, made before any other draw of it); None for a user that picks nothing.
    """

    __slots__ = ("_draw", "_read", "_last", "_revealed", "_shift", "_shift_turn", "_shift_fire")

    #: Replies that carry nothing the agent needs: typos never touch them.
    STOCK: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, read: Callable[[str], Reading], upfront: Iterable[str] = (),
                 picks: Picks | None = None) -> None:
        #: The user's next pick among `n` phrasings, as an index (`Picks.index`, bound once: the
        #: Dialog user draws at every statement).
        self._draw: Callable[[int], int] = picks.index if picks is not None else _picks_nothing
        self._read = read
        #: The last message read and its reading.
        self._last: tuple[str, Reading] | None = None
        self._revealed: list[str] = list(upfront)
        #: The family's planned goal shift, until it is announced.
        self._shift: Any = None
        self._shift_turn = 0
        self._shift_fire: Callable[[NoiseEvent], None] | None = None

    # -------------------------------------------------------------- what the family says
    @abc.abstractmethod
    def _respond(self, r: Reading, message: str, turn: int) -> str | UserTurn:
        """The answer to a message the user placed (neither empty nor a keyword list) at `turn`:
        a text, or a whole turn that ends the reply there (the shift waits)."""

    def _empty(self) -> str:
        """The reply to an empty message."""
        return EMPTY

    def _judge(self) -> UserTurn | None:
        """The user's word on the world after it changed, or None to say nothing (the default)."""
        return None

    def _fire_shift(self, turn: int) -> str:
        """Announce the planned shift at `turn` and apply it: what the user says ("" to say
        nothing). A family that plans a shift says what it announces."""
        raise NotImplementedError(f"{type(self).__name__} plans no goal shift")

    def _with_shift(self, text: str, said: str, confirm: bool) -> str:
        """A reply's `text` with the shift announced at it (`said`; `confirm` when the message
        asked to confirm): after the reply, by default."""
        return f"{text} {said}" if said else text

    def _kept_patterns(self) -> Sequence[re.Pattern[str]]:
        """What typos never touch in a message, as patterns (held out first)."""
        return ()

    def _kept_values(self) -> Sequence[str]:
        """What typos never touch in a message, as values (held out after the patterns)."""
        return ()

    # -------------------------------------------------------------- shared
    def _pick(self, options: tuple[str, ...]) -> str:
        """One of `options`, by the user's next pick."""
        return options[self._draw(len(options))]

    def _reveal(self, detail_id: str) -> bool:
        """The user has now stated `detail_id`; whether it had not before."""
        if detail_id in self._revealed:
            return False
        self._revealed.append(detail_id)
        return True

    def _reading(self, message: str) -> Reading:
        """How the user reads `message` (a judge and `reply` read each message in turn, and
        share this one reading)."""
        last = self._last
        if last is not None and last[0] == message:
            return last[1]
        r = self._read(spelled_out(message))
        self._last = (message, r)
        return r

    def reply(self, message: str, turn: int) -> UserTurn:
        if not message.strip():
            return self._close(self._empty(), turn, False)
        r = self._reading(message)
        confirm = r.confirm and not r.asked
        if r.salad:
            text = KEYWORDS
        elif not r.placed:
            text = REPHRASE
        else:
            answer = self._respond(r, message, turn)
            if isinstance(answer, UserTurn):
                return answer
            text = answer
        return self._close(text, turn, confirm)

    def _close(self, text: str, turn: int, confirm: bool) -> UserTurn:
        """A reply's end (`confirm` when the message asked to confirm): the planned shift, when
        its turn has come or the message asked to confirm."""
        if self._shift is not None and (turn >= self._shift_turn or confirm):
            text = self._with_shift(text, self._fire_shift(turn), confirm)
        return UserTurn(text)

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        said = self._fire_shift(turn) if self._shift is not None else ""
        # On seeing the world change the user may change their mind; the change is judged
        # against the new goal.
        verdict = self._judge()
        if not said:
            return verdict
        if verdict is None:
            return UserTurn(said)
        return UserTurn(f"{said} {verdict.text}", verdict.end, now=said)

    def known_constraints(self) -> list[str]:
        return self._revealed

    def perturb_text(self, text: str, rng: Any) -> tuple[str, list[str]]:
        """Typos in a message that carries something the agent needs, never inside a value it
        must copy; a stock reply comes back as it is."""
        if text in self.STOCK:
            return text, []
        return perturb_keeping(text, rng, self._kept_patterns(), self._kept_values())

    # -------------------------------------------------------------- goal shift
    def _plan_shift(self, shift: Any, rng: Any, fire: Callable[[NoiseEvent], None]) -> bool:
        """Plan `shift`, to be announced from turn 2, 3 or 4 on (one draw of `rng`)."""
        self._shift = shift
        self._shift_turn = 2 + int(rng.random() * 3)
        self._shift_fire = fire
        return True

    def _take_shift(self) -> tuple[Any, Callable[[NoiseEvent], None]]:
        """The planned shift and its log hook, now no longer planned."""
        shift, fire = self._shift, self._shift_fire
        assert shift is not None and fire is not None
        self._shift = None
        return shift, fire

    def shift_pending(self) -> bool:
        """Whether a planned goal shift is still to be announced (the oracle asks before its first
        write when one is, as a careful assistant checks in before committing)."""
        return self._shift is not None
