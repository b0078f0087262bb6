"""How a simulated user picks among phrasings of the same reply: from the user's own stream.

A user that reads many messages must not make the rest of its episode depend on how many it
read, so its picks come from a few draws made when it is made (`DrawnPicks`: the ToolUse user,
the default user of `make_tool_env`, the session's switches); the Dialog user draws from its
stream at each pick (`LivePicks`), as its episodes always have. Both pick index ``int(u * n)`` of ``n`` options for a
uniform draw ``u`` (what `agentgym.core.seeding.Rng.integers` draws), so the two differ only in
when the draws are made.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

__all__ = ["Picks", "DrawnPicks", "LivePicks", "pick"]

T = TypeVar("T")


class Picks(Protocol):
    """A user's picks: an index below `n` for each pick, in the order asked."""

    def index(self, n: int) -> int:
        """The next pick among `n` options."""
        ...


class DrawnPicks:
    """`count` uniform draws of `rng` made now, used in turn and again from the first.

    Args:
        rng: the user's stream (only its ``random()`` is called, `count` times, here).
        count: how many draws to make.
    """

    __slots__ = ("_draws", "_n")

    def __init__(self, rng: Any, count: int = 4) -> None:
        rnd = rng.random
        self._draws = tuple(rnd() for _ in range(count))
        self._n = 0

    def index(self, n: int) -> int:
        u = self._draws[self._n % len(self._draws)]
        self._n += 1
        return int(u * n)


class LivePicks:
    """One draw of ``rng.integers(n)`` at each pick."""

    __slots__ = ("_rng",)

    def __init__(self, rng: Any) -> None:
        self._rng = rng

    def index(self, n: int) -> int:
        return int(self._rng.integers(n))


def pick(picks: Picks, options: tuple[T, ...]) -> T:
    """The option `picks` picks next among `options`."""
    return options[picks.index(len(options))]
