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


_HAS_ALARM = hasattr(signal, "SIGALRM")


def _can_alarm() -> bool:
    """SIGALRM can interrupt the agent: the platform has it and this is the main thread."""
    return _HAS_ALARM and threading.get_ident() == threading.main_thread().ident


class _Alarm:
    """What SIGALRM's handler and the deadlines share (on an instance: setting a class attribute
    would invalidate the type's attribute caches, twice an episode)."""

    #: The deadline the alarm is set for (None between episodes).
    armed: "Deadline | None" = None
    #: True while `alarm_handler` holds SIGALRM for a run.
    held = False


_ALARM = _Alarm()


class Deadline:
    """A per-episode wall-clock limit, entered around one episode (``seconds`` None: no limit).

    Installing a signal handler, and restoring the previous one, costs as much as setting the
    timer many times over: a run holds `_on_alarm` for all its episodes (`alarm_handler`), and
    each deadline then only sets the timer. It leaves it running at its end: the next episode's
    deadline sets it anew, an alarm between two episodes finds no deadline armed and is ignored,
    and `alarm_handler` clears the timer when the run ends.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._use_alarm = bool(seconds) and _can_alarm()
        # The alarm interrupts the agent at the deadline; a clock read after every act is only
        # needed where there is no alarm.
        self._end = time.monotonic() + seconds if seconds and not self._use_alarm else None

    def __enter__(self) -> "Deadline":
        if self._use_alarm:
            if not _ALARM.held:
                self._old = signal.signal(signal.SIGALRM, _on_alarm)
            _ALARM.armed = self
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
            _ALARM.armed = None
            if not _ALARM.held:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, self._old)


def _on_alarm(*_: Any) -> None:
    deadline = _ALARM.armed
    if deadline is not None:  # else a late alarm, after its episode ended
        raise deadline.expired()


@contextlib.contextmanager
def alarm_handler() -> Iterator[None]:
    """Hold SIGALRM's handler for the episodes played inside, so their deadlines only set the
    timer; the timer is cleared and the previous handler is back afterwards. (Does nothing where
    SIGALRM cannot be used, or when an enclosing run already holds it.)"""
    if _ALARM.held or not _can_alarm():
        yield
        return
    old = signal.signal(signal.SIGALRM, _on_alarm)
    _ALARM.held = True
    try:
        yield
    finally:
        # The last deadline left the timer running: clear it before the old handler is back.
        signal.setitimer(signal.ITIMER_REAL, 0)
        _ALARM.held = False
        signal.signal(signal.SIGALRM, old)
