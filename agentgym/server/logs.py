"""Rate-limited server logs: a flood of bad clients writes a few lines a minute, not a line each.

`RateLimitFilter` lets through the first `burst` records of one kind per window and counts the
rest; the first record of a later window says how many were held back. A kind is the logger, the
level and the first line of the message template, so ``"a client sent no complete request
headers"`` is one kind however many clients do it. `limit_server_logs` puts one filter on every
logger a server writes through (uvicorn's, asyncio's for ``accept()`` failures, ours).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["RateLimitFilter", "SERVER_LOGGERS", "limit_server_logs"]

#: The loggers a server under attack writes to: uvicorn's errors (bad requests, upgrade
#: refusals), asyncio's (``accept()`` out of descriptors) and agentgym's (drops, reaping).
SERVER_LOGGERS = ("uvicorn.error", "asyncio", "agentgym.server")

#: Kinds remembered at most; past it the oldest windows are forgotten (templates are few, but
#: asyncio's messages embed object reprs).
_MAX_KINDS = 256


class RateLimitFilter(logging.Filter):
    """At most `burst` records of one kind per `window_s` seconds.

    Args:
        burst: records of one kind let through per window.
        window_s: the window's length.
        clock: the time source (a fake in tests).
    """

    def __init__(self, burst: int = 5, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.burst = burst
        self.window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()  # loggers are called from the loop and from env threads
        #: kind -> [window start, records let through in it, records held back since the last one shown]
        self._kinds: dict[tuple[str, int, str], list[float]] = {}

    @property
    def remembered(self) -> int:
        """How many kinds the filter keeps a window for now."""
        return len(self._kinds)

    def filter(self, record: logging.LogRecord) -> bool:
        kind = (record.name, record.levelno, str(record.msg).split("\n", 1)[0][:200])
        now = self._clock()
        with self._lock:
            state = self._kinds.get(kind)
            if state is None:
                if len(self._kinds) >= _MAX_KINDS:
                    self._forget(now)
                state = self._kinds[kind] = [now, 0, 0]
            elif now - state[0] >= self.window_s:
                state[0], state[1] = now, 0
            if state[1] >= self.burst:
                state[2] += 1
                return False
            state[1] += 1
            held, state[2] = int(state[2]), 0
        if held:
            # Appended to the formatted text: the template's own %-arguments stay as they were.
            record.msg, record.args = record.getMessage() + f" ({held} more like this held back)", None
        return True

    def _forget(self, now: float) -> None:
        stale = [k for k, (start, _, _) in self._kinds.items() if now - start >= self.window_s]
        for k in stale or list(self._kinds)[: _MAX_KINDS // 2]:
            del self._kinds[k]


_INSTALLED: RateLimitFilter | None = None


def limit_server_logs() -> RateLimitFilter:
    """Put the (one, process-wide) rate limit on every logger in `SERVER_LOGGERS`; idempotent."""
    global _INSTALLED
    if _INSTALLED is None:
        _INSTALLED = RateLimitFilter()
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        if _INSTALLED not in logger.filters:
            logger.addFilter(_INSTALLED)
    return _INSTALLED
