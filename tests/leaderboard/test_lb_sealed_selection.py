"""L13: keeping the best of many sealed runs is visible, and lifts nothing (docs/RELIABILITY.md).

An organisation and model rank in the sealed track by their first complete run of a suite; later
complete runs (new revisions included) are shown below the ranking, unranked. Beside the ranking,
every organisation and model's runs are counted: opened, complete, abandoned, in play; one that
abandoned every run still shows. Before: each revision was an entry of its own, the best of a
day's five runs ranked (+2.0 points; of a week's 35, +3.6) and an abandoned run left no trace.
"""

from __future__ import annotations

import time
from pathlib import Path

import lb_sealed_support as T
import lb_support as S

from agentgym.leaderboard.board import board_dict, build_board
from agentgym.leaderboard.page import render_html, render_markdown
from agentgym.leaderboard.store import BOARD_RESTARTED, Entry, Store
from agentgym.leaderboard.tokens import TokenBook


def _entry(entry_id: int, org: str, model: str, success: float, revision: str = "r") -> Entry:
    agg = {"value": success, "ci": [success - 0.02, success + 0.02], "n": 100}
    return Entry(id=entry_id, created_at="2026-01-01T00:00:00+00:00", agent="a", model=model, revision=revision,
                 organisation=org, description="", suite=S.SUITE.id, package_version="x", records_sha256="0" * 64,
                 config_hash="c", agent_config={}, reference=False, episodes=100,
                 summary={"primary": "success", "success": agg, "score": agg}, verify_s=1.0, track="sealed")


def test_the_first_complete_run_ranks_and_later_ones_do_not() -> None:
    # A lab keeps running new revisions of one model and would keep its best; another runs once.
    lab = [_entry(i, "lab", "m", s, f"r{i}") for i, s in enumerate((0.40, 0.46, 0.52, 0.58, 0.64), start=1)]
    other = _entry(9, "other", "n", 0.45)
    (section,) = build_board([*lab, other], S.REGISTRY)
    assert [(r.entry.id, r.rank) for r in section.rows] == [(9, 1), (1, 2)]  # lab ranks by its first: 0.40
    assert sorted(r.entry.id for r in section.later) == [2, 3, 4, 5] and all(r.rank is None for r in section.later)
    suites = board_dict([section])["suites"]
    assert [r["id"] for r in suites[0]["rows"]] == [9, 1] and len(suites[0]["later"]) == 4
    # The open track is unchanged: each identity its own row.
    (open_section,) = build_board([Entry(**{**e.__dict__, "track": "open"}) for e in lab], S.REGISTRY)
    assert [r.entry.id for r in open_section.rows] == [5, 4, 3, 2, 1] and not open_section.later


def test_every_run_is_counted_abandoned_ones_included(tmp_path: Path) -> None:
    store = Store(tmp_path / "board.sqlite")
    token = TokenBook(store).authenticate(TokenBook(store).add("lab", 50)[1])
    rows = [("lab", "m", "complete", None)] + [("lab", "m", "incomplete", "no request for 300 s")] * 4 + [
        ("lab", "m", "incomplete", BOARD_RESTARTED), ("lab", "m", "open", None),
        ("quitter", "q", "incomplete", "an episode in play was lost")]
    with store.connect() as conn:
        for i, (org, model, state, reason) in enumerate(rows):
            conn.execute("INSERT INTO sealed_runs (run_id, token_id, suite, agent, agent_config, model, revision, "
                         "organisation, description, opened_at, state, reason) VALUES (?, ?, ?, 'a', '{}', ?, 'r', "
                         "?, '', ?, ?, ?)", (f"run-{i}", token.id, S.SUITE.id, model, org, time.time(), state, reason))
    counts = store.sealed_run_counts()
    assert counts[("lab", "m", S.SUITE.id)] == {"opened": 7, "complete": 1, "abandoned": 4, "in_play": 1}
    assert counts[("quitter", "q", S.SUITE.id)] == {"opened": 1, "complete": 0, "abandoned": 1, "in_play": 0}
    sections = build_board([_entry(1, "lab", "m", 0.5)], S.REGISTRY, counts)
    (sealed,) = [s for s in sections if s.track == "sealed"]
    assert {(t.organisation, t.abandoned) for t in sealed.runs} == {("lab", 4), ("quitter", 1)}
    html, md = render_html(sections), render_markdown(sections)
    assert "quitter" in html and "Abandoned" in html and "| quitter | q | 1 | 0 | 1 | 0 |" in md
    assert "first complete run" in md


def test_a_live_boards_json_counts_its_runs(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path) as board:
        token = board.token()
        run = T.open_run(board, token)
        T.http(board.url, "GET", f"/sealed/runs/{run['run_id']}", token=token)
        status, answer, _ = T.http(board.url, "GET", "/leaderboard.json")
    assert status == 200
    (sealed,) = [s for s in answer["suites"] if s["track"] == "sealed"]
    assert sealed["runs"] == [{"organisation": "tests", "model": "m", "opened": 1, "complete": 0, "abandoned": 0,
                               "in_play": 1}]
