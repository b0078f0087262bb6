"""Places a message names only to set them aside: one reading for every Dialog user.

An assistant often names places it does not propose: what it ruled out and why ("X was not free
on Friday", "Y would push the total over the budget"), what a new choice replaces ("instead of
X"), or a section of alternatives ("**Ruled out:** A, B and C"). A person hears those as
explanations, not as choices; `set_aside` finds them, so a user judging a proposal (`user`) or
hearing a plan (`itinerary_user`) takes the places that are left.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Sequence

from agentgym.envs.dialog.options import place_mentions
from agentgym.envs.dialog.tasks import Place

__all__ = ["asked_about", "aside_ids", "aside_mentions", "examples", "led_in", "set_aside"]


#: Where the words said of a place end, after it: a sentence end (not a decimal point), a
#: semicolon or a line break; the next place named ends them too. A bracket does not: "the
#: higher-rated one (X, 6 EUR) would push the total over" says its verdict after it.
_SAID_END = re.compile(r"(?<!\d)[.](?!\d)|[!?;\n]")
#: Words after a place that set it aside ("X was not free", "Y no longer fits", "Z was dropped",
#: "W is taken", "V got snapped up", "U is gone", "cancelled" or "released", "T lacks wifi" or "has
#: no wifi", "S would leave only 15 EUR for the rest", "R is over budget", "Q has neither", "P breaks
#: your budget", "N ties but is in the area B uses", "M and L fall short of your rating", "K would sink
#: the budget or clash on area with the office", "J is out of your price range", "I, with wifi but
#: rated only 3.5", "H, but without fast wifi", "G would score only 14.6"), and any
#: word of a place with no room left ("Q was full", "P had no availability", "O is booked up").
#: Words a chosen place's own description may well carry ("no parking needed", "without a view")
#: are not among them.
_SET_ASIDE = re.compile(r"\b(not|\w*n[’']t|cannot|no longer|lacks?|lacking|(?:has|have|had) no|neither|none of|breaks|violates|"
                        r"dropp(ed|ing)|dropped|taken|"
                        r"unavailable|fully booked|closed|ruled out|rejected|excluded|over (the |your |our )?budget|"
                        r"snapped up|grabbed|gone|cancel+ed|releas(ed|ing)|freed( up)?|let (it )?go|"
                        r"(full|booked (out|up)|sold out)|no (availability|vacanc\w+|openings?|space|room|free \w+)|"
                        r"over \d+|push\w* (the |our |your )?(total|budget|spend) (over|past|above|beyond)|"
                        r"(go|goes|going|went) over|(over|above|beyond|past) (the |your |our )?(budget|limit|cap)|"
                        r"(same|shared?|shares?|sharing) (an |the )?area|"
                        r"(bust|blow|break|exceed|overshoot|overrun|sink|wreck|ruin|strain)\w* (the |your |our )?(\d+ )?"
                        r"(budget|limit|cap|total)|"
                        # a clash with what the plan holds ("X would clash on area with A", "Y conflicts with B")
                        r"(would|'d|’d|will|might|could)( also| only| just)? (clash|conflict|collide)|"
                        r"(clashes|clashed|conflicts|conflicted|collides|collided) (with|on|in)|"
                        r"out of (the |your |our )?(budget|price range|range|reach|running|question)|off the table|"
                        r"no-go|unsuitable|eliminated|disqualified|ineligible|knock\w* out|"
                        # a choice not made ("X would have been my first choice, but ...")
                        r"would(?:'ve| have) been (?:my|our|the) (?:first|top|best|preferred|obvious) (?:choice|pick|option)|"
                        r"(take|push|bring|put)\w* (the |your |our )?(total|budget|spend) (to|over|past|above|beyond)|"
                        r"leav\w* (only|just|too little|not enough|no room)|"
                        # no plan to be had with it ("X costs 1,900 and with it no plan fits the budget")
                        r"with (it|that one|this one) (no|nothing|none)|no (plan|combination|itinerary) (fits|works)|"
                        r"too (expensive|pricey|far|costly|much|low)|exceeds?|"
                        # an alternative that loses on the objective ("W would score only 14.6")
                        r"scor\w* (only|just|merely|lower|less|worse)|"
                        # a shortcoming after "but" ("..., but without fast wifi", "but rated only 3.5")
                        r"but (without|lacking|missing|minus|short on|rated (only|just|merely)|only rated|"
                        # "X is cheaper but no projector": a need it lacks, not a comparison ("but no worse")
                        r"(has |with )?no (?!(worse|less|more|better|different|problem|doubt)\b)[a-z]+)|"
                        # short of a floor ("fall short of your rating", "is below your minimum")
                        r"fall\w* short|(falls?|fell|falling|dips?|drops?) below|"
                        r"(under|below) (the|your|our) (\d+(\.\d+)? )?(minimum|min|floor|threshold|bar|cut-?off)|"
                        r"(miss|fail)\w* (the |your |our )?(\d+(\.\d+)? )?(mark|bar|cut|minimum|floor|threshold|rating|budget|"
                        r"requirements?)|fail\w* to (meet|match|reach)|"
                        # a tie the message breaks ("W ties but is in the area B uses")
                        r"(ties?|tied|tying)( with [\w ]+?)?,? but|(which|that) (booking )?[a-e] (already )?uses|"
                        # an area another booking holds, its place named next ("Y is also 3.8 but in
                        # University Quarter, which Compass Hub 8 already uses": what is said of Y
                        # ends before the clause that names the other place)
                        r"but (it's |it is |is |sits )?in (the )?[a-z][a-z ]{2,30}(, (which|where|an area|the area)|$))\b")
#: Words right before a place that set it aside ("instead of X", "rather than Y", "better than
#: Z", "chose A over the better-rated X", "beats X", "replaced X with Y", "swapped out X",
#: "someone else grabbed X", "sorry for having suggested X", "B forces C off X", "cancel B4 (X",
#: "give up X", "move it away from X", "cancel the booking at X").
_SET_ASIDE_BEFORE = re.compile(r"\b(instead of|in place of|rather than|than|not|unlike|but not|over( the| a)?( [\w-]+)?|"
                               r"(beats?|beating|outranks?|outscores?|tops|trumps|edges out|ahead of)( the)?|"
                               r"(replac|swapp?|drop+|cancel+|skipp?)\w*( out)?( the)?( booking (at|of))?|give up( on)?( the)?|"
                               r"(switch|mov|chang)\w* (it |the booking )?(away )?from( the)?|"
                               # a booking cancelled by its id, its place in brackets ("cancel B4 (X, ...)")
                               r"cancel+\w*( the)?( booking)? b\d+ ?\(|"
                               r"no (room|space|budget|money)( left)? for( the)?|(rul|leav|left)\w* out( the)?|"
                               r"except( for)?( the)?|excluding( the)?|without( the)?|"
                               # a booking moved off a place ("Riverside B forces C off Ember Fork")
                               r"off( of)?( the)?|"
                               r"(someone|somebody|another \w+)( else)? (grabbed|took|snapped up|booked)( up)?( the)?|"
                               # a mention taken back ("I apologise for having mentioned X", "sorry for suggesting Y")
                               r"(apologi[sz]\w*|sorry|apologies|regret\w*) (for|about) (having |my )?(mention|suggest|propos|"
                               r"offer|recommend|nam)\w*( of)?( the)?)\s*$")
#: The most spaces a match of `_SET_ASIDE_BEFORE` holds before its closing whitespace (it holds
#: no other whitespace there): "another guest else snapped up up the".
_LEAD_SPACES = 6


def led_in(before: str) -> bool:
    """Whether `before` ends in words that set aside the place named right after it ("instead
    of", "cancel B4 (", "replaced"): ``_SET_ASIDE_BEFORE.search(before) is not None``, searched
    among the last words only: a
    match ends where `before` ends but for whitespace, and holds at most `_LEAD_SPACES` spaces
    and no other whitespace, so none starts at or before the space `_LEAD_SPACES` + 1 back."""
    start = len(before.rstrip())
    for _ in range(_LEAD_SPACES + 1):
        start = before.rfind(" ", 0, start)
        if start < 0:
            return _SET_ASIDE_BEFORE.search(before) is not None
    return _SET_ASIDE_BEFORE.search(before, start) is not None


#: What may stand between a place's name and its id in one naming of it ("X (stay_007)").
_SAME_NAMING = re.compile(r"[\s(\[*`]*")
#: Words that add to what was said of a place ("X lacks a projector; X is also 2000 EUR").
_ADDS_TO_IT = re.compile(r"\b(also|too|as well|either|on top)\b")
#: Where the words said after a place stop short of the next place: the last clause opener
#: before it ("X (3.0) | total 183 (pricier ones left no room for Y)": "no room" is said of Y).
_CLAUSE_OPENER = re.compile(r"[(,;]|\b(and|but|so|while|whereas|because|since)\b")


#: Between two places of one list ("X, Y and Z", "(X 4.6, Y 4.2, Z 4.1)", "X (Riverside) and Y
#: (Old Town)"): nothing but separators, ratings and prices, or one short bracket after the first
#: place and a comma, "and", "or", "&" or "/", so what is said after the list is said of each of
#: them ("X (Riverside); Y is ..." ends a clause).
_LISTED = re.compile(r"^(?:[\s,;/()&+*_-]|\d+(?:\.\d+)?|eur|usd|€|\$|and|or|nor|also)*$"
                     r"|^\s*\([^()\n]{1,40}\)\s*(?:,\s*(?:and\s+|or\s+)?|(?:and|or|&|/)\s+)$")
#: A heading over the places set aside ("## Alternatives ruled out", "**Considered, not
#: chosen:**", "Ruled out: ...") or offered only in case ("Plan B: ... I can switch booking A
#: back to X", "Fallback:"): each place of its section is one the plan does not take.
_ASIDE_HEADING = re.compile(r"\b(ruled out|rejected|alternatives?|considered|not chosen|other options?|runners?[- ]up|"
                            r"passed over|discarded|excluded|did ?n[o’']t make|plan b|back-?ups?|fall-?backs?|"
                            # "Cancelled the earlier picks that no longer fit: X (B1), Y (B4)"
                            r"cancel+ed|released|no longer fits?)\b")
#: Where a section starts: a markdown heading, a line of bold alone, or a label ending in a
#: colon at the start of a line or sentence; it runs to the next section.
_SECTION = re.compile(r"(?:^|\n|(?<=[.!?])\s+|\s(?=#))\s*(?:#+\s*[^#\n*]{0,60}|\*\*[^*\n]{1,60}\*\*|[^.!?:\n]{1,60}:)")


def _sections(text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """Where `text`'s sections start, and the spans of those under a heading that sets their
    places aside (`_ASIDE_HEADING`)."""
    if "#" not in text and ":" not in text and "**" not in text:
        return [], []  # every heading `_SECTION` knows holds one of these
    starts = [(m.start(), m.group()) for m in _SECTION.finditer(text)]
    spans = []
    for k, (start, heading) in enumerate(starts):
        if _ASIDE_HEADING.search(heading):
            spans.append((start, starts[k + 1][0] if k + 1 < len(starts) else len(text)))
    return [start for start, _ in starts], spans


#: What a clause says before a bracketed list of places that sets each of them aside ("the
#: better-rated ones are either booked then (X, Y)", "two are over budget (X, Y)").
_BEFORE_BRACKET = re.compile(_SET_ASIDE.pattern + r"|\b(are|were|is|was) either booked\b")
#: Where the clause before a bracket starts: a sentence end, a colon or a line break.
_CLAUSE_START = re.compile(r"(?<!\d)[.](?!\d)|[!?;:\n]")


def _bracketed_after_verdict(text: str, start: int) -> bool:
    """Whether the place at `start` sits in a bracket after a clause that sets what it lists aside."""
    opening = text.rfind("(", 0, start)
    if opening < 0 or text.find(")", opening, start) >= 0:
        return False
    return bool(_BEFORE_BRACKET.search(text, _clause_start(text, opening), opening))


def _clause_start(text: str, end: int) -> int:
    """Where the last match of `_CLAUSE_START` in ``text[:end]`` ends, or 0:
    ``max((m.end() for m in _CLAUSE_START.finditer(text, 0, end)), default=0)``, found from the end
    (every match is one character: the last "!", "?", ";", ":" or line break, or a full stop with
    no digit beside it within ``text[:end]``)."""
    last = max(text.rfind(mark, 0, end) for mark in "!?;:\n")
    stop = text.rfind(".", 0, end)
    while stop > last:
        if not (stop > 0 and text[stop - 1].isdecimal()) and not (stop + 1 < end and text[stop + 1].isdecimal()):
            return stop + 1
        stop = text.rfind(".", 0, stop)
    return last + 1


def aside_mentions(message: str, places: list[Place], among: Sequence[Place] = ()) -> list[tuple[Place, int, int, bool]]:
    """Each mention of the `places` in the lower-cased `message` (`place_mentions`: the place,
    its start and end) and whether it names the place only to set it aside: a place followed,
    before the next place or the sentence's end, by words that rule it out ("X was not free on Friday",
    "Y (6 EUR) would push the total over the budget"), each place of a list those words follow
    ("X, Y and Z share an area with A"), a place led in by "instead of", "rather than" and the
    like (each of a list so led in: "I've cancelled X and Y"), a place in a section headed as
    set aside ("Alternatives ruled out: ..."), and a mention that adds to what was said of a
    place ruled out before ("X lacks a projector; X is also 2000 EUR"). The places of `among`
    (others the message may name) are read as `places` are, so that what is said of one of them
    is not taken as said of the place before it ("X (25 EUR), since W is full then": W is full,
    not X); only the mentions of `places` are returned."""
    text = message.lower()
    mine = {place.id for place in places} if among else None
    mentions = place_mentions(text, [*places, *(p for p in among if p.id not in mine)] if mine is not None else places)
    heads, sections = _sections(text)
    failed = _failed_lead_spans(text) if mentions else []
    afters: list[str] = []  # per mention: the words said of it
    verdicts: list[bool] = []  # per mention: the words after it set it aside
    leads: list[bool] = []  # per mention: the words before it (or before its list) set it aside
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
        afters.append(after)
        verdicts.append(bool(_SET_ASIDE.search(after)))
        led = led_in(before)
        # A list the words before it lead in shares them: "cancelled X and Y", "instead of X or Y".
        if not led and k and leads[k - 1] and _LISTED.match(before):
            led = True
        leads.append(led)
        aside.append(verdicts[-1] or led or _bracketed_after_verdict(text, start)
                     or any(a <= start < b for a, b in (*sections, *failed)) or _ruled_out_next(text, brk, stop))
    # A list shares the verdict said after its last place: back from each place set aside by
    # the words after it, every place before it with only list separators between them.
    # A place in a bracket right after another is said of that one, not listed with it ("X (Y
    # rates higher but busts the budget)").
    for k in range(len(mentions) - 1, 0, -1):
        between = text[mentions[k - 1][2]:mentions[k][1]]
        if verdicts[k] and _LISTED.match(between) and not between.rstrip().endswith("("):
            verdicts[k - 1] = aside[k - 1] = True
    # A place named twice in a row, its name and then its id in a bracket ("Juniper Yard
    # (stay_007), 60 EUR: out - no free parking"), is one mention: what is said after the id is
    # said of the name too (a playtest, seed 8740, turn 11).
    for k in range(len(mentions) - 2, -1, -1):
        if aside[k + 1] and mentions[k][0] is mentions[k + 1][0] and \
                _SAME_NAMING.fullmatch(text, mentions[k][2], mentions[k + 1][1]):
            aside[k] = True
    # A mention that adds to what was said of a place ruled out before says more of the same
    # ("... all lack a projector; Iron Pavilion 3 is also 2000 EUR": a playtest, seed 6913, turn 13).
    ruled_out: set[str] = set()
    for k, (place, _, _) in enumerate(mentions):
        if not aside[k] and place.id in ruled_out and _ADDS_TO_IT.search(afters[k]):
            aside[k] = True
        if aside[k]:
            ruled_out.add(place.id)
    return [(place, start, end, gone) for (place, start, end), gone in zip(mentions, aside)
            if mine is None or place.id in mine]


#: A clause that says the places after its colon did not work out ("the better-rated ones didn't
#: work: X and Y bust the budget, Z is full, and W shares an area with C"), whatever it then says
#: of each. Narrow on purpose: "Not sure which you prefer: X or Y?" offers both.
_FAILED_LEAD = re.compile(r"\b(?:did ?n[o’']t|do ?n[o’']t|does ?n[o’']t|wo ?n[o’']t|could ?n[o’']t|can ?n[o’']t|can ?not)"
                          r" (?:work|fit|make (?:it|the cut)|qualify)(?: out)?\b[^.!?:\n]{0,40}:")


def _failed_lead_spans(text: str) -> list[tuple[int, int]]:
    """The spans of `text` after a clause that ends in a colon and says the places after it did
    not work out (`_FAILED_LEAD`), each to the sentence's end or its next colon; found once a
    message, as `_sections` are."""
    spans = []
    for m in _FAILED_LEAD.finditer(text):
        brk = _SENTENCE_END.search(text, m.end())
        after = text.find(":", m.end())
        spans.append((m.end(), min(brk.start() if brk else len(text), after if after >= 0 else len(text))))
    return spans


#: A sentence that opens by speaking of the place the one before it named ("- It is not available
#: Sunday evening", "That one is over budget").
_IT_OPENS = re.compile(r"[\s*>\u2022-]*(?:it|this one|that one|this place|that place|the latter)\b")
#: What such a sentence says to rule the place out: that it is not free then, or over budget.
#: Narrower than `_SET_ASIDE`: "It isn't the cheapest, but it has everything" keeps the place.
_IT_RULED_OUT = re.compile(r"\b((is|was|'s|’s)( not|n[’']t) (available|free|open)|unavailable|(is|was|'s|’s) (full|taken|"
                           r"closed|booked( up| out)?|gone)|fully booked|no (availability|openings?)|"
                           r"(is|was|'s|’s) (over|above) (the |your |our )?(budget|limit)|too (expensive|pricey|far))\b")


def _ruled_out_next(text: str, brk: re.Match[str] | None, stop: int) -> bool:
    """Whether the sentence after the one that names a place (ended by `brk`), before the next
    place named (`stop`), opens with "it" or "that one" and sets it aside ("... : Canvas Base (35
    EUR). It is not available Sunday evening": a playtest, seed 8726, turn 5)."""
    if brk is None:
        return False
    opener = _IT_OPENS.match(text, brk.end(), stop)
    if opener is None:
        return False
    end = _SAID_END.search(text, opener.end(), stop)
    return bool(_IT_RULED_OUT.search(text, opener.end(), end.end() if end else stop))


def set_aside(message: str, places: list[Place], among: Sequence[Place] = ()) -> set[str]:
    """Ids of the `places` a message names only to set them aside (`aside_mentions`, which reads
    the places of `among` too): a place is set aside when every mention of it is ("X was taken
    ... New plan: A X" keeps it)."""
    return aside_ids(aside_mentions(message, places, among))


def aside_ids(mentions: Sequence[tuple[Place, int, int, bool]]) -> set[str]:
    """`set_aside` of the mentions `aside_mentions` found: the ids of the places every mention
    of which sets them aside."""
    kept = {place.id for place, _, _, gone in mentions if not gone}
    return {place.id for place, _, _, _ in mentions} - kept


#: Words that bring in places as examples of what there is ("e.g. X", "for example X or Y",
#: "such as X", "including X and Y", "places like X"). "like" as a verb is another word (`_LIKE_VERB`).
_EXAMPLE = re.compile(r"(?<![\w.])(?:e\.?g\b\.?|for (?:example|instance)\b|such as\b|including\b|like\b)")
#: The words before "like" that make it a verb ("would you like X", "I'd like X", "looks like X is free").
_LIKE_VERB = re.compile(r"(?:\b(?:would|you|i|we|they|do|does|did|don't|doesn't|didn't|looks?|seems?|sounds?|feels?|"
                        r"just|really|might|may|to)|['’]d)\s+$")
#: Where the words that bring in an example stop, looking back from a place: a sentence end (not
#: a decimal point, nor an abbreviation's stop as in "e.g."), a semicolon, a line break or a
#: closing bracket ("(e.g. X, Y) Which area?": what follows the bracket is no example).
_EXAMPLE_BREAK = re.compile(r"(?<!\d)(?<!\b[a-z])[.](?!\d)|[!?;\n)]")


def examples(message: str, places: list[Place]) -> set[str]:
    """Ids of the `places` a message names only as examples of what there is: each mention of it
    has an example's word between it and the last break before it ("24 cafes fit, e.g. X in
    Harbor, Y in Northgate. Which area?", "such as X", "places like X and Y"). A person hears
    those as a picture of the choice, not as a proposal nor a list to pick from."""
    text = message.lower()
    if not any(w in text for w in ("e.g", "eg", "for example", "for instance", "such as", "including", "like")):
        return set()
    every: dict[str, bool] = {}
    mentions = place_mentions(text, places)
    ends = [m.end() for m in _EXAMPLE_BREAK.finditer(text)] if mentions else []
    for place, start, _end in mentions:
        before = bisect_right(ends, start)  # the breaks that end before the place
        lead = text[ends[before - 1] if before else 0:start]
        example = any(m.group() != "like" or not _LIKE_VERB.search(lead, 0, m.start())
                      for m in _EXAMPLE.finditer(lead))
        every[place.id] = every.get(place.id, True) and example
    return {pid for pid, example in every.items() if example}


#: Where a sentence ends: a sentence end that is no decimal point, a "?" or "!", or a line break.
_SENTENCE_END = re.compile(r"(?<!\d)[.](?!\d)|[!?\n]")
#: A closing question that asks to book a place it calls "it" ("Should I go ahead and reserve it?").
_BOOK_IT = re.compile(r"\b(book|reserve|take|grab|lock|hold|go ahead with|go with)\b[^?]*\b(it|that one|this one|that|this)\b")


#: A booking verb right before a place's name ("book X", "reserve the X", "go with X").
_BOOK_BEFORE = re.compile(r"\b(?:book|reserve|go ahead with|go with|lock in|take)\s+(?:the\s+)?$")
#: An errand other than a booking right before a place's name ("check Y for another time", "look
#: at Y", "keep an eye on Y").
_ERRAND_BEFORE = re.compile(r"\b(?:check|recheck|look at|look into|keep an eye on|watch|try|ask about|wait for|"
                            r"search for|see (?:if|whether))\s+(?:on\s+)?(?:the\s+)?$")


#: A sentence that asks for the user's word without a question mark ("Please let me know
#: whether I should book it.", "Kindly confirm that I may reserve X.").
_ASKS_UNMARKED = re.compile(r"\b(let me know|tell me|please confirm|kindly confirm|(?:i|we) (?:should|would) be grateful|"
                            r"would you like|whether you(?:'d| would)? (?:like|want|wish))\b")


def asked_about(message: str, places: list[Place]) -> Place | None:
    """The place a message's closing question asks to book, among several it names: the one place
    that question names ("... Shall I book X?"), or, where it asks to book "it", the one place
    the sentence before it names ("Only X gets daylight. Should I reserve it?"); questions after
    it that name no place second it ("Book X? OK?", "Shall I book it? Any changes before I
    proceed?"); None otherwise. A person hears what the other places were (a table of the
    options, the ones ruled out) from the question that ends the message."""
    text = message.lower()
    end = text.rfind("?")
    if end < 0:
        # A closing request put without a question mark ("I should be grateful if you would let
        # me know whether you would like me to book it."): its sentence is the question.
        end = len(text.rstrip()) - 1  # the closing sentence's last mark stands for its "?"
        begin = max((m.end() for m in _SENTENCE_END.finditer(text, 0, end)), default=0)
        if end < 0 or not _ASKS_UNMARKED.search(text, begin, end + 1):
            return None
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text, 0, end)]
    spans = list(zip(starts, [*starts[1:], end + 1]))  # each sentence with its end mark
    mentions = place_mentions(text, places)

    def named(lo: int, hi: int) -> dict[str, Place]:
        return {p.id: p for p, start, _ in mentions if lo <= start < hi}

    def before(i: int) -> int:
        """The sentence before sentence `i`, past the blank ones a paragraph break leaves."""
        i -= 1
        while i > 0 and not text[spans[i][0]:spans[i][1]].strip(" \n*_#>-"):
            i -= 1
        return i

    k = len(spans) - 1
    while k > 0 and not named(*spans[k]) and not _BOOK_IT.search(text, *spans[k]):
        j = before(k)
        if "?" not in text[spans[j][0]:spans[j][1]]:
            break
        k = j
    question = named(*spans[k])
    if len(question) == 1:
        return next(iter(question.values()))
    if len(question) > 1:
        # "Shall I book X, or would you like me to check Y for another time?": the one place the
        # question asks to book, where each other it names is for an errand ("book X or Y?" is a
        # choice between them).
        asked = [(p, _BOOK_BEFORE.search(text, spans[k][0], start) is not None,
                  _ERRAND_BEFORE.search(text, spans[k][0], start) is not None)
                 for p, start, _ in mentions if spans[k][0] <= start < spans[k][1]]
        booked = {p.id: p for p, book, _ in asked if book}
        if len(booked) == 1 and all(book or errand for _, book, errand in asked):
            return next(iter(booked.values()))
        return None
    if k == 0 or not _BOOK_IT.search(text, *spans[k]):
        return None
    said = named(*spans[before(k)])
    return next(iter(said.values())) if len(said) == 1 else None


