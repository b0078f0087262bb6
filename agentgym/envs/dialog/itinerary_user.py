"""The user of an itinerary of Dialog's hard tier (`agentgym.envs.dialog.itinerary`): the person
who filled in the request form.

It has said everything on the form (the brief), so it adds nothing; asked about the form it
restates the lines the question is about (a booking named by its label, the budget, the
priorities, the areas, a place twice, or the whole form). It must hear the whole plan and say
yes before the agent submits: a message that names one place for each booking of the form (by
name or id; a place belongs to the booking of its category, one reading, as no two bookings
share a category) and asks whether that plan is fine gets a yes to that very plan. It asks when
the shared understanding engine reads a confirmation ("Shall I book these?", "Want me to go
ahead?"), a question names a way to approve ("Does this plan work for you?"), or, beside the
places named, it asks anything not about the form (`asks_of_plan`: "How does that sound?", "Is
everything in order?", "Please confirm and I'll submit.", "Say the word and I'll book them."):
with a plan before them, a person hears such a question as one about it. `PlanState.agreed`
records the plan the yes went to. The user does not check the plan (its yes says it heard it, never whether it is right: a user that
refused exactly the wrong plans would leak the gold). Asked without a whole plan, it asks for
one. On a task with a changed mind (`agentgym.envs.dialog.itinerary_twists`), the first whole
plan it hears gets the revised form line instead of a yes; from then on it restates the revised
line. It says nothing to bookings.
"""

from __future__ import annotations

import re

import numpy as np

from agentgym.core.task import SimulatedUser, Task, UserTurn
from agentgym.envs.dialog.itinerary import LABELS, PlanGold
from agentgym.envs.dialog.itinerary_draw import form_lines, rule_lines
from agentgym.envs.dialog.itinerary_twists import PlanState, revised_line
from agentgym.envs.dialog.options import place_mentions
from agentgym.envs.dialog.tasks import Place
from agentgym.envs.dialog.user import place_names, places_named, understanding

__all__ = ["PlanUser", "answer", "asks_of_plan", "plan_heard", "set_aside", "FORM_ANSWER", "OPENING", "SUBMIT_ANSWER",
           "SUBMIT_HEARD", "WHOLE_PLAN", "SEVERAL_PLACES"]

#: The user's first message.
OPENING = "Hi! Could you book the plan from my request form, please?"
#: The answer to a message that asks nothing about the form.
FORM_ANSWER = ("Everything I need is on my request form; I have nothing to add. Please book the plan its rules "
               "pick, then submit it.")
#: The answer to a question whether a whole plan is fine.
SUBMIT_ANSWER = "Yes, that plan works for me. Please go ahead and submit it."
#: The yes to a plan named beside other places (set aside): it says the plan it heard, so an
#: agent whose aside was heard otherwise sees it before it submits.
SUBMIT_HEARD = "Yes, that plan works for me: {plan}. Please go ahead and submit it."
#: The answer to a question whether to go ahead that names no whole plan.
WHOLE_PLAN = ("Before I say yes I need to hear the whole plan, one place for each booking of my form; I did "
              "not hear one place for {missing}.")
#: The answer to a plan that names more than one place, none ruled out, for a booking.
SEVERAL_PLACES = ("I heard more than one place for {bookings}, and a plan has one place a booking: which one do you "
                  "mean?")
#: Ways to ask for approval beside the engine's confirmations ("does this plan work for you?").
_APPROVAL = re.compile(r"\b(work(s)? for you|suit(s)? you|(look|sound|seem)s? (good|right|ok\w*|fine|correct)"
                       r"|(this|that|it|plan|everything) works?|(is|are|does) (this|that|it|these|everything|the plan)"
                       r"( plan)? (ok\w*|fine|alright|all right|correct|right|good)|objections?|happy with|agree\w*|what do you think|thoughts"
                       r"|approv\w*|ok\w* with|fine with|all right with|alright with|good to go|proceed|go ahead"
                       r"|submit\w*|confirm\w*)\b")
