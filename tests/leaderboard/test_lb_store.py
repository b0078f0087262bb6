"""The SQLite store and RELIABILITY L3: resubmissions, older suites and incomplete runs are routed right."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Callable

import lb_support as S
import pytest

from agentgym.leaderboard.board import build_board
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import SCHEMA_VERSION, Store
from agentgym.leaderboard.submission import Rejected

SQL_PAYLOADS = [
    "x'); DROP TABLE submissions; --",
    "' OR '1'='1",
    "\"; DELETE FROM submissions WHERE 1=1; --",
    "Robert'); UPDATE submissions SET agent='pwned'; --",
]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "board.sqlite")


def _receive(store: Store, recs: list[dict[str, Any]], **manifest: Any) -> Any:
    return receive(S.body_for(recs, **manifest), store, suites=S.REGISTRY, workers=1)


def test_new_file_is_created_and_migrated(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "board.sqlite"
    s = Store(path)
    assert path.exists() and s.schema_version() == SCHEMA_VERSION
    assert Store(path).migrate() == SCHEMA_VERSION  # reopening migrates nothing
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"meta", "submissions", "payloads"} <= tables


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "board.sqlite"
    Store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = ?", (str(SCHEMA_VERSION + 1), "schema_version"))
    with pytest.raises(ValueError, match="newer|upgrade"):
        Store(path)


def test_entry_round_trip_and_payload(store: Store) -> None:
    body = S.body_for(S.records("heuristic"), model="m", description="two\nlines")
    receipt = receive(body, store, suites=S.REGISTRY, workers=1)
    e = store.get(receipt.entry.id)
    assert e is not None and e.model == "m" and e.description == "two\nlines" and e.episodes == len(S.SUITE)
    assert store.payload(e.id) == body
    assert e.summary["success"]["ci"][0] <= e.summary["success"]["value"] <= e.summary["success"]["ci"][1]
    assert store.get(9999) is None


# ============================================================================ L3
def _l3_cases() -> list[tuple[str, Callable[[Store], Any], str]]:
    """(name, action on a store that holds heuristic@r1 already, expected route)."""
    heur = lambda: S.records("heuristic")  # noqa: E731

    def reordered(store: Store) -> Any:
        recs = heur()
        recs.reverse()  # other bytes, same identity
        return _receive(store, recs, model="base", revision="r1", description="again")

    def missing(store: Store) -> Any:
        return _receive(store, heur()[:-3], model="m-missing")

    def too_few_trials(store: Store) -> Any:
        return _receive(store, [r for r in heur() if r["trial"] == 0], model="m-trials")

    def extra(store: Store) -> Any:
        recs = heur()
        stray = {**recs[0], "key": recs[0]["key"].replace("seed=10000000", "seed=10000099"), "seed": 10000099}
        return _receive(store, recs + [stray], model="m-extra")

    def twice(store: Store) -> Any:
        recs = heur()
        return _receive(store, recs + [recs[4]], model="m-twice")

    return [
        ("resubmission, same bytes", lambda st: _receive(st, heur(), model="base", revision="r1"), "duplicate"),
        ("resubmission, other bytes and text", reordered, "duplicate"),
        ("same model, new revision", lambda st: _receive(st, S.records("lb_support:FlakyAgent"), model="base",
                                                         revision="r2"), "ranked"),
        ("the same records under a new revision", lambda st: _receive(st, heur(), model="base", revision="r3"),
         "duplicate_records"),
        ("same model and revision, other config",
         lambda st: _receive(st, S.records("random", (("seed", 0),)), model="base", revision="r1"), "ranked"),
        ("older suite version", lambda st: _receive(st, S.records("heuristic", (), S.OLD_SUITE.id), model="base",
                                                    revision="r1", suite=S.OLD_SUITE.id), "archived"),
        ("privileged agent", lambda st: _receive(st, S.records("oracle"), model="oracle"), "reference"),
        ("unknown suite", lambda st: _receive(st, heur(), model="m-unknown", suite="core-v9"), "unknown_suite"),
        ("missing episodes", missing, "incomplete"),
        ("too few trials", too_few_trials, "incomplete"),
        ("an episode of another suite", extra, "unknown_episode"),
        ("an episode twice", twice, "duplicate_episode"),
    ]


def test_l3_submissions_routed_correctly(store: Store) -> None:
    first = _receive(store, S.records("heuristic"), model="base", revision="r1")
    assert first.status == "ranked"
    cases = _l3_cases()
    routed = 0
    for name, action, expected in cases:
        before = store.count()
        try:
            receipt = action(store)
            got = receipt.status
            added = store.count() - before
            assert added == (0 if got == "duplicate" else 1), name
            if got == "duplicate":
                assert receipt.entry.id == first.entry.id
        except Rejected as exc:
            got = exc.code
            assert store.count() == before, name
        assert got == expected, (name, got)
        routed += 1
    print(f"\nL3: {routed} of {len(cases)} submissions routed correctly")
    sections = build_board(store.entries(), S.REGISTRY)
    current = next(s for s in sections if s.suite == S.SUITE.id)
    old = next(s for s in sections if s.suite == S.OLD_SUITE.id)
    assert current.current and all(r.rank is not None for r in current.rows)
    assert not old.current and [r.rank for r in old.rows] == [None]
    assert [r.entry.model for r in current.reference] == ["oracle"]
    assert sections[0].suite == S.SUITE.id  # current suites first


def test_too_few_trials_is_named(store: Store) -> None:
    with pytest.raises(Rejected, match="too few trials"):
        _receive(store, [r for r in S.records("heuristic") if r["trial"] == 0])


def test_sql_payloads_are_stored_as_data(store: Store) -> None:
    runs = [("heuristic", ()), *S.distinct_runs(len(SQL_PAYLOADS) - 1)]
    for payload, run in zip(SQL_PAYLOADS, runs):
        _receive(store, S.records(*run), model=payload, revision=payload, agent=payload,
                 organisation=payload, description=payload)
    assert store.count() == len(SQL_PAYLOADS)
    assert sorted(e.model for e in store.entries()) == sorted(SQL_PAYLOADS)
    for e in store.entries():
        assert e.model == e.revision == e.agent == e.organisation == e.description
    # The payloads found the same identity again: no row added, nothing dropped or rewritten.
    again = _receive(store, S.records("heuristic"), model=SQL_PAYLOADS[0], revision=SQL_PAYLOADS[0])
    assert again.status == "duplicate" and store.count() == len(SQL_PAYLOADS)
