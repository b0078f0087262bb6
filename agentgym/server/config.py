"""The env server's limits, in one place: `create_app`, `serve` and `agentgym serve` read them here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["ENV_CALLS", "ServerConfig"]

#: Where env calls may run (see `ServerConfig.env_calls`).
ENV_CALLS = ("thread", "inline")


def _doc(default: Any, doc: str) -> Any:
    # The doc line is the field's documentation and its command-line help: one copy.
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class ServerConfig:
    """Limits of one env server. Every field is also an `agentgym serve` option."""

    max_sessions: int = _doc(64, "live sessions at most; a create beyond the cap gets 429 with Retry-After")
    idle_timeout_s: float = _doc(300.0, "seconds a session may sit unused (no request, no WebSocket message) "
                                        "before the reaper closes it")
    max_body_bytes: int = _doc(1 << 20, "request bodies and WebSocket messages over this many bytes get 413, "
                                        "counted while reading")
    step_timeout_s: float = _doc(30.0, "seconds one env call (make, reset, step) may run; a slower one gets 504 "
                                       "and its session is closed")
    env_calls: str = _doc("thread", "where env calls run: 'thread' (each session's own thread; an env that "
                                    "blocks in I/O or sleeps holds only its session) or 'inline' (on the event "
                                    "loop, no thread hop: about 1.7x the steps per second for CPU-bound envs; a "
                                    "watchdog still enforces the step timeout)")

    def __post_init__(self) -> None:
        if isinstance(self.max_sessions, bool) or not isinstance(self.max_sessions, int) or self.max_sessions < 1:
            raise ValueError(f"max_sessions must be a positive int, got {self.max_sessions!r}")
        if (isinstance(self.max_body_bytes, bool) or not isinstance(self.max_body_bytes, int)
                or self.max_body_bytes < 1024):
            raise ValueError(f"max_body_bytes must be an int of at least 1024, got {self.max_body_bytes!r}")
        if self.env_calls not in ENV_CALLS:
            raise ValueError(f"env_calls must be one of {ENV_CALLS}, got {self.env_calls!r}")
        for name in ("idle_timeout_s", "step_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")

    @property
    def reap_interval_s(self) -> float:
        """How often the reaper looks: a quarter of the idle timeout, between 50 ms and 1 s."""
        return min(1.0, max(0.05, self.idle_timeout_s / 4))

    @property
    def retry_after_s(self) -> int:
        """The Retry-After of a 429: a reaper pass, at least one second."""
        return max(1, math.ceil(self.reap_interval_s))

    @classmethod
    def options(cls) -> list[tuple[str, type, Any, str]]:
        """``(name, type, default, doc)`` of every field, for command-line options."""
        return [(f.name, type(f.default), f.default, f.metadata["doc"]) for f in fields(cls)]
