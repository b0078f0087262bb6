"""The board's secret: made once with mode 0600, read thereafter, refused when it is not safe."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentgym.leaderboard.secret import SECRET_BYTES, SecretError, load_or_create_secret, secret_path


def test_made_on_first_start_with_mode_0600_then_read(tmp_path: Path) -> None:
    db = tmp_path / "board.sqlite"
    old = os.umask(0)  # the file's mode must not depend on the caller's umask
    try:
        first = load_or_create_secret(db)
    finally:
        os.umask(old)
    path = secret_path(db)
    assert path == tmp_path / "board.sqlite.secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) == SECRET_BYTES and load_or_create_secret(db) == first
    assert load_or_create_secret(tmp_path / "other.sqlite") != first  # each board its own


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660, 0o666, 0o700])
def test_a_looser_mode_refuses_to_start(tmp_path: Path, mode: int) -> None:
    db = tmp_path / "board.sqlite"
    load_or_create_secret(db)
    os.chmod(secret_path(db), mode)
    if mode & 0o077:
        with pytest.raises(SecretError, match="chmod 600"):
            load_or_create_secret(db)
    else:
        assert len(load_or_create_secret(db)) == SECRET_BYTES  # 0700: nobody else can read it either


def test_a_link_or_garbage_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("00" * SECRET_BYTES)
    os.chmod(target, 0o600)
    db = tmp_path / "board.sqlite"
    secret_path(db).symlink_to(target)
    with pytest.raises(SecretError, match="not a regular file"):
        load_or_create_secret(db)
    db2 = tmp_path / "b2.sqlite"
    secret_path(db2).write_text("not hex")
    os.chmod(secret_path(db2), 0o600)
    with pytest.raises(SecretError, match="does not hold"):
        load_or_create_secret(db2)


def test_the_board_refuses_to_start_on_a_loose_secret(tmp_path: Path) -> None:
    from agentgym.leaderboard.sealed.config import SealedConfig
    from agentgym.leaderboard.server import create_app

    db = tmp_path / "board.sqlite"
    load_or_create_secret(db)
    os.chmod(secret_path(db), 0o644)
    with pytest.raises(SecretError):
        create_app(db, sealed=SealedConfig())
    create_app(db)  # the open track alone needs no secret
