"""``leaderboard/README.md`` says what the folder holds and what the board serves, as they are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from agentgym.leaderboard.chart import MAX_SERIES  # noqa: E402
from agentgym.leaderboard.entry_page import BODY_CHARS, BODY_LINES  # noqa: E402
from agentgym.leaderboard.episodes import EPISODES_PER_PAGE, KEPT_LISTS  # noqa: E402
from agentgym.leaderboard.server import create_app  # noqa: E402

FOLDER = Path(__file__).resolve().parents[2] / "leaderboard"
README = (FOLDER / "README.md").read_text("utf-8")
_WORDS = {10: "ten"}


def _what_is_here() -> str:
    return README[README.index("This folder is"):README.index("`make leaderboard`")]


def test_the_readme_names_every_file_of_the_folder_and_no_other() -> None:
    listed = set(re.findall(r"`([\w.-]+(?:/)?)`", _what_is_here()))
    present = {p.name + ("/" if p.is_dir() else "") for p in FOLDER.iterdir() if not p.name.startswith(".")}
    present |= {p.name for p in (FOLDER / "submissions").iterdir()}
    named = {n for n in listed if "." in n or n.endswith("/")} - {"core-v0"}
    assert named == present, (named ^ present)


def test_the_readme_route_table_is_the_servers(tmp_path: Path) -> None:
    app = create_app(tmp_path / "board.sqlite")
    served = {(m, r.path) for r in app.routes for m in getattr(r, "methods", ()) if m in ("GET", "POST")}
    served -= {("GET", "/openapi.json"), ("GET", "/")}
    table = README[README.index("| route | what |"):README.index("**The board.**")]
    documented = set()
    for method, path in re.findall(r"^\| `(GET|POST) (/[^`]*)`", table, re.M):
        documented.add((method, path.replace("ID", "{entry_id}").replace("/N", "/{index}")))
    assert documented == served, documented ^ served
    assert "`/sealed/...`" in table


def test_the_readme_states_the_pages_limits_as_the_code_has_them() -> None:
    assert f"{EPISODES_PER_PAGE} a page" in README
    assert f"{BODY_CHARS:,} characters or {BODY_LINES} lines" in README
    assert f"the first\n{_WORDS[MAX_SERIES]}" in README or f"the first {_WORDS[MAX_SERIES]}" in README
    assert f"for the last {KEPT_LISTS} entries viewed" in README
