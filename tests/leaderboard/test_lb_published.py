"""The repository's published board (``leaderboard/``) agrees with its submission files."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from agentgym.leaderboard.board import build_board
from agentgym.leaderboard.commands import SUBMISSION_SUFFIX
from agentgym.leaderboard.page import render_html, render_markdown
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import decode_submission

FOLDER = Path(__file__).resolve().parents[2] / "leaderboard"
FILES = sorted((FOLDER / "submissions").glob(f"*{SUBMISSION_SUFFIX}"))


def test_board_lists_exactly_the_submission_files() -> None:
    md = (FOLDER / "LEADERBOARD.md").read_text("utf-8")
    page = (FOLDER / "index.html").read_text("utf-8")
    digests = {decode_submission(f.read_bytes()).records_sha256[:12] for f in FILES}
    shown = set(re.findall(r"\| `([0-9a-f]{12})` \|", md))
    assert shown == digests
    assert page.count('class="entry"') == len(FILES)
    assert f"{len(FILES)} verified submission" in md


@pytest.mark.slow
def test_board_is_the_render_of_the_verified_files() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "board.sqlite")
        for f in FILES:
            receive(f.read_bytes(), store)  # raises at the first file that does not verify
        sections = build_board(store.entries())
    assert (FOLDER / "LEADERBOARD.md").read_text("utf-8") == render_markdown(sections)
    assert (FOLDER / "index.html").read_text("utf-8") == render_html(sections)
