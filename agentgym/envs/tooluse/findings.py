"""Questions about what the assistant found with its tools, which the user cannot answer.

The user of a tool-use task knows what it asked for and the details it holds (where the alert
showed up, the severity it wants, its order, the meeting's length), never what the tools show (the
root cause, a total, a free time, an item's return window). A question whether such a finding is
so ("Is ledger the root cause?", "The total comes to 1,234.50 EUR, correct?", "So 09:00 UTC works
for everyone, right?") gets no yes from it, and no objection either: a yes would vouch for a
finding it cannot check (and so mislead an agent that checks its work with the user), and its
own detail said back ("It showed up on shipping.") would read as a correction of the finding.

`asks_finding` tells such a question: a yes-or-no question of fact, a statement that ends in
", right?", or the statement a bare "Correct?" or "Is that right?" asks about, holds one of the
domain's words for a finding (``data/findings.json``) and speaks of no wish of the user's ("you
want the total of ..."). A question with a question word asks for a value ("how long should it
be, before I look for the earliest slot?"); one that asks what may be ("could anyone be
dropped?"), leave to act or to look, or a message that puts work for a yes, is no such question.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, partial

from agentgym.envs.tooluse.asking import QUESTION_WORD, asks_leave, plan_said
from agentgym.envs.tooluse.data import read_json, str_list
from agentgym.envs.tooluse.detail_values import padded_words
from agentgym.envs.tooluse.text_memo import per_text
from agentgym.users.rule_based import asks_if_right
from agentgym.users.understanding.look_up import asks_leave_to_look
from agentgym.users.understanding.words import SENTENCE_BREAK, without_abbreviation_stops

__all__ = ["asks_finding", "finding_words", "may_ask_finding", "states_finding"]

#: A question that only asks whether the statement before it is so ("Correct?", "Is that right?").
_TAG = re.compile(r"[\s*_-]*(?:(?:is|was) (?:that|this|it) )?(?:right|correct|true|accurate|so|yes|agreed)"
                  r"(?:,? (?:right|correct))?[\s?!.]*", re.I)
#: A statement that ends by asking whether it is so ("So 09:00 works for everyone, right?").
_TAG_END = re.compile(r"[,;:\u2013\u2014-]\s*(?:(?:is|was) (?:that|this|it) )?(?:right|correct|true|accurate|yes)\s*\?\s*$",
                      re.I)
#: A yes-or-no question of fact ("Is ledger the root cause?", "Does 09:00 work for everyone?"):
#: one that asks what may be, or leave ("could anyone be dropped?", "can I ...?"), is no check.
_FACT_QUESTION = re.compile(r"^\W*(?:(?:so|and|but|also|ok|okay|just to (?:check|confirm)|to (?:check|confirm)),?\s+)?"
                            r"(?:is|are|was|were|does|do|did|has|have|had|isn't|aren't|doesn't|didn't)\b", re.I)
#: A verb that says something is so: a statement has one, a list of a request's parts has none.
_SAYS = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|isn't|aren't|wasn't|weren't|doesn't|"
                   r"didn't|hasn't|haven't|it's|that's|there's|gives?|calls?|comes?|came|works?|fits?|fails?|failed|"
                   r"broke|caused|causes|adds?|amounts?|exceeds?|arrived|shipped|delivered|succeeded|ran|began|"
                   r"started|overlaps?)\b", re.I)
#: A value a user may never have said: an id ("X-2444"), a version ("v4.7.5"), a number or a time.
_VALUE = re.compile(r"\b[A-Z]{1,5}-\d+\b|\bv\d+(?:\.\d+)+\b|\b\d+(?:[.,:]\d+)*\b")
#: A sentence about what the user wants or said, not about the world ("you want the total of ...").
_WISH = re.compile(r"\b(?:you(?:'d| would)? (?:want|like|need|asked|said|mentioned|told|requested)|you're after|"
                   r"your (?:request|wish)|you'd prefer)\b", re.I)


@lru_cache(maxsize=None)
def finding_words(domain: str) -> re.Pattern[str] | None:
    """The domain's words for a finding, as one pattern of whole words (None: it lists none)."""
    data = read_json("findings.json")
    if domain not in data:
        return None
    words = str_list(data[domain], f"findings.json: {domain}")
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.I)


def _sentences(line: str) -> list[str]:
    return [s for s in SENTENCE_BREAK.split(without_abbreviation_stops(line.strip(" |*-#>"))) if s.strip()]


