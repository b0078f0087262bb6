"""The paraphrase corpus: how assistants ask for each slot, and messages that ask for none.

Each ``data/*.jsonl`` line is one phrasing, parsed strictly (an unknown or missing field, an
unknown concept, style, family or domain is an error naming the file and line)::

    {"id": "dialog/area/polite/2", "family": "dialog", "domains": [], "style": "polite",
     "asks": ["area"], "excludes": [], "text": "Could you tell me which part of town you'd prefer?"}

- ``family``: whose users it is for, ``dialog`` or ``tooluse`` (their sub-task users in
  CrossTask too), or ``any`` (chatter that asks for nothing).
- ``domains``: the domains whose wording it uses (``[]``: every domain of the family).
- ``asks``: the slot concepts it asks for (``open`` for an open question, alone); every one asked
  must be answered. ``excludes``: the concepts it mentions without asking (negatives), which must
  not be revealed.
- ``text``: the message; ``{noun}`` (dialog only) becomes the domain's noun ("restaurant").

Positive styles ask (``compound`` asks for two or three slots at once); negative styles do not
ask for what they mention (``exclusion`` asks for one slot while ruling another out).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from agentgym.core.data import strict

__all__ = [
    "CONCEPTS",
    "MEASURED",
    "OPEN",
    "POSITIVE_STYLES",
    "NEGATIVE_STYLES",
    "SINGLE_STYLES",
    "MIN_PER_CONCEPT",
    "Phrasing",
    "parse_record",
    "parse_lines",
    "load_corpus",
    "coverage_problems",
]

#: An open question ("Anything else I should know?"): answered with one requirement not yet stated.
OPEN = "open"
#: The slot concepts of each family: Dialog constraint kinds, ToolUse detail slots.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "dialog": ("category", "area", "price", "rating", "amenity", "time"),
    "tooluse": ("employee", "month", "currency", "attendees", "date", "duration", "title", "email", "order",
                "product", "variant", "service", "severity", "rollback"),
}
#: The concepts measured per family: every Dialog slot; the ToolUse details a task holds back
#: (asked for) or blurs (ambiguity noise); the others are always in the request itself.
MEASURED: dict[str, tuple[str, ...]] = {
    "dialog": (*CONCEPTS["dialog"], OPEN),
    "tooluse": ("currency", "duration", "email", "service", "severity", OPEN),
}
#: The styles of a phrasing that asks for one slot; each concept has phrasings of every one.
SINGLE_STYLES: tuple[str, ...] = ("terse", "question", "polite", "indirect", "imperative", "yesno", "typo", "domain")
#: ``listing``: a question that lists the values it offers ("Which setting (rooftop, ballroom or
#: barn)?"), for one slot or several, in a domain's words.
POSITIVE_STYLES: tuple[str, ...] = (*SINGLE_STYLES, "compound", "listing")
NEGATIVE_STYLES: tuple[str, ...] = ("statement", "negation", "exclusion", "chatter", "substring")
#: Phrasings that ask for one concept alone, per measured concept and family.
MIN_PER_CONCEPT = 40
_FAMILIES = ("dialog", "tooluse", "any")
_FIELDS = {"id", "family", "domains", "style", "asks", "excludes", "text"}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_MAX_TEXT = 500


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One assistant message of the corpus and what it asks for."""

    id: str
    family: str
    domains: tuple[str, ...]
    style: str
    asks: tuple[str, ...]
    excludes: tuple[str, ...]
    text: str

    @property
    def negative(self) -> bool:
        """Whether the message mentions slots it does not ask for (the user must not reveal them)."""
        return self.style in NEGATIVE_STYLES

    @property
    def is_open(self) -> bool:
        return self.asks == (OPEN,)

    def applies_to(self, family: str, domain: str) -> bool:
        """Whether the phrasing is meant for a user of `family` in `domain`."""
        return (self.family in (family, "any")) and (not self.domains or domain in self.domains)

    def message(self, noun: str) -> str:
        """The text as sent to a user whose domain's noun is `noun`."""
        return self.text.replace("{noun}", noun)


@lru_cache(maxsize=None)
def _known_domains(family: str) -> frozenset[str]:
    if family == "dialog":
        from agentgym.envs.dialog.domain import load_domains as dialog_domains

        return frozenset(dialog_domains())
    from agentgym.envs.tooluse.domains import load_domains as tooluse_domains

    return frozenset(tooluse_domains())


