"""Env calls on the event loop's own thread, with the step timeout still enforced.

Handing a call to a thread and back costs two thread wake-ups a step, more CPU than the whole
rest of a WebSocket step (benchmarks/server/RESULTS.md compares the two). CPU-bound envs (every
agentgym env) can run on the loop thread instead. The timeout then needs another enforcer: a
watchdog thread that, when a call overruns, raises `StepTimeout` inside it (CPython delivers it
at the call's next bytecode), so a runaway step unwinds and only its session is lost.

What this cannot do: interrupt a call blocked in C (a sleep, a socket read). Such an env holds
every session for that long; serve it with ``env_calls="thread"``.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["StepTimeout", "Watchdog"]

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc


class StepTimeout(BaseException):
    """Raised inside an env call that overran the step timeout.

    A BaseException, so that an env's ``except Exception`` cannot swallow it.
    """


class Watchdog:
    """Runs calls on the thread that made it, and interrupts any that runs over `timeout_s`.

    Args:
        timeout_s: how long one call may run.
        on_overrun: what the caller raises instead of `StepTimeout` (a `TimeoutError`).
    """

    def __init__(self, timeout_s: float, on_overrun: Callable[[], BaseException]) -> None:
        self.timeout_s = timeout_s
        self._on_overrun = on_overrun
        self._tid = threading.get_ident()
        self._c_tid = ctypes.c_ulong(self._tid)
        self._strike = ctypes.py_object(StepTimeout)
        self._started: float | None = None
        # Whether a strike was made for the call in play. Clearing the thread's async exception
        # when none was set is not free: CPython 3.11 then leaves its eval breaker raised for good
        # (every call and loop takes the slow path, and a profiler spins on it), so clear only then.
        self._struck = False
        # Held to start and end a call, and by the watchdog to look and strike: so it can never
        # strike a call that has already ended (its exception would land in the event loop).
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="agentgym-watchdog", daemon=True)
        self._thread.start()

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` here and now; `on_overrun()` is raised if it runs over the timeout."""
        if threading.get_ident() != self._tid:
            raise RuntimeError("Watchdog.run must be called on the thread that made the watchdog")
        with self._lock:
            self._started = time.monotonic()
        try:
            try:
                return fn(*args)
            finally:
                with self._lock:
                    self._started = None
                    if self._struck:  # drop a strike that came too late
                        _set_async_exc(self._c_tid, None)
                        self._struck = False
        except StepTimeout:
            raise self._on_overrun() from None

    def here(self) -> bool:
        """Whether this is the thread the watchdog runs calls on."""
        return threading.get_ident() == self._tid

    def stop(self) -> None:
        """End the watchdog thread."""
        self._stop.set()

    def _watch(self) -> None:
        poll = min(1.0, max(0.01, self.timeout_s / 10))
        while not self._stop.wait(poll):
            with self._lock:
                started = self._started
                if started is not None and time.monotonic() - started > self.timeout_s:
                    _set_async_exc(self._c_tid, self._strike)
                    self._struck = True
                    self._started = None  # one strike per call
