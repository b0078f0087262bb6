"""The repository's published board (``leaderboard/``) agrees with its submission files."""

from __future__ import annotations

import gzip
import hashlib
import re
import tempfile
from pathlib import Path

import pytest

from agentgym.leaderboard.board import build_board
from agentgym.leaderboard.commands import SUBMISSION_SUFFIX
from agentgym.leaderboard.page import render_html, render_markdown
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import peek_manifest

FOLDER = Path(__file__).resolve().parents[2] / "leaderboard"
FILES = sorted((FOLDER / "submissions").glob(f"*{SUBMISSION_SUFFIX}"))


def _records_digest(body: bytes) -> str:
    """The SHA-256 of a submission's records part, checked against its manifest's claim.

    Hashing the bytes after the manifest line is what `decode_submission` checks too; parsing
    every record (most of its time) and verifying them is the slow test's `receive`.
    """
    data = gzip.decompress(body)
    digest = hashlib.sha256(data[data.index(b"\n") + 1:]).hexdigest()
    assert digest == peek_manifest(body).records_sha256
    return digest


def test_board_lists_exactly_the_submission_files() -> None:
    md = (FOLDER / "LEADERBOARD.md").read_text("utf-8")
    page = (FOLDER / "index.html").read_text("utf-8")
    digests = {_records_digest(f.read_bytes())[:12] for f in FILES}
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
