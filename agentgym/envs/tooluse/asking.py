"""What a message asks of the tool-use customer beyond the engine's reading: a yes to a plan in
any words, an answer in the imperative, and whether it says what the assistant will do or what
it has done.

The shared engine (`agentgym.users.understanding`) reads the confirmation questions of its
grammar ("shall I go ahead?"); assistants ask for a yes in many more words ("OK to submit?",
"please reply 'yes' to confirm", "just say the word"), and the tool-use user reads those here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from agentgym.envs.tooluse.done_said import COMPLETE as _COMPLETE
from agentgym.envs.tooluse.done_said import says_done
from agentgym.envs.tooluse.prefilter import Folded
from agentgym.envs.tooluse.prefilter import may_hold as _may_hold
from agentgym.envs.tooluse.replies import AS_SAID
from agentgym.envs.tooluse.text_memo import MEMO_MAX_CHARS, MEMO_SIZE, per_text
from agentgym.users.understanding import Reading
from agentgym.users.understanding.words import SENTENCE_BREAK, without_abbreviation_stops

__all__ = ["ADDS", "ASKS_LEAVE", "ASKS_YES", "CHECKS_WORK", "OFFERS_CHOICE", "OR_QUESTION", "QUESTION_WORD", "REFERS_BACK", "VALUE_REQUEST", "asking_sentences", "asks_answer", "asks_leave", "offers_choice", "refers_back",
           "asks_facts_only", "plan_said", "with_word_on_others", "asks_go_ahead", "terse_question", "values_asked_open", "yes_no_values", "either_or", "without_offer", "asks_yes", "asks_yes_in", "claims", "offers_more", "plan_only", "proposes", "proposes_uncached",
           "questions", "says_done", "asking_part", "spoken"]

#: A plan that offers a choice between plans ("(a) file it and roll back, or (b) only file it?",
#: "option 1 ... option 2", "or just the incident?", "or 'incident only' to ...", "which do you
#: prefer?", "your options: ... or yes to the incident only ... which would you like?"; a numbered
#: list is no choice): the customer's yes then says which, in its own words
#: (what it asked for), so the agent knows what it agreed to.
_CHOICE_IN_WORDS = (r"\bor,?\s+(?:\((?:b|2|ii)\)|(?:b|2)\)|option\b|(?:just|only|simply|instead|rather)\b|"
                    # a second answer offered in quotes: "reply 'yes' for both, or 'incident only' for row 1"
                    r"(?:reply\s+|say\s+|type\s+|answer\s+)?['\"\u2018\u201c]\w)|"
                    r"\boption (?:2|b|two)\b|\b(?:which|what) (?:one|option)\b|\bwould you rather\b|\bwhich of the two\b|"
                    r"\b(?:which|what) (?:would|do) you prefer\b|\bprefer\b[^.?!]*\bor\b|\beither\b[^.?!]*\bor\b|"
                    # "- Yes to both: ... - Or yes to the incident only: ... Which would you like?"
                    r"\bor,?\s+(?:a\s+)?yes\b|\bwhich (?:one )?(?:would|do|will) you (?:like|want|choose|pick)\b|"
                    r"\byour (?:two |three )?options\b|"
                    # 'Please tell me which: "yes to A and B", "yes to A only", or neither.'
                    r"\b(?:tell me|let me know|say|confirm) which\b|\bif you(?:'d| would)? prefer\b")
#: Options by capital letter, in that case only: "Shall I go ahead with A, B or C?".
_CAPITAL_OPTIONS = r"[A-D](?:,\s*[A-D])*,?\s+or\s+[A-D]\b"
# The capitals' "\b" stands outside their group, as every other branch opens with one: the parser
# then takes it out of the branches, and a place that is no word's edge is passed over at once.
OFFERS_CHOICE = re.compile(rf"{_CHOICE_IN_WORDS}|\b(?-i:{_CAPITAL_OPTIONS})", re.I)
_FOLDED_CHOICE_IN_WORDS = Folded(re.compile(_CHOICE_IN_WORDS, re.I))
_CAPITAL_CHOICE = re.compile(rf"\b{_CAPITAL_OPTIONS}")


def offers_choice(text: str) -> bool:
    """``OFFERS_CHOICE.search(text) is not None``: its branches in words (`Folded`), or its
    options by capital letter."""
    return _FOLDED_CHOICE_IN_WORDS.search(text) or _CAPITAL_CHOICE.search(text) is not None


#: A question that opens with "or", after any list mark ("Or refunds only and skip the credits?"):
#: it offers another way to the question before it, so it asks which, never for a detail.
OR_QUESTION = re.compile(r"[\s*_>#-]*or\b", re.I)
#: An alternative offered after a request for a yes ("Reply yes to confirm ..., or tell me which
#: items to leave out"): an offer to hear of a change, no question for a detail.
_OR_TELL = re.compile(r",?\s+\bor\b\s+(?:else\s+|just\s+)?(?=(?:tell|let|give|send|share|name|list|say)\b)", re.I)
#: Words of a question asking the user to look at the work ("is everything done?", "does it look
#: right on your side?").
CHECKS_WORK = re.compile(r"\b(?:done|finished|complete|completed|look(?:s)? (?:right|good|ok|okay|fine|correct)|"
                         r"on your (?:side|end)|worked|went through|in order|all set|(?:see|check) (?:it|that|whether|if))\b",
                         re.I)
#: Words of a confirmation that proposes something beyond what was asked.
ADDS = re.compile(r"\b(?:also|too|as well|in addition|additionally|extra|another|separate|include|including|"
                  r"on top of)\b", re.I)
#: Where a clause names what the plan is not ("a refund rather than an exchange for another
#: size", "instead of a second report"): what it names there is no offer of more.
_ALTERNATIVE = re.compile(r"\b(?:rather than|instead of|as opposed to|in place of|not|no|without|free of)\b"
                          r"[^.;:!?,()\n]*", re.I)
#: What "extra" says of a cost or a span of time, never of more work ("at no extra cost", "15
#: extra days" of a return window).
_EXTRA_OF = re.compile(r"\bextra\s+(?:costs?|charges?|fees?|days?|weeks?|time|money)\b", re.I)
#: "Including" after the whole of the plan ("go ahead with all of it including the store credit",
#: "everything, including the approval"): what it names is part of the plan, not more.
_WHOLE_INCLUDING = re.compile(r"\b(?:all|everything|both|the (?:whole |full |entire )?plan)\b[^.;:!?\n]{0,24}?"
                              r"\binclud(?:ing|es|ed)\b", re.I)

#: "Also" that joins a second question put to the user ("Do I have your yes, and also: do you
#: want anything changed in the summary?", "Also, is there a deadline?"): it adds a question,
#: not work. One that asks whether the user wants the assistant to do something ("also, would
#: you like me to ...") still offers it.
_ALSO_ASKS = re.compile(r"\b(?:and\s+)?also\b[,:;]?\s*(?=(?:do|does|did|would|will|could|can|is|are|have|has)\s+"
                        r"(?:you|there)\b(?!\s+(?:like|want|need|wish|prefer)\s+(?:me|us)\b))", re.I)


def offers_more(sentence: str) -> bool:
    """Whether a sentence offers more than the request (`ADDS`: "shall I also ...?"), outside
    a clause that names what the plan is not, beyond an extra cost or span of time, and but for
    an "also" that only joins a second question to the user."""
    plain = _EXTRA_OF.sub(" ", _WHOLE_INCLUDING.sub(" ", _ALTERNATIVE.sub(" ", _ALSO_ASKS.sub(" ", sentence))))
    return ADDS.search(plain) is not None


#: The nouns of a yes (a passive request for one names it: "approval is requested").
_YES_NOUN = (r"(?:yes|go-ahead|go ahead|approval|confirmation|consent|permission|authori[sz]ation|sign-off|"
             r"agreement|ok|okay)")
#: Words that ask for a yes beyond the engine's confirmation questions ("please confirm and I'll
#: process it", "let me know if that's OK", "Kindly confirm.", "Do you authorise this?").
ASKS_YES = re.compile(r"\b(?:(?:please|kindly) confirm|confirm (?:that|this|these|the plan|and|if|whether)|can you confirm|"
                      r"(?:do|will|would|can) you (?:authorise|authorize)|"
                      r"let me know if|(?:is|are) (?:that|this|these|those) (?:ok|okay|alright|all right|fine|acceptable)|"
                      r"(?:ok|okay|alright|fine|good) (?:with|for) you|sounds? good\?|does (?:that|this) (?:work|sound)|"
                      r"(?:do i|have i got|can i (?:get|have)|may i have) your (?:yes|ok|okay|go-ahead|approval|consent|"
                      r"permission)|your (?:yes|go-ahead|approval|consent|permission|sign-off)\b|"
                      r"happy (?:for me )?to (?:proceed|go ahead)|agree\?|(?:do|would|will) you approve|"
                      r"approve (?:of )?(?:this|that|these|it|the plan)|yes or no|"
                      r"(?:are|is) (?:you|that|this|it) (?:ok|okay|alright|all right|fine|happy|good) (?:with|about)|"
                      r"happy with (?:this|that|it|these|the plan)|works? for you|"
                      # an opt-out invites the answer as a question does ("Unless you instruct
                      # otherwise, I will proceed.", "I await your instructions.")
                      r"unless (?:you (?:instruct|tell|direct|advise|ask|say)(?: me)?|i hear|told) otherwise|"
                      r"(?:await|awaiting) your (?:instructions?|decision|reply|response|answer|direction|word)|"
                      r"(?:if|provided) you have no objections?)", re.I)
_FOLDED_ASKS_YES = Folded(ASKS_YES)
#: Words one of which every match of `ASKS_YES` holds (lower case): a text with none of them is
#: one it does not match. Few, so that ruling a text out takes few substring tests: "ok", "fine"
#: and "good" follow a space wherever the pattern asks with them but before "with you" or "for you".
_ASKS_YES_WORDS = ("confirm", "authori", "let me know if", " ok", "alright", "all right", " fine", "acceptable", " good",
                   "with you", "for you", "does th", "your yes", "your ok", "your go-ahead", "your approval", "your consent", "your permission",
                   "your sign-off", "happy", "agree?", "approve", "yes or no", "otherwise", "await", "objection")
#: A yes asked for in the passive ("Approval is requested for these writes.", "It is requested
#: that an explicit yes be given.", "Please indicate whether these may be made."): a formal
#: register's request, as "do I have your approval?" is. A policy's "approval is required" is none.
_ASKS_YES_PASSIVE = re.compile(
    rf"\b{_YES_NOUN}\b[^.?!;\n]{{0,60}}?\b(?:is|are) (?:hereby |kindly |respectfully |politely |now |therefore )?"
    r"(?:requested|sought|awaited|invited|asked for|needed before|required before)\b|"
    rf"\brequested that [^.?!;\n]{{0,40}}?\b{_YES_NOUN}\b[^.?!;\n]{{0,40}}?\bbe (?:given|granted|provided|indicated|"
    r"stated|sent)\b|"
    r"\b(?:indicate|advise|state|signal) (?:whether|if) (?:i|we|these|this|the|both|they|it|all)\b"
    r"[^.?!;\n]{0,60}?\b(?:may|can|should|shall)\b", re.I)
_FOLDED_ASKS_YES_PASSIVE = Folded(_ASKS_YES_PASSIVE)
#: Words one of which every match of `_ASKS_YES_PASSIVE` holds (lower case).
_ASKS_YES_PASSIVE_WORDS = ("requested", "sought", "awaited", "invited", "asked for", "needed before", "required before",
                           "whether", " if ")


#: Words by which a message points back to the plan put before it ("Rest of plan unchanged",
#: "Proceed with the above?", "as listed above", "both writes I described", "as in my last
#: message", "Shall I do both now?"): a yes to it is a yes to that plan too, as this message
#: amends it, and the plan the customer weighs is that plan with this message.
REFERS_BACK = re.compile(r"\b(?:(?:the|my|our) (?:[\w-]+ ){0,2}(?:plan|list|breakdown|proposal|lines?|table|summary) above|"
                         r"(?:as|see) (?:above|before|listed|stated|outlined|planned|described|proposed)|the above|above plan|same as before|"
                         # "both writes I described", "as I listed in my last message", "what I proposed"
                         r"\w+ (?:i|we) (?:just )?(?:described|listed|proposed|"
                         r"outlined|set out|laid out|put to you|suggested|gave you|sent you|offered)|"
                         r"(?:in|from) my (?:last|previous|earlier) message|"
                         r"(?:do|go ahead with|proceed with|make|with) (?:the )?both|both (?:writes|steps|of them|now)\b|"
                         r"unchanged from|(?:rest|remainder|everything else|all else|other (?:items|lines|parts|writes))"
                         r"(?: (?:of|in) (?:the|my|our) plan)?,? (?:is |are |stays? |remains? )?(?:exactly |just )?"
                         r"(?:unchanged|as (?:before|above|listed|stated|planned|it (?:was|stands)|they (?:were|stand))|"
                         r"stands?|the same)|(?:plan|list|table|it) (?:above )?stands)\b", re.I)
_FOLDED_REFERS_BACK = Folded(REFERS_BACK)


def refers_back(message: str) -> bool:
    """``REFERS_BACK.search(message) is not None``."""
    return _FOLDED_REFERS_BACK.search(message)


#: A clause that puts off asking for the yes ("I'll come back with a plan for your yes", "then
#: I'll ask for your approval"): it names the yes of a plan to come, and asks for none now.
_LATER_ASSENT = re.compile(r"\b(?:come|get|circle|report) back\b[^.?!;\n]*|"
                           r"\b(?:i|we)(?:'ll| will| shall)\s+(?:then\s+|later\s+|next\s+)?(?:ask|seek|request)\s+"
                           r"(?:you\s+)?for\b[^.?!;\n]*|"
                           # "I will then check every item and set out a plan for your approval"
                           r"\b(?:i|we)(?:'ll| will| shall|'m going to| am going to| are going to)\s+[^.?!;\n]*?\b"
                           r"(?:set out|lay out|put together|present|prepare|draw up|write up|come up with|propose|"
                           r"put forward|bring you|send you|give you)\s+(?:to you\s+|you\s+)?(?:a|an|the|my|our)\s+"
                           r"(?:\w+\s+)?(?:plan|proposal|options)\b[^.?!;\n]*", re.I)


#: Words one of which every match of `_LATER_ASSENT` holds (lower case): "back", or a form of
#: "will" or "going to" after "I" or "we".
_LATER_ASSENT_WORDS = ("back", "'ll", " will", " shall", "going to")


#: A line of a task list ("[ ] Propose a plan and get your yes", "- [x] Find your account",
#: "✅ Checked the windows") without a question mark: the state of the work, whose steps to come
#: may name the yes they will ask for, and no request for one now.
_TASK_LINE = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\[[ xX\u2713\u2714]?\]|[\u2610\u2611\u2612\u2705\u2b1c\u2714])"
                        r"[^\n?]*$", re.M)
#: The marks one of which every match of `_TASK_LINE` holds (the box's bracket, or a box sign).
_TASK_MARKS = ("[", "\u2610", "\u2611", "\u2612", "\u2705", "\u2b1c", "\u2714")


def _assent_now(text: str) -> str:
    """`text` without the clauses that put off asking for a yes (`_LATER_ASSENT`) and the lines
    of a task list (`_TASK_LINE`)."""
    if "[" in text or not text.isascii() and any(map(text.__contains__, _TASK_MARKS)):
        text = _TASK_LINE.sub(" ", text)
    return _LATER_ASSENT.sub(" ", text) if _may_hold(text, _LATER_ASSENT_WORDS) else text


#: A sentence that offers to leave part of the plan out if the customer does not want it ("If
#: you would rather not take store credit for some of the items, just tell me which ones"): an
#: offer to hear of a change, no question for a detail (a playtest, seed 8743, turn 7).
_IF_NOT_WANTED = re.compile(r"\s*(?:and\s+|but\s+)?if\s+you(?:'d|\s+would)?\s+(?:rather\s+not|prefer\s+not|"
                            r"(?:do\s+not|don't|didn't|did\s+not)\s+want)\b", re.I)


def without_offer(sentence: str) -> str:
    """`sentence` without the alternative that a request for a yes offers after it (`_OR_TELL`):
    the customer content with the plan says yes to it (a playtest, seed 6867, turn 7); nothing
    of a sentence that offers to leave part of the plan out (`_IF_NOT_WANTED`)."""
    if _IF_NOT_WANTED.match(sentence):
        return ""
    m = _OR_TELL.search(sentence)
    return sentence[:m.start()] if m is not None and asks_yes(sentence[:m.start()]) else sentence


def asks_yes_in(message: str, read: Callable[[str], Reading]) -> bool:
    """Whether a message asks for a yes: in words the engine (`read`) reads as a confirmation
    question in a sentence of its own (a plan laid out as a table reads as a list of words), or as
    `asks_yes` says."""
    if asks_yes(message):
        return True
    asked = [s for line in message.splitlines() for s in SENTENCE_BREAK.split(without_abbreviation_stops(line))
             if "?" in s]
    return any(read(s.strip(" |*-#")).confirm for s in asked[-3:])


def asks_yes(text: str) -> bool:
    """Whether `text` asks for a yes in words `ASKS_YES` or `_ASKS_YES_PASSIVE` holds, outside a
    clause that puts the asking off ("I'll come back with a plan for your yes")."""
    yes, passive = _may_hold(text, _ASKS_YES_WORDS), _may_hold(text, _ASKS_YES_PASSIVE_WORDS)
    if not (yes or passive):
        return False
    now = _assent_now(text)
    return yes and _FOLDED_ASKS_YES.search(now) or passive and _FOLDED_ASKS_YES_PASSIVE.search(now)


#: A sentence that asks the customer for an answer in the imperative: its verb ("confirm",
#: "approve", "reply", "say", "tell me", "let me know", "verify", "review") opens it, or follows
#: "please", "just", "and", "then" or "so" ("please review the plan and confirm", "just say the
#: word"); or one asks it to check the work ("Could you verify the plan below:"; "could you say
#: again which days" asks for words, not for a yes).
_CHECK_IT = (r"confirm|approve|verify|review|double-check|look over|check over|"
             r"check (?:the |this |my |our )?(?:plan|proposal|summary|list|steps)")
_ASKS_ANSWER = re.compile(rf"(?:^|\b(?:please|just|and|then|so),?\s+)(?:{_CHECK_IT}|reply|respond|say|tell me|let me know|"
                          rf"give me)\b|\b(?:could|can|would|will) you(?: please)?\s+(?:{_CHECK_IT})\b", re.I)
#: A sentence that speaks of the customer's assent as what the work waits for ("awaiting your
#: confirmation", "once you confirm, I'll make the changes"): it addresses the customer and
#: names an assent.
_YOU = re.compile(r"\b(?:you|your)\b", re.I)
_ASSENT = re.compile(r"\b(?:confirm\w*|approv\w*|agree\w*|ok|okay|go-ahead|yes|consent|permission|thumbs[- ]up|"
                     r"green light|sign[- ]off)\b", re.I)
#: Words one of which every match of `_ASKS_ANSWER`, and of `_ASSENT`, holds (lower case).
_ANSWER_WORDS = ("confirm", "approve", "verify", "review", "check", "look over", "reply", "respond", "say", "tell me",
                 "let me know", "give me")
_ASSENT_WORDS = ("confirm", "approv", "agree", "ok", "go-ahead", "yes", "consent", "permission", "thumbs", "green light",
                 "sign")
_FOLDED_ASKS_ANSWER = Folded(_ASKS_ANSWER, _ANSWER_WORDS)


def _asks_in_imperative(sentence: str) -> bool:
    """``_ASKS_ANSWER.search(sentence)``, as a bool."""
    return _FOLDED_ASKS_ANSWER.search(sentence)


def _speaks_of_assent(sentence: str) -> bool:
    """``_YOU.search(sentence) and _ASSENT.search(_assent_now(sentence))``, as a bool."""
    if not _may_hold(sentence, ("you",)) or _YOU.search(sentence) is None:
        return False
    now = _assent_now(sentence)
    return _may_hold(now, _ASSENT_WORDS) and _ASSENT.search(now) is not None
#: A figure (an amount, a date, a time, a version, an id).
_DIGIT = re.compile(r"\d")
#: A word (a bare "?" asks nothing).
_WORD = re.compile(r"[A-Za-z]{2,}")
#: Words that open a question asking for a value rather than a yes.
QUESTION_WORD = re.compile(r"\b(?:which|what|how|where|when|who|whom|whose)\b", re.I)
#: A message that says what the assistant is about to do ("I'll file the incident now", "Plan:
#: exchange it for the paperback"), and
#: words that claim something is done already: a plan alone is not a claim of work done.
_INTENT = re.compile(r"\b(?:i will|i'll|i am going to|i'm going to|let me(?! know)|i am about to|i'm about to|i shall|"
                     r"next,? i|i plan to|i'd like to|what i(?:'d|\u2019d| would) do)\b|\b(?:plan|next|proposed|proposal|next steps?)\s*:|"
                     # a plan's heading with words before its colon ("Plan, item by item:", "My plan for it:")
                     r"(?:^|(?<=\n))[ \t*#_-]*(?:the |my |proposed |suggested )?plan\b[^\n:.?!]{0,40}:|"
                     # a heading that names what will be done ("Proposed writes:", "Planned actions:")
                     r"\b(?:proposed|planned) (?:writes?|actions?|changes?|steps?)\s*:|"
                     # a clipped note opening with "Will": "Will file: incident, payments, sev2."
                     r"(?:^|(?<=[.!?;\n]))[ \t]*will (?!(?:you|it|that|this|they|there|he|she|we|the|any)\b)[a-z]+",
                     re.I)
#: "Complete" claims only as a state ("the refund is complete"), not before a noun ("a complete plan").
_CLAIM = re.compile(rf"\b(?:i've|i have|has been|have been|is now|are now|already|done|finished|{_COMPLETE}|"
                    r"all set)\b", re.I)


#: Words one of which every match of `_INTENT`, and of `_CLAIM`, holds (lower case).
_INTENT_WORDS = ("will", "i'll", "going to", "let me", "about to", "shall", "next", "plan", "i'd like to", "propos", "what i")
_CLAIM_WORDS = ("i've", "i have", "has been", "have been", "is now", "are now", "already", "done", "finished", "complete",
                "all set")
_FOLDED_CLAIM = Folded(_CLAIM, _CLAIM_WORDS)


def _intent(text: str) -> re.Match[str] | None:
    """``_INTENT.search(text)``."""
    return _INTENT.search(text) if _may_hold(text, _INTENT_WORDS) else None


def plan_said(text: str) -> bool:
    """Whether `text` says work the assistant will do ("I'll file ...", "Plan: ...")."""
    return _intent(text) is not None


def _claim(text: str) -> bool:
    """``_CLAIM.search(text) is not None``."""
    return _FOLDED_CLAIM.search(text)


#: A request for a value put as a yes/no question or in the imperative ("could you tell me the
#: email on your account?", "please share which currency you need", "could you confirm the
#: email on your account?"): it asks for the value, not for a yes ("confirm the plan below" asks for one).
VALUE_REQUEST = re.compile(r"\b(?:tell|give|send|share|provide|remind|let)\s+(?:me|us)?\s*(?:know\s+)?"
                           r"(?:the|your|which|what|how|where|when|who|that|this|those|these)\b|"
                           # "may I please have the email on your account?", "could I get your name?"
                           r"\b(?:may|can|could|might)\s+(?:i|we)\s+(?:please\s+)?(?:have|get|ask for|ask you for)\s+"
                           r"(?:the|your)\b(?!\s+(?:\w+\s+)?(?:confirmation|go-ahead|go ahead|approval|ok|okay|yes|"
                           r"consent|permission|sign-off)\b)|"
                           r"\b(?:please|could you|can you|would you|kindly|and)\s+(?:please\s+)?(?:confirm|verify)\s+"
                           # "kindly confirm in which currency you would like it" asks for the currency
                           r"(?:(?:(?:in|to|for|on|at|by|from)\s+)?(?:which|what|how|where|when|who|whom|whose)\b|"
                           # "confirm the plan below" asks for a yes to it
                           r"(?:the|your)\b(?!\s+(?:\w+\s+)?(?:plan|following|changes?|above|below|proposal|steps?|"
                           r"actions?|summary)\b))", re.I)


#: Words that ask for a value as a need of the assistant's ("I require the email address ...
#: Kindly provide it."); a need of the customer's yes asks for that yes.
_NEEDS_VALUE = re.compile(r"\b(?:i|we)(?:'ll| will| would| still)?\s+(?:need|require)\s+(?!(?:your\s+|a\s+|an\s+)?"
                          r"(?:explicit\s+|clear\s+|final\s+|formal\s+|written\s+)?(?:"
                          r"confirmation|go-ahead|go ahead|approval|ok|okay|yes|consent|permission|sign-off)\b)|"
                          r"\b(?:kindly|please)\s+(?:provide|share|send|give|tell)\b", re.I)


#: Words one of which every match of `VALUE_REQUEST` or `_NEEDS_VALUE` holds (lower case).
_VALUE_WORDS = ("tell", "give", "send", "share", "provide", "remind", "let", "have", "get", "ask", "confirm", "verify",
                "need", "require")
_FOLDED_VALUE_REQUEST = Folded(VALUE_REQUEST, _VALUE_WORDS)
_FOLDED_NEEDS_VALUE = Folded(_NEEDS_VALUE, _VALUE_WORDS)


def asks_value(message: str) -> bool:
    """Whether a message asks for a value in words other than a question word's (`VALUE_REQUEST`,
    "I'll need the email on your account", "kindly provide it")."""
    return _FOLDED_VALUE_REQUEST.search(message) or _FOLDED_NEEDS_VALUE.search(message)


def _sentences(message: str, marks: str = " -*#>") -> list[str]:
    """A message's sentences, each line's list `marks` stripped."""
    return [s for line in message.splitlines() for s in SENTENCE_BREAK.split(line.strip(marks))]


def asking_sentences(message: str) -> list[str]:
    """The sentences of a message that ask (a question, or "please confirm ..."), else its last."""
    said = [s for line in message.strip().splitlines() if line.strip(" |*-#>")
            for s in SENTENCE_BREAK.split(without_abbreviation_stops(line.strip(" |*-#>")))]
    return [s for s in said if "?" in s or asks_yes(s) or asks_answer(s)] or said[-1:]


def asks_answer(message: str) -> bool:
    """Whether a message asks the customer for an answer: a question, a sentence that asks for
    one in the imperative (`_ASKS_ANSWER`), or one that speaks of the customer's assent (`_YOU`
    and `_ASSENT`)."""
    return "?" in message or any(_asks_in_imperative(s) or _speaks_of_assent(s) for s in _sentences(message))


def asks_go_ahead(message: str) -> bool:
    """Whether a message asks for a yes: in words `ASKS_YES` holds, by a yes/no question (one
    with no question word: "Confirm?", "OK to submit?", "Would that work for you?"), or in the
    imperative or by speaking of the customer's assent (as `asks_answer` reads them)."""
    return asks_yes(message) or any(
        "?" in s and _WORD.search(s) and not QUESTION_WORD.search(s) or _asks_in_imperative(s) or _speaks_of_assent(s)
        for s in _sentences(message, " -*#>|"))


