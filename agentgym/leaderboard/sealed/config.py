"""The sealed track's limits, in one place: the board, its command line and the tests read them here.

Light on purpose (no leaderboard or eval imports): the command line builds its options from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentgym.server.config import ServerConfig

__all__ = ["SealedConfig"]


@dataclass(frozen=True)
class SealedConfig:
    """The sealed track's limits (`agentgym leaderboard serve --sealed` options)."""

    #: Seconds a run may go without a request (on any of its sessions) before it is closed as
    #: incomplete; a session idle this long is reaped. A client that reconnects within it resumes.
    grace_s: float = 300.0
    #: Seconds a run may last in all.
    max_run_s: float = 24 * 3600.0
    #: Sessions one run may hold at once (its client's concurrency).
    sessions_per_run: int = 16
    #: Sessions the runs of one token may hold at once (a token has at most one run in play).
    sessions_per_token: int = 16
    #: Seconds an episode may stay in play: past it, it ends as an agent error (``EpisodeTimeout``).
    max_episode_s: float = 1800.0
    #: Sealed sessions at most, over every run (the env server's session cap).
    max_sessions: int = 64
    #: Where env calls run (the env server's ``env_calls``: ``thread`` or ``inline``).
    env_calls: str = "inline"
    #: Replay each record in a background worker process as it is written, so a played run's
    #: verification waits only for the episodes the worker has not reached (False: replay them
    #: all once the run is played, in the board's process).
    replay_ahead: bool = True
    #: Bytes one episode's record may take: a turn that could pass it is not stepped, and the
    #: episode ends as an agent error (the largest honest record of the built-in agents is 36 KB).
    max_record_bytes: int = 1 << 20
    #: Bytes a run's records may take in all: past it the run closes incomplete (an honest core-v0
    #: run of the built-in agents writes 20 to 36 MB).
    max_run_bytes: int = 256 << 20

    def server_config(self) -> ServerConfig:
        """The env server's limits for the sealed sessions (a session idle for the grace period is reaped)."""
        return ServerConfig(max_sessions=self.max_sessions, idle_timeout_s=self.grace_s, unused_timeout_s=self.grace_s,
                            env_calls=self.env_calls)

    def __post_init__(self) -> None:
        for name in ("grace_s", "max_run_s", "max_episode_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        for name in ("sessions_per_run", "sessions_per_token", "max_sessions", "max_record_bytes", "max_run_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.max_record_bytes < 256 * 1024 or self.max_record_bytes > self.max_run_bytes:
            raise ValueError(f"max_record_bytes must be at least 256 KiB and at most max_run_bytes, got "
                             f"{self.max_record_bytes}")
