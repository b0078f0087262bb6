"""HTTP requests to a leaderboard (httpx): `agentgym submit --to` and the sealed track's client.

A board's answer is read as it arrives and only up to a cap, so a server that sends without end
costs the client no more than the cap; it is asked for as sent (``Accept-Encoding: identity``)
and read undecoded, so a small compressed answer cannot expand past the cap either.
"""

from __future__ import annotations

from typing import Any

import httpx

__all__ = ["ANSWER_HEADERS", "NoAnswer", "request_capped", "why_no_answer"]

#: Headers of every request to a board.
ANSWER_HEADERS = {"Accept": "application/json", "Accept-Encoding": "identity"}

#: What httpx raises when no answer came: nothing listens, the peer hung up or timed out, the
#: URL cannot be requested.
NoAnswer = (httpx.TransportError, httpx.InvalidURL)


def request_capped(client: httpx.Client, method: str, url: str, limit: int, **kwargs: Any) -> tuple[httpx.Response, bytes]:
    """Send a request; the response (its status and headers) and at most `limit` bytes of its body.

    Raises:
        httpx.TransportError: no answer (`why_no_answer` says why in a few words).
        httpx.InvalidURL: `url` is no URL httpx can request.
    """
    chunks: list[bytes] = []
    size = 0
    with client.stream(method, url, **kwargs) as response:
        for chunk in response.iter_raw():
            chunks.append(chunk[: limit - size])
            size += len(chunks[-1])
            if size >= limit:
                break
    return response, b"".join(chunks)


def why_no_answer(exc: BaseException, timeout_s: float) -> str:
    """A few words on why a request got no answer (for a one-line error)."""
    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {timeout_s:g} s"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
