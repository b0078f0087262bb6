"""Rates from trials: per family and concept, per style, for negatives and overall, each with its
count and a 95% Wilson interval. Pure functions of the trials."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from agentgym.usercheck.corpus import CONCEPTS, NEGATIVE_STYLES, OPEN, POSITIVE_STYLES
from agentgym.usercheck.trials import Trial

__all__ = ["Rate", "wilson", "TARGETS", "ConceptRow", "NegativeRow", "Summary", "summarise",
           "understood", "clean"]

#: What the users should reach: understanding overall and per concept, and the wrong-slot ceiling.
TARGETS: dict[str, float] = {"overall": 0.95, "concept": 0.90, "wrong": 0.01}
_Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of `k` successes in `n` trials ((nan, nan) when n is 0)."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class Rate:
    """`k` of `n`, with its 95% Wilson interval."""

    k: int
    n: int

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else math.nan

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.k, self.n)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.ci
        return {"k": self.k, "n": self.n, "rate": _num(self.value), "ci95": [_num(lo), _num(hi)]}


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _rate(trials: Iterable[Trial], hit: Callable[[Trial], bool]) -> Rate:
    trials = list(trials)
    return Rate(sum(1 for t in trials if hit(t)), len(trials))


def understood(t: Trial) -> bool:
    """A matched trial's success: every asked concept the user held was revealed (an open
    question: exactly one requirement not yet stated was revealed)."""
    v = t.verdict
    if t.phrasing.is_open:
        return v.n_revealed == 1
    return bool(v.asked_held) and len(v.answered) == len(v.asked_held)


def clean(t: Trial) -> bool:
    """A negative's success: nothing was revealed beyond what it asked for (for an open question
    that sets a slot aside, "price aside, anything else?": at most one requirement, not that one)."""
    v = t.verdict
    if t.phrasing.is_open:
        return v.n_revealed <= 1 and not v.excluded_revealed
    return set(v.revealed) <= set(t.phrasing.asks) and not v.excluded_revealed


@dataclass(frozen=True, slots=True)
class ConceptRow:
    """One concept of one family (or ``compound``, or ``open``).

    `understanding`: matched trials answered; `no_answer`: matched trials that revealed
    nothing; `wrong`: trials (matched and cross) where a concept not asked was held and one
    was revealed (for ``open``: more than one requirement revealed).
    """

    family: str
    concept: str
    understanding: Rate
    no_answer: Rate
    wrong: Rate

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "concept": self.concept, "understanding": self.understanding.to_dict(),
                "no_answer": self.no_answer.to_dict(), "wrong_slot": self.wrong.to_dict()}


@dataclass(frozen=True, slots=True)
class NegativeRow:
    """One negative style of one family: `clean` (nothing revealed beyond what it asked),
    `excluded` (an excluded concept revealed), `asked` (for exclusions: the asked concept
    answered), and how the reply read when nothing was revealed."""

    family: str
    style: str
    clean: Rate
    excluded: Rate
    asked: Rate
    rephrase: Rate
    proceeds: Rate

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "style": self.style, "clean": self.clean.to_dict(),
                "excluded_revealed": self.excluded.to_dict(), "asked_answered": self.asked.to_dict(),
                "rephrase": self.rephrase.to_dict(), "proceeds": self.proceeds.to_dict()}


@dataclass(frozen=True)
class Summary:
    """Every rate of a run, per family (and ``all``)."""

    concepts: list[ConceptRow]
    styles: dict[tuple[str, str], Rate]
    negatives: list[NegativeRow]
    overall: dict[str, dict[str, Rate]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "targets": dict(TARGETS),
            "overall": {fam: {k: r.to_dict() for k, r in rates.items()} for fam, rates in self.overall.items()},
            "concepts": [r.to_dict() for r in self.concepts],
            "styles": [{"family": f, "style": s, "understanding": r.to_dict()} for (f, s), r in self.styles.items()],
            "negatives": [r.to_dict() for r in self.negatives],
        }


def _concept_order(family_trials: Sequence[Trial]) -> list[str]:
    """The single-slot concepts of the trials: the corpus's concept order, then any other."""
    known = [c for fam in CONCEPTS.values() for c in fam]
    seen = {t.phrasing.asks[0] for t in family_trials if len(t.phrasing.asks) == 1 and not t.phrasing.is_open}
    return [c for c in known if c in seen] + sorted(seen - set(known))


def _family_rows(family: str, trials: Sequence[Trial]) -> tuple[list[ConceptRow], dict[str, Rate]]:
    positive = [t for t in trials if not t.phrasing.negative]
    matched = [t for t in positive if t.kind == "matched"]
    rows = []
    for concept in [*_concept_order(positive), "compound", OPEN]:
        if concept == "compound":
            mine = [t for t in positive if t.phrasing.style == "compound"]
        else:
            mine = [t for t in positive if t.phrasing.asks == (concept,)]
        if not mine:
            continue
        hits = [t for t in mine if t.kind == "matched"]
        if concept == OPEN:
            wrong = _rate(hits, lambda t: t.verdict.n_revealed > 1)
        else:
            wrong = _rate([t for t in mine if t.verdict.opportunity], lambda t: bool(t.verdict.wrong))
        rows.append(ConceptRow(family, concept, _rate(hits, understood),
                               _rate(hits, lambda t: t.verdict.n_revealed == 0), wrong))
    slot_asks = [t for t in matched if not t.phrasing.is_open]
    negatives = [t for t in trials if t.phrasing.negative]
    overall = {
        "understanding": _rate(slot_asks, understood),
        "wrong_slot": _rate([t for t in positive if not t.phrasing.is_open and t.verdict.opportunity],
                            lambda t: bool(t.verdict.wrong)),
        "open": _rate([t for t in matched if t.phrasing.is_open], understood),
        "negatives_clean": _rate(negatives, clean),
    }
    return rows, overall


def summarise(trials: Sequence[Trial]) -> Summary:
    """Every rate of `trials`, per family in the order first seen, and pooled as ``all``."""
    families = list(dict.fromkeys(t.family for t in trials))
    concepts: list[ConceptRow] = []
    styles: dict[tuple[str, str], Rate] = {}
    negatives: list[NegativeRow] = []
    overall: dict[str, dict[str, Rate]] = {}
    for family in families:
        mine = [t for t in trials if t.family == family]
        rows, overall[family] = _family_rows(family, mine)
        concepts += rows
        matched = [t for t in mine if t.kind == "matched" and not t.phrasing.negative and not t.phrasing.is_open]
        for style in POSITIVE_STYLES:
            of_style = [t for t in matched if t.phrasing.style == style]
            if of_style:
                styles[(family, style)] = _rate(of_style, understood)
        for style in NEGATIVE_STYLES:
            neg = [t for t in mine if t.phrasing.style == style]
            if not neg:
                continue
            quiet = [t for t in neg if t.verdict.n_revealed == 0]
            negatives.append(NegativeRow(
                family, style, _rate(neg, clean), _rate(neg, lambda t: bool(t.verdict.excluded_revealed)),
                _rate([t for t in neg if t.verdict.asked_held], lambda t: bool(t.verdict.answered)),
                _rate(quiet, lambda t: t.verdict.reply == "rephrase"),
                _rate(quiet, lambda t: t.verdict.reply == "proceeds")))
    if len(families) > 1:
        _, overall["all"] = _family_rows("all", trials)
    return Summary(concepts, styles, negatives, overall)
