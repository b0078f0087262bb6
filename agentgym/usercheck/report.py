"""docs/users-check.md, the JSON results and the console table of a run."""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from typing import Any, Sequence

from agentgym.usercheck.proposals import ProposalTrial, proposal_rates
from agentgym.usercheck.summary import TARGETS, ConceptRow, Rate, Summary, clean, understood
from agentgym.usercheck.trials import Settings, Trial

__all__ = ["RunInfo", "markdown", "results_json", "console_table", "meets_targets"]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What the report's header says about the run."""

    command: str
    date: str
    commit: str
    version: str
    corpus_size: int
    settings: Settings


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


def _cell(r: Rate) -> str:
    """``78.2% (74.1-81.9), n=150``."""
    if not r.n:
        return "n/a (n=0)"
    lo, hi = r.ci
    return f"{_pct(r.value)} ({100 * lo:.1f}-{100 * hi:.1f}), n={r.n}"


def _count_cell(r: Rate) -> str:
    """``2/152 = 1.3% (0.4-4.7)``: for rare events the count reads better than the rate."""
    if not r.n:
        return "n/a (n=0)"
    lo, hi = r.ci
    return f"{r.k}/{r.n} = {_pct(r.value)} ({100 * lo:.1f}-{100 * hi:.1f})"


def _mark(ok: bool | None) -> str:
    return "" if ok is None else ("yes" if ok else "**no**")


def _meets(value: float, target: float, at_least: bool) -> bool | None:
    if math.isnan(value):
        return None
    return value >= target if at_least else value <= target


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _concept_ok(row: ConceptRow) -> bool | None:
    u = _meets(row.understanding.value, TARGETS["concept"], True)
    w = _meets(row.wrong.value, TARGETS["wrong"], False)
    if u is None and w is None:
        return None
    return (u is not False) and (w is not False)


def meets_targets(summary: Summary) -> bool:
    """Whether every family meets every target (overall, per concept, wrong slot)."""
    for family, rates in summary.overall.items():
        if _meets(rates["understanding"].value, TARGETS["overall"], True) is False:
            return False
        if _meets(rates["wrong_slot"].value, TARGETS["wrong"], False) is False:
            return False
    return all(_concept_ok(row) is not False for row in summary.concepts)


def _overall(summary: Summary) -> str:
    rows = []
    for family, r in summary.overall.items():
        u, w = r["understanding"], r["wrong_slot"]
        rows.append([family, _cell(u), _mark(_meets(u.value, TARGETS["overall"], True)), _count_cell(w),
                     _mark(_meets(w.value, TARGETS["wrong"], False)), _cell(r["open"]), _cell(r["negatives_clean"])])
    head = ["family", f"understanding (target >= {_pct(TARGETS['overall'])})", "meets", "wrong slot "
            f"(target <= {_pct(TARGETS['wrong'])})", "meets", "open questions: exactly one", "negatives clean"]
    return _table(head, rows)


def _concepts(summary: Summary) -> str:
    rows = [[row.family, row.concept, _cell(row.understanding), _pct(row.no_answer.value),
             _count_cell(row.wrong), _mark(_concept_ok(row))] for row in summary.concepts]
    head = ["family", "concept", f"understanding (target >= {_pct(TARGETS['concept'])})", "no answer",
            f"wrong slot (target <= {_pct(TARGETS['wrong'])})", "meets"]
    return _table(head, rows) + (
        "\n\n`compound`: every held slot a compound question asks for answered; `open`: exactly one "
        "requirement revealed, its wrong-slot column counting more than one.")


def _styles(summary: Summary) -> str:
    families = list(dict.fromkeys(f for f, _ in summary.styles))
    styles = list(dict.fromkeys(s for _, s in summary.styles))
    rows = [[style] + [_cell(summary.styles[(f, style)]) if (f, style) in summary.styles else "" for f in families]
            for style in styles]
    return _table(["style", *families], rows)


def _negatives(summary: Summary) -> str:
    rows = [[r.family, r.style, _cell(r.clean), _count_cell(r.excluded),
             _cell(r.asked) if r.asked.n else "", _pct(r.rephrase.value), _pct(r.proceeds.value)]
            for r in summary.negatives]
    head = ["family", "style", "clean", "excluded slot revealed", "asked slot answered (exclusions)",
            "quiet replies: rephrase", "quiet replies: proceed"]
    return _table(head, rows)


def _proposals(heard: Sequence[ProposalTrial]) -> str:
    if not heard:
        return "Not measured in this run."
    rows = []
    for family, r in proposal_rates(heard).items():
        u, w, c = r["understood"], r["wrong_place"], r["choice_clean"]
        rows.append([family, _cell(u), _mark(_meets(u.value, TARGETS["overall"], True)), _count_cell(w),
                     _mark(_meets(w.value, TARGETS["wrong"], False)), _cell(c), _pct(r["choice_asks"].value)])
    head = ["family", f"recommendation: the recommended place judged (target >= {_pct(TARGETS['overall'])})",
            "meets", f"the other place judged (target <= {_pct(TARGETS['wrong'])})", "meets",
            "choice: no place judged", "choice: asks which one"]
    misses = [[t.family, t.phrasing.style, _short(t.message, 70), _short(t.reply)] for t in heard if not t.understood]
    table = _table(head, rows)
    if misses:
        table += "\n\nMisses:\n\n" + _table(["family", "style", "message", "user's reply"], misses[:8])
    return table


