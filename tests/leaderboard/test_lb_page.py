"""Ranking and rendering, and RELIABILITY L5 on the rendered text: every payload shown as data."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from html.parser import HTMLParser
from typing import Any

import lb_page_support as P
import lb_support as S
import pytest
from markupsafe import escape

from agentgym.leaderboard.board import board_dict, build_board
from agentgym.leaderboard.page import CSP, md_cell, render_html, render_markdown
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import Entry, Store
from agentgym.leaderboard.web import SCRIPT


def _entry(i: int, success: float, ci: tuple[float, float], *, score: float = 0.5, reference: bool = False,
           suite: str = S.SUITE.id, **text: str) -> Entry:
    agg = lambda v, lo, hi: {"value": v, "ci": [lo, hi], "n": 100}  # noqa: E731
    summary: dict[str, Any] = {"episodes": 100, "primary": "success", "success": agg(success, *ci),
                               "score": agg(score, score - .1, score + .1), "tool_f1": agg(.8, .7, .9),
                               "tool_correctness": agg(.95, .9, .97), "tool_efficiency": agg(.7, .6, .8),
                               "recovery_share": agg(.5, .4, .6), "recovery_median": agg(2.0, 1.0, 3.0),
                               "goal_consistency": agg(.9, .85, .95), "pass_hat_k": {**agg(.3, .2, .4), "k": 2}}
    fields = {"agent": f"agent-{i}", "model": f"model-{i}", "revision": "r1", "organisation": "org", "description": ""}
    fields.update(text)
    return Entry(id=i, created_at="2026-01-01T00:00:00+00:00", suite=suite, package_version="0.1.0",
                 records_sha256=f"{i:064x}", config_hash="c" * 64, agent_config={}, reference=reference,
                 episodes=100, summary=summary, verify_s=0.1, **fields)


# ============================================================================ ranking
def test_rows_rank_by_primary_with_noise_marks_and_references_apart() -> None:
    entries = [
        _entry(1, 0.50, (0.40, 0.60)),
        _entry(2, 0.80, (0.75, 0.85)),
        _entry(3, 0.78, (0.72, 0.84)),   # overlaps 2: within noise
        _entry(4, 0.30, (0.25, 0.35)),   # clear of 1
        _entry(5, 1.00, (1.00, 1.00), reference=True),
        _entry(6, 0.50, (0.45, 0.55), score=0.4),  # ties 1 on success, lower score
        _entry(7, 0.90, (0.85, 0.95), suite=S.OLD_SUITE.id),
    ]
    sections = build_board(entries, S.REGISTRY)
    assert [s.suite for s in sections] == [S.SUITE.id, S.OLD_SUITE.id]
    cur, old = sections
    assert [(r.entry.id, r.rank, r.within_noise) for r in cur.rows] == [
        (2, 1, False), (3, 2, True), (1, 3, False), (6, 3, True), (4, 5, False)]
    assert [r.entry.id for r in cur.reference] == [5] and cur.reference[0].rank is None
    assert not old.current and [(r.entry.id, r.rank) for r in old.rows] == [(7, None)]
    data = board_dict(sections)
    assert [r["id"] for r in data["suites"][0]["rows"]] == [2, 3, 1, 6, 4]


def test_unknown_suite_is_shown_unranked() -> None:
    sections = build_board([_entry(1, .5, (.4, .6), suite="gone-v0")], S.REGISTRY)
    assert not sections[0].current and sections[0].rows[0].rank is None


def test_html_marks_noise_and_runs_only_its_own_script() -> None:
    sections = build_board([_entry(1, .5, (.4, .6)), _entry(2, .52, (.42, .62))], S.REGISTRY)
    page = render_html(sections, submit_url="https://board.example/submissions")
    assert "≈" in page and "within noise" in page
    assert "agentgym submit" in page and "https://board.example/submissions" in page
    P.assert_inert(page)  # one script, the page's own
    digest = base64.b64encode(hashlib.sha256(str(SCRIPT).encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in CSP and "unsafe" not in CSP and "default-src 'none'" in CSP
    assert str(escape(CSP)) in page  # the static file carries the policy in a meta tag
    md = render_markdown(sections)
    assert "| 1 |" in md and "| 2 ≈ |" in md


def test_html_cells_carry_sort_keys_and_n_a_sorts_as_nothing() -> None:
    entry, idle = _entry(1, .5, (.4, .6)), _entry(2, .25, (.2, .3))
    idle.summary.update(goal_consistency={"value": None, "ci": [None, None], "n": 0},
                        recovery_share={"value": None, "ci": [None, None], "n": 0})
    page = render_html(build_board([entry, idle], S.REGISTRY))
    m = P.parse(page)
    heads = [a for t, a in m.tags if t == "th"][:15]
    assert [h["data-type"] for h in heads] == ["number"] + ["text"] * 4 + ["number"] * 8 + ["text"] * 2
    assert heads[0]["data-first"] == "ascending" and heads[0]["aria-sort"] == "ascending"  # served in rank order
    assert heads[5]["data-first"] == "descending"
    rows = [[a.get("data-sort") for a in _cells_of(m, entry_id)] for entry_id in ("1", "2")]
    assert rows[0][:2] == ["1", "agent-1"] and float(rows[0][5]) == .5 and float(rows[0][9]) == .5
    assert rows[1][9] == "" and rows[1][10] == ""  # no faults, nothing committed: sorts last either way
    assert rows[1][12] == "100"


def _cells_of(m: P.Markup, entry_id: str) -> list[dict[str, str | None]]:
    start = next(i for i, (t, a) in enumerate(m.tags) if t == "tr" and a.get("data-entry") == entry_id)
    cells = []
    for tag, attrs in m.tags[start + 1:]:
        if tag == "tr":
            break
        if tag == "td":
            cells.append(attrs)
    return cells


def test_columns_show_every_headline_metric_and_n_a_apart_from_zero() -> None:
    entry = _entry(1, .5, (.4, .6))
    idle = _entry(2, .0, (.0, .0))
    idle.summary.update(goal_consistency={"value": None, "ci": [None, None], "n": 0},
                        recovery_share={"value": 0.0, "ci": [0.0, 0.0], "n": 12},
                        recovery_median={"value": None, "ci": [None, None], "n": 12})
    md = render_markdown(build_board([entry, idle], S.REGISTRY))
    header = next(line for line in md.splitlines() if line.startswith("| Rank"))
    for column in ("Tool correctness", "Tool efficiency", "Recovery (share, median turns)", "Goal consistency"):
        assert column in header
    first = next(line for line in md.splitlines() if line.startswith("| 1 |"))
    assert "95.0%" in first and "70.0%" in first and "50.0%, 2" in first and "90.0%" in first
    second = next(line for line in md.splitlines() if line.startswith("| 2 |"))
    assert "0.0%, n/a" in second and "| n/a |" in second  # nothing committed is not 0% nor 100%


# ============================================================================ L5
class _Elements(HTMLParser):
    """Every element and attribute of a page, and the text of each table row."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr" and dict(attrs).get("class") == "entry":
            self.rows.append([])
        if tag == "td" and self.rows:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self.rows:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def payload_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A board whose every entry has a payload in every text field."""
    store = Store(tmp_path_factory.mktemp("l5") / "board.sqlite")
    for i, run in enumerate(S.distinct_runs(len(S.PAYLOADS))):
        receive(S.body_for(S.records(*run), **S.payload_fields(i)), store, suites=S.REGISTRY, workers=1)
    return store


def test_l5_payloads_stored_verbatim_and_rendered_escaped(payload_store: Store) -> None:
    entries = payload_store.entries()
    assert len(entries) == len(S.PAYLOADS)
    for i, e in enumerate(entries):
        f = S.payload_fields(i)
        assert (e.agent, e.model, e.revision, e.organisation, e.description) == (
            f["agent"], f["model"], f["revision"], f["organisation"], f["description"])
    page = render_html(build_board(entries, S.REGISTRY))
    P.assert_inert(page)
    # The same board with plain text in every field has the same elements and attributes: no
    # payload added, closed or broke one.
    plain = [dataclasses.replace(e, agent=f"a{i}", model=f"m{i}", revision="r", organisation="o", description="d")
             for i, e in enumerate(entries)]
    assert P.parse(page).structure() == P.parse(render_html(build_board(plain, S.REGISTRY))).structure()
    parsed = _Elements()
    parsed.feed(page)
    assert len(parsed.rows) == len(S.PAYLOADS)  # no payload added or broke a row
    shown = {row[1] for row in parsed.rows}  # the agent cell: its text, then the description's
    as_text = sum(S.PAYLOADS[i] + "\n".join(S.PAYLOADS) in shown for i in range(len(S.PAYLOADS)))
    assert as_text == len(S.PAYLOADS)
    assert all(str(escape(p)) in page for p in S.PAYLOADS)
    print(f"\nL5: {as_text} of {len(S.PAYLOADS)} payload rows shown as their exact text, only the page's own script, "
          f"the markup of a plain board")


def test_l5_markdown_cells_are_inert(payload_store: Store) -> None:
    md = render_markdown(build_board(payload_store.entries(), S.REGISTRY))
    table = [line for line in md.splitlines() if line.startswith("| ") and "agent" not in line.lower()[:12]]
    rows = [line for line in table if not line.startswith("| Rank")]
    assert len(rows) == len(S.PAYLOADS)
    columns = md.splitlines()[[i for i, line in enumerate(md.splitlines()) if line.startswith("| Rank")][0]]
    n_cols = columns.count(" | ") + 1
    for line in rows:
        unescaped_pipes = sum(1 for i, ch in enumerate(line) if ch == "|" and (i == 0 or line[i - 1] != "\\"))
        assert unescaped_pipes == n_cols + 1, line
        assert "<" not in line and ">" not in line
    assert "'=HYPERLINK" in md and "'@SUM" in md


@pytest.mark.parametrize("text, cell", [
    ("=1+2", "'=1+2"),
    ("+cmd", "'+cmd"),
    ("-2", "'-2"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("a|b", "a\\|b"),
    ("<b>", "&lt;b&gt;"),
    ("[x](javascript:y)", "\\[x\\](javascript:y)"),
    ("two\nlines", "two lines"),
    ("a_b*c`d~e\\f", "a\\_b\\*c\\`d\\~e\\\\f"),
    ("plain text", "plain text"),
])
def test_md_cell(text: str, cell: str) -> None:
    assert md_cell(text) == cell