#: A question that asks for what the sentence before it names ("I'll need the email on your
#: account. Could you share it?").
_ASKS_FOR_IT = re.compile(r"\b(?:share|send|give|tell|provide|confirm|check)\s+(?:me\s+|us\s+)?(?:it|that|this|them)\b",
                          re.I)


def questions(message: str) -> list[str]:
    """A message's questions: its sentences with a question mark, list marks stripped, outside
    tables (a cell's "Day off on 04-09?" heads a column of the plan, and asks the customer
    nothing); one that asks for "it" read with the sentence before it, which says what "it" is."""
    if "|" in message:  # drop the table rows; most messages hold no table
        message = "\n".join(line for line in message.splitlines() if not line.lstrip().startswith("|"))
    said = _sentences(message, " -*#>|")
    return [f"{said[i - 1]} {s}" if i and _ASKS_FOR_IT.search(s) else s for i, s in enumerate(said) if "?" in s]


#: The writes a clipped question for a yes opens with ("Submit that total?", "1. Book it ... Yes?").
_WRITES = r"submit|file|book|refund|send|pay|transfer|roll ?back|credit|exchange|cancel|issue|process"
#: Words of a question that asks leave to act ("shall I go ahead?", "OK to proceed?", "want me to
#: file it?", "do I have your approval?"); a question about what is so ("is it right that ...?",
#: "did any of them arrive damaged?") has none.
ASKS_LEAVE = re.compile(r"\b(?:go ahead|proceed|shall i|should i|can i|may i|could i|(?:want|like) me to|ok to|okay to|"
                        r"approve|approval|go-ahead|green light|sign[- ]off|authori[sz]e|permission|consent|"
                        r"say the word|reply (?:with )?\W?yes|happy for me|(?:ok|okay|fine|happy) with me|your (?:yes|ok|okay)|"
                        r"confirm and|(?:the|this|my) plan|(?:sounds?|looks?) (?:good|ok|okay|right|fine)|"
                        r"does (?:that|this) (?:work|sound)|"
                        r"works? for you|(?:is|are) (?:that|this|these) (?:ok|okay|alright|all right|fine|acceptable))\b|"
                        # a clipped question that opens with the write ("Submit that total?", "File it?") or
                        # is only a word for the go-ahead ("ok?", "go?")
                        rf"(?:^|(?<=[.!?;:\n]))[ \t*_-]*(?:(?:{_WRITES})\b[^.?!\n]*|ok|okay|go|good to go)[ \t]*\?|"
                        # a line that opens with the write and ends in a bare yes asked for it ("1. Book it
                        # on 2025-04-30 at 09:00 UTC. Yes?", "Then roll checkout back to v4.7.2, correct?")
                        r"(?:^|(?<=[.!?;:\n]))[ \t*_-]*(?:(?:then|and|next|also|finally|first|after that),?[ \t]+)?"
                        rf"(?:{_WRITES}|roll \w+ ?back)\b"
                        r"[^?!\n]*[.,;:][ \t]*(?:yes|ok|okay|agreed|alright|all right|right|correct|good)[ \t]*\?",
                        re.I)