def _short(text: str, n: int = 110) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= n else text[: n - 3] + "..."


def sample_misses(trials: Sequence[Trial], per_kind: int = 3) -> list[Trial]:
    """Some failed trials of each family, in corpus order: the first missed answer of each
    concept (and compound combination), then up to `per_kind` wrong-slot answers and as many
    revealing negatives."""
    out: list[Trial] = []
    for family in dict.fromkeys(t.family for t in trials):
        mine = [t for t in trials if t.family == family]
        seen: set[tuple[str, ...]] = set()
        for t in mine:
            key = ("compound",) if t.phrasing.style == "compound" else t.phrasing.asks
            if t.kind == "matched" and not t.phrasing.negative and not understood(t) and key not in seen:
                seen.add(key)
                out.append(t)
        out += [t for t in mine if not t.phrasing.negative and not t.phrasing.is_open and t.verdict.wrong][:per_kind]
        out += [t for t in mine if t.phrasing.negative and not clean(t)][:per_kind]
    return out


def _misses(trials: Sequence[Trial]) -> str:
    rows = []
    for t in sample_misses(trials):
        v = t.verdict
        what = ("revealed " + ", ".join(v.revealed)) if v.revealed else "revealed nothing"
        rows.append([t.family, t.episode.holding.domain, "+".join(t.phrasing.asks) or "-", t.phrasing.style,
                     _short(t.message, 70), _short(t.reply), what])
    if not rows:
        return "None."
    return _table(["family", "domain", "asks", "style", "message", "user's reply", "verdict"], rows)


def markdown(summary: Summary, trials: Sequence[Trial], info: RunInfo,
             heard: Sequence[ProposalTrial] = ()) -> str:
    """The Markdown report of a run (docs/users-check.md)."""
    s = info.settings
    fields = {
        "command": info.command, "date": info.date, "commit": info.commit, "version": info.version,
        "corpus_size": str(info.corpus_size), "n_trials": str(len(trials)),
        "seeds": f"{s.first_seed}-{s.first_seed + s.pool - 1}", "matched": str(s.matched), "cross": str(s.cross),
        "t_overall": _pct(TARGETS["overall"]), "t_concept": _pct(TARGETS["concept"]), "t_wrong": _pct(TARGETS["wrong"]),
        "overall": _overall(summary), "concepts": _concepts(summary), "styles": _styles(summary),
        "negatives": _negatives(summary), "misses": _misses(trials), "proposals": _proposals(heard),
        "n_proposals": str(len(heard)),
    }
    text = resources.files(__package__).joinpath("template.md").read_text("utf-8")
    for key, value in fields.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def results_json(summary: Summary, trials: Sequence[Trial], info: RunInfo,
                 heard: Sequence[ProposalTrial] = ()) -> dict[str, Any]:
    """The run as one JSON object: header, every rate and every trial."""
    s = info.settings
    return {
        "command": info.command, "date": info.date, "commit": info.commit, "agentgym": info.version,
        "corpus_size": info.corpus_size,
        "settings": {"pool": s.pool, "first_seed": s.first_seed, "matched": s.matched, "cross": s.cross,
                     "per_concept": s.per_concept},
        **summary.to_dict(),
        "trials": [t.to_dict() for t in trials],
        "proposals": {"rates": {f: {k: v.to_dict() for k, v in r.items()} for f, r in proposal_rates(heard).items()},
                      "trials": [t.to_dict() for t in heard]},
    }


def console_table(summary: Summary, proposals: dict[str, dict[str, Rate]] | None = None) -> str:
    """A plain-text table of the overall and per-concept rates (and the proposals')."""
    lines = [f"{'family':10s} {'concept':12s} {'understood':>22s} {'wrong slot':>22s}"]
    for family, r in summary.overall.items():
        lines.append(f"{family:10s} {'OVERALL':12s} {_cell(r['understanding']):>22s} {_count_cell(r['wrong_slot']):>22s}")
    for row in summary.concepts:
        lines.append(f"{row.family:10s} {row.concept:12s} {_cell(row.understanding):>22s} {_count_cell(row.wrong):>22s}")
    for row in summary.negatives:
        lines.append(f"{row.family:10s} {'neg:' + row.style:12s} {_cell(row.clean):>22s} {'(clean)':>22s}")
    for family, r in (proposals or {}).items():
        lines.append(f"{family:10s} {'proposal':12s} {_cell(r['understood']):>22s} {_count_cell(r['wrong_place']):>22s}")
        lines.append(f"{family:10s} {'neg:choice':12s} {_cell(r['choice_clean']):>22s} {'(clean)':>22s}")
    return "\n".join(lines)
