"""Submitters' tokens: printed once, kept hashed, refused when unknown or revoked; the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym.cli import main
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.tokens import TOKEN_PREFIX, TokenBook, Unauthorized, bearer, token_hash


def test_a_token_is_kept_only_as_its_hash(tmp_path: Path) -> None:
    store = Store(tmp_path / "board.sqlite")
    book = TokenBook(store)
    issued, token = book.add("My lab", 3)
    assert token.startswith(TOKEN_PREFIX) and len(token) >= 4 + 43  # 256 random bits
    assert issued.sha256 == token_hash(token) and issued.quota_per_day == 3
    raw = (tmp_path / "board.sqlite").read_bytes()
    assert token.encode() not in raw and token[len(TOKEN_PREFIX):].encode() not in raw
    assert book.authenticate(token).id == issued.id
    assert TokenBook(store).add("My lab")[1] != token  # fresh every time


def test_unknown_revoked_and_malformed_tokens_are_refused(tmp_path: Path) -> None:
    book = TokenBook(Store(tmp_path / "board.sqlite"))
    issued, token = book.add("org")
    for wrong in ("", token[:-1], token + "x", TOKEN_PREFIX + "A" * 43, "x" * 10_000, token.upper()):
        with pytest.raises(Unauthorized):
            book.authenticate(wrong)
    assert book.revoke(issued.id) and not book.revoke(issued.id) and not book.revoke(999)
    with pytest.raises(Unauthorized):
        book.authenticate(token)
    assert book.revoked_among({issued.id, 999}) == {issued.id}


def test_bearer_header() -> None:
    assert bearer("Bearer abc") == "abc" and bearer("bearer  abc ") == "abc"
    for bad in (None, "", "Basic abc", "Bearer", "Bearer "):
        with pytest.raises(Unauthorized):
            bearer(bad)


@pytest.mark.parametrize("org, quota", [("", 1), ("a\u202eb", 1), ("x" * 101, 1), ("ok", 0), ("ok", -1)])
def test_bad_organisations_and_quotas(tmp_path: Path, org: str, quota: int) -> None:
    with pytest.raises(ValueError):
        TokenBook(Store(tmp_path / "board.sqlite")).add(org, quota)


def test_cli_add_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "board.sqlite")
    assert main(["leaderboard", "token", "add", "--org", "My lab", "--quota", "2", "--db", db]) == 0
    out = capsys.readouterr()
    token = out.out.strip()
    assert token.startswith(TOKEN_PREFIX) and "shown once" in out.err
    assert TokenBook(Store(db)).authenticate(token).organisation == "My lab"
    assert main(["leaderboard", "token", "list", "--db", db]) == 0
    listed = capsys.readouterr().out
    assert "My lab" in listed and "quota 2/day" in listed and token not in listed
    assert main(["leaderboard", "token", "revoke", "1", "--db", db]) == 0
    assert main(["leaderboard", "token", "revoke", "1", "--db", db]) == 1
    assert "revoked" in capsys.readouterr().out
