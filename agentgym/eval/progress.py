"""A progress bar for long runs: episodes per second and the running success rate."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["Progress"]


class Progress:
    """A tqdm bar on stderr (silent when disabled or when stderr is not a terminal and CI is set).

    Args:
        total: the number of episodes expected.
        desc: the bar's label.
        enabled: False to show nothing (e.g. with ``--json``).
    """

    def __init__(self, total: int, desc: str = "", enabled: bool = True) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="ep", file=sys.stderr, leave=False,
                             dynamic_ncols=True, mininterval=0.2)

    def update(self, n: int = 1, **postfix: float) -> None:
        """Advance by `n` episodes and show `postfix` values (e.g. success=0.42)."""
        if self._bar is not None:
            if postfix:
                self._bar.set_postfix({k: f"{v:.1%}" for k, v in postfix.items()}, refresh=False)
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