_FOLDED_ASKS_LEAVE = Folded(ASKS_LEAVE)


def asks_leave(text: str) -> bool:
    """``ASKS_LEAVE.search(text) is not None``."""
    return _FOLDED_ASKS_LEAVE.search(text)


#: A question about what someone else did or does ("Has anyone already filed an incident for
#: this?", "Did someone roll it back?", "Is your team on it?"): a question of fact, alone too.
_ABOUT_OTHERS = re.compile(r"\b(?:has|have|had|did|does|do|is|are|was|were)\s+(?:anyone|anybody|someone|somebody|"
                           r"any(?:one|body)? else|another \w+|(?:your|the|any) (?:team|colleagues?|co-?workers?|"
                           r"engineers?|on-call))\b", re.I)
#: Words one of which every match of `_ABOUT_OTHERS` holds (lower case).
_OTHERS_WORDS = ("anyone", "anybody", "someone", "somebody", "else", "another", "team", "colleague", "worker",
                 "engineer", "on-call")
_FOLDED_ABOUT_OTHERS = Folded(_ABOUT_OTHERS, _OTHERS_WORDS)


@per_text
def _about_others(text: str) -> bool:
    """``_ABOUT_OTHERS.search(text) is not None``."""
    return _FOLDED_ABOUT_OTHERS.search(text)


