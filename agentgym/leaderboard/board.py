"""Ranking: verified entries into one section per track and suite, ranked rows and reference rows.

Rules (the choices a reader of the board would otherwise have to guess):

- Two tracks, ranked apart. **Sealed** (first): runs the board stepped itself on seeds drawn
  for each run, so no agent saw an env or knew an episode in advance: the ranking of record.
  **Open**: uploaded runs of the public seeds, replay-verified; whether an agent read hidden
  state is the submitter's own word (``privileged``).

- Only entries of a current suite are ranked. Entries of an older suite version, or of a suite
  this agentgym no longer knows, are shown in their own section without ranks.
- Privileged agents (the oracle reads the hidden task) are reference points: shown in a
  separate table of their section, never ranked, so no real agent is ranked below one.
- Rows rank by the suite's primary score (success rate), ties broken by mean score, then by
  the earlier submission. Equal primary scores share a rank.
- In the sealed track an organisation and model rank by their **first complete run** of a suite:
  its later complete runs (new revisions included) are shown below the ranking, never ranked, so
  keeping the best of many runs lifts nothing. Beside each sealed suite, every organisation and
  model's runs are counted: opened, complete, abandoned (closed incomplete, except by a restart
  of the board) and in play, so a run chosen among many abandoned ones shows as such.
- A row whose primary 95% CI overlaps the CI of the row ranked just above it is marked
  *within noise*: the data do not tell the two apart, whatever their order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from agentgym.bench.suites import SUITES, Suite
from agentgym.leaderboard.scoring import primary_aggregate
from agentgym.leaderboard.store import Entry

__all__ = ["Row", "Section", "RunTally", "build_board", "board_dict"]


@dataclass(frozen=True)
class Row:
    """One entry as the board shows it."""

    entry: Entry
    #: 1-based rank, or None (reference agents and older suites are not ranked).
    rank: int | None
    #: The primary CI overlaps the one of the row ranked just above.
    within_noise: bool = False


@dataclass(frozen=True)
class RunTally:
    """The sealed runs of one organisation and model on one suite, counted by how they went."""

    organisation: str
    model: str
    opened: int
    complete: int
    abandoned: int
    in_play: int

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True)
class Section:
    """One suite's part of the board."""

    suite: str
    description: str
    primary: str
    #: True for a current suite (its rows are ranked).
    current: bool
    rows: list[Row] = field(default_factory=list)
    reference: list[Row] = field(default_factory=list)
    #: ``sealed`` or ``open`` (`agentgym.leaderboard.store.TRACKS`).
    track: str = "open"
    #: The suite's noise settings, in its order (empty for a suite this agentgym does not know).
    noise: tuple[str, ...] = ()
    #: Sealed track: complete runs after an organisation and model's first (shown, not ranked).
    later: list[Row] = field(default_factory=list)
    #: Sealed track: every organisation and model's runs of the suite, counted.
    runs: list[RunTally] = field(default_factory=list)


def _primary_value(e: Entry) -> float | None:
    return primary_aggregate(e.summary).get("value")


def _sort_key(e: Entry) -> tuple[float, float, int]:
    # Best first; an undefined number sorts below every defined one.
    p = _primary_value(e)
    s = (e.summary.get("score") or {}).get("value")
    return (-(p if p is not None else -1.0), -(s if s is not None else -1.0), e.id)


def _overlap(a: Entry, b: Entry) -> bool:
    lo_a, hi_a = primary_aggregate(a.summary).get("ci") or (None, None)
    lo_b, hi_b = primary_aggregate(b.summary).get("ci") or (None, None)
    if None in (lo_a, hi_a, lo_b, hi_b):
        return True  # no interval, no evidence of a difference
    return bool(lo_a <= hi_b and lo_b <= hi_a)


def _first_runs(group: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    """The sealed entries that rank (each organisation and model's first complete run) and the later ones."""
    first: dict[tuple[str, str], Entry] = {}
    for e in sorted(group, key=lambda e: e.id):
        first.setdefault((e.organisation, e.model), e)
    ranked = {e.id for e in first.values()}
    return [e for e in group if e.id in ranked], [e for e in group if e.id not in ranked]


def build_board(entries: Sequence[Entry], suites: Mapping[str, Suite] | None = None,
                runs: Mapping[tuple[str, str, str], Mapping[str, int]] | None = None) -> list[Section]:
    """The board's sections: the sealed track, then the open one; in each, current suites first
    (by id), then older versions (by id).

    Args:
        entries: the board's entries.
        suites: the suite registry (default: `SUITES`).
        runs: the sealed runs counted by (organisation, model, suite): ``{"opened", "complete",
            "abandoned", "in_play"}`` (`agentgym.leaderboard.store.Store.sealed_run_counts`); a
            sealed suite with runs and no entry yet still gets its section.
    """
    registry = SUITES if suites is None else suites
    by_suite: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        by_suite.setdefault((e.track, e.suite), []).append(e)
    tallies: dict[str, list[RunTally]] = {}
    for (organisation, model, suite_id), n in sorted((runs or {}).items()):
        tallies.setdefault(suite_id, []).append(RunTally(organisation, model, **n))
        by_suite.setdefault(("sealed", suite_id), [])
    sections = []
    for (track, suite_id), group in by_suite.items():
        suite = registry.get(suite_id)
        current = bool(suite is not None and suite.current)
        group = sorted(group, key=_sort_key)
        real = [e for e in group if not e.reference]
        later: list[Entry] = []
        if track == "sealed":
            real, later = _first_runs(real)
        refs = [Row(e, None) for e in group if e.reference]
        rows: list[Row] = []
        for i, e in enumerate(real):
            if not current:
                rows.append(Row(e, None))
                continue
            prev = real[i - 1] if i else None
            tied = prev is not None and _primary_value(prev) == _primary_value(e)
            rank = rows[-1].rank if tied else i + 1
            rows.append(Row(e, rank, within_noise=prev is not None and _overlap(prev, e)))
        primary = suite.primary if suite is not None else (group[0].summary.get("primary", "success") if group
                                                          else "success")
        sections.append(Section(
            suite=suite_id,
            description=suite.description if suite is not None else "(a suite this agentgym does not know)",
            primary=primary, current=current, rows=rows, reference=refs, track=track,
            noise=tuple(suite.noise) if suite is not None else (), later=[Row(e, None) for e in later],
            runs=tallies.get(suite_id, []) if track == "sealed" else []))
    sections.sort(key=lambda s: (s.track != "sealed", not s.current, s.suite))
    return sections


def _row_dict(row: Row) -> dict[str, Any]:
    entry = {k: v for k, v in row.entry.to_dict().items() if k != "summary"}
    summary = {k: v for k, v in row.entry.summary.items() if k != "cells"}  # cells: GET /submissions/{id}
    return {"rank": row.rank, "within_noise": row.within_noise, **entry, "summary": summary}


def board_dict(sections: Sequence[Section]) -> dict[str, Any]:
    """The board as JSON data (``GET /leaderboard.json``); strings exactly as submitted."""
    return {"suites": [{"track": s.track, "suite": s.suite, "description": s.description, "primary": s.primary,
                        "current": s.current, "rows": [_row_dict(r) for r in s.rows],
                        "reference": [_row_dict(r) for r in s.reference],
                        "later": [_row_dict(r) for r in s.later], "runs": [t.to_dict() for t in s.runs]}
                       for s in sections]}
