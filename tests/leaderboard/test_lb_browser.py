"""RELIABILITY L5 in a real browser: the served board in headless Chromium runs no payload;
and the board, an entry's page and an episode's page fit 1,400 px and sort by a click.

The board's entries carry injection payloads in every text field; each payload would set
``data-pwned`` on the page's body if it ever ran. Chromium loads the page, lets its virtual
clock run, and dumps the DOM as it then is: the body must carry no such attribute, the page
must hold no element a payload could have made (its own script, which sorts the tables, is the
only one), and the table must list the entries in rank order. A control page with live payloads
proves the sentinel does fire when script runs. The layout and the sorting are measured and
clicked over Chromium's DevTools protocol, in a 1,400 px wide window with its scroll bar.

Needs Debian's ``chromium`` (the Makefile's test set-up installs it); skipped without it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator

import lb_page_support as P
import lb_support as S
import pytest

from agentgym.leaderboard.board import build_board
from agentgym.leaderboard.page import render_html
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import Entry, Store

CHROMIUM = P.CHROMIUM
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (`apt-get install chromium`; "
                                                         "the Makefile's test set-up installs it)")
HERE = Path(__file__).resolve().parent
PUBLISHED = HERE.parents[1] / "leaderboard" / "index.html"
#: Each payload entry's agent text, by the index of its payload fields.
PAYLOAD_ENTRY = len(S.AGENTS)


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.body: dict[str, str | None] = {}
        self.in_body = False
        self.html = ""
        self.rows: list[dict[str, str | None]] = []
        self.cells: list[list[str]] = []
        self._cell: list[str] | None = None
        self._table: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "body":
            self.body, self.in_body = a, True
        if tag == "table":
            self._table = a.get("class")
        if tag == "tr" and a.get("class") == "entry" and self._table == "board":
            self.rows.append(a)
            self.cells.append([])
        if tag == "td" and self._table == "board" and self.cells:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells[-1].append("".join(self._cell))
            self._cell = None
        if tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _dump_dom(url: str, profile: Path) -> _Dom:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
           f"--user-data-dir={profile}", "--virtual-time-budget=3000", "--dump-dom", url]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env={**os.environ, "HOME": str(profile)})
    assert "<body" in out.stdout, f"chromium dumped no DOM (rc {out.returncode}): {out.stderr[-2000:]}"
    dom = _Dom()
    dom.feed(out.stdout)
    dom.html = out.stdout
    return dom


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def board_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Honest runs of four agents and the oracle, every text field a payload."""
    path = tmp_path_factory.mktemp("browser") / "board.sqlite"
    store = Store(path)
    for i, (agent, kwargs) in enumerate(S.AGENTS):
        receive(S.body_for(S.records(agent, kwargs), **S.payload_fields(i)), store, suites=S.REGISTRY, workers=1)
    # And a run whose every turn is a payload (its episodes' pages show them).
    receive(S.body_for(S.records("lb_page_support:PayloadAgent"), **S.payload_fields(PAYLOAD_ENTRY)), store,
            suites=S.REGISTRY, workers=1)
    return path