#: What the user says first to a question about what others did ("Has anyone already rolled it
#: back?"): only the tools could tell, and the user's task says nothing of it.
NOT_THAT_I_KNOW = "Not that I know of."


def with_word_on_others(message: str, reply: str) -> str:
    """`reply`, after the user's word on a question of `message` about what others did, when it
    asks one and `reply` is not already the answer to questions of fact (`AS_SAID`, which says the
    tools are to tell); a yes beside it ("... Has anyone acted? OK to file it?") would else seem to
    say someone had."""
    # Every reply passes here: the whole message is searched first, its questions only on a hit.
    if not reply or reply == AS_SAID or "?" not in message or not _about_others(message):
        return reply
    return f"{NOT_THAT_I_KNOW} {reply}" if any(_ABOUT_OTHERS.search(q) for q in questions(message)) else reply


@per_text
def asks_facts_only(message: str) -> bool:
    """Whether a message asks two questions or more, or only questions about what others did
    (`_ABOUT_OTHERS`), and nothing in it asks leave to act (`ASKS_LEAVE`: "OK to proceed?", "say
    the word") or says what the assistant will do ("I'll file an incident naming ... Is that the
    incident you want?" puts a plan): questions before any plan."""
    # The cheap tests first: a message with one question mark has one question at most, which
    # asks facts only where it is about others (most messages are neither).
    if "?" not in message or message.count("?") < 2 and not _about_others(message):
        return False
    if asks_leave(message) or _intent(message) is not None:
        return False
    asked = questions(message)
    return len(asked) >= 2 or (bool(asked) and all(_ABOUT_OTHERS.search(q) for q in asked))