#: A label where a list item starts ("A)", "(b)", "Option 2:", "1.", "- B:"): the letter or number,
#: then its mark; after the word "option" a dash marks it too ("**Option A** \u2014 X"), which after
#: a bare letter would be a word's ("a - "). The letter is group 1 or group 2.
_LABEL = (r"(?:^|[\s(\[*>-])(?:option\s+\(?([A-Za-z]|\d{1,2})\)?[*_]*\s*[).:\]\u2013\u2014-]"
          r"|(?:option\s+)?\(?([A-Za-z]|\d{1,2})\s*[).:\]])")
#: A label set before a place it names: "A) X", "(b) X", "Option 2: X", "1. X", "- B: X".
_LABEL_BEFORE = re.compile(rf"{_LABEL}\s*[*_]*$", re.IGNORECASE)
#: What may follow a label that is recommended: a mark, the line's end, or a clause on it
#: ("B, which costs half", "B since ..."), so "Recommendation: A cheaper place" names no label.
_AFTER = r"(?=\s*(?:[,.;:!?)\]\n*_]|[-\u2013\u2014]|$)|\s+(?:which|because|since|as|for|is|would|at|in)\b)"
_CUE = r"(?:recommend(?:ation|ed)?|suggest(?:ion|ed)?|i'd go with|i would go with|my pick|top pick|my choice|prefer(?:ence|red)?)"
#: A label recommended: "Recommendation: B", "I recommend option 2", "I'd go with B", "B is my pick";
#: on the cue's own line ("1. X - my pick\n2. Y" recommends X, not label 2).
_LABEL_AFTER_CUE = re.compile(rf"\b{_CUE}\b[ \t:*_-]*(?:is[ \t]+)?(?:option[ \t]+)?\(?([A-Za-z]|\d{{1,2}})\)?{_AFTER}",
                              re.IGNORECASE)