#: The topics of a question, by the words that name them.
_BOOKINGS = re.compile(r"\bbookings?\s+((?:[a-d]\b(?:\s*(?:,|and|&|or)\s*)?)+)")
_BUDGET = re.compile(r"\b(budget|spend\w*|price\w*|cost\w*|afford\w*|total|money)\b")
_PRIORITY = re.compile(r"\b(priorit\w*|rat(ed|ing|ings)|matters? most|most important|prefer\w*|ties?|tied)\b")
_AREA = re.compile(r"\b(areas?|neighbou?rhoods?|district)\b")
_TWICE = re.compile(r"\b(twice|same place|one place for|a place for two)\b")
_FORM = re.compile(r"\b(form|needs?|requirements?|looking for|what (do|would) you (want|like))\b")
_NO_AREA_RULE = "My form has no rule about areas: two bookings may be in the same area."


#: Where a message splits into sentences: a sentence end (not a decimal point) or a line break.
_SENTENCES = re.compile(r"(?<=[!?])\s*|(?<!\d)[.](?!\d)\s*|\n+")
#: A yes/no question whose subject is the plan itself ("Is this what you want?", "Does
#: everything check out?", "Are these fine?"): whatever it names after, it asks about the plan.
_OF_PLAN = re.compile(r"^(?:\W*(?:so|and|now|then|ok\w*|well)\b\W*)?(?:is|are|does|do|did|will|would|can|could|"
                      r"should|shall|was|were|has|have)\s+(?:this|that|it|these|those|everything|all( of)? (this|that|it)|"
                      r"(?:the|this|that|my|our|your) (?:plan|itinerary|bookings?|schedule|selection|lineup|line-up|"
                      r"proposal))\b")
#: A request of the user, or an offer that waits on its word: an imperative addressed to it, at
#: the start of a clause ("Please confirm", "Say the word", "Review it and let me know"), or what the agent will do once the user
#: agrees ("If you're happy with it, I'll submit", "... and I'll book them", "... so I can submit").
_REQUEST = re.compile(r"(?:^|\band\b|[,;:\u2013\u2014]|\s-\s)(?:\W*(?:please|kindly|just|so|then|simply)\b)*\W*(?:say|tell|give|reply|respond|confirm|"
                      r"approve|let me know|answer|send|drop|shout|ok|okay)\b"
                      r"|\b(?:if|once|when|as soon as)\b[^.?!]*\b(?:you|your)\b[^.?!]*\bi(?:'ll|’ll| will| can| shall)\b"
                      r"|\b(?:and|then|so)\s+i(?:'ll|’ll| will| can| shall)\s+(?:\w+\s+)?(?:submit|book|finali[sz]e|"
                      r"confirm|lock|proceed|send|go ahead)")


def asks_of_plan(message: str) -> bool:
    """Whether `message`, which names places, asks the user about the plan they make: its last
    question or request is a request of the user or an offer that waits on its word
    (`_REQUEST`), a yes/no question whose subject is the plan (`_OF_PLAN`), or any other
    question about none of the form's lines (its bookings by label, the budget, the priorities,
    the areas, a place twice, the form). With a plan before it and nothing else asked, a person
    hears a question as one about that plan."""
    asked = False
    for sentence in _SENTENCES.split(message.lower()):
        sentence = sentence.strip().lstrip("*_#>-•").strip()
        # The last question decides: an agent asks for the yes after the plan, and a question
        # about the form after it ("... Also, what was the budget?") is what is left to answer.
        if _REQUEST.search(sentence) or _OF_PLAN.search(sentence):
            asked = True
        elif sentence.endswith("?"):
            asked = not _about_form(sentence)
    return asked