def _strings(value: Any, where: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: {field} must be a list of strings")
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: {field} repeats an entry")
    return tuple(value)


def parse_record(raw: Any, where: str = "phrasing") -> Phrasing:
    """Parse one corpus record, strictly; ValueError naming what is wrong."""
    d = strict(raw, _FIELDS, where)
    for field in ("id", "family", "style", "text"):
        if not isinstance(d[field], str) or not d[field].strip():
            raise ValueError(f"{where}: {field} must be a non-empty string")
    family, style, text = d["family"], d["style"], d["text"]
    if family not in _FAMILIES:
        raise ValueError(f"{where}: family must be one of {', '.join(_FAMILIES)}, got {family!r}")
    if style not in POSITIVE_STYLES + NEGATIVE_STYLES:
        raise ValueError(f"{where}: unknown style {style!r}")
    domains = _strings(d["domains"], where, "domains")
    asks = _strings(d["asks"], where, "asks")
    excludes = _strings(d["excludes"], where, "excludes")
    allowed = (*CONCEPTS.get(family, ()), OPEN)
    for c in (*asks, *excludes):
        if c not in allowed:
            raise ValueError(f"{where}: unknown concept {c!r} for family {family}")
    if family == "any":
        if domains:
            raise ValueError(f"{where}: a phrasing for any family cannot name domains")
    else:
        unknown = sorted(set(domains) - _known_domains(family))
        if unknown:
            raise ValueError(f"{where}: unknown {family} domains {unknown}")
    if len(text) > _MAX_TEXT:
        raise ValueError(f"{where}: text longer than {_MAX_TEXT} characters")
    for name in _PLACEHOLDER.findall(text):
        if name != "noun" or family != "dialog":
            raise ValueError(f"{where}: placeholder {{{name}}} is not allowed (only {{noun}}, in dialog phrasings)")
    if OPEN in excludes or (OPEN in asks and len(asks) > 1):
        raise ValueError(f"{where}: an open question asks for nothing else")
    if set(asks) & set(excludes):
        raise ValueError(f"{where}: a concept is both asked and excluded")
    if style in POSITIVE_STYLES:
        if not asks or excludes:
            raise ValueError(f"{where}: a {style} phrasing asks for something and excludes nothing")
        if style != "listing" and (style == "compound") != (len(asks) > 1):
            raise ValueError(f"{where}: exactly the compound (and listing) phrasings ask for more than one concept")
        if style in ("domain", "listing") and not domains:
            raise ValueError(f"{where}: a {style} phrasing names the domains whose wording it uses")
    else:
        if (style == "exclusion") != bool(asks):
            raise ValueError(f"{where}: exactly the exclusion negatives also ask for a concept")
        if style in ("statement", "negation", "exclusion") and not excludes:
            raise ValueError(f"{where}: a {style} negative names the concept it mentions in `excludes`")
    return Phrasing(d["id"], family, domains, style, asks, excludes, text)


def parse_lines(lines: Iterable[str], where: str) -> list[Phrasing]:
    """Parse the records of one JSONL file (blank lines are skipped)."""
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        at = f"{where}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{at}: not JSON ({exc.msg})") from None
        out.append(parse_record(raw, at))
    return out


def load_corpus(folder: str | Path | None = None) -> tuple[Phrasing, ...]:
    """Every phrasing of the ``*.jsonl`` files in `folder` (default: the shipped corpus), in file
    and line order; ids must be unique."""
    if folder is None:
        files = sorted((f for f in resources.files(__package__).joinpath("data").iterdir()
                        if f.name.endswith(".jsonl")), key=lambda f: f.name)
    else:
        files = sorted(Path(folder).glob("*.jsonl"))
    if not files:
        raise ValueError(f"no corpus files (*.jsonl) in {folder}")
    out: list[Phrasing] = []
    seen: dict[str, str] = {}
    for f in files:
        for p in parse_lines(f.read_text("utf-8").splitlines(), f.name):
            if p.id in seen:
                raise ValueError(f"{f.name}: phrasing id {p.id!r} repeats one in {seen[p.id]}")
            seen[p.id] = f.name
            out.append(p)
    return tuple(out)


def coverage_problems(corpus: Iterable[Phrasing]) -> list[str]:
    """What the corpus lacks against its own promise (empty when it keeps it): per family, at
    least `MIN_PER_CONCEPT` single-slot phrasings of every measured concept, in every single
    style, no text twice, compound phrasings, and negatives of every style."""
    corpus = list(corpus)
    problems = []
    for family, concepts in MEASURED.items():
        mine = [p for p in corpus if p.family == family]
        for concept in concepts:
            single = [p for p in mine if p.asks == (concept,) and p.style in SINGLE_STYLES]
            if len(single) < MIN_PER_CONCEPT:
                problems.append(f"{family}/{concept}: {len(single)} phrasings, fewer than {MIN_PER_CONCEPT}")
            missing = sorted(set(SINGLE_STYLES) - {p.style for p in single})
            if missing:
                problems.append(f"{family}/{concept}: no phrasings of style {', '.join(missing)}")
        texts: dict[str, str] = {}
        for p in mine:
            key = " ".join(p.text.lower().split())
            if key in texts:
                problems.append(f"{family}: {p.id} repeats the text of {texts[key]}")
            texts.setdefault(key, p.id)
        if not any(p.style == "compound" for p in mine):
            problems.append(f"{family}: no compound phrasings")
        if family == "dialog" and not any(p.style == "listing" for p in mine):
            problems.append(f"{family}: no listing phrasings")
        negative_styles = {p.style for p in corpus if p.negative and p.family in (family, "any")}
        missing = sorted(set(NEGATIVE_STYLES) - negative_styles)
        if missing:
            problems.append(f"{family}: no negatives of style {', '.join(missing)}")
    return problems