#: Words of a question before its mark ("- payout currency?", "Email?", a list's item under a
#: line that asks for it: "- The email address on your account?").
_TERSE_MAX = 10
#: Verbs that open a yes/no question ("Refund it?", "OK to go?", "Shall I?").
_ASKS_YES_VERB = re.compile(r"\b(?:ok|okay|shall|should|can|could|may|will|would|do|does|is|are|proceed|go|book|file|"
                            r"refund|submit|send|pay|roll|credit|exchange|cancel|confirm|approve)\b", re.I)


#: Where a terse question's reason for asking begins ("The email address on your account, so I
#: can find your orders?"): what it asks for is what comes before.
_WHY_ASKED = re.compile(r",?\s+(?:so(?:\s+that)?|in order to|because|since|which|to (?:find|look|check|locate|pull|verify))\b|"
                        r"\s[(\u2013\u2014]", re.I)


def terse_question(sentence: str) -> bool:
    """Whether a question is a few words with no verb to ask a yes ("payout currency? (EUR /
    USD)", "Email on the account?", "The email address on your account, so I can find you?"):
    it asks for what it names, as a question word's does. Its reason for asking is no part of
    it."""
    head = _WHY_ASKED.split(sentence.split("?", 1)[0], 1)[0]
    return len(_WORD.findall(head)) <= _TERSE_MAX and not _ASKS_YES_VERB.search(head)