def _about_form(text: str) -> bool:
    """Whether `text` asks about a line of the form (what `answer` restates)."""
    return any(r.search(text) for r in (_BOOKINGS, _BUDGET, _PRIORITY, _AREA, _TWICE, _FORM))


def answer(message: str, form: list[str], rules: list[str], distinct_areas: bool) -> str:
    """The user's reply to `message` about the form: the lines of `form` and `rules` it asks
    about, restated in the form's order; `FORM_ANSWER` when it asks about none of them."""
    text = message.lower()
    said: list[str] = []
    labels = {x.upper() for m in _BOOKINGS.finditer(text) for x in re.findall(r"\b[a-d]\b", m.group(1))}
    about = [line for line, label in zip(form, LABELS) if label in labels]
    if not about and _FORM.search(text):
        about = list(form)
    if about:
        said.append("My form says: " + " ".join(line[2:] for line in about))
    picked: list[str] = []
    if _TWICE.search(text):
        picked.append(rules[1])
    area = _AREA.search(text)
    if area and distinct_areas:
        picked.append(rules[2])
    if _BUDGET.search(text):
        picked.append(rules[-2])
    if _PRIORITY.search(text):
        picked.append(rules[-1])
    if picked:
        said.append("The rules say: " + " ".join(picked))
    if area and not distinct_areas:
        said.append(_NO_AREA_RULE)
    return " ".join(said) if said else FORM_ANSWER


#: Where the words said of a place end, after it: a sentence end (not a decimal point), a
#: semicolon or a line break; the next place named ends them too. A bracket does not: "the
#: higher-rated one (X, 6 EUR) would push the total over" says its verdict after it.
_SAID_END = re.compile(r"(?<!\d)[.](?!\d)|[!?;\n]")
#: Words after a place that set it aside ("X was not free", "Y no longer fits", "Z was
#: dropped", "W is taken", "V lacks wifi", "U is over budget"), and any word of a place with no
#: room left ("T was full", "S had no availability", "R is booked up"). Words a chosen place's own
#: description may well carry ("no parking needed", "without a view") are not among them.
_SET_ASIDE = re.compile(r"\b(not|\w*n[’']t|cannot|no longer|lacks?|lacking|dropp(ed|ing)|dropped|taken|"
                        r"unavailable|fully booked|closed|ruled out|rejected|excluded|over (the |your |our )?budget|"
                        r"(full|booked (out|up)|sold out)|no (availability|vacanc\w+|openings?|space|room|free \w+)|"
                        r"over \d+|push\w* (the |our |your )?(total|budget|spend) (over|past|above|beyond)|"
                        r"(go|goes|going|went) over|(over|above|beyond|past) (the |your |our )?(budget|limit|cap)|"
                        r"(same|shared?|shares?|sharing) (an |the )?area|"
                        r"(bust|blow|break|exceed|overshoot|overrun)\w* (the |your |our )?(budget|limit|cap|total)|"
                        r"(take|push|bring|put)\w* (the |your |our )?(total|budget|spend) (to|over|past|above|beyond)|"
                        r"too (expensive|pricey|far|costly|much)|exceeds?)\b")
#: Words right before a place that set it aside ("instead of X", "rather than Y", "better than
#: Z", "chose A over the better-rated X", "replaced X with Y", "swapped out X").
_SET_ASIDE_BEFORE = re.compile(r"\b(instead of|in place of|rather than|than|not|unlike|but not|over( the| a)?( [\w-]+)?|"
                               r"(replac|swapp?|drop+|cancel+|skipp?)\w*( out)?( the)?|(switch|mov|chang)\w* (away )?from( the)?|"
                               r"no (room|space|budget|money)( left)? for( the)?|(rul|leav|left)\w* out( the)?|"
                               r"except( for)?( the)?|excluding( the)?|without( the)?)\s*$")
