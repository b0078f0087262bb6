"""How a simulated user picks among phrasings of the same reply: from the user's own stream.

A user that reads many messages must not make the rest of its episode depend on how many it
read, so its picks come from a few draws made when it is made (`DrawnPicks`: the ToolUse user,
the default user of `make_tool_env`, the session's switches); the Dialog user draws from its
stream at each pick (`LivePicks`), as its episodes always have. Both pick index ``int(u * n)`` of ``n`` options for a
uniform draw ``u`` (what `agentgym.core.seeding.Rng.integers` draws), so the two differ only in
when the draws are made.
"""

from __future__ import annotations

from array import array
from typing import Any, Callable, Protocol, TypeVar

from agentgym.core._fast import seeded_random
from agentgym.core.seeding import Rng

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
    """``rng.integers(n)`` at each pick: the stream's next ``random()``, as ``int(u * n)``.

    A user picks a dozen times or so in an episode, and a Mersenne Twister's state is 2.5 KB, most
    of what a live env holds beside its world. So, for a stream that `fast_stream` made (it knows
    the bits it was seeded with, ``seed_bits``), the draws are made `BLOCK` at a time and the
    generator is let go between blocks: when a block runs out it is made again from the bits and
    moved past the draws used (a ``random()`` is two of its 32-bit words). The picks are the same
    ones in the same order (a test compares long runs with the plain draws). Another stream is
    drawn from at each pick, as it may have other consumers.
    """

    __slots__ = ("_rng", "_bits", "_draws", "_at", "_used")

    #: Draws made at a time: more than almost any episode picks (about 8-11 for the built-in agents).
    BLOCK = 16

    def __init__(self, rng: Any) -> None:
        self._bits: int | None = getattr(rng, "seed_bits", None)
        self._rng = rng if self._bits is None else None
        self._used = 0  # draws made before the block held
        self._at = 0
        self._draws = _block(rng.random) if self._bits is not None else None

    def index(self, n: int) -> int:
        draws = self._draws
        if draws is None:
            return int(self._rng.integers(n))
        if n <= 0:
            raise ValueError(f"high <= low (0, {n})")
        at = self._at
        if at == self.BLOCK:
            self._used += self.BLOCK
            rng = seeded_random(Rng, self._bits)
            rng.getrandbits(64 * self._used)
            draws = self._draws = _block(rng.random)
            at = 0
        self._at = at + 1
        return int(draws[at] * n)


def _block(random: Callable[[], float]) -> array:
    """The next `LivePicks.BLOCK` draws of ``random``."""
    return array("d", [random() for _ in range(LivePicks.BLOCK)])


def pick(picks: Picks, options: tuple[T, ...]) -> T:
    """The option `picks` picks next among `options`."""
    return options[picks.index(len(options))]
