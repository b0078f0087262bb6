"""The values of the job a plan names, as the tool-use user reads them: which value of a slot a
message names (a currency code, a severity, a meeting's length in minutes, a month, an item's
variant), the detail whose value a plan names otherwise than the user said (`objected`), an id
or an e-mail of the user's kind that is not the user's (`names_other_id`), and what of the user's
own words a read-back restates (`restated_values`)."""

from __future__ import annotations

import calendar
import re
from functools import lru_cache
from typing import Any, Collection, Mapping, Sequence

from agentgym.envs.tooluse.base import Detail, World
from agentgym.envs.tooluse.detail_values import ITEM_ARGS, padded_words, statement_words

__all__ = ["JOB_SLOTS", "job_slots", "names", "names_one", "names_other_choice", "names_other_id", "objected",
           "other_id_details", "restated_values"]

#: The job's parameters whose value an assistant may name when it states a plan: a currency code
#: or a severity (the domain's own words for them), or a meeting's length in minutes.
JOB_SLOTS = ("currency", "severity", "duration")
_MINUTES = re.compile(r"\b(\d{2,3})[ -]?min")
#: An e-mail or a record's id ("O-63031"), each of its kind (an e-mail's, the id's prefix). A
#: date is none: a meeting's day may move on ("if someone is off that day, the next date nobody
#: is off is fine"), and an order's statement dates when it was placed, which a plan need not name.
_ID = re.compile(r"(?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)|\b(?P<id>[A-Z]{1,5}-)\d+\b")
#: `_ID` without its e-mails, for a text with no "@", where they cannot match: the same matches,
#: without trying an e-mail's run of word characters at every character of every word.
_ID_ONLY = re.compile(r"\b(?P<id>[A-Z]{1,5}-)\d+\b")
#: What of a statement a message restates in the user's own words: an e-mail, an id, a date, a
#: quoted title, a name of several capitalised words.
_SALIENT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[A-Z]{1,5}-\d+\b|\b\d{4}-\d{2}-\d{2}\b|\"([^\"]+)\"|"
                      r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")
#: A month a plan names: by name with its year ("June 2025"), or as YYYY-MM.
_MONTH = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|December)"
                    r"(?:'s)? \d{4}\b|\b\d{4}-(0[1-9]|1[0-2])\b(?!-)")


def job_slots(values: Mapping[str, Any], details: Sequence[Detail]) -> tuple[str, ...]:
    """What of the job a plan may name a value of, of what the user holds a value of: its
    parameters (their details' ids are the slots' names), its month, then its items' details
    (``variant:<item id>``)."""
    return (*(slot for slot in JOB_SLOTS if slot in values), *(d.id for d in details if d.slot == "month"),
            *(d for d in values if d.partition(":")[0] in ITEM_ARGS))


def names_one(vocabulary: Mapping[str, tuple[str, ...]], slot: str, message: str) -> bool:
    """Whether a message names one value of a job's `slot`: several ("EUR, CAD or USD", a
    table's column) are options, and a question about the slot beside them asks which."""
    words = vocabulary.get(slot)
    if words:
        return sum(w in message for w in words) == 1
    return names(vocabulary, slot, message)


def names(vocabulary: Mapping[str, tuple[str, ...]], slot: str, message: str) -> bool:
    """Whether a message names some value of a job's `slot` (as `objected` reads them)."""
    return bool(_named(vocabulary, slot, message))


def _named(vocabulary: Mapping[str, tuple[str, ...]], slot: str, message: str) -> set[Any]:
    """The values of a job's `slot` a message names: the domain's words for it, or a meeting's
    length in minutes."""
    words = vocabulary.get(slot)
    if words:
        return {w for w in words if w in message}
    if slot == "duration" and "min" in message:  # the cheap test first: most messages name no length
        return {int(v) for v in _MINUTES.findall(message)}
    return set()