#: Where the words said after a place stop short of the next place: the last clause opener
#: before it ("X (3.0) | total 183 (pricier ones left no room for Y)": "no room" is said of Y).
_CLAUSE_OPENER = re.compile(r"[(,;]|\b(and|but|so|while|whereas|because|since)\b")


#: Between two places of one list ("X, Y and Z", "(X 4.6, Y 4.2, Z 4.1)"): nothing but
#: separators, ratings and prices, so what is said after the list is said of each of them.
_LISTED = re.compile(r"^(?:[\s,;/()&+*_-]|\d+(?:\.\d+)?|eur|usd|€|\$|and|or|nor|also)*$")
#: A heading over the places set aside ("## Alternatives ruled out", "**Considered, not
#: chosen:**", "Ruled out: ..."): each place of its section is one the plan does not take.
_ASIDE_HEADING = re.compile(r"\b(ruled out|rejected|alternatives?|considered|not chosen|other options?|runners?[- ]up|"
                            r"passed over|discarded|excluded|did ?n[o’']t make)\b")
#: Where a section starts: a markdown heading, a line of bold alone, or a label ending in a
#: colon at the start of a line or sentence; it runs to the next section.
_SECTION = re.compile(r"(?:^|\n|(?<=[.!?])\s+|\s(?=#))\s*(?:#+\s*[^#\n*]{0,60}|\*\*[^*\n]{1,60}\*\*|[^.!?:\n]{1,40}:)")