def plan_only(message: str) -> bool:
    """Whether a message only says what the assistant will do, claiming nothing done yet. Where
    words of a claim stand in it ("I've checked both orders. Findings and what I'd do: ... Totals:
    537.00 USD refunded ..."), only a sentence that says work done, by the assistant or with such
    a word, outside what it will do, is a claim ("I filed report R-154" is; a total is not)."""
    if _intent(message) is None:
        return False
    return not _claim(message) or not any(says_done(s) and not _intent(s) and (_claim(s) or _BY_ME.search(s))
                                          for s in _sentences(message, " -*#>|"))


#: The assistant as the one who did something ("I filed ...", "we sent ...").
_BY_ME = re.compile(r"\b(?:i|we)\b(?!')", re.I)


def claims(message: str, read: Callable[[str], Reading]) -> bool:
    """Whether a sentence of a message claims work done: it speaks of the work (words `read`
    takes as ``done``: "refunded", "booked", "I have done") with words that claim it ("I have",
    "already", "is now") and says nothing the assistant will do ("I've looked into it" speaks of
    no work; "I've checked, and I'll refund it" claims nothing done)."""
    # The words first: a sentence is read (the costly part) only where they claim something.
    return any(_claim(s) and not _intent(s) and says_done(s) and "done" in read(s).said
               for s in _sentences(message, " -*#>|"))