@pytest.fixture(scope="module")
def server(board_db: Path) -> Iterator[str]:
    port = _free_port()
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import uvicorn
        import lb_support as S
        from agentgym.leaderboard.server import create_app
        uvicorn.run(create_app({str(board_db)!r}, suites=S.REGISTRY, workers=1), host="127.0.0.1", port={port},
                    log_level="warning")
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
            try:
                with urllib.request.urlopen(base + "/leaderboard.json", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("the server did not start within 30 s")
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _check_board(dom: _Dom, expected_agents: list[str]) -> None:
    assert "data-pwned" not in dom.body, f"a payload ran: body attributes {dom.body}"
    P.assert_inert(dom.html)  # the page's own script and style only, no element a payload made
    ranks = [int(r["data-rank"] or 0) for r in dom.rows]
    assert ranks and ranks == sorted(ranks), ranks
    success = [float(re.match(r"([\d.]+)%", c[5]).group(1)) for c in dom.cells]  # type: ignore[union-attr]
    assert success == sorted(success, reverse=True), success
    agents = [c[1] for c in dom.cells]  # the agent cell's text: the name, then the description
    assert sorted(agents) == sorted(expected_agents)  # each payload shown as its exact text, no row added


def _ranked_agents() -> list[str]:
    ranked = [i for i, (agent, _) in enumerate(S.AGENTS) if agent != "oracle"] + [PAYLOAD_ENTRY]
    return [S.payload_fields(i)["agent"] + S.payload_fields(i)["description"] for i in ranked]


def test_control_page_shows_the_sentinel_works(tmp_path: Path) -> None:
    page = tmp_path / "control.html"
    page.write_text("<!doctype html><html><body><p>control</p>"
                    "<script>document.body.setAttribute('data-pwned-script','1')</script>"
                    "<img src=x onerror=\"document.body.setAttribute('data-pwned-img','1')\"></body></html>")
    dom = _dump_dom(page.as_uri(), tmp_path / "profile")
    assert dom.body.get("data-pwned-script") == "1" and dom.body.get("data-pwned-img") == "1"


def test_l5_served_board_runs_no_payload(server: str, tmp_path: Path) -> None:
    dom = _dump_dom(server + "/leaderboard", tmp_path / "profile")
    _check_board(dom, _ranked_agents())
    print(f"\nL5 (Chromium, served with CSP): {len(dom.rows)} ranked rows in rank order, 0 payloads ran")


def test_l5_static_board_runs_no_payload_even_without_csp(board_db: Path, tmp_path: Path) -> None:
    # Escaping alone must hold: the static page without its CSP meta tag.
    page = tmp_path / "board.html"
    page.write_text(render_html(build_board(Store(board_db).entries(), S.REGISTRY), csp_meta=False), "utf-8")
    dom = _dump_dom(page.as_uri(), tmp_path / "profile")
    _check_board(dom, _ranked_agents())
    print(f"\nL5 (Chromium, static file, no CSP): {len(dom.rows)} ranked rows in rank order, 0 payloads ran")


# ============================================================================ layout and sorting, clicked
@pytest.fixture
def browser(tmp_path: Path) -> Iterator[P.Browser]:
    b = P.Browser(tmp_path / "profile")
    try:
        yield b
    finally:
        b.close()


_PWNED = "new Promise(done => setTimeout(() => done(document.body.hasAttribute('data-pwned')), 300))"


def _column(b: P.Browser, table: str, column: int) -> list[str]:
    return b.eval(f"Array.from(document.querySelector({table!r}).tBodies[0].rows)"
                  f".map(r => r.cells[{column}].getAttribute('data-sort'))")  # type: ignore[no-any-return]


def _click(b: P.Browser, table: str, column: int) -> str:
    return b.eval(f"(() => {{ const th = document.querySelector({table!r}).tHead.rows[0].cells[{column}];"
                  "th.querySelector('button').click(); return th.getAttribute('aria-sort'); })()")  # type: ignore


def _fits(b: P.Browser, what: str) -> None:
    o = b.overflow()
    assert o["scroll"] <= o["client"], f"{what} is {o['scroll']} px wide in {o['client']} px: {o['wide']}"


def test_served_board_fits_1400px_and_sorts_by_a_click(server: str, browser: P.Browser) -> None:
    browser.open(server + "/leaderboard")
    assert browser.eval(_PWNED) is False
    _fits(browser, "the board, every text field a payload,")
    # The page's script ran under the served policy: every header became a button.
    heads = browser.eval("document.querySelectorAll('table.board th').length")
    assert browser.eval("document.querySelectorAll('table.board th button').length") == heads == 15
    ranks = _column(browser, "table.board", 0)
    assert _click(browser, "table.board", 6) == "descending"  # Score: best first
    scores = [float(v) for v in _column(browser, "table.board", 6)]
    assert scores == sorted(scores, reverse=True)
    assert _click(browser, "table.board", 6) == "ascending"
    assert [float(v) for v in _column(browser, "table.board", 6)] == sorted(scores)
    assert _click(browser, "table.board", 1) == "ascending"  # Agent: by name, as the browser collates
    names = _column(browser, "table.board", 1)
    assert names == browser.eval(f"{json.dumps(names)}.slice().sort((a, b) => a.localeCompare(b))")
    assert _click(browser, "table.board", 0) == "ascending" and _column(browser, "table.board", 0) == ranks
    print(f"\nboard at 1,400 px: {browser.overflow()['scroll']} px wide, {len(ranks)} rows sorted by clicks")


def test_sorting_puts_n_a_last_both_ways(tmp_path: Path, browser: P.Browser) -> None:
    def entry(i: int, goal: float | None) -> Entry:
        agg = {"value": .5 - i / 100, "ci": [.3, .7], "n": 10}
        summary = {"episodes": 10, "primary": "success", "success": agg, "score": agg,
                   "goal_consistency": {"value": goal, "ci": [None, None] if goal is None else [goal, goal], "n": 1}}
        return Entry(id=i, created_at="2026-01-01T00:00:00+00:00", agent=f"a{i}", model="m", revision="r",
                     organisation="o", description="", suite=S.SUITE.id, package_version="0.1.0",
                     records_sha256=f"{i:064x}", config_hash="c" * 64, agent_config={}, reference=False, episodes=10,
                     summary=summary, verify_s=0.1)

    goals = [.5, None, .9, .1, None, .7]
    page = tmp_path / "board.html"  # the static file, with its policy in a meta tag
    page.write_text(render_html(build_board([entry(i + 1, g) for i, g in enumerate(goals)], S.REGISTRY)), "utf-8")
    browser.open(page.as_uri())
    assert _click(browser, "table.board", 10) == "descending"
    assert _column(browser, "table.board", 10) == ["0.9", "0.7", "0.5", "0.1", "", ""]
    assert _click(browser, "table.board", 10) == "ascending"
    assert _column(browser, "table.board", 10) == ["0.1", "0.5", "0.7", "0.9", "", ""]
    assert browser.eval("document.querySelector('table.board').tBodies[0].rows[4].cells[10].textContent") == "n/a"


def test_entry_and_episode_pages_fit_and_run_no_payload(server: str, browser: P.Browser) -> None:
    with urllib.request.urlopen(server + "/leaderboard.json", timeout=10) as r:
        rows = json.load(r)["suites"][0]["rows"]
    entry_id = next(row["id"] for row in rows if row["agent"] == S.payload_fields(PAYLOAD_ENTRY)["agent"])
    browser.open(f"{server}/submissions/{entry_id}")  # Chromium asks for text/html: the page, not the JSON
    assert browser.eval("document.querySelector('table.episodes') !== null")
    assert browser.eval(_PWNED) is False
    _fits(browser, "an entry's page")
    episodes = browser.eval("document.querySelectorAll('table.episodes tbody tr').length")
    for index in (0, episodes - 1):
        browser.open(f"{server}/submissions/{entry_id}/episodes/{index}")
        assert browser.eval("document.querySelectorAll('section.turn').length") >= 2
        assert browser.eval(f"document.body.textContent.includes({P.SHORT_SCRIPT!r})")  # shown as text
        assert browser.eval(_PWNED) is False
        _fits(browser, f"episode {index}'s page")
    print(f"\nentry page and 2 of its {episodes} episode pages at 1,400 px: fit, 0 payloads ran")


@pytest.mark.slow
def test_published_board_fits_1400px(browser: P.Browser) -> None:
    # The committed file: `make leaderboard` writes it with the page of this package.
    browser.open(PUBLISHED.as_uri())
    _fits(browser, "leaderboard/index.html")
    assert browser.eval("document.querySelectorAll('table.board th button').length") > 0  # sortable