def _checked_statements(message: str) -> list[str]:
    """What `message` asks the user to vouch for: each yes-or-no question of fact, each statement
    that ends by asking whether it is so, and the statement before a question that only asks
    that (on its line, or the line before). A question with a question word asks for a value.
    Only the lines that ask, and the line before each, are split into sentences."""
    out: list[str] = []
    last_line = ""
    for line in message.splitlines():
        if "?" not in line:
            last_line = line if line.strip(" |*-#>") else last_line
            continue
        before = (_sentences(last_line) or [""])[-1]
        for s in _sentences(line):
            if "?" in s:
                if _TAG.fullmatch(s) or asks_if_right(s) and len(s) < 40:
                    out += [before] if before else []
                elif _TAG_END.search(s) or not QUESTION_WORD.search(s) and _FACT_QUESTION.match(s):
                    out.append(s)
            before = s
        last_line = line
    return out


#: Per domain, `_findings_asked_uncached` memoised per text (`per_text`): a pure function of the
#: text, asked of every message a user answers.
_MEMO: dict[str, Callable[[str], tuple[str, ...]]] = {}


def _findings_asked(domain: str, message: str) -> tuple[str, ...]:
    """The statements of `message` the user is asked to vouch for that hold a word of the
    domain's for a finding; none where a question asks leave to act or to look, or says what
    the assistant will do."""
    asked = _MEMO.get(domain)
    if asked is None:
        asked = _MEMO[domain] = per_text(partial(_findings_asked_uncached, domain))
    return asked(message)


def _findings_asked_uncached(domain: str, message: str) -> tuple[str, ...]:
    words = finding_words(domain)
    if words is None or "?" not in message:
        return ()
    checked = _checked_statements(message)
    found = tuple(s for s in checked if _holds_finding(s, words))
    if not found or any(asks_leave(s) or plan_said(s) for s in checked) \
            or asks_leave_to_look(message):
        return ()
    return found


def _holds_finding(statement: str, words: re.Pattern[str]) -> bool:
    """Whether `statement` says something (`_SAYS`) with a word of the domain's for a finding, and
    speaks of no wish of the user's."""
    return words.search(statement) is not None and _SAYS.search(statement) is not None \
        and _WISH.search(statement) is None


def may_ask_finding(domain: str, message: str) -> bool:
    """Whether `message` may ask whether a finding is so: it asks the user to vouch for a
    statement holding a word of the domain's for one (`asks_finding` then judges the words)."""
    return bool(_findings_asked(domain, message))


def asks_finding(domain: str, message: str, own_words: str = "", vocabulary: tuple[str, ...] = ()) -> bool:
    """Whether `message` asks the user whether something the tools show is so (see the module
    docstring); False for a message with no question, and for a plan put for a yes.

    A statement claims a finding when it says something (a verb: a list of the request's parts,
    "approved June expenses, total in EUR - correct?", claims nothing) with a word for a finding
    the user did not use itself (`own_words`: its request and what it said, lower case), or with
    a value it never said (a number, an id, a version, a word of the domain's `vocabulary`, such
    as a service): "Is X-2444 approved?" to a user who asked for its approved expenses."""
    statements = _findings_asked(domain, message)
    if not statements:
        return False
    words = finding_words(domain)
    assert words is not None
    return any(_claims_finding(s, words, own_words, vocabulary) for s in statements)


def states_finding(domain: str, sentence: str, own_words: str = "", vocabulary: tuple[str, ...] = ()) -> bool:
    """Whether `sentence` asks whether a finding is so: a yes-or-no question of fact, or a
    statement ending in ", right?", that claims one as `asks_finding` reads a statement, whatever
    else its message asks (a plan beside it, leave to act). A question for a value ("how long
    should it be, before I look for the earliest slot?") is none."""
    words = finding_words(domain)
    return words is not None and (_TAG_END.search(sentence) is not None or _FACT_QUESTION.match(sentence) is not None) \
        and _holds_finding(sentence, words) and _claims_finding(sentence, words, own_words, vocabulary)


def _claims_finding(statement: str, words: re.Pattern[str], own: str, vocabulary: tuple[str, ...]) -> bool:
    if any(m.group().lower() not in own for m in words.finditer(statement)):
        return True
    low = padded_words(statement)
    return any(v.group().lower() not in own for v in _VALUE.finditer(statement)) or any(
        f" {w} " in low and w not in own for w in vocabulary)
