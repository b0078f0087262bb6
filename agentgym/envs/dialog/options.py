"""Which need a message offers to give up for each place it names as an option.

A message that asks which need can give way often says what each choice would bring: "if the
sea view can go, Fern Rooms; if the area can go, Stone Hideaway", "without the stage, Rose
Rooms", "the parking (then Stone Fork, ...)", "Fern Rooms (drop the sea view)". Such places are
options, not proposals; once the user has said which need gives way, the one tied to it is what
the agent offers for that choice (`agentgym.envs.dialog.hard_user`).

A place is tied to a need when the words before it, back to the last break (a sentence end, a
semicolon, a colon, a closing bracket or "or"; the one before when only the break stands
between: "without the area: X"), name exactly that one of the user's needs and
offer it (several needs offered together tie it to all of them: "if the area and the coffee could
go, X") ("if", "without", "then", "drop": `agentgym.users.understanding.compromise.offers_option`),
or name only it, right before the place ("the area (Olive Stool, ...)", a table row "| the area |
Olive Stool |"); else when a bracket
right after the place does ("Fern Rooms (drop the sea view)"). Words that only describe a place
("In Old Town, Atlas Lab has standing desks but no 24h access") tie it to nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterator

from agentgym.envs.dialog.tasks import Place
from agentgym.users.understanding.compromise import offers_option

__all__ = ["KEPT_MARK", "option_ties", "place_mentions"]

#: Where the words that offer a need for a place stop, looking back from it. A full stop
#: between digits ("rated 4.5") is no break.
_BREAK = re.compile(r"(?<!\d)(?<!\b[a-z])[.](?!\d)|[!?;:)\n]|\bor\b", re.IGNORECASE)
#: Words that only bring in an example between a break and a place ("drop the area: e.g. X").
_BY_WAY_OF = re.compile(r"\b(?:e\.?g|i\.?e|say|for (?:example|instance)|such as|perhaps|maybe)\b\.?", re.IGNORECASE)
#: Words that say the one need named before a place is the one kept ("if the dance floor is
#: essential, X", "if the setting matters most, Y"): the place is the option for keeping that
#: need, so for giving up another. Negated ("if the stage isn't essential") they say the opposite.
_KEEPS = re.compile(r"\b(?:matters? (?:the )?most|matters? more|(?:is|are) (?:the )?(?:key|point|priority)|essential|"
                    r"a must|must[- ]have|non[- ]negotiable|crucial|critical|vital|(?:more|most) important|"
                    r"top priority|deal[- ]?breaker|(?:can ?not|can't|cannot) (?:do|live|go) without)\b")
_NOT_KEPT = re.compile(r"\b(?:not|never|less|least|no longer)\b|n['’]t\b")
#: How `option_ties` marks a place tied to a need kept (``KEPT_MARK + id``), not one given up.
KEPT_MARK = "="
#: What a need kept is said with ("keep lockers, drop fast wifi: X" offers the wifi alone).
_KEPT = re.compile(r"\bkeep(?:s|ing)?\b[^,;:]*", re.IGNORECASE)
#: A bracket right after a place name: what it says is about that place.
_ASIDE = re.compile(r"\s*,?\s*\(([^()]*)\)")
#: Marks that may end words naming only a need, right before a place ("the area (X", a table's
#: row "| the monitors | X |").
_LEADS_IN = ("(", ":", "-", "\u2013", "\u2014", "|")
#: At most this many words name only a need before a place with no word that offers it.
_BARE_MAX = 6
#: What a place keeps and then what it breaks, right after its name, within its clause.
_KEPT_BUT = re.compile(r"\s*,?\s*(?:which |that |still )?keeps?\b[^.;:!?\n()]*?\b(?:but|except(?: for)?)\b"
                       r"([^.;:!?\n]*)", re.IGNORECASE)
#: Words that say the places after them have the need ("Cabins with free parking: X and Y"): those
#: places keep it, so they are no option for giving it up.
_HAS = re.compile(r"\b(with|has|have|having|offer\w*|serv\w*|includ\w*|that|which)\b")


def option_ties(message: str, places: list[Place], needs_in: Callable[[str], set[str]]) -> dict[str, str]:
    """The need each of `places` is tied to in `message` (see the module docstring), by place
    id: the need it gives up, or ``KEPT_MARK`` and the need it keeps ("if the stage is essential,
    X"); a place tied to none is left out. `needs_in` gives the ids of the user's needs a piece
    of text names."""
    text = message.lower()
    ties: dict[str, str] = {}
    for place, start, end in place_mentions(text, places):
        if place.id in ties:
            continue
        lead = text[_last_break(text, start):start]
        need = _tie(lead, needs_in, bare=True)
        if need is None:
            aside = _ASIDE.match(text, end)
            need = _tie(aside.group(1), needs_in, bare=False) if aside else None
        if need is None:
            need = _kept_but(text, end, needs_in)
        if need is not None:
            ties[place.id] = need
    return ties


def _kept_but(text: str, end: int, needs_in: Callable[[str], set[str]]) -> str | None:
    """The one need the words right after a place say it breaks, where they first say what it
    keeps ("X keeps French, Chinatown and both amenities but is rated only 3.1", "Y keeps
    everything except the area"): an option labelled as one, as "keep wifi, drop parking: X" is;
    a description without the "keeps" ("X has wifi but no parking") ties nothing."""
    said = _KEPT_BUT.match(text, end)
    if said is None:
        return None
    needs = needs_in(said.group(1))
    return next(iter(needs)) if len(needs) == 1 else None


def _tie(words: str, needs_in: Callable[[str], set[str]], bare: bool) -> str | None:
    """The one need `words` offer (or, with `bare`, name alone right before a place); several
    needs offered together ("if the area and the coffee could go, X") are joined by "+": such a
    place is an option for giving up all of them, no proposal while one gives way."""
    needs = needs_in(_KEPT.sub(" ", words))
    plain = words.strip()
    if needs and offers_option(plain) and _KEEPS.search(plain) and not _NOT_KEPT.search(plain):
        # "If the dance floor is essential, X": X keeps it (one need kept; several, no tie).
        return KEPT_MARK + next(iter(needs)) if len(needs) == 1 else None
    if len(needs) > 1 and offers_option(plain):
        return "+".join(sorted(needs))
    if len(needs) != 1:
        return None
    if offers_option(plain) or (bare and plain.endswith(_LEADS_IN) and len(plain.split()) <= _BARE_MAX
                                and _HAS.search(plain) is None):
        return next(iter(needs))
    return None


def _last_break(text: str, start: int) -> int:
    """Where the words before `start` begin: after the last break, or the one before it when
    nothing but a colon or bracket stands between ("without the area: X"), or an example's
    marker ("drop the area: e.g. X"); a single letter's full stop ("e.g.") is no break."""
    ends = [0, *(m.end() for m in _BREAK.finditer(text, 0, start))]
    if len(ends) > 1 and not any(ch.isalnum() for ch in _BY_WAY_OF.sub("", text[ends[-1]:start])):
        return ends[-2]
    return ends[-1]


@lru_cache(maxsize=8192)
def _name_pattern(key: str) -> re.Pattern[str]:
    """A place's name or id as a whole word or words (compiled once: the re module's own cache
    holds fewer patterns than the domains have places)."""
    return re.compile(rf"(?<!\w){re.escape(key)}(?!\w)")


def _spans(text: str, key: str) -> Iterator[tuple[int, int]]:
    """The spans of `_name_pattern(key).finditer(text)`, found by substring search: `key` where
    neither the character before it nor the one after is a word character (``\\w``: a letter or
    digit in any script, or "_"), each search going on after the last match, or one character
    after a place where the key stands inside a word."""
    if not key:
        yield from (m.span() for m in _name_pattern(key).finditer(text))
        return
    n, size = len(text), len(key)
    start = text.find(key)
    while start >= 0:
        end = start + size
        if (start == 0 or not _word_char(text[start - 1])) and (end == n or not _word_char(text[end])):
            yield start, end
            start = text.find(key, end)
        else:
            start = text.find(key, start + 1)


def _word_char(ch: str) -> bool:
    """Whether `ch` is what ``\\w`` matches in a str pattern."""
    return ch.isalnum() or ch == "_"


@lru_cache(maxsize=256)
def _key_order(names: tuple[tuple[str, str], ...]) -> tuple[tuple[str, int], ...]:
    """Every name (lower-cased) and id of the places `names` lists ((name, id) each) with the
    place's index, the longest first (a stable sort: a place's name before its id, places in
    order). A world's places stay the same all episode and each message reads them again."""
    keys = [(key, i) for i, (name, place_id) in enumerate(names) for key in (name.lower(), place_id)]
    return tuple(sorted(keys, key=lambda ki: -len(ki[0])))


def place_mentions(text: str, places: list[Place]) -> list[tuple[Place, int, int]]:
    """Where `places` are named in `text` (lower-cased), in order; a longer name first, so
    "olive stool 7" is not also "olive stool"."""
    found: list[tuple[Place, int, int]] = []
    taken: list[tuple[int, int]] = []
    for key, i in _key_order(tuple((p.name, p.id) for p in places)):
        if key not in text:  # most places go unnamed: a substring test spares their regex
            continue
        place = places[i]
        for start, end in _spans(text, key):
            if not any(a < end and start < b for a, b in taken):
                taken.append((start, end))
                found.append((place, start, end))
    return sorted(found, key=lambda f: f[1])
