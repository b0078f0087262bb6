"""An entry's page and its episodes' timelines, served (FastAPI TestClient; no network)."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
import lb_page_support as P  # noqa: E402
import lb_support as S  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from markupsafe import escape  # noqa: E402

from agentgym.eval.timeline import episode_summary, timeline  # noqa: E402
from agentgym.eval.transcript import replay_transcript  # noqa: E402
from agentgym.eval.view import clip  # noqa: E402
from agentgym.leaderboard.entry_page import BODY_CHARS, BODY_LINES, listing  # noqa: E402
from agentgym.leaderboard.episodes import EPISODES_PER_PAGE, Episode  # noqa: E402
from agentgym.leaderboard.server import create_app, wants_html  # noqa: E402
from agentgym.leaderboard.service import receive  # noqa: E402
from agentgym.leaderboard.store import Store  # noqa: E402

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
PAYLOAD_AGENT = "lb_page_support:PayloadAgent"


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, int]]]:
    """A board with the heuristic's run and a run whose every turn is a payload, the latter
    under a payload for each text field."""
    store = Store(tmp_path_factory.mktemp("entry") / "board.sqlite")
    ids = {"heuristic": receive(S.body_for(S.records("heuristic")), store, suites=S.REGISTRY, workers=1).entry.id,
           "payload": receive(S.body_for(S.records(PAYLOAD_AGENT), **S.payload_fields(0)), store, suites=S.REGISTRY,
                              workers=1).entry.id}
    with TestClient(create_app(store, suites=S.REGISTRY, workers=1)) as client:
        yield client, ids


@pytest.mark.parametrize("accept, html", [
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", True),  # a browser
    ("text/html", True),
    (None, False), ("", False), ("*/*", False), ("application/json", False),
    ("application/json, text/html", False),  # a tie keeps the API's answer
    ("text/html;q=0.5, application/json", False),
    ("text/html;q=0, */*", False), ("text/html;q=bad", False),
])
def test_a_browser_gets_html_and_everything_else_json(accept: str | None, html: bool) -> None:
    assert wants_html(accept) is html


def test_the_entry_route_answers_json_unless_asked_for_html(board: tuple[TestClient, dict[str, int]]) -> None:
    client, ids = board
    url = f"/submissions/{ids['heuristic']}"
    for headers in ({}, {"Accept": "application/json"}, {"Accept": "*/*"}):
        r = client.get(url, headers=headers)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json", headers
        assert r.json()["summary"]["cells"] and r.json()["status"] == "ranked" and r.headers["vary"] == "Accept"
    page = client.get(url, headers=BROWSER)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["vary"] == "Accept" and page.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert client.get("/submissions/999", headers=BROWSER).status_code == 404
    assert client.get(url + "?page=0", headers=BROWSER).status_code == 422
    # The board links each entry to its page.
    assert f'href="{url}"' in client.get("/leaderboard").text


def test_the_entry_page_lists_its_episodes_and_numbers(board: tuple[TestClient, dict[str, int]]) -> None:
    client, ids = board
    entry_id = ids["heuristic"]
    recs = S.records("heuristic")
    page = client.get(f"/submissions/{entry_id}", headers=BROWSER).text
    m = P.assert_inert(page)
    links = [a["href"] for t, a in m.tags if t == "a" and "/episodes/" in (a.get("href") or "")]
    assert links == [f"/submissions/{entry_id}/episodes/{i}" for i in range(len(recs))]
    wins = sum(episode_summary(r)["success"] for r in recs)
    assert page.count(">success<") == wins and page.count(">failure<") == len(recs) - wins
    assert "Success against noise" in page and "<figure" in page and "Per env and noise setting" in page
    # Cells link to their episodes; a filter lists only those.
    medium = client.get(f"/submissions/{entry_id}?env=AgentRL/Dialog-v0&noise=medium", headers=BROWSER).text
    shown = re.findall(r'<tr class="episode">.*?</tr>', medium)
    assert len(shown) == sum(r["env"]["noise"] == "medium" for r in recs) and all(">medium<" in row for row in shown)
    assert "every episode" in medium
    past = client.get(f"/submissions/{entry_id}?page=2", headers=BROWSER).text
    assert 'class="episode"' not in past and "No episodes on this page" in past


def test_a_list_is_cut_in_pages_and_filtered() -> None:
    summary = {"success": True, "score": 1.0, "turns": 1, "tool_calls": 0, "faults": 0, "recovered": 0,
               "fault_kinds": [], "agent_error": None}
    eps = [Episode(i, "A" if i % 2 else "B", "none", i, 0, summary) for i in range(2 * EPISODES_PER_PAGE + 7)]
    first, last = listing(eps, 1), listing(eps, 3)
    assert first.pages == 3 and [e.index for e in first.episodes] == list(range(EPISODES_PER_PAGE))
    assert len(last.episodes) == 7 and last.first == 2 * EPISODES_PER_PAGE + 1
    only_a = listing(eps, 1, env="A")
    assert only_a.total == EPISODES_PER_PAGE + 3 and all(e.env == "A" for e in only_a.episodes)
    assert listing(eps, 9).episodes == [] and listing(eps, 1, noise="heavy").total == 0


def _fault_index(recs: list[dict[str, Any]]) -> int:
    return next(i for i, r in enumerate(recs) if episode_summary(r)["faults"] and r["steps"])


def test_an_episode_page_is_its_timeline(board: tuple[TestClient, dict[str, int]]) -> None:
    client, ids = board
    entry_id = ids["heuristic"]
    recs = S.records("heuristic")
    index = _fault_index(recs)
    page = client.get(f"/submissions/{entry_id}/episodes/{index}", headers=BROWSER)
    assert page.status_code == 200 and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    P.assert_inert(page.text)
    events = timeline(recs[index], replay_transcript(recs[index]))
    kinds = {e.kind for e in events}
    assert {"tool_call", "fault", "end"} <= kinds and any(e.marks for e in events)
    for e in events:
        assert str(escape(e.text)) in page.text, e
        if e.body:
            assert str(escape(clip(e.body, BODY_CHARS, BODY_LINES))) in page.text
        for mark in e.marks:
            assert str(escape(mark.text)) in page.text
    assert "injected fault" in page.text and "turn 1" in page.text
    assert f'href="/submissions/{entry_id}/episodes/{index + 1}"' in page.text
    assert client.get(f"/submissions/{entry_id}/episodes/{len(recs)}", headers=BROWSER).status_code == 404
    assert client.get(f"/submissions/{entry_id}/episodes/-1", headers=BROWSER).status_code == 422


def test_payloads_in_names_arguments_and_observations_render_inert(board: tuple[TestClient,
                                                                                dict[str, int]]) -> None:
    client, ids = board
    entry_id = ids["payload"]
    recs = S.records(PAYLOAD_AGENT)
    fields = S.payload_fields(0)
    entry_page = client.get(f"/submissions/{entry_id}", headers=BROWSER).text
    P.assert_inert(entry_page)
    for text in (fields["agent"], fields["model"], fields["revision"], fields["organisation"]):
        assert str(escape(text)) in entry_page
    echoed = 0
    for index in (0, 1, len(recs) - 1):
        transcript = replay_transcript(recs[index])
        tool_texts = [m["content"] for step in transcript.steps for m in step if m.get("role") == "tool"]
        echoed += sum(P.SHORT_SCRIPT in t for t in tool_texts)  # the observation holds a payload
        page = client.get(f"/submissions/{entry_id}/episodes/{index}", headers=BROWSER).text
        P.assert_inert(page)
        assert str(escape(fields["agent"])) in page
        assert str(escape(P.SHORT_SCRIPT)) in page and P.SHORT_SCRIPT not in page
        assert all(p not in page for p in S.PAYLOADS if "<" in p)
    assert echoed, "no observation repeated a payload: the test would not exercise them"
    print(f"\nL5 entry pages: 4 pages with payloads in every text field, {echoed} observations echoing one: "
          f"only the pages' own script")


def test_sealed_entries_link_their_records(tmp_path: Path) -> None:
    store = Store(tmp_path / "board.sqlite")
    body = S.body_for(S.records("heuristic"))
    from agentgym.leaderboard.submission import decode_submission
    from agentgym.leaderboard.verify import verify_submission

    verified = verify_submission(decode_submission(body), S.REGISTRY, workers=1)
    entry, _ = store.add(verified, body, track="sealed")
    with TestClient(create_app(store, suites=S.REGISTRY, workers=1)) as client:
        page = client.get(f"/submissions/{entry.id}", headers=BROWSER).text
        P.assert_inert(page)
        assert f'href="/submissions/{entry.id}/records"' in page and "Sealed track" in page
        assert client.get(f"/submissions/{entry.id}/records").status_code == 200


class _HeldStore(Store):
    """A board whose stored bodies are read only once `release` is set (a page view in progress)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reading, self.release = threading.Event(), threading.Event()

    def payload(self, entry_id: int) -> bytes | None:
        self.reading.set()
        assert self.release.wait(30)
        return super().payload(entry_id)


def test_page_views_past_the_limit_are_refused_busy(tmp_path: Path) -> None:
    store = _HeldStore(tmp_path / "board.sqlite")
    store.release.set()
    entry_id = receive(S.body_for(S.records("heuristic")), store, suites=S.REGISTRY, workers=1).entry.id
    store.release.clear()
    app = create_app(store, suites=S.REGISTRY, workers=1, max_pending=1)
    with S.serving(app) as base:
        def view(path: str) -> int:
            request = urllib.request.Request(base + path, headers=BROWSER)
            try:
                with urllib.request.urlopen(request, timeout=30) as r:
                    return int(r.status)
            except urllib.error.HTTPError as exc:
                return int(exc.code)

        first: list[int] = []
        worker = threading.Thread(target=lambda: first.append(view(f"/submissions/{entry_id}")))
        worker.start()
        assert store.reading.wait(30)
        assert view(f"/submissions/{entry_id}/episodes/0") == 503  # the one view slot is taken
        store.release.set()
        worker.join(30)
        assert first == [200] and view(f"/submissions/{entry_id}/episodes/0") == 200
        assert view("/leaderboard") == 200  # the board itself is never refused for it
