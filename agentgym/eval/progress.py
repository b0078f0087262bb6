"""Progress of long commands (a run's episodes, a report's stages) on stderr.

On a terminal, a tqdm bar that redraws itself and is gone when the work ends. Anywhere else (a
log file, CI, a pipe), plain lines, at most one every `LINE_INTERVAL_S` seconds and none before
the first interval has passed, so a short command prints nothing and a failing one prints its
error alone; a command that printed progress lines ends with one saying it is done.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

__all__ = ["Progress", "LINE_INTERVAL_S"]

#: Seconds between two progress lines where stderr is not a terminal.
LINE_INTERVAL_S = 10.0


class Progress:
    """Progress of `total` units of work on stderr (see the module docstring).

    Args:
        total: the units expected.
        desc: what is being done, e.g. ``heuristic`` or ``report: metrics``.
        enabled: False to show nothing (e.g. with ``--json``).
        unit: the unit's name, e.g. ``ep`` (episodes) or ``record``.
        stream: where to write (default: ``sys.stderr`` at construction).
    """

    def __init__(self, total: int, desc: str = "", enabled: bool = True, unit: str = "ep",
                 stream: IO[str] | None = None) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._postfix: dict[str, float] = {}
        self._bar: Any = None
        self._lines = False  # plain lines instead of a bar
        self._t0 = self._last = time.monotonic()
        self._printed = 0
        if not enabled:
            return
        if _is_terminal(self._stream):
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, file=self._stream, leave=False,
                             dynamic_ncols=True, mininterval=0.2)
        else:
            self._lines = True

    def update(self, n: int = 1, **postfix: float) -> None:
        """Advance by `n` units and show `postfix` values as percentages (e.g. success=0.42)."""
        self.done += n
        if postfix:
            self._postfix = postfix
        if self._bar is not None:
            if postfix:
                self._bar.set_postfix({k: f"{v:.1%}" for k, v in postfix.items()}, refresh=False)
            self._bar.update(n)
        elif self._lines:
            now = time.monotonic()
            if now - self._last >= LINE_INTERVAL_S:
                self._last = now
                self._line(now)

    def _line(self, now: float, finished: bool = False) -> None:
        elapsed = now - self._t0
        shown = f"{self.done}/{self.total} {self.unit}" if self.total else f"{self.done} {self.unit}"
        extra = "".join(f", {k} {v:.1%}" for k, v in self._postfix.items())
        if finished:
            state = f" (done in {elapsed:.1f} s)"
        else:
            state = f" ({self.done / elapsed:.1f} {self.unit}/s)" if elapsed else ""
        print(f"{self.desc}: {shown}{extra}{state}", file=self._stream, flush=True)
        self._printed += 1

    def close(self, finished: bool = True) -> None:
        """End the progress; `finished` False (an error) prints no closing line."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._lines and self._printed and finished:
            self._line(time.monotonic(), finished=True)
            self._lines = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(finished=exc_type is None)


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False
