"""The user of an itinerary of Dialog's hard tier (`agentgym.envs.dialog.itinerary`): the person
who filled in the request form.

It has said everything on the form (the brief), so it adds nothing; asked about the form it
restates the lines the question is about (a booking named by its label, the budget, the
priorities, the areas, a place twice, or the whole form). It must hear the whole plan and say
yes before the agent submits: a message that names one place for each booking of the form (by
name or id; a place belongs to the booking of its category, one reading, as no two bookings
share a category; where the message gives a booking its place by label, "Booking A, X", that
place, whatever else its reasoning names) and asks whether that plan is fine gets a yes to that
very plan. It asks when
the shared understanding engine reads a confirmation ("Shall I book these?", "Want me to go
ahead?"), a question names a way to approve ("Does this plan work for you?"), or, beside the
places named, it asks anything not about the form (`asks_of_plan`: "How does that sound?", "Is
everything in order?", "Please confirm and I'll submit.", "Say the word and I'll book them."):
with a plan before them, a person hears such a question as one about it. A question about the
form that names no place and asks to act on nothing ("... a desk on Monday morning. Is that
right?") gets the form restated; "shall I just work from the form as written?" gets
`FORM_ANSWER`. `PlanState.agreed`
records the plan the yes went to. The user does not check the plan (its yes says it heard it, never whether it is right: a user that
refused exactly the wrong plans would leak the gold). Asked without a whole plan, it asks for
one, but for places all of the plan it last said yes to ("Next: may I book X as booking B?"):
that plan, its yes restated. A question asking leave to book ("May I book X as booking B?")
asks for a yes, though it names a booking. On a task with a changed mind (`agentgym.envs.dialog.itinerary_twists`), the first whole
plan it hears gets the revised form line instead of a yes; from then on it restates the revised
line. It says nothing to bookings.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from agentgym.core.task import SimulatedUser, Task, UserTurn
from agentgym.envs.dialog.aside import aside_ids, aside_mentions, set_aside
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.envs.dialog.itinerary import LABELS, PlanGold
from agentgym.envs.dialog.itinerary_draw import form_lines, rule_lines
from agentgym.envs.dialog.itinerary_kept import kept_bookings
from agentgym.envs.dialog.itinerary_twists import PlanState, revised_line
from agentgym.envs.dialog.options import place_mentions
from agentgym.envs.dialog.proposals import places_named
from agentgym.envs.dialog.tasks import Place
from agentgym.envs.dialog.user import place_names, understanding
from agentgym.envs.dialog.wording import GO_CHECK
from agentgym.users.understanding.compromise import read_compromise
from agentgym.users.understanding.look_up import asks_leave_to_look

__all__ = ["PlanUser", "answer", "asks_of_plan", "labelled_places", "plan_heard", "set_aside", "CHECK_ANSWER", "FIRM", "FORM_ANSWER", "OPENING", "SUBMIT_ANSWER",
           "SUBMIT_HEARD", "WHOLE_PLAN", "SEVERAL_PLACES"]

#: The user's first message.
OPENING = "Hi! Could you book the plan from my request form, please?"
#: The answer to a message that asks nothing about the form.
FORM_ANSWER = ("Everything I need is on my request form; I have nothing to add. Please book the plan its rules "
               "pick, then submit it.")
#: What the user says first to a question whether anything on its form could give ("Is
#: anything negotiable? Is the budget a hard cap?"): the lines it restates then are no choice.
FIRM = "Nothing on my form is negotiable: every line and every rule holds."
#: The answer to a last question that asks leave to look something up (`asks_leave_to_look`).
CHECK_ANSWER = f"{GO_CHECK} Everything I need is on my request form."
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
                       r"|submit\w*|confirm\w*|authori[sz]\w*)\b")
#: The topics of a question, by the words that name them.
#: A booking's label as a character class, one per form line (`LABELS`).
_LABEL = f"[{''.join(LABELS)}]"
_BOOKINGS = re.compile(rf"\bbookings?\s+((?:{_LABEL.lower()}\b(?:\s*(?:,|and|&|or)\s*)?)+)")
_BUDGET = re.compile(r"\b(budget|spend\w*|price\w*|cost\w*|afford\w*|total|money|caps?|limits?|ceiling|max(imum)?)\b")
_PRIORITY = re.compile(r"\b(priorit\w*|rat(ed|ing|ings)|matters? most|most important|prefer\w*|ties?|tied)\b")
_AREA = re.compile(r"\b(areas?|neighbou?rhoods?|district)\b")
_TWICE = re.compile(r"\b(twice|same place|one place for|a place for two)\b")
_FORM = re.compile(r"\b(form|needs?|requirements?|looking for|what (do|would) you (want|like))\b")
#: Words one of which every match of each topic's pattern holds: the patterns are searched in lower
#: case and are case-sensitive, so a text with none of a pattern's words is one it does not match
#: (`_holds`; each pattern's own scan, tried at every place of the text, is far slower).
_TOPIC_WORDS = {
    _BOOKINGS: ("booking",),
    _BUDGET: ("budget", "spend", "price", "cost", "afford", "total", "money", "cap", "limit", "ceiling", "max"),
    _PRIORITY: ("priorit", "rated", "rating", "matter", "most important", "prefer", "tie"),
    _AREA: ("area", "neighbo", "district"),
    _TWICE: ("twice", "same place", "one place for", "a place for two"),
    _FORM: ("form", "need", "requirement", "looking for", "you want", "you like"),
}


def _holds(text: str, pattern: re.Pattern[str]) -> bool:
    """``pattern.search(text) is not None`` for a topic's pattern (`_TOPIC_WORDS`) and a
    lower-case `text`."""
    return any(map(text.__contains__, _TOPIC_WORDS[pattern])) and pattern.search(text) is not None


_NO_AREA_RULE = "My form has no rule about areas: two bookings may be in the same area."
#: Words that ask to act on the plan, not to check the form ("shall I go ahead with bookings A-C?").
_GO_AHEAD = re.compile(r"\b(go ahead|proceed|submit\w*|book (it|them|these|those|everything|all)|reserve\w*|"
                       r"finali[sz]e\w*|lock\w* (it |them |this |that |everything )?in)\b")
#: The assistant saying it checks before it acts ("Just to confirm before I go ahead: ..."): no
#: request to act.
_BEFORE_ACTING = re.compile(r"\bbefore (i|we) (go ahead|proceed|submit\w*|book\w*|reserve\w*|finali[sz]e\w*)\b")
#: What a check of the form names beside the form itself: a booking by its label or a rule.
_FORM_ITEMS = (_BOOKINGS, _BUDGET, _PRIORITY, _AREA, _TWICE)


#: Where a message splits into sentences: a sentence end (not a decimal point: a full stop after
#: a figure ends one, "Total 70. OK?") or a line break.
_SENTENCES = re.compile(r"(?<=[!?])\s*|[.](?!\d)\s*|\n+")
#: A yes/no question whose subject is the plan itself ("Is this what you want?", "Does
#: everything check out?", "Are these fine?"): whatever it names after, it asks about the plan.
_OF_PLAN = re.compile(r"^(?:\W*(?:so|and|now|then|ok\w*|well)\b\W*)?(?:is|are|does|do|did|will|would|can|could|"
                      r"should|shall|was|were|has|have)\s+(?:this|that|it|these|those|everything|all( of)? (this|that|it)|"
                      r"(?:the|this|that|my|our|your) (?:plan|itinerary|bookings?|schedule|selection|lineup|line-up|"
                      r"proposal))\b")
#: A request of the user, or an offer that waits on its word: an imperative addressed to it, at
#: the start of a clause ("Please confirm", "Say the word", "Review it and let me know"), or what the agent will do once the user
#: agrees ("If you're happy with it, I'll submit", "... and I'll book them", "... so I can submit").
_ASKED_TO = re.compile(r"(?:^|\band\b|[,;:\u2013\u2014]|\s-\s)(?:\W*(?:please|kindly|just|so|then|simply)\b)*\W*(?:say|tell|give|reply|respond|confirm|"
                       r"approve|let me know|answer|send|drop|shout|ok|okay)\b")
_WILL_ONCE = re.compile(r"\b(?:if|once|when|as soon as)\b[^.?!]*\b(?:you|your)\b[^.?!]*\bi(?:'ll|’ll| will| can| shall)\b"
                        r"|\b(?:and|then|so)\s+i(?:'ll|’ll| will| can| shall)\s+(?:\w+\s+)?(?:submit|book|finali[sz]e|"
                        r"confirm|lock|proceed|send|go ahead)")
_REQUEST = re.compile(f"{_ASKED_TO.pattern}|{_WILL_ONCE.pattern}")
#: Words one of which every match of `_WILL_ONCE` holds: the offer's "I will", in any of its forms.
_WILL = ("i'll", "i\u2019ll", "i will", "i can", "i shall")


#: A question that asks leave to act on the plan ("May I book Olive Jar as booking B?", "Shall I
#: reserve it?"): with places named, a request for the user's yes, though it names a booking.
_LEAVE_TO_ACT = re.compile(r"\b(?:may|can|could|shall|should) (?:i|we)\b[^?]*\b(?:book\w*|reserve\w*|submit\w*|go ahead|"
                           r"proceed|finali[sz]e\w*|lock\w*)\b")


def _requests(sentence: str) -> bool:
    """``_REQUEST.search(sentence) is not None``: its first alternative, or the others where the
    lower-case `sentence` holds a word every match of theirs holds (`_WILL`; their scan, each
    clause looked through twice, is the slow one)."""
    return _ASKED_TO.search(sentence) is not None or (
        any(map(sentence.__contains__, _WILL)) and _WILL_ONCE.search(sentence) is not None)


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
        if _requests(sentence) or _OF_PLAN.search(sentence) or sentence.endswith("?") and _LEAVE_TO_ACT.search(sentence):
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
    labels = {x.upper() for m in _BOOKINGS.finditer(text) for x in re.findall(rf"\b{_LABEL.lower()}\b", m.group(1))} \
        if "booking" in text else set()  # every booking named holds the word (`_TOPIC_WORDS`)
    # A read-back laid out by label ("| A | private office | Saturday morning |", "- A: ...")
    # asks about each booking it lays out, though the lines name no "booking".
    labels.update(label for _, _, label in _laid_out_labels(message))
    about = [line for line, label in zip(form, LABELS) if label in labels]
    if not about and _holds(text, _FORM):
        about = list(form)
    if about:
        said.append("My form says: " + " ".join(line[2:] for line in about))
    picked: list[str] = []
    if _holds(text, _TWICE):
        picked.append(rules[1])
    area = _holds(text, _AREA)
    if area and distinct_areas:
        picked.append(rules[2])
    if _holds(text, _BUDGET):
        picked.append(rules[-2])
    if _holds(text, _PRIORITY):
        picked.append(rules[-1])
    if picked and _holds(text, _FORM):
        # Asked about its requirements, rules among them: the first rule is one of them too (the
        # rules restated from "2." on read as a rule left out).
        picked.insert(0, rules[0])
    if picked:
        said.append("The rules say: " + " ".join(picked))
    if area and not distinct_areas:
        said.append(_NO_AREA_RULE)
    if read_compromise(message).question:
        said.insert(0, FIRM)
    return " ".join(said) if said else FORM_ANSWER


def plan_heard(places: list[Place], gold: PlanGold, aside: set[str] = frozenset(),
               labelled: dict[int, Place] | None = None) -> tuple[list[Place | None], list[str]]:
    """The plan a message names: per booking of `gold`'s form, the place the message gives it
    by its label (`labelled`, by booking index: `labelled_places`), else the one place named of
    its category (among several, the one not set aside: `aside`, ids), None when none or
    several are; and the labels of bookings left open."""
    plan: list[Place | None] = []
    for i, leg in enumerate(gold.legs):
        if labelled and i in labelled:
            plan.append(labelled[i])
            continue
        category = leg.needs[0][1]
        mine = [p for p in places if p.category == category]
        if len(mine) > 1:  # a place ruled out beside the one chosen is no second choice
            mine = [p for p in mine if p.id not in aside]
        plan.append(mine[0] if len(mine) == 1 else None)
    return plan, [LABELS[i] for i, p in enumerate(plan) if p is None]


#: A booking's label where a message gives it a place: "Booking A, X", "booking B is Y", "booking_C: Z" (a
#: capital letter: "booking a cafe" names no label), or a capital label before a mark ("A: X",
#: "**A)** X", "A - X", "| A | X |", "A (warehouse, Thursday morning): X").
_LABEL_WORD = re.compile(rf"\b[Bb]ooking(?:\s+|[_-])({_LABEL})\b")  # "booking_C:" in a code block too
_LABEL_BARE = re.compile(rf"(?<![\w'’])({_LABEL})(?:\*\*)?(?:\s*\([^()\n]{{1,60}}\)\s*:|\s*[:)|]|\s+[-–—]\s|\s*[–—]|"
                         # a label before its day and time ("D Tue afternoon: X", "A, Tuesday morning: Y")
                         rf",?\s+(?i:{'|'.join(d[:3] for d in DAYS)})[a-z]*\.?(?:\s+(?i:{'|'.join(SLOTS)}))?\s*:)")
#: A label opening a list's line, before a comma ("- A, phone booth, Sunday: X", "1. A, rooftop,
#: Wednesday evening: X"): a line's first capital letter before a comma is no article.
_LABEL_ITEM = re.compile(rf"^[ \t]*(?:(?:[-*\u2022]|\d+[.)])[ \t]*)?(?:\*\*)?({_LABEL})(?:\*\*)?,", re.M)
#: A heading over the plan a message puts ("**Recommendation:**", "Proposed plan:", "My pick", "Recap:"): at a
#: line's start, alone or before a colon, read as what the labels after it give, whatever the
#: options above it name.
_PLAN_HEADING = re.compile(r"^[ \t#*_>-]*(?:my |our |the )?(?:updated |revised |new )?(?:recommendation|recommended plan|"
                           r"proposed plan|proposal|final plan|plan|suggested plan|my pick|recap|summary)"
                           r"(?:[ \t*_]*:[ \t*_]*|[ \t*_]*$)", re.I | re.M)
#: A sentence that ends a line by introducing the plan below it ("... I would go with X. Here is the
#: full plan:", "... The plan, one place per booking:", "..., so the plan that keeps every rule with
#: the highest total rating (15.8) is:"): a heading too, though a line's reasoning comes before it.
#: The words a message may put before naming its plan ("the plan", "my revised itinerary").
_PLAN_WORDS = "full |complete |final |whole |proposed |recommended |updated |new |revised "
_PLAN_INTRO = re.compile(r"(?:\b(?:here(?: is|'s)|this is|below is|(?:so )?the plan is)\s+|(?:^|(?<=[.!?]\s))|\bso\s+)"
                         rf"(?:the |my |our )?(?:{_PLAN_WORDS}|overall )?(?:plan|itinerary|proposal|recap|summary)\b"
                         r"(?:[^.!?:\n]|(?<=\d)[.](?=\d)){0,100}[ \t*_]*:[ \t*_]*$", re.I | re.M)
#: A sentence that opens with the plan and goes on to its first label ("... is Blue Plate. The plan:
#: A, Tuesday morning: Blue Plate. B, ..."): a heading too (a playtest, seed 7050, turn 10).
_PLAN_INLINE = re.compile(rf"(?:^|(?<=[.!?]\s))(?i:(?:the |my |our )?(?:{_PLAN_WORDS})?(?:plan|itinerary))\s*:"
                          rf"(?=\s*(?i:booking\s+)?{_LABEL}\b)", re.M)
#: Where what a label gives ends, short of the next label: a paragraph break, or the end of the
#: sentence that names the label's first place (a period before a space ends one after a figure
#: too: "rated 3.0. Total ..."; a line break does not: "Or W for booking D." on the next line
#: offers a second place).
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<!\d)[.](?!\d)|[.](?=\s)|[!?]")
#: Where what a label gives ends after its first place: the sentence's end, or in a table the
#: cell's ("| A | X (id) | ... | the higher rated (W is 3.5) |": a later cell gives reasons).
_GIVEN_END = re.compile(_SENTENCE_END.pattern + r"|\|")


def labelled_places(message: str, places: list[Place], gold: PlanGold, among: Sequence[Place] = (), *,
                    mentions: list[tuple[Place, int, int, bool]] | None = None) -> dict[int, Place]:
    """The place a message gives each booking by its label ("So the plan is: Booking A, X;
    Booking B, Y"; a table's rows "| A | X |"), by booking index: the one place of the booking's
    category named between its label and the next label (or the paragraph's end, or the end of
    the sentence that names its first such place: "E: X. ... a cheaper plan with W" gives X). A person hears
    a labelled plan as the plan, whatever else the message names in its reasoning ("X and W are
    tied, so I took the cheaper X"; "for booking A, X and W came closest": a label beside several
    places gives none; the places of `among` end what is said of the place before them, as in
    `aside.aside_mentions`). Bookings the message gives no place by label, or one place in one
    statement and another in a second, are not in it. A place the label's line names only to set
    it aside ("A: X, beats W") is no second place beside the one given. Under a heading of its own
    that puts the plan ("**Recommendation:**"), the labels under the last such heading give the
    plan: a table of options above it, a row per option, is what the plan was chosen from. A
    booking that a list's line or a table's row lays out (labels in the form's order) gives one
    place has that place, whatever a label in the reasoning around the layout gives it.
    `mentions`: ``aside_mentions(message, places, among)``, where the caller has it."""
    text = message.lower()
    if len(text) != len(message):  # labels are found as written, places in lower case: one set of places
        return {}
    if mentions is None:
        mentions = aside_mentions(message, places, among)
    marks = [(m.start(), m.end(), m.group(1)) for r in (_LABEL_WORD, _LABEL_BARE, _LABEL_ITEM) for m in r.finditer(message)]
    marks += _labels_before_places(message, [m[:3] for m in mentions])
    marks += _list_line_labels(message)
    marks += _table_row_labels(message)
    # Where lines or rows that open with their labels lay the plan out, a booking such a line
    # gives one place has that place, whatever a label in the reasoning around it gives
    # ("Noted: booking B now needs lockers. X has none, so I cancelled it ..." above "| B | Y |").
    structured = _laid_out(message, marks)
    heading = max((m.end() for r in (_PLAN_HEADING, _PLAN_INTRO, _PLAN_INLINE) for m in r.finditer(message)),
                  default=None)
    if heading is not None and any(start >= heading for start, _, _ in marks):
        marks = [m for m in marks if m[0] >= heading]
    if not marks:
        return {}
    marks.sort()
    labels = [m for k, m in enumerate(marks) if not k or m[0] >= marks[k - 1][1]]  # "Booking A:" is one label
    categories = {LABELS[i]: (i, leg.needs[0][1]) for i, leg in enumerate(gold.legs)}
    given: dict[int, dict[str, Place]] = {}
    given_laid_out: dict[int, dict[str, Place]] = {}
    for k, (start_label, end, label) in enumerate(labels):
        if label not in categories:
            continue
        stop = labels[k + 1][0] if k + 1 < len(labels) else len(text)
        brk = _PARAGRAPH.search(text, end, stop)
        stop = brk.start() if brk else stop
        index, category = categories[label]
        first = next((after for p, start, after, _ in mentions if end <= start < stop and p.category == category), None)
        close = _GIVEN_END.search(text, first, stop) if first is not None else None
        stop = close.start() if close else stop
        said = [(p, gone) for p, start, _, gone in mentions if end <= start < stop and p.category == category]
        mine = {p.id: p for p, _ in said}
        if len(mine) > 1:
            mine = {p.id: p for p, gone in said if not gone}
        if len(mine) == 1:  # a label beside several places is reasoning ("for booking A, X and W came closest")
            given.setdefault(index, {}).update(mine)
            if start_label in structured:
                given_laid_out.setdefault(index, {}).update(mine)
    given.update((index, places) for index, places in given_laid_out.items() if len(places) == 1)
    return {index: next(iter(places.values())) for index, places in given.items() if len(places) == 1}


#: What may stand before a label that opens a line of a plan's layout: bullets, numbers, a
#: table's bar, emphasis, "Booking" ("- **Booking B:**", "| B |", "2. C:").
_LINE_LEAD = re.compile(r"[ \t]*(?:(?:[-*\u2022>|#]|\d+[.)])[ \t]*)*(?:\*\*|__)?(?:booking[ \t]+)?", re.I)


def _laid_out(message: str, marks: list[tuple[int, int, str]]) -> set[int]:
    """Where the labels of a plan's layout start: of the labels (`marks`) that open their lines,
    the last run in the form's order, where it holds two or more (one capital letter opening a
    line may be an article)."""
    run: list[tuple[int, int, str]] = []
    same: set[int] = set()  # marks within a label of the run ("Booking B:" is one label)
    for mark in sorted(set(marks)):
        line = message.rfind("\n", 0, mark[0]) + 1
        if not _LINE_LEAD.fullmatch(message, line, mark[0]):
            continue
        if run and mark[0] < run[-1][1]:
            same.add(mark[0])
            continue
        if run and mark[2] <= run[-1][2]:
            run, same = [], set()
        run.append(mark)
    return {start for start, _, _ in run} | same if len(run) >= 2 else set()


#: A capital label right before a place's name, with nothing between ("A Glass Chamber, B Velvet
#: Chamber"): one letter can be an article, so such labels count only as a run of two or more,
#: in the form's order.
_LABEL_BEFORE = re.compile(rf"(?<![\w'’])({_LABEL}) $")


def _laid_out_labels(message: str) -> list[tuple[int, int, str]]:
    """The labels opening a table's rows or a list's lines, or a line before a mark ("A:"), two
    or more in the form's order."""
    if "|" not in message and "\n" not in message:
        return []
    bare = _in_form_order([(m.start(1), m.end(1), m.group(1)) for m in _LABEL_BARE.finditer(message)
                           if _LINE_LEAD.match(message, message.rfind("\n", 0, m.start(1)) + 1).end() == m.start(1)])
    return _table_row_labels(message) + _list_line_labels(message) + bare


def _labels_before_places(message: str, mentions: list[tuple[Place, int, int]]) -> list[tuple[int, int, str]]:
    """The labels written right before a place named ("so: A X (gallery), B Y, C Z"), where at
    least two of them stand in the form's order; none otherwise."""
    return _in_form_order([(start - 2, start, m.group(1)) for _, start, _ in mentions
                           if (m := _LABEL_BEFORE.search(message, max(0, start - 3), start))])


#: A capital letter opening a list's line before a word ("- A italian, Sat afternoon: X"): one
#: letter can be an article ("- A quiet corner: ..."), so such labels count only as a run of two
#: or more, in the form's order (`_in_form_order`).
_LIST_LABEL = re.compile(rf"^[ \t]*(?:[-*\u2022][ \t]*)(?:\*\*)?({_LABEL})(?:\*\*)?(?= [a-z])", re.M)


def _list_line_labels(message: str) -> list[tuple[int, int, str]]:
    """The labels opening a list's lines ("- A italian, ...", "- B korean, ..."), where at least
    two of them stand in the form's order; none otherwise. A place a message names outside the
    list ("C and D had to change (X shares Old Town)") is then not heard beside the list's."""
    return _in_form_order([(m.start(1), m.end(1), m.group(1)) for m in _LIST_LABEL.finditer(message)])


def _table_row_labels(message: str) -> list[tuple[int, int, str]]:
    """The labels opening a table's rows ("| A japanese | Sat morning | X |"), where at least two
    of them stand in the form's order; none otherwise. Each row's label gives the place its row
    names, whatever the lines after the table name in their reasoning."""
    found = []
    for row in _TABLE_ROW.finditer(message):
        cell = row.group(1).split("|", 1)[0]
        label = _ROW_LABEL.match(cell.strip())
        if label and label.group(1) in LABELS:  # as written: a lower-case "a" opens a phrase
            at = row.start(1) + cell.index(label.group(1))
            found.append((at, at + 1, label.group(1)))
    return _in_form_order(found)


def _in_form_order(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`found` (labels with their places in a message) where two or more distinct labels stand in
    the form's order, else none: a lone capital letter may be an article."""
    letters = [label for _, _, label in found]
    return found if len(set(letters)) >= 2 and letters == sorted(letters) else []


#: A row of a table, and a booking's label at the start of a row's first cell ("A: Mexican, Fri").
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$", re.M)
_ROW_LABEL = re.compile(rf"^(?:\*\*)?(?:booking\s+)?({_LABEL})\b", re.IGNORECASE)
_ASIDE_WORDS = re.compile(r"\s*\([^)]*\)")


def column_plan(message: str, places: list[Place], gold: PlanGold) -> dict[int, Place]:
    """The plan a table of plans gives, a plan a column: the column the message's last question
    names by its heading ("| | Plan 1 (recommended) | Plan 2 |" ... "Shall I submit Plan 1?"), else
    the one headed as recommended; in it, the one place of each booking's row (by the label its
    first cell opens with), by booking index. Empty where no table holds such a column."""
    rows = [[c.strip() for c in m.group(1).split("|")] for m in _TABLE_ROW.finditer(message)]
    rows = [r for r in rows if not all(set(c) <= set("-: ") for c in r)]
    if len(rows) < 2 or len(rows[0]) < 3:
        return {}
    heads = [_ASIDE_WORDS.sub("", h).strip().lower() for h in rows[0]]
    asked = next((s for s in reversed(_SENTENCES.split(message.lower())) if s.strip().endswith("?")), "")
    cols = [k for k, h in enumerate(heads) if k and h and h in asked]
    if len(cols) != 1:
        cols = [k for k, h in enumerate(rows[0]) if k and "recommend" in h.lower()]
    if len(cols) != 1:
        return {}
    col, given = cols[0], {}
    for row in rows[1:]:
        label = _ROW_LABEL.match(row[0])
        index = LABELS.index(label.group(1).upper()) if label and label.group(1).upper() in LABELS else -1
        if col >= len(row) or not 0 <= index < len(gold.legs):
            continue
        mine = {p.id: p for p, _, _ in place_mentions(row[col].lower(), places) if p.category == gold.legs[index].needs[0][1]}
        if len(mine) == 1:
            given[index] = next(iter(mine.values()))
    return given


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
        #: Per booking, the place of the last plan it heard asked about, or put whole (ids; None:
        #: none yet): what "A and B stay the same" and "Good to go with the above?" keep.
        self._heard: list[str | None] = [None] * len(gold.legs)

    @property
    def state(self) -> PlanState:
        return self._task.extra["plan"]

    def opening(self) -> str:
        return OPENING

    def reply(self, message: str, turn: int) -> UserTurn:
        if asks_leave_to_look(message):
            return UserTurn(CHECK_ANSWER)  # "May I check X for Tuesday?" asks no yes to a plan
        reading = self._read(message)
        text = message.lower()
        gold: PlanGold = self._task.gold
        named = self._with_own_bookings(message, places_named(reading, self._names))
        # What is set aside, and what a label gives, matter only where a category has more than
        # one place named.
        categories = [p.category for p in named]
        several = len(set(categories)) < len(categories)
        # Places the reading left out (said to be full, over budget) still end what is said of
        # the place before them ("X (25 EUR), since W is full then").
        others = self._task.world.places if several else ()
        if several:
            mentions = aside_mentions(message, named, others)  # read once: what is set aside, and what labels give
            aside = aside_ids(mentions)
            labelled = {**labelled_places(message, named, gold, others, mentions=mentions), **column_plan(message, named, gold)}
        else:
            aside, labelled = set(), {}
        plan, missing = plan_heard(named, gold, aside, labelled)
        asks_yes = reading.confirm or (reading.question and _APPROVAL.search(text) is not None) or \
            (bool(named) and asks_of_plan(message))
        # "A, C and D stay as they were" said without a question too: a message that names no place
        # and asks nothing keeps nothing new (the plan heard stays as it is).
        kept = self._kept(message, plan) if missing and (asks_yes or named) else 0
        if missing and asks_yes and not kept:
            kept = self._of_agreed(plan)
        if kept:
            missing = [label for label, p in zip(LABELS, plan) if p is None]
        if asks_yes or not missing:  # a whole plan put without a question is heard too ("... Good to go with the above?")
            self._heard = [p.id if p is not None else was for p, was in zip(plan, self._heard)]
        if not named and not kept and asks_yes and not _GO_AHEAD.search(_BEFORE_ACTING.sub("", text)):
            # A question that names no place and asks to act on nothing checks the form ("... a
            # desk on Monday morning. Is that right?", "Just to confirm: booking A is ...?": the
            # user restates it) or how to work ("shall I just work from the form as written?":
            # the form is all there is).
            if _about_form(text) and (not reading.confirm or any(r.search(text) for r in _FORM_ITEMS)):
                return UserTurn(answer(message, self._form, self._rules, self._distinct))
            if reading.confirm:
                return UserTurn(FORM_ANSWER)
        if not asks_yes:
            return UserTurn(answer(message, self._form, self._rules, self._distinct))
        if missing:
            return UserTurn(_open_bookings(missing, named, gold))
        state = self.state
        if state.mind is not None and not state.changed:
            # Hearing a plan, any plan, the user revises its form: never a yes first.
            state.changed = True
            mind = state.mind
            self._task.gold = mind.gold.replacing(self._task.gold, self._task.world)
            self._form = form_lines(self._task.world.domain, mind.gold)
            return UserTurn(revised_line(self._form[mind.leg], LABELS[mind.leg]))
        agreed = tuple(p.id for p in plan if p is not None)
        state.agreed = agreed
        state.yeses.append((turn, agreed))
        if kept or len({p.id for p in named}) > len(agreed):
            heard = ", ".join(f"{label} {p.name}" for label, p in zip(LABELS, plan) if p is not None)
            return UserTurn(SUBMIT_HEARD.format(plan=heard))
        return UserTurn(SUBMIT_ANSWER)

    def _kept(self, message: str, plan: list[Place | None]) -> int:
        """Fills in `plan`'s open bookings that `message` says stay as they were ("A, B and D
        stay the same") with the places of the last plan heard (`_heard`), where that place is
        still of the booking's category; how many it filled."""
        kept = kept_bookings(message)
        filled = 0
        for i, (place, was) in enumerate(zip(plan, self._heard)):
            if place is None and i in kept and was is not None:
                before = self._task.world.by_id[was]
                if before.category == self._task.gold.legs[i].needs[0][1]:  # a changed mind may change it
                    plan[i] = before
                    filled += 1
        return filled

    def _of_agreed(self, plan: list[Place | None]) -> int:
        """Fills in `plan`'s open bookings with the plan the user last said yes to, where every
        place `plan` names is that plan's for its booking ("Next: may I book Olive Jar as booking
        B?" after a yes to the whole plan: a person does not ask to hear it all again); how many
        it filled (none where no plan is agreed, or a place named differs from it)."""
        agreed = self.state.agreed
        if agreed is None or len(agreed) != len(plan) or not any(plan):
            return 0
        if any(p is not None and p.id != was for p, was in zip(plan, agreed)):
            return 0
        by_id = self._task.world.by_id
        open_ = [i for i, p in enumerate(plan) if p is None]
        for i in open_:
            plan[i] = by_id[agreed[i]]
        return len(open_)

    def _with_own_bookings(self, message: str, named: list[Place]) -> list[Place]:
        """`named` with the places the assistant holds a booking of that the message names: the
        reading sets a place said to be booked aside as no longer free ("A and B are already
        booked"), but a place the assistant booked itself is one of its plan ("Booking A: X -
        already booked.")."""
        world = self._task.world
        ids = {p.id for p in named}
        text = message.lower()
        # Cheap first: a held place the reading left out whose name or id the text holds at all
        # (most messages have none); only then is every mention placed, longest names first.
        unheard = [world.by_id[b.item_id] for b in world.active_bookings() if b.item_id not in ids]
        if not any(p.name.lower() in text or p.id in text for p in unheard):
            return named
        held = {p.id for p in unheard}
        own = {p.id: p for p, _, _ in place_mentions(text, world.places) if p.id in held}
        return [*named, *own.values()]

    def on_commit(self, turn: int) -> UserTurn | None:
        # A submission the moved world refused (`submit_plan` said what changed) goes on.
        return UserTurn("") if self.state.consented is None else None

    def perturb_text(self, text: str, rng: np.random.Generator) -> tuple[str, list[str]]:
        # Every reply restates the brief's own lines or a stock answer: typos never touch it.
        return text, []