def _work(message: str, read: Callable[[str], Reading]) -> list[str]:
    """The sentences of a message that speak of the work, as `read` reads them."""
    return [s for s in _sentences(message, " -*#>|") if "done" in read(s).said]


#: `proposes` is a pure function of a message and the domain's engine (`read`), asked of every
#: message at easy and medium: memoised per (text, engine) as `per_text` does.
_PROPOSES: dict[tuple[str, Callable[[str], Reading]], bool] = {}


def proposes(message: str, read: Callable[[str], Reading]) -> bool:
    """`proposes_uncached`, memoised (`_PROPOSES`)."""
    if len(message) > MEMO_MAX_CHARS:
        return proposes_uncached(message, read)
    key = (message, read)
    got = _PROPOSES.get(key)
    if got is None:
        if len(_PROPOSES) >= MEMO_SIZE:
            _PROPOSES.clear()
        got = _PROPOSES[key] = proposes_uncached(message, read)
    return got


def proposes_uncached(message: str, read: Callable[[str], Reading]) -> bool:
    """Whether a message puts work to the customer for a yes: it asks for one
    (`asks_go_ahead`), and a sentence of it speaks of the work (words `read` takes as ``done``:
    "refund", "book", "file", in any tense), the message names what it is done to (a number, or
    a value of the domain: "the smart watch", "$249.00", "on May 1"), and no sentence claims that
    work done (one does not ask leave for work already done; "I've looked into it" claims no
    work) unless a sentence says work the assistant will do (`_work_to_come`). A list of words
    with a "?" ("? ? book") puts nothing to the customer."""
    if not asks_go_ahead(message):
        return False
    # The whole message's reading is the engine's memo (`reply` read it), its sentences are not.
    return bool(_DIGIT.search(message) or read(message).values) and bool(_work(message, read)) and (
        not claims(message, read) or _work_to_come(message, read))


def _work_to_come(message: str, read: Callable[[str], Reading]) -> bool:
    """Whether a sentence of a message says work the assistant will do ("I'll file the incident",
    "Confirm and I'll refund it"): a message that asks for a yes puts that work to the customer,
    whatever else it reports done (a booking of an earlier request, the reads behind the plan)."""
    # From the intent on: the engine reads a sentence that asks as a question, with no statement
    # of work in it.
    return any((m := _intent(s)) is not None and "done" in read(s[m.start():]).said
               for s in _sentences(message, " -*#>|"))


#: A question that names something of its own (a value, an id, a figure), not only "which".
_NAMES_SOMETHING = re.compile(r"\d|\b(?:eur|usd|gbp|chf|sek|cad|sev\d|refunds?|credit|exchanges?|rollback|roll\w* back|"
                              r"incident)\b", re.I)


def asking_part(message: str) -> str:
    """The sentences of a message that ask (those with a question mark), each with the sentence
    before it where it names nothing itself ("... the alternative is to also roll it back.
    Which would you prefer?"): what a question offers is read there, not in the account above."""
    sentences = [s for s in _sentences(message, " |*-#>") if s.strip()]
    part: list[str] = []
    for i, sentence in enumerate(sentences):
        if "?" in sentence:
            if i and not _NAMES_SOMETHING.search(sentence):
                part.append(sentences[i - 1])
            part.append(sentence)
    return " ".join(part)


#: An option's label: "(A)", "B)", "2.", "Option B:", "**Option A** -", at a line's start or after a
#: break; a label needs its bracket or mark ("A refund ..." is no option).
_LABEL = re.compile(r"(?:^|(?<=[\s:;,]))(?:\*\*|__)?(?:\((?P<p>[a-d1-4])\)|(?P<b>[a-d1-4])[.)](?=\s)|"
                    r"option\s+(?P<o>[a-d1-4])\b[.:)]?)(?:\*\*|__)?\s*[:\u2013\u2014-]?\s*", re.I | re.M)
