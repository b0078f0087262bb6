"""RELIABILITY L5 in a real browser: the served board in headless Chromium runs no payload.

The board's entries carry injection payloads in every text field; each payload would set
``data-pwned`` on the page's body if it ever ran. Chromium loads the page, lets its virtual
clock run, and dumps the DOM as it then is: the body must carry no such attribute, the page
must hold no element a payload could have made, and the table must list the entries in rank
order. A control page with live payloads proves the sentinel does fire when script runs.

Needs Debian's ``chromium`` (the Makefile's test set-up installs it); skipped without it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator

import lb_support as S
import pytest

from agentgym.leaderboard.board import build_board
from agentgym.leaderboard.page import render_html
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import Store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (`apt-get install chromium`; "
                                                         "the Makefile's test set-up installs it)")
HERE = Path(__file__).resolve().parent
LIVE_TAGS = {"script", "img", "iframe", "svg", "a", "object", "embed", "form", "link"}


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.body: dict[str, str | None] = {}
        self.in_body = False
        self.live: list[str] = []
        self.rows: list[dict[str, str | None]] = []
        self.cells: list[list[str]] = []
        self._cell: list[str] | None = None
        self._table: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "body":
            self.body, self.in_body = a, True
        elif self.in_body and tag in LIVE_TAGS:
            self.live.append(tag)
        if self.in_body and any(k.startswith("on") for k in a):
            self.live.append(f"{tag}[on*]")
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
    assert not dom.live, f"live elements in the page: {dom.live}"
    ranks = [int(r["data-rank"] or 0) for r in dom.rows]
    assert ranks and ranks == sorted(ranks), ranks
    success = [float(re.match(r"([\d.]+)%", c[5]).group(1)) for c in dom.cells]  # type: ignore[union-attr]
    assert success == sorted(success, reverse=True), success
    agents = [c[1] for c in dom.cells]  # the agent cell's text: the name, then the description
    assert sorted(agents) == sorted(expected_agents)  # each payload shown as its exact text, no row added


def _ranked_agents() -> list[str]:
    return [S.payload_fields(i)["agent"] + S.payload_fields(i)["description"]
            for i, (agent, _) in enumerate(S.AGENTS) if agent != "oracle"]


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
