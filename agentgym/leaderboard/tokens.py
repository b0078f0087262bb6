"""Submitters' tokens: issued by the board's admin, stored hashed, each with a daily quota of sealed runs.

A token is ``agt_`` and 256 random bits (URL-safe base64); it is printed once, when it is made
(`agentgym leaderboard token add --org ORG`), and the board keeps only its SHA-256. A presented
token is hashed, found by its hash and compared with it in constant time; a revoked one is
refused like an unknown one. Each token names the organisation its entries are shown under.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import MalformedSubmission, check_manifest_text

__all__ = ["Token", "TokenBook", "Unauthorized", "DEFAULT_QUOTA", "TOKEN_PREFIX", "bearer", "token_hash"]

TOKEN_PREFIX = "agt_"
#: Sealed runs a token may open in any 24 hours, unless its admin says otherwise.
DEFAULT_QUOTA = 5
#: The longest token accepted for hashing (a real one is 47 characters).
_MAX_TOKEN_CHARS = 200


class Unauthorized(Exception):
    """No token, an unknown one, or a revoked one (HTTP 401)."""


@dataclass(frozen=True)
class Token:
    """One issued token, as the board keeps it (never the token itself)."""

    id: int
    organisation: str
    sha256: str
    quota_per_day: int
    created_at: str
    revoked_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "organisation": self.organisation, "quota_per_day": self.quota_per_day,
                "created_at": self.created_at, "revoked_at": self.revoked_at}


def token_hash(token: str) -> str:
    """The SHA-256 (hex) the board keeps of a token."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def bearer(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer TOKEN`` header.

    Raises:
        Unauthorized: no header, another scheme, or no token in it.
    """
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("send your token as 'Authorization: Bearer TOKEN' (the board's admin issues tokens)")
    return token


_COLUMNS = "id, organisation, sha256, quota_per_day, created_at, revoked_at"


class TokenBook:
    """The tokens of one board (the ``tokens`` table of its database)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, organisation: str, quota_per_day: int = DEFAULT_QUOTA) -> tuple[Token, str]:
        """Issue a token for `organisation`; returns it as stored and the token itself (shown once).

        Raises:
            ValueError: an empty or malformed organisation name, or a quota below 1.
        """
        try:
            check_manifest_text("organisation", organisation)
        except MalformedSubmission as exc:  # a bad argument here, not a bad submission
            raise ValueError(f"organisation: {exc}") from None
        if not organisation.strip():
            raise ValueError("a token needs an organisation (--org)")
        if isinstance(quota_per_day, bool) or not isinstance(quota_per_day, int) or quota_per_day < 1:
            raise ValueError(f"the quota must be at least one run a day, got {quota_per_day!r}")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self.store.connect() as conn:
            cur = conn.execute("INSERT INTO tokens (organisation, sha256, quota_per_day, created_at) VALUES (?, ?, ?, ?)",
                               (organisation, token_hash(token), quota_per_day, now))
            token_id = int(cur.lastrowid)
        found = self.get(token_id)
        assert found is not None
        return found, token

    def get(self, token_id: int) -> Token | None:
        """The token with this id, revoked or not, or None."""
        with self.store.connect() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM tokens WHERE id = ?", (int(token_id),)).fetchone()
        return Token(*row) if row else None

    def list(self) -> list[Token]:
        """Every token ever issued, oldest first."""
        with self.store.connect() as conn:
            return [Token(*row) for row in conn.execute(f"SELECT {_COLUMNS} FROM tokens ORDER BY id")]

    def revoke(self, token_id: int) -> bool:
        """Revoke a token: refused from now on. False if there is no such token or it was revoked already."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self.store.connect() as conn:
            cur = conn.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                               (now, int(token_id)))
            return cur.rowcount == 1

    def authenticate(self, token: str) -> Token:
        """The live token `token` is.

        Raises:
            Unauthorized: unknown or revoked (the same answer for both).
        """
        if not isinstance(token, str) or len(token) > _MAX_TOKEN_CHARS:
            raise Unauthorized("unknown or revoked token")
        digest = token_hash(token)
        with self.store.connect() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM tokens WHERE sha256 = ?", (digest,)).fetchone()
        # Found by its hash (which tells nothing about other tokens), then compared in constant time.
        if row is None or not hmac.compare_digest(row[2], digest) or row[5] is not None:
            raise Unauthorized("unknown or revoked token")
        return Token(*row)

    def revoked_among(self, token_ids: set[int]) -> set[int]:
        """Those of `token_ids` that are revoked now."""
        if not token_ids:
            return set()
        ids = sorted(token_ids)
        marks = ", ".join("?" for _ in ids)  # placeholders only, never data
        with self.store.connect() as conn:
            rows = conn.execute(f"SELECT id FROM tokens WHERE revoked_at IS NOT NULL AND id IN ({marks})", ids)
            return {int(r[0]) for r in rows}