#: A question that only asks which of the options before it ("Which would you prefer?", "Which one works for you?").
_WHICH_BEFORE = re.compile(r"(?:^|(?<=[.!?:\n])\s*)(?:so|and|then)?,?\s*(?:which|what)\b[^?\d\n.!]{0,40}\?\s*$", re.I)


#: What a second option's label holds, one of which every choice `options_asked` reads has.
_SECOND_LABELS = ("b)", "b.", "b:", "2)", "2.", "option b", "option 2")
#: What ends an option before the next label: marks, bullets and a joining "or".
_TRAILING = re.compile(r"[\s,;.*\u2022-]*(?:\bor\b)?[\s,;.*\u2022-]*$")


@lru_cache(maxsize=512)
def options_asked(message: str) -> str | None:
    """A message that ends with a question asking only which of the labelled options before it
    ("(A) 95.00 USD store credit now, or (B) leave the order as it is. Which would you prefer?"),
    with the options said in the question ("Which would you prefer: 95.00 USD store credit now, or
    leave the order as it is?"), as a person reads it; None for any other message. A question that
    names nothing asks about what is before it, and the options are what it offers."""
    tail = message.rstrip()[-64:].lower()
    if not tail.endswith("?") or "which" not in tail and "what" not in tail:
        return None  # most messages: the question must end the message and ask which
    last = tail[max(tail.rfind(mark, 0, len(tail) - 1) for mark in ".!?:\n") + 1:].lstrip(" *_")
    if not last.startswith(("which", "what", "so", "and", "then")):  # the last sentence asks which
        return None
    low = message.lower()
    if not any(label in low for label in _SECOND_LABELS):
        return None  # no second option's label: nothing to choose between
    text = message.strip().replace("**", "").replace("__", "")
    which = _WHICH_BEFORE.search(text, max(0, len(text) - 64))
    if which is None:
        return None
    before = text[:which.start()]
    labels = list(_LABEL.finditer(before))
    keys = [(m.group("p") or m.group("b") or m.group("o")).lower() for m in labels]
    first = next((k for k in range(len(keys) - 1) if keys[k] in "a1" and keys[k + 1] == chr(ord(keys[k]) + 1)), None)
    if first is None:
        return None
    labels, keys, options = labels[first:], keys[first:], []
    for k, m in enumerate(labels):
        if keys[k] != chr(ord(keys[0]) + k):
            return None  # labels out of order: a list of something else
        stop = labels[k + 1].start() if k + 1 < len(labels) else len(before)
        options.append(_TRAILING.sub("", before[m.end():stop].partition("\n")[0]))  # an option ends its line
    question = text[which.start():].strip().rstrip("?").rstrip()
    head = before[:labels[0].start()].rstrip().rstrip("*\u2022-").rstrip()
    return f"{head}\n{question}: {', or '.join(options)}?"


@lru_cache(maxsize=512)
def spoken(phrase: str) -> re.Pattern[str]:
    """Where a slot's word is said, a word of the sentence allowed inside a two-word phrase ("roll
    search back" says "roll back")."""
    parts = [re.escape(w) for w in phrase.split()]
    gap = r"\w*(?:\s+\S+)?\s+" if len(parts) == 2 else r"\s+"
    return re.compile(r"\b" + gap.join(parts) + r"\b")


def values_asked_open(values: tuple[tuple[str, str], ...], message: str,
                      asked_unsaid: Callable[[str], tuple[str, ...]],
                      read: Callable[[str], Reading]) -> tuple[tuple[str, str], ...]:
    """`values` a message names, less those of a slot a question word's question asks for
    (`asked_unsaid`: "Which currency for the payout?") that only the account beside it names
    ("5 expenses, all EUR"): what the assistant found, not a read-back to confirm, so the user
    gives the value it wants. A value the question names itself ("Which currency, EUR?") stays."""
    if not values:
        return values
    unsaid = asked_unsaid(message)
    if not any(slot in unsaid for slot, _ in values):
        return values
    in_questions = {slot for slot, _ in read(" ".join(questions(message))).values}
    return tuple((slot, v) for slot, v in values if slot not in unsaid or slot in in_questions)


def yes_no_values(values: tuple[tuple[str, str], ...], message: str,
                  read: Callable[[str], Reading]) -> tuple[tuple[str, str], ...]:
    """`values` a message names, less those of a slot its yes-or-no questions name a value of
    that only the account beside them names ("X-5979, 317.95 GBP, still pending, so I'll leave it
    out. May I request approval for 2,236.15 EUR?": the claim's GBP proposes no payout currency;
    the question's EUR is what it asks about). A slot the questions name no value of keeps the
    account's ("So: refund in CHF. Is that right?" reads the plan back)."""
    asked = questions(message)
    if not values or not asked or any(QUESTION_WORD.search(q) for q in asked):
        return values
    in_questions = read(" ".join(asked)).values
    slots = {slot for slot, _ in in_questions}
    return tuple(pair for pair in values if pair[0] not in slots or pair in in_questions)


#: A yes-or-no question that offers another way after a comma or with a verb of its own ("Are the
#: complaints only about gateway, or have you noticed other services as well?"): a yes answers
#: neither half.
_EITHER_OR = re.compile(r",\s*or\b|\bor\s+(?:have|has|are|is|do|does|did|were|was|should|would|could|can|will)\b", re.I)


def either_or(message: str) -> bool:
    """Whether the last question of `message` offers an alternative (`_EITHER_OR`)."""
    asked = questions(message)
    return bool(asked) and _EITHER_OR.search(asked[-1]) is not None
