"""The rule-based simulated user of the tool-use family.

How it understands: every message is read by the shared engine (`agentgym.users.understanding`)
with the family lexicon (``data/lexicon.json``: per detail the words that ask about it, in plain
words too, "how much time should I block", "which address should the confirmation go to", "how
serious is it", "what's affected") and the domain's own words (currency codes, services,
products). It states every detail of its request that a message asks about, in any form and
several at once; one the message sets aside it leaves out. Asked about something it has no
detail for, it says it does not know; asked an open question ("anything else?"), it states one
detail it has not stated yet; small talk ("how's your day going?") gets a friendly word and a
nudge back to the request; a message it cannot place, or a list of keywords, gets a request to
rephrase. A question that only asks leave to look something up ("May I look into shipping next?")
gets leave first (`replies.with_leave`).

What it knows of the work, and what it says (`agentgym.envs.tooluse.review`): it never takes
free text as the work being done. It watches the records the assistant's writes make and judges
the world exactly as the scorer does, so it accepts ("that's everything I needed") exactly when
the task succeeds. A write that leaves a record it did not ask for gets a reason in words it
could observe ("the meeting should be 45 minutes", "that's a second transfer"): where a tool
of the domain can undo the record, it asks to put it right, and gives up after `PATIENCE` such
writes; where none can (a transfer, a refund, a rollback), or once a write broke a policy, no
fix could make the task succeed, so it says so and leaves at once rather than invite one. Told
the work is done when it is not, it says what it does not see yet.

Goal shift (`plan_goal_shift`): the domain plans a change of one parameter of the job (a payout
currency, a meeting's length, a variant, an item kept, a rollback asked for or called off), its
new gold solved on the initial world. The user announces it at its first reply from the planned
turn on, when asked to confirm (under consent, in place of the yes: "Before you go ahead:
actually, ...", which is its word on the rest of the plan), or on seeing the first write; a shift
that would leave unwanted a record no tool can undo is dropped unannounced, and in the hard tier
so is one the world already meets (a rollback called off once the incident is filed). The old plan is kept as ``superseded`` for the
metrics; the shift is logged with ``target`` the detail's id and ``detail`` ``{"from", "to",
"recoverable"}``, recoverable when the new plan and the undoing of what it no longer wants fit in
the turns left.

Asked to go ahead (easy and medium; `agentgym.envs.tooluse.asking`): a message that puts work to
the user and asks for a yes in any words ("OK to submit?", "please reply 'yes' to confirm", "just
say the word") is a confirmation question, and the plan's own words ask nothing ("refund the
watch", "please double-check the amounts", "a 60-minute slot"): only a question of it asks for a
detail, and one that names the detail's value asks to confirm it. A question to go ahead reports
no work done; a question about work claimed done ("I've taken care of it. Is that alright?") is
answered with what the user sees; a question that offers several values of a detail ("Currency:
which one (EUR, USD, GBP)?") asks for it.

Consent (the hard tier, `agentgym.envs.tooluse.consent`): a reply that is a plain yes to a
message records that message as a plan the user said yes to, so the writes it describes may
follow. A message that gives something asked about an outcome (a plan) and asks for any answer,
by a question in any words, an imperative that asks for one ("please review it and confirm",
"just say the word") or a sentence that speaks of the customer's assent ("awaiting your
confirmation"), asks for a yes to that plan, unless a question of it asks about a detail
the user has not said yet ("which currency should I pay it in?"), which the user answers. A
plan (or a confirmation question) that leaves out something the user asked about gets a
question about it instead of a yes, and a customer who presses (`consent.Press`) asks again for
what a policy forbids each time a plan refuses it, as often as its request says, then accepts.
Both answers come from the user's own request, never from the gold. A sub-task of CrossTask's hard tier (`SESSION_TIER`)
reads a plan that asks for an answer the same way, and answers it as a confirmation.

Typos (`perturb_text`) land only on messages that carry something the agent needs, never on a
stock reply or inside a value the agent must copy (a name, an e-mail, an id, a code, a title).

What it holds against a write (`contradictions`, for goal consistency): every detail it stated
that a write can break: a value the write carries (a currency, a length, an e-mail, a severity,
a variant); a record it acts on whose such value is not the stated one (a meeting booked at the
old length); an item it keeps, acted on; a rollback after it said none. Undoing breaks nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from agentgym.core.task import Task, UserTurn, WorldEvent
from agentgym.envs.tooluse.asking import (
    CHECKS_WORK,
    OR_QUESTION,
    QUESTION_WORD,
    asking_part,
    asking_sentences,
    asks_answer,
    asks_facts_only,
    asks_value,
    asks_yes,
    asks_yes_in,
    claims,
    either_or,
    offers_choice,
    offers_more,
    options_asked,
    plan_only,
    proposes,
    questions,
    refers_back,
    says_done,
    spoken,
    terse_question,
    values_asked_open,
    with_word_on_others,
    without_offer,
    yes_no_values,
)
from agentgym.envs.tooluse.base import Detail, Goal, Gold, World, WorldRecord
from agentgym.envs.tooluse.consent import given, has, missing, parts, unvalued
from agentgym.envs.tooluse.data import load_lexicon
from agentgym.envs.tooluse.detail_values import DETAIL_ARGS, agree, contradicted, detail_value, statement_words
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.domains.consent_rules import plan_reader
from agentgym.envs.tooluse.findings import asks_finding, may_ask_finding, states_finding
from agentgym.envs.tooluse.plan_values import job_slots, names_one, objected, other_id_details, restated_values
from agentgym.envs.tooluse.replies import (
    AS_SAID,
    FIX,
    GIVE_IN,
    NOT_DONE,
    NOTED,
    ONLY_ASKED,
    RIGHT,
    SMALL_TALK,
    STOCK,
    UNKNOWN,
    VIOLATION,
    WHAT_ABOUT,
    WITH_VALUES,
    WRONG,
    WRONG_PLAIN,
    YES,
    YES_ONLY_ASKED,
    chosen,
    then_yes,
    what_about,
    with_leave,
    with_values,
)
from agentgym.envs.tooluse.review import Review, review
from agentgym.envs.tooluse.tasks import SESSION_TIER, is_tier
from agentgym.envs.tooluse.user_shift import ToolUseNoiseSupport
from agentgym.envs.tooluse.user_words import VERBATIM, plan_said_as_such, protected_words, understanding, write_tools
from agentgym.users.picks import DrawnPicks
from agentgym.users.rule_based import RuleBasedUser, asks_if_right, spelled_out
from agentgym.users.stock import (
    ACCEPT,
    CANNOT_UNDO,
    CONFIRMED,
    EVERYTHING,
    GIVE_UP,
    GO_AHEAD,
    KEYWORDS,
    REPHRASE,
)
from agentgym.users.understanding import Reading
from agentgym.users.understanding.words import SENTENCE_BREAK

__all__ = ["ToolUseUser", "make_user", "understanding", "PATIENCE", "DETAIL_ARGS", "REPHRASE", "KEYWORDS",
           "SMALL_TALK"]

#: Wrong writes that a tool could have undone after which the user gives up.
PATIENCE = 2

#: How the customer's questions about a plan that leaves something out begin (`what_about`,
#: `with_values`).
_BEFORE_YES = (WHAT_ABOUT.split("{", 1)[0], WITH_VALUES.split("{", 1)[0])


class ToolUseUser(ToolUseNoiseSupport, RuleBasedUser):
    """The simulated user of one tool-use episode; see the module docstring."""

    # Slots: one user lives per live env (memory), and these (with the base's) are all it keeps.
    __slots__ = ("_task", "_goal", "_gold", "_world", "_wrong", "_seen", "_values", "_opening", "_acts", "_spec",
                 "_job", "_tier", "_pressed", "_plans", "_chosen", "_shift_yes", "_put", "_changed",
                 "_weighed", "_of_plan")
    STOCK = STOCK

    def __init__(self, task: Task, rng: Any) -> None:
        self._task = task
        self._goal: Goal = task.goal
        self._gold: Gold = task.gold
        self._world: World = task.world
        super().__init__(understanding(task.domain).read, [d.id for d in self._goal.details if d.reveal == "upfront"],
                         DrawnPicks(rng))
        #: The domain's write tools, and those that undo a record (`contradictions`).
        self._acts = write_tools(task.domain)
        self._wrong = 0
        #: The records the user has already judged wrong (or that a goal shift made unwanted).
        self._seen: list[WorldRecord] = []
        self._spec = load_domains()[task.domain]
        self._values = {d.id: v for d in self._goal.details if (v := detail_value(task, d)) is not None}
        #: The details of the job a plan may name a value of (`_objection`: its parameters, whose ids are
        #: the slots' names, its month and its items'), found on first need: most episodes never need them.
        self._job: tuple[str, ...] | None = None
        self._opening = self._goal.request
        self._tier = is_tier(task)
        #: How it reads a plan outside the tier, where a session's tier asks it to (the sub-task
        #: says so: `SESSION_TIER`): as the tier does, with no yes recorded; else None.
        self._plans = plan_reader(task) if task.extra.get(SESSION_TIER) else None
        #: How often a customer who presses has pressed (`_press`).
        self._pressed = 0
        #: The last yes that named its choice between plans (`CHOSEN`): a yes, as `YES` are.
        self._chosen: str | None = None
        self._shift_yes = False  # this reply's change of mind stood where a yes would (`_with_shift`)
        self._put: str | None = None  # the last plan put to the customer (a yes that `REFERS_BACK` takes it in)
        self._weighed: str | None = None  # this message with the plan it points back to, where it was weighed so
        self._changed = False  # the customer has changed its mind (a goal shift was said)
        self._of_plan = False  # its last reply asked about part of the plan put (`WHAT_ABOUT`, a press)

    def _state(self, d: Detail) -> str:
        self._reveal(d.id)
        return d.statement

    def opening(self) -> str:
        return self._opening

    def _kept_patterns(self) -> tuple[re.Pattern[str], ...]:
        return VERBATIM, protected_words(self._task.domain)

    def reply(self, message: str, turn: int) -> UserTurn:
        message = plan_said_as_such(spelled_out(message))
        if self._world.violations:
            return UserTurn(VIOLATION, end="gave_up")
        consent, told = self._world.consent, len(self._revealed)  # the details said before this reply
        if consent is not None and message.strip():
            r = self._reading(message)
            if (r.salad or not r.placed) and (r.confirm or asks_answer(message) or asks_yes_in(message, self._read)) \
                    and self._is_plan(message):
                # A plan as a table or a bare list, with a question for a yes: read as the plan
                # it is (the reading is shared with `reply`, which looks it up by the message).
                self._last = (message, replace(r, salad=False, placed=True, confirm=True))
        elif not self._tier and message.strip():
            self._read_go_ahead(message)
        self._shift_yes = False
        self._weighed = None
        out = super().reply(message, turn)
        press = self._world.press
        self._of_plan = out.text.startswith(_BEFORE_YES[0]) or press is not None and out.text in press.asks
        # A yes, or a change of mind said in its place, to a plan that gives everything asked
        # about an outcome: the plan's writes may follow (those the change alters or drops
        # are no longer what the customer wants, and the review says so).
        if consent is not None and (out.text in YES or out.text == self._chosen or self._shift_yes) and out.end is None:
            if self._put is not None and (refers_back(message) or self._weighed is not None):
                consent.grant(self._put)  # "rest of the plan unchanged; proceed?": the plan it points back to
            consent.grant(message)
        if consent is not None and message.strip() and self._is_plan(message):
            self._put = self._weighed or message  # a message weighed with the plan before it amends that plan
        if out.end is not None or out.now:
            return out
        # "May I look into X?": leave, and a detail asked for that the user had not said before.
        text = with_leave(message, with_word_on_others(message, out.text),
                          lambda: [d.statement for d in self._goal.details if d.id in self._revealed[:told]])
        return out if text == out.text else replace(out, text=text)  # most replies stand as they are

    def _read_go_ahead(self, message: str) -> None:
        """A message that puts work to the user for a yes (`proposes`) is a confirmation
        question in any words ("OK to submit?", "please reply 'yes' to confirm"), unless a
        question of it asks for a detail the user has and does not name its value ("how long
        should it be?"): the plan's own words ("refund the watch", "please double-check the
        amounts", "for a 60-minute slot") ask nothing. Kept as the message's reading, which `reply` then shares."""
        r = self._reading(message)
        if r.open or r.salad or not r.placed or not proposes(message, self._read):
            return
        asked = {slot for q in questions(message) for slot in self._read(q).asked}
        if any(d.slot in asked and not names_one(self._spec.vocabulary, d.slot, message) for d in self._goal.details):
            return
        self._last = (message, replace(r, asked=(), confirm=True, question=True, chatter=False))

    def _met_by(self, d: Detail, r: Reading, message: str) -> bool:
        """Whether a plan the user is asked to go ahead with already speaks to an unsaid wish
        (easy and medium): it names the wish's subject (the domain's words in its statement)
        and its slot ("refund the watch" to "I'd like my money back for the watch"), so "shall
        I go ahead, or is there anything else?" is no cue to say it again. A detail with a value
        a plan could break (a currency, no rollback) is still said. A plan asked about in words
        that ask for a yes ("Plan: refund the air purifier. Does that sound right to you?") is one
        the user is asked to go ahead with too."""
        if self._tier or d.id in self._values or not (r.confirm or asks_yes(message)):
            return False
        low = message.lower()
        subject = [w for words in self._spec.vocabulary.values() for w in words if f" {w.lower()} " in statement_words(d.statement)]
        return bool(subject) and all(w.lower() in low for w in subject) and any(
            w in low for w in load_lexicon().slots.get(d.slot, ()))

    def _plan_meets_unsaid(self, r: Reading, message: str) -> bool:
        """Whether a plan put for a yes asks about unsaid wishes only as it meets them ("Plan:
        refund the watch. Full refund OK?" to a user who wants its money back): the yes says them
        (the user has now said them). A question that offers a choice asks which."""
        unsaid = [d for d in self._goal.details if d.slot in r.asked and d.id not in self._revealed]
        if not (r.confirm and unsaid and all(self._met_by(d, r, message) for d in unsaid)) or offers_choice(message):
            return False
        for d in unsaid:
            self._state(d)  # agreed to: the user has now said it
        return True

    def _respond(self, r: Reading, message: str, turn: int) -> str | UserTurn:
        said = self._reply_to(r, message, turn)
        if isinstance(said, str) and (said in YES or said.startswith(_BEFORE_YES)) and asks_facts_only(message):
            # Questions about what is so, before any plan ("is it right that ...? did any of them
            # arrive damaged?"), ask for no yes to work: a yes would claim facts and grant a plan,
            # and "before I say yes" answers a plan not yet put.
            return AS_SAID
        return said

    def _reply_to(self, r: Reading, message: str, turn: int) -> str | UserTurn:
        """The reply to a message the user can place, before the check of a list of questions."""
        consent = self._world.consent
        if r.confirm and not r.asked and (unsaid := self._asked_unsaid(message)):
            # "... book it once you confirm. How long should it be?": the question is what to answer.
            r = replace(r, asked=unsaid, confirm=False)
        if consent is None:
            if self._plans is not None and self._asks_yes_to_plan(r, message):
                return self._confirmation(message)  # no "anything else?" detail for it: a yes
            return self._answer_message(r, message, turn)
        targets = consent.rules.targets(self._world, self._goal)
        left = missing(message, consent, targets)
        weighed = message
        if self._put is not None and (self._of_plan or refers_back(message)) \
                and (left or unvalued(message, consent, targets)):
            # "OK to go ahead with both writes I described?", or an answer to the customer's own
            # question about part of the plan ("what will you do about the lamp?", a press): a
            # message that leaves out what the plan put last gave (an outcome, or the values of
            # one) is weighed with that plan, as a person hears it (a whole plan in the message
            # is weighed by itself).
            weighed = self._weighed = f"{self._put}\n\n{message}"
            left = missing(weighed, consent, targets)
        plan = len(left) < len(targets)  # the message gives something asked about an outcome
        # A question about a detail the customer has not said yet ("which currency should I pay
        # it in?") asks for that detail, though it names a write; else a plan that asks for any
        # answer (a question, "please confirm", "just say the word") asks for a yes to it.
        detail = plan and bool(r.asked) and bool(self._asked_unsaid(message))  # read only for a plan
        # A message that gives no outcome and asks for details not said yet ("Could you please
        # confirm the following: - the e-mail on your account") asks for them, not for a yes.
        if not r.confirm and (asks_yes(message) and (plan or self._said_all(r.asked))
                              or plan and not detail and asks_answer(message)):
            r = replace(r, confirm=True)  # "please confirm and I'll process it" asks for a yes too
        # "Can I go ahead and issue the refunds?" after a plan asks for a yes, not about refunds.
        answer = self._confirmation(message) if plan and r.confirm and not detail else \
            self._answer_message(r, message, turn)
        if not r.confirm and (answer in GO_AHEAD or plan and answer == REPHRASE and "?" not in message):
            # A plan, or anything else, put without a request for an answer is heard, never
            # agreed to: a write needs the yes to a plan the agent asked about. A plan's lines in
            # the imperative ("2. Send the invitation.") ask the customer for nothing either.
            return NOTED
        if answer not in YES:  # a detail asked beside a yes is said with what the yes waits for
            return then_yes(answer, [t.label for t in left]) if detail and r.confirm and isinstance(answer, str) else answer
        if left and (r.confirm or plan):
            # A plan that leaves out something asked about, or names no outcome for it: the
            # customer asks about it rather than say yes (its own request, never the gold).
            return what_about([t.label for t in left])
        if plan and (lacking := unvalued(weighed, consent, targets)):
            # "Shall I file the incident and do the rollback?" names the work, not what it will
            # write: a yes would grant writes the plan does not describe (each then refused as a
            # violation), so the customer asks for the kinds of value its request's writes carry.
            return with_values(lacking)
        answer = (self._press(weighed) if plan else None) or answer
        if plan and answer in YES and offers_choice(message):
            lead = "Alright, I understand. " if answer == GIVE_IN else ""
            answer = self._chosen = chosen(lead, [t.label for t in targets])
        return answer

    def _press(self, message: str) -> str | None:
        """A customer who presses (`agentgym.envs.tooluse.consent.Press`): to a plan that refuses
        what it wants, what it says each time (its wish, never the gold), then that it accepts
        the plan; None otherwise (a plan that gives in gets the plain yes)."""
        press = self._world.press
        # A customer who has changed its mind stops pressing for what it asked before ("don't
        # roll anything back", then "please, just roll it back" would say two things).
        if press is None or self._pressed > len(press.asks) or self._changed:
            return None
        named = [p for p in parts(message, self._world.consent.anchors) if any(has(p, n, True) for n in press.names)]
        if not named and not press.unnamed:
            return None
        if press.granted(named):
            return None
        self._pressed += 1
        return press.asks[self._pressed - 1] if self._pressed <= len(press.asks) else GIVE_IN

    def _asked_unsaid(self, message: str) -> tuple[str, ...]:
        """The details the message's questions ask for that the user has not said yet: a
        question word's question ("which currency should I pay it in?"), which asks for a value
        or a terse one ("payout currency? (EUR / USD)"), where a yes/no question ("can I go ahead
        and issue the refunds?") asks for a yes; a plan's own words ("store credit for the lamp")
        are no question. Each question is read by itself: a long message that also asks for a yes
        ("... once you confirm") is read as a whole for that yes. A question that opens with "or"
        offers another way to the one before it ("Go ahead with all of it? Or refunds only?"): it
        asks which of the two, not for a detail; nor does "..., or tell me ..." after a yes asked for.
        A question whether a finding is so ("Notifications being the culprit matches what you are
        seeing, right?") asks the user to vouch for it, not for a detail (`states_finding`)."""
        read = understanding(self._task.domain).read
        asked = [slot for line in message.splitlines() for s in map(without_offer, SENTENCE_BREAK.split(line))
                 if "?" in s and (QUESTION_WORD.search(s) or terse_question(s)) and not OR_QUESTION.match(s)
                 or asks_value(s)
                 if (q := read(s)).asked and not self._said_all(q.asked)
                 and not states_finding(self._task.domain, s, *self._own_words()) for slot in q.asked]
        return tuple(dict.fromkeys(asked))

    def _own_words(self) -> tuple[str, tuple[str, ...]]:
        """What the user said itself (its request and its details' statements, lower case), and
        the domain's words for values: a finding names a word or a value beyond them."""
        own = " ".join([self._goal.request, *(d.statement for d in self._goal.details)]).lower()
        return own, tuple(w.lower() for words in self._spec.vocabulary.values() for w in words)

    def _asks_yes_to_plan(self, r: Reading, message: str) -> bool:
        """Whether a plan asks for a yes as the tier reads one: a message that gives something
        asked about an outcome and asks for any answer, where no question asks a detail unsaid."""
        asks = r.confirm or asks_answer(message) or asks_yes(message)
        return asks and self._is_plan(message) and not (r.asked and self._asked_unsaid(message))  # cheaper first

    def _is_plan(self, message: str) -> bool:
        """Whether a message gives something the user asked about an outcome (the hard tier's)."""
        consent = self._world.consent or self._plans
        targets = consent.rules.targets(self._world, self._goal)
        return len(missing(message, consent, targets)) < len(targets)

    def _answer_message(self, r: Reading, message: str, turn: int) -> str | UserTurn:
        """The reply to a message, before the hard tier's check of a plan against what was asked."""
        if (inline := options_asked(message)) is not None:  # "(A) ... (B) ... Which would you prefer?"
            r, message = self._read(inline), inline
        if not r.confirm and (found := self._on_finding(r, message)) is not None:
            return found
        if self._tier and r.asked and r.confirm and self._said_all(r.asked):
            # "Shall I go ahead with the store credit?": every detail it names is said, so the question
            # is the plan's, answered as any confirmation (below). The tier's alone: the others' episodes stay.
            return self._confirmation(message)
        if r.asked and r.confirm:
            # A question to go ahead asks what its asking sentences ask, with the values they name: a table or an
            # account beside it names values (three currencies converted) that ask nothing. A slot they ask about and
            # name no value of takes the message's ("exchange it for white. Shall I go ahead with the exchange?");
            # a slot a question word asks for takes no value from the account ("the meal, 249.63 EUR").
            asking = asking_sentences(message)
            q = self._read(" ".join(asking))
            named = {slot for slot, _ in q.values} | set(self._asked_unsaid(message))
            values = q.values + tuple((s, v) for s, v in r.values if s in q.asked and s not in named)
            asked = q.asked
            held = {d.slot for d in self._goal.details}
            if any(slot in held for slot, _ in q.values) and not any(QUESTION_WORD.search(s) for s in asking):
                # A yes-or-no question about a plan of the user's own job: a slot of another kind
                # of job in it ("naming billing as the cause" reads as a name asked for, to an
                # on-call engineer who has none to give) is no question beside the yes. "What
                # should I call it?" still asks, and so does a question naming nothing of the job.
                asked = tuple(slot for slot in asked if slot in held)
            r = replace(r, asked=asked, values=values)
        if r.asked and not (r.open and self._said_all(r.asked)):
            if self._plan_meets_unsaid(r, message):
                return self._confirmation(message)
            values = r.values + self._restated(message) if r.confirm or r.question else r.values
            values = values_asked_open(values if r.confirm else yes_no_values(values, message, self._read), message,
                                       self._asked_unsaid, self._read) if r.question else values
            plan_words = self._plan_words(r.asked, message) if values and (r.confirm or r.question) else ()
            said = self._answer(r.asked, values, plan_words)
            if said == RIGHT and not r.confirm and either_or(message):
                said = self._answer(r.asked)  # "Only gateway, or others as well?": a yes answers neither half
            if said == RIGHT and plan_words and not r.confirm:
                # A read-back that leaves a slot to its plan's words still names nothing else.
                return self._objection(message) or said
            # A plan that names the user's own values and asks to go ahead gets the answer to that.
            return self._confirmation(message) if said == RIGHT and r.confirm else said
        # A question that asks to go ahead and claims nothing reports nothing done ("Plan: refund
        # the lamp. Shall I go ahead, and is there anything else?"); the tier reads its own way.
        if r.open and "done" in r.said and says_done(message) and not plan_only(message) and (
                self._tier or not r.confirm or claims(message, self._read)):
            return self._not_done()  # "It's done. Anything else?": the claim is what the user answers
        if r.open:
            for d in self._goal.details:  # the first detail not stated yet, nor set aside
                if d.id not in self._revealed and d.slot not in r.excluded and not self._met_by(d, r, message):
                    return self._state(d)
            return EVERYTHING
        if r.confirm:
            return self._confirmation(message)
        if r.chatter:
            return SMALL_TALK
        if r.question:
            text = self._objection(message) or (RIGHT if self._restates(r.values + self._restated(message))
                                                or not r.values and asks_if_right(message) else "")
            if not text and (CHECKS_WORK.search(message) or not self._tier and claims(message, self._read)):
                # Asked to look at the work, or asked anything about work claimed done ("I've
                # taken care of it. Is that alright?"): the user says what it sees.
                return self._not_done()
            if text:
                return text
            asked_part = asking_part(message)
            offered = self._offered(self._read(asked_part))
            if offered:
                return self._answer(offered)
            # A choice of plans that differ by a wish the user keeps unsaid ("... the alternative
            # is to file it and also roll it back. Which would you prefer?"): it says that wish.
            wishes = self._choice_wishes(asked_part) if offers_choice(asked_part) else []
            return " ".join(self._state(d) for d in wishes) or REPHRASE
        if "done" in r.said and says_done(message) and not plan_only(message):
            return self._not_done()
        return self._objection(message) or self._pick(GO_AHEAD)

    def _on_finding(self, r: Reading, message: str) -> str | None:
        """The answer to a question whether something the tools show is so (`asks_finding`):
        the details asked about that the user has not said yet, then that what it said stands
        (when the message says some of it back) or that it knows no more; never a yes, and no
        detail said again as if to correct the finding. None for any other message, and for a
        plan the user is asked about (its yes is the consent's)."""
        if not may_ask_finding(self._task.domain, message):  # memoised by text; most messages ask none
            return None
        if not asks_finding(self._task.domain, message, *self._own_words()) or proposes(message, self._read):
            return None
        if (self._world.consent or self._plans) is not None and self._is_plan(message):
            return None
        unsaid = [self._state(d) for d in self._goal.details if d.slot in r.asked and d.id not in self._revealed]
        said = [d for d in self._goal.details if d.id in self._revealed]
        said_back = any(agree([d for d in said if d.slot == slot], [value.lower()])
                        for slot, value in self._proposed(r.values + self._restated(message)))
        return " ".join([*unsaid, AS_SAID if said_back else UNKNOWN[0]])

    def _offered(self, r: Reading) -> tuple[str, ...]:
        """The slots a question (`r`, a reading of the sentences that ask: `asking_part`)
        offers several values of, as a choice ("**Currency:** which one (EUR, USD, GBP)?"), of
        those the user has a detail of: it asks which. One value named again is no choice (a
        recap names the alerting service in every other sentence)."""
        held = {d.slot for d in self._goal.details}
        named: dict[str, set[str]] = {}
        for slot, value in r.values:
            if slot in held:
                named.setdefault(slot, set()).add(value.lower())
        return tuple(slot for slot, values in named.items() if len(values) > 1)

    def _choice_wishes(self, asked: str) -> list[Detail]:
        """The user's unsaid details of the slots a choice of plans speaks of (`asked`: the
        sentences that put it), by the slot's words ("roll ... back" for a rollback)."""
        low = asked.lower()
        words = load_lexicon().slots
        return [d for d in self._goal.details if d.id not in self._revealed
                and any(spoken(w).search(low) for w in words.get(d.slot, ()))]

    def _confirmation(self, message: str) -> str:
        """The answer to "shall I go ahead?": a value of the job other than the user's gets the
        user's; a plan that adds something unasked for ("shall I also ...?") gets "just what I
        asked for", and a yes asked apart from such an offer gets a yes to the plan with it. Only
        the sentences that ask ("...?", "please confirm ..."; else the last) are read for it: a
        plan's account says "also past its window" too."""
        objection = self._objection(message)
        if objection:
            return objection
        asked = asking_sentences(message)
        more = sum(offers_more(s) and not self._offers_asked(s, message) for s in asked)
        return CONFIRMED if not more else YES_ONLY_ASKED if more < len(asked) else ONLY_ASKED

    def _offers_asked(self, sentence: str, message: str) -> bool:
        """Whether an offer put as more ("Should I also roll it back?") gives an outcome of
        something the customer asked for that the rest of `message` gives none (the tier's
        reading of plans): its request, not more. Beside a plan that gives it already, the offer
        is of more ("... the total. Would you like me to add it as well?")."""
        consent = self._world.consent or self._plans
        if consent is None:
            return False
        targets = consent.rules.targets(self._world, self._goal)
        offered = given(sentence, consent, targets)
        return bool(offered) and not set(offered) <= set(given(message.replace(sentence, " "), consent, targets))

    def _objection(self, message: str) -> str | None:
        """A plan the assistant states or asks to confirm with a value of the job other than the
        user's own ("shall I pay it in EUR?" to a user who wants GBP, "I'll exchange it for white"
        to one who wants black, "for July 2025" to one who said June) gets that value, as a person
        would say it, and one that names an id or an e-mail of the user's kind but never theirs
        ("order O-99999") gets theirs; None when the message names none, or the user's among them."""
        if self._job is None:
            self._job = job_slots(self._values, self._goal.details)
        did = objected(message, self._job, self._values, self._spec.vocabulary, self._world, self._goal.details)
        if did:
            return self._state(next(d for d in self._goal.details if d.id == did))
        return " ".join(self._state(d) for d in other_id_details(self._goal.details, message)) or None

    def _checked(self, values: tuple[tuple[str, str], ...]) -> tuple[set[str], list[str]]:
        """Of the values a message names: the slots the user has a detail of, and those among
        them whose named value is not what the user said."""
        details = self._goal.details
        held = {slot for slot, _ in values if any(d.slot == slot for d in details)}
        return held, [slot for slot in held if not agree([d for d in details if d.slot == slot],
                                                          [v for s, v in values if s == slot])]

    def _restates(self, values: tuple[tuple[str, str], ...]) -> bool:
        """Whether a question only names values the user said ("so I file it as sev2,
        correct?"): some value of a detail it has, and none that differs."""
        held, wrong = self._checked(self._proposed(values))
        return bool(held) and not wrong

    def _proposed(self, values: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        """The values a message names, less those that say what the user already has ("exchange
        the black e-reader for white": black is the e-reader's colour now, not a proposal)."""
        owned = {v for d in self._goal.details for v in self._world.owned(d.id)}
        return tuple((s, v) for s, v in values if v.lower() not in owned) if owned else values

    def _not_done(self) -> UserTurn:
        """Told the work is done: what the user does not see yet, or why nothing can fix it."""
        rv = self._review()
        if rv.success:
            return UserTurn(self._pick(ACCEPT), end="accepted")
        if rv.stuck:
            return self._leave(rv)
        reason = rv.missing[0] if rv.missing else next((why for _, why in rv.wrong if why), "")
        if not reason:
            return UserTurn(WRONG_PLAIN)
        return UserTurn(self._pick(NOT_DONE).format(reason=reason))

    def _answer(self, asked: tuple[str, ...], values: tuple[tuple[str, str], ...] = (),
                plan_words: tuple[str, ...] = ()) -> str:
        """What the user says to a question about `asked`: each detail it has of them. A
        question that names a value for every asked slot the user has a detail of restates what
        it said ("so, in CHF?"): the user confirms it when every value named agrees, and states
        an asked one that differs (a value named beside the question, such as a service called
        "email", is not one). An asked slot among `plan_words` needs no value named: a read-back
        speaks of "order O-63031" or "the e-reader" as the plan's own words. "I don't know" only
        when it has nothing to say about any slot asked (a question about the currency "for the
        total" is answered with the currency)."""
        details = self._goal.details
        values = self._proposed(values)
        if values and all(any(s == slot for s, _ in values) or slot in plan_words
                          or not any(d.slot == slot for d in details) for slot in asked):
            held, wrong = self._checked(values)
            if any(slot in asked for slot in wrong):
                return " ".join(self._state(d) for d in details if d.slot in wrong and d.slot in asked)
            if not wrong and (held & set(asked) or held and plan_words):
                for d in details:
                    if d.slot in held:
                        self._state(d)  # confirmed: the user has now said it
                return RIGHT
        wanted = [d for slot in asked for d in details if d.slot == slot]
        # A person answers what it has not said yet and repeats itself only when asked again
        # about nothing else ("your email?" beside "your orders" gives the email alone).
        unsaid = [d for d in wanted if d.id not in self._revealed]
        out = [self._state(d) for d in (unsaid or wanted)]
        return " ".join(out) if out else self._pick(UNKNOWN)

    def _plan_words(self, asked: tuple[str, ...], message: str) -> tuple[str, ...]:
        """The asked slots a yes-or-no question names as its plan's words ("order O-63031, the
        e-reader, for black - correct?"): those the user has said, that no question asks the
        value of ("which order?"), in a message that asks for no value otherwise ("please confirm
        your e-mail", "I'll need your e-mail") and names no id of theirs but theirs ("order
        O-99999" is no plan's word: the user says which order)."""
        if asks_value(message) or other_id_details(self._goal.details, message):
            return ()
        valued = {slot for q in questions(message) if QUESTION_WORD.search(q) for slot in self._read(q).asked}
        return tuple(slot for slot in asked if slot not in valued and self._said_all((slot,)))

    def _restated(self, message: str) -> tuple[tuple[str, str], ...]:
        """The values of the user's said details that a yes-or-no question restates in the user's
        own words ("Quarterly planning", "Leila Tran", "2025-07-31"), as values the message
        names; none for a message that asks for a value."""
        if asks_value(message) or any(QUESTION_WORD.search(q) for q in questions(message)):
            return ()
        return restated_values(self._goal.details, self._revealed, message)

    def _said_all(self, asked: tuple[str, ...]) -> bool:
        """Whether the user has stated every detail it has of the slots `asked`."""
        return all(d.id in self._revealed for d in self._goal.details if d.slot in asked)

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        # A write a policy refused changes nothing, yet fails the task: the user says so at once.
        return super().react(events, turn) if events or self._world.violations else None

    def _review(self) -> Review:
        spec = self._spec
        said = frozenset(d.slot for d in self._goal.details if d.id in self._revealed)
        return review(self._gold, self._world, spec.review, spec.undoable, said, spec.names)

    def _judge(self) -> UserTurn | None:
        """The user's word on the world after a write (see the module docstring)."""
        rv = self._review()
        if rv.success:
            return UserTurn(self._pick(ACCEPT), end="accepted")
        if self._world.violations:
            return UserTurn(VIOLATION, end="gave_up")
        new = [(r, why) for r, why in rv.wrong if not any(r is x for x in self._seen)]
        self._seen.extend(r for r, _ in new)
        if not new:
            return None
        if rv.stuck:
            return self._leave(rv)
        self._wrong += len(new)
        text = WRONG.format(reason=new[0][1]) if new[0][1] else WRONG_PLAIN
        if self._wrong >= PATIENCE:
            return UserTurn(f"{text} {GIVE_UP}", end="gave_up")
        return UserTurn(f"{text} {FIX}")

    def _leave(self, rv: Review) -> UserTurn:
        """No fix can make the task succeed: the user says why and leaves."""
        if self._world.violations:
            return UserTurn(VIOLATION, end="gave_up")
        if self._gold.kind == "quote":
            return UserTurn(NOTED)  # a submitted answer ends the task: nothing to leave
        undoable = self._spec.undoable
        why = next((why for r, why in rv.wrong if r.kind not in undoable), "")
        text = WRONG.format(reason=why) if why else WRONG_PLAIN
        return UserTurn(f"{text} {CANNOT_UNDO}", end="gave_up")

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        return contradicted(self._values, self._revealed, self._world, self._acts, name, arguments)


def make_user(task: Task, rng: Any) -> ToolUseUser:
    """The default user factory of the tool-use family."""
    return ToolUseUser(task, rng)
