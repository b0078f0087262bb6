"""The per-episode wall-clock limit on an agent: SIGALRM where it can interrupt, a clock elsewhere.

In a main thread on a platform with SIGALRM, the alarm interrupts the agent wherever it is (a
model call that hangs included) by raising `AgentTimeout` there. Elsewhere (a worker thread, a
platform without it) the loop checks the clock after each action, so an agent that never
returns is not stopped, but one that takes too long over many actions is.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Any, Iterator

__all__ = ["AgentTimeout", "Deadline", "alarm_handler"]


class AgentTimeout(Exception):
    """The agent did not finish the episode within the per-episode timeout."""


def _can_alarm() -> bool:
    """SIGALRM can interrupt the agent: the platform has it and this is the main thread."""
    return hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()


class Deadline:
    """A per-episode wall-clock limit, entered around one episode (``seconds`` None: no limit).

    Installing a signal handler, and restoring the previous one, costs as much as setting the
    timer many times over: a run holds `_on_alarm` for all its episodes (`alarm_handler`), and
    each deadline then only sets and clears the timer.
    """

    #: The deadline the alarm is set for (None between episodes).
    armed: "Deadline | None" = None
    #: True while `alarm_handler` holds SIGALRM for a run.
    held = False

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._use_alarm = bool(seconds) and _can_alarm()
        # The alarm interrupts the agent at the deadline; a clock read after every act is only
        # needed where there is no alarm.
        self._end = time.monotonic() + seconds if seconds and not self._use_alarm else None

    def __enter__(self) -> "Deadline":
        if self._use_alarm:
            if not Deadline.held:
                self._old = signal.signal(signal.SIGALRM, _on_alarm)
            Deadline.armed = self
            signal.setitimer(signal.ITIMER_REAL, float(self.seconds))
        return self

    def expired(self) -> AgentTimeout:
        """The error of an episode that ran past this deadline."""
        return AgentTimeout(f"episode exceeded {self.seconds} s")

    def check(self) -> None:
        """Raise `AgentTimeout` when the deadline has passed (where no alarm enforces it)."""
        if self._end is not None and time.monotonic() > self._end:
            raise self.expired()

    def __exit__(self, *exc: object) -> None:
        if self._use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            Deadline.armed = None
            if not Deadline.held:
                signal.signal(signal.SIGALRM, self._old)


def _on_alarm(*_: Any) -> None:
    deadline = Deadline.armed
    if deadline is not None:  # else a late alarm, after its episode ended
        raise deadline.expired()


@contextlib.contextmanager
def alarm_handler() -> Iterator[None]:
    """Hold SIGALRM's handler for the episodes played inside, so their deadlines only set the
    timer; the previous handler is back afterwards. (Does nothing where SIGALRM cannot be used,
    or when an enclosing run already holds it.)"""
    if Deadline.held or not _can_alarm():
        yield
        return
    old = signal.signal(signal.SIGALRM, _on_alarm)
    Deadline.held = True
    try:
        yield
    finally:
        Deadline.held = False
        signal.signal(signal.SIGALRM, old)
