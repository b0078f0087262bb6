"""The board's secret: the key of its sealed runs' seeds, in a file beside the database.

``board.sqlite`` keeps its secret in ``board.sqlite.secret``: 32 random bytes (hex), created on
the board's first start with mode 0600 and read on every later one. Whoever reads it can compute
the seeds of every open sealed run, so a board refuses to start when the file is a link, is not
its own, or can be read or written by anyone else.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["SecretError", "SECRET_BYTES", "secret_path", "load_or_create_secret"]

#: 256 bits: the key of an HMAC-SHA256.
SECRET_BYTES = 32


class SecretError(Exception):
    """The secret file is unsafe or unreadable; the board does not start."""


def secret_path(db: str | os.PathLike[str]) -> Path:
    """Where the secret of the board at `db` lives: the database's path plus ``.secret``."""
    return Path(f"{os.fspath(db)}.secret")


def load_or_create_secret(db: str | os.PathLike[str]) -> bytes:
    """The secret of the board at `db`, made (mode 0600) if it has none yet.

    Raises:
        SecretError: the file is a link or not a regular file, belongs to another user, has a
            mode looser than 0600, or does not hold a secret.
    """
    path = secret_path(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: two boards starting at once cannot both write one; O_NOFOLLOW: never through a link.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    else:
        try:
            os.write(fd, os.urandom(SECRET_BYTES).hex().encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
    return _read(path)


def _read(path: Path) -> bytes:
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise SecretError(f"{path} is not a regular file (a link or a folder); the board will not use it")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise SecretError(f"{path} belongs to user {st.st_uid}, not to the board's user {os.getuid()}")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        raise SecretError(f"{path} has mode {mode:04o}: anyone who reads it knows the seeds of every open sealed run; "
                          f"make it 0600 (chmod 600 {path}) or remove it to make a new one")
    text = path.read_text("ascii", errors="replace").strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != SECRET_BYTES:
        raise SecretError(f"{path} does not hold a secret of {SECRET_BYTES} bytes in hex")
    return secret