def objected(message: str, job: tuple[str, ...], values: Mapping[str, Any],
             vocabulary: Mapping[str, tuple[str, ...]], world: World, details: Sequence[Detail]) -> str | None:
    """The first of the `job`'s details whose values the message names without the user's own
    ("shall I pay it in EUR?" to a user who wants GBP; a month, "for July 2025", to one who said
    June; an item's, as `names_other_choice` reads them); None when it names none of a detail,
    or the user's among them."""
    for slot in job:
        if ":" in slot:
            choices = world.choices(slot)
            if values[slot] in choices and names_other_choice(message, values[slot], choices, world.owned(slot)):
                return slot
            continue
        if slot == "month":
            said = next((d.statement for d in details if d.id == slot), "")
            named = {m.group(1) or calendar.month_name[int(m.group(2))] for m in _MONTH.finditer(message)}
            if named and not any(f" {month.lower()} " in statement_words(said) for month in named):
                return slot
            continue
        named = _named(vocabulary, slot, message)
        if named and values[slot] not in named:
            return slot
    return None


def names_other_choice(message: str, wanted: str, choices: tuple[str, ...], owned: frozenset[str]) -> bool:
    """Whether a plan names a value of an item's detail other than the one the user wants,
    never the wanted one ("I'll exchange it for white" to a user who wants black). A word value
    ("white", "hardcover") counts anywhere, as a whole word, unless it is what the user has now
    ("your white e-reader" says what it is); any value counts where the plan makes it the new one
    ("for white", "to the 10 inch", "for size M"), where a short or numeric one ("M", "8") counts
    only ("8 days ago" names no size)."""
    patterns = _choice_patterns(choices)
    if any(value == wanted and said.search(message) for value, said, _, _ in patterns):
        return False
    return any(target.search(message) or (plain and value.lower() not in owned and said.search(message))
               for value, said, target, plain in patterns if value != wanted)


@lru_cache(maxsize=256)
def _choice_patterns(choices: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str], re.Pattern[str], bool], ...]:
    """Per value: the value, where a message says it, where it makes it the new value, and
    whether it is a word a message says only as that value. A short value ("S", "XL") is matched
    in its own case: "s" and "m" are bits of other words."""
    out = []
    for value in choices:
        plain = value.isalpha() and len(value) > 2
        case = "(?i)" if plain else ""
        word = re.escape(value)
        said = re.compile(rf"{case}(?<![\w-]){word}(?![\w-])")
        target = re.compile(rf"{case}(?<![\w-])(?i:for|to|into)\s+(?:(?i:the|a|an|size|one)\s+)*{word}(?![\w-])")
        out.append((value, said, target, plain))
    return tuple(out)


def names_other_id(statements: list[str], message: str) -> bool:
    """Whether a message names an e-mail or an id of a kind the statements hold, never theirs
    ("order O-99999" to a user whose order is O-63031; "O-63031 and O-63032" names theirs). An
    id of a kind the user never said (an item's "I-6988") is the assistant's to know."""
    return _names_other(statements, _ids(message))


def other_id_details(details: Sequence[Detail], message: str) -> list[Detail]:
    """The details whose e-mail or id a message names otherwise (`names_other_id`), the message
    scanned once: most name none."""
    named = _ids(message)
    return [d for d in details if _names_other([d.statement], named)] if named else []


def _ids(text: str) -> dict[str, set[str]]:
    """The e-mails and ids a text names, by kind."""
    out: dict[str, set[str]] = {}
    for m in (_ID if "@" in text else _ID_ONLY).finditer(text):
        out.setdefault(m.group("id") or m.lastgroup or "", set()).add(m.group(0))
    return out


def _names_other(statements: list[str], named: dict[str, set[str]]) -> bool:
    said: dict[str, set[str]] = {}
    for st in statements:
        for kind, tokens in _ids(st).items():
            said.setdefault(kind, set()).update(tokens)
    return any(kind in said and not (tokens & said[kind]) for kind, tokens in named.items())


def restated_values(details: Sequence[Detail], said: Collection[str], message: str) -> tuple[tuple[str, str], ...]:
    """(slot, value) of what the `said` details' statements hold in their own words (`_SALIENT`:
    "Leila Tran", "2025-07-31", a quoted title's words, lower case as `statement_words` gives
    them) that a message restates; the message's words read once."""
    words = padded_words(message)
    return tuple((d.slot, t) for d in details if d.id in said for t in _salient(d.statement) if f" {t} " in words)


@lru_cache(maxsize=4096)
def _salient(statement: str) -> tuple[str, ...]:
    return tuple(statement_words(m.group(1) or m.group(0)).strip() for m in _SALIENT.finditer(statement))
