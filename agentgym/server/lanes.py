"""`OnePerPass`: heavy env calls (making an env, resetting it) one per pass of the event loop.

With env calls inline, each runs on the loop to its end, and the loop serves nothing else
meanwhile. Making or resetting an env costs many steps' worth; a trainer that opens thousands
of episodes at once would queue thousands of them in one pass of the loop, and every step of
every running episode would wait behind them all (the capacity runs of benchmarks/server
measure what that does to step latency). Through this lane a heavy call that finds another one
ran in this pass waits for a later pass, so between two heavy calls the loop polls its sockets
and answers the steps that arrived: a step waits for at most one heavy call. Steps themselves
never queue here.
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["OnePerPass"]


class OnePerPass:
    """An async context manager: at most one holder per pass of the running loop, first come first served."""

    def __init__(self) -> None:
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._taken = False  # a heavy call ran (or runs) in this pass

    @property
    def waiting(self) -> int:
        """Calls waiting for their pass now."""
        return len(self._waiters)

    async def __aenter__(self) -> None:
        if self._taken or self._waiters:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # handed the pass as it was cancelled
                    self._pass_on()
                raise
        self._taken = True

    async def __aexit__(self, *exc: object) -> None:
        # The next holder goes a pass later, after the loop has polled its sockets.
        asyncio.get_running_loop().call_soon(self._pass_on)

    def _pass_on(self) -> None:
        self._taken = False
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                self._taken = True
                return