_LABEL_BEFORE_CUE = re.compile(r"(?<![\w'])(?:option\s+)?\(?([A-Za-z]|\d{1,2})\)?\s+(?:is|would be)\s+(?:my|the)\s+"
                               r"(?:recommendation|pick|top pick|choice|suggestion|preference)\b", re.IGNORECASE)


#: Words before a cue that make it the user's to give, not the assistant's pick: "would you
#: prefer option A?", "your preference", "any preference: A or B?" (a recommended letter is in
#: capitals, so only the cue's owner tells these apart).
_ASKED_OF_USER = re.compile(r"\b(?:you(?:'d| would| might| have a)?|your|any)\s+$", re.IGNORECASE)
#: Words one of the cues holds, looked for before any pattern is run.
_CUE_WORDS = ("recommend", "suggest", "go with", "pick", "choice", "prefer")
#: A label as it stands before what it labels ("A) ", "2. ", "Option B: "): a mark then a space, so a
#: rating ("rated 4.5") is none.
_LABEL_ANY = re.compile(rf"{_LABEL}(?=[\s*_]|$)", re.IGNORECASE)


def recommended_by_label(message: str, places: list[Place]) -> Place | None:
    """The place a message recommends by the label it gave it ("A) X ... B) Y ... Recommendation:
    B"): a label is a letter or a number written right before a place the message names, and a
    recommended letter counts in capitals only (a lone "a" is a word). None unless labels name
    two places or more and exactly one labelled place is recommended."""
    # Most messages that name several places give them no labels or recommend none by one: two
    # scans of the message settle those before any place is looked for.
    low = message.lower()
    if not any(word in low for word in _CUE_WORDS) or not _LABEL_ANY.search(message):
        return None
    labels: dict[str, Place] = {}
    for place, start, _ in place_mentions(low, places):
        m = _LABEL_BEFORE.search(message, max(0, start - 16), start)
        if m is not None:  # "a)" before a name is a label in either case
            labels.setdefault((m.group(1) or m.group(2)).upper(), place)
    if len({p.id for p in labels.values()}) < 2:
        return None
    picked = {labels[m.group(1)].id for pattern in (_LABEL_AFTER_CUE, _LABEL_BEFORE_CUE)
              for m in pattern.finditer(message)
              if m.group(1) in labels and not _ASKED_OF_USER.search(message, max(0, m.start() - 16), m.start())}
    return next((p for p in labels.values() if p.id in picked), None) if len(picked) == 1 else None