def _sections(text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """Where `text`'s sections start, and the spans of those under a heading that sets their
    places aside (`_ASIDE_HEADING`)."""
    starts = [(m.start(), m.group()) for m in _SECTION.finditer(text)]
    spans = []
    for k, (start, heading) in enumerate(starts):
        if _ASIDE_HEADING.search(heading):
            spans.append((start, starts[k + 1][0] if k + 1 < len(starts) else len(text)))
    return [start for start, _ in starts], spans


def set_aside(message: str, places: list[Place]) -> set[str]:
    """Ids of the `places` a message names only to set them aside: a place followed, before the
    next place or the sentence's end, by words that rule it out ("X was not free on Friday",
    "Y (6 EUR) would push the total over the budget"), each place of a list those words follow
    ("X, Y and Z share an area with A"), a place led in by "instead of", "rather than" and the
    like, and a place in a section headed as set aside ("Alternatives ruled out: ...")."""
    text = message.lower()
    mentions = place_mentions(text, places)
    heads, sections = _sections(text)
    verdicts: list[bool] = []  # per mention: the words after it set it aside
    aside: list[bool] = []  # per mention: set aside, by any rule
    for k, (place, start, end) in enumerate(mentions):
        # What is said of a place ends at the next place, sentence end or section.
        stop = min([mentions[k + 1][1] if k + 1 < len(mentions) else len(text), *(h for h in heads if h >= end)])
        brk = _SAID_END.search(text, end, stop)
        after = text[end:brk.end() if brk else stop]
        if brk is None and k + 1 < len(mentions) and stop == mentions[k + 1][1]:
            openers = list(_CLAUSE_OPENER.finditer(after))
            if openers and openers[-1].start() > 0:
                after = after[:openers[-1].start()]
        before = text[mentions[k - 1][2] if k else 0:start]
        verdicts.append(bool(_SET_ASIDE.search(after)))
        aside.append(verdicts[-1] or bool(_SET_ASIDE_BEFORE.search(before))
                     or any(a <= start < b for a, b in sections))
    # A list shares the verdict said after its last place: back from each place set aside by
    # the words after it, every place before it with only list separators between them.
    for k in range(len(mentions) - 1, 0, -1):
        if verdicts[k] and _LISTED.match(text[mentions[k - 1][2]:mentions[k][1]]):
            verdicts[k - 1] = aside[k - 1] = True
    # A place is set aside when every mention of it is ("X was taken ... New plan: A X" keeps it).
    kept = {place.id for (place, _, _), gone in zip(mentions, aside) if not gone}
    return {place.id for place, _, _ in mentions} - kept


def plan_heard(places: list[Place], gold: PlanGold, aside: set[str] = frozenset()) -> tuple[list[Place | None], list[str]]:
    """The plan a message names: per booking of `gold`'s form, the one place named of its
    category (among several, the one not set aside: `aside`, ids), None when none or several
    are; and the labels of bookings left open."""
    plan: list[Place | None] = []
    for leg in gold.legs:
        category = leg.needs[0][1]
        mine = [p for p in places if p.category == category]
        if len(mine) > 1:  # a place ruled out beside the one chosen is no second choice
            mine = [p for p in mine if p.id not in aside]
        plan.append(mine[0] if len(mine) == 1 else None)
    return plan, [LABELS[i] for i, p in enumerate(plan) if p is None]


def _labels(labels: list[str]) -> str:
    return f"booking {labels[0]}" if len(labels) == 1 else f"bookings {', '.join(labels[:-1])} and {labels[-1]}"


def _open_bookings(missing: list[str], named: list[Place], gold: PlanGold) -> str:
    """What the user says of a plan with bookings left open: those it heard no place for, and
    those it heard several for (a plan names one place a booking)."""
    several = [label for label, leg in zip(LABELS, gold.legs) if label in missing
               and sum(p.category == leg.needs[0][1] for p in named) > 1]
    none = [label for label in missing if label not in several]
    said = [WHOLE_PLAN.format(missing=_labels(none))] if none else []
    if several:
        said.append(SEVERAL_PLACES.format(bookings=_labels(several)))
    return " ".join(said)


class PlanUser(SimulatedUser):
    """See the module docstring."""

    def __init__(self, task: Task, rng: np.random.Generator) -> None:
        gold, domain = task.gold, task.world.domain
        self._task = task
        self._form = form_lines(domain, gold)
        self._rules = rule_lines(domain, gold)
        self._distinct = gold.distinct_areas
        self._read = understanding(domain).read
        self._names = place_names(task.world)

    @property
    def state(self) -> PlanState:
        return self._task.extra["plan"]

    def opening(self) -> str:
        return OPENING

    def reply(self, message: str, turn: int) -> UserTurn:
        reading = self._read(message)
        text = message.lower()
        gold: PlanGold = self._task.gold
        named = places_named(reading, self._names)
        plan, missing = plan_heard(named, gold, set_aside(message, named))
        asks_yes = reading.confirm or (reading.question and _APPROVAL.search(text) is not None) or \
            (bool(named) and asks_of_plan(message))
        if not asks_yes:
            return UserTurn(answer(message, self._form, self._rules, self._distinct))
        if missing:
            return UserTurn(_open_bookings(missing, named, gold))
        state = self.state
        if state.mind is not None and not state.changed:
            # Hearing a plan, any plan, the user revises its form: never a yes first.
            state.changed = True
            mind = state.mind
            self._task.gold = mind.gold
            self._form = form_lines(self._task.world.domain, mind.gold)
            return UserTurn(revised_line(self._form[mind.leg], LABELS[mind.leg]))
        agreed = tuple(p.id for p in plan if p is not None)
        state.agreed = agreed
        state.yeses.append((turn, agreed))
        if len({p.id for p in named}) > len(agreed):
            heard = ", ".join(f"{label} {p.name}" for label, p in zip(LABELS, plan) if p is not None)
            return UserTurn(SUBMIT_HEARD.format(plan=heard))
        return UserTurn(SUBMIT_ANSWER)

    def on_commit(self, turn: int) -> UserTurn | None:
        # A submission the moved world refused (`submit_plan` said what changed) goes on.
        return UserTurn("") if self.state.consented is None else None

    def perturb_text(self, text: str, rng: np.random.Generator) -> tuple[str, list[str]]:
        # Every reply restates the brief's own lines or a stock answer: typos never touch it.
        return text, []
