"""Named random streams derived from an episode seed.

Every random draw in agentgym comes from a generator made here, from the episode seed and a
stream name: `stream` (a numpy `Generator` derived through `SeedSequence`, for bulk and general
draws) or `fast_stream` (an `Rng` for the hot path of every reset and step). Two consequences
follow: adding a consumer of randomness (a noise wrapper, a new user behaviour) never shifts the
draws of another, and nothing depends on process state such as `random`, `numpy.random` or
`PYTHONHASHSEED`.
"""

from __future__ import annotations

import hashlib
import math
import random
import zlib
from typing import Any

import numpy as np

from agentgym.core._fast import seeded_random

__all__ = ["stream", "stream_seed", "stream_bits", "fast_stream", "Rng", "draw_episode_seed", "MAX_SEED"]

#: Seeds are non-negative integers below 2**63 so they survive JSON and signed 64-bit storage.
MAX_SEED = 2**63 - 1


def _name_key(name: str) -> int:
    # crc32 of the UTF-8 name: stable across processes, unlike hash(); collisions between our
    # handful of stream names are checked by a test.
    return zlib.crc32(name.encode("utf-8"))


def stream_seed(seed: int, name: str) -> np.random.SeedSequence:
    """The SeedSequence of stream `name` under episode seed `seed`."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return np.random.SeedSequence(entropy=int(seed), spawn_key=(_name_key(name),))


def stream(seed: int, name: str) -> np.random.Generator:
    """A fresh generator for stream `name` of episode `seed`.

    Args:
        seed: the episode seed.
        name: the stream's name, e.g. ``"task"``, ``"user"`` or ``"noise/tool_failure"``.

    Returns:
        A ``numpy.random.Generator`` (PCG64) that depends only on ``seed`` and ``name``.
    """
    return np.random.Generator(np.random.PCG64(stream_seed(seed, name)))


def draw_episode_seed(np_random: np.random.Generator) -> int:
    """Draw the next episode seed from an env's own generator (used when reset gets no seed)."""
    return int(np_random.integers(0, MAX_SEED, dtype=np.int64))


class Rng(random.Random):
    """A fast generator for scalar draws, with the numpy `Generator` methods our code uses.

    A numpy generator is costly to create and per scalar draw; task generation, the simulated
    user and the noise wrappers make a few streams and many scalar draws per episode, so they
    use this Mersenne Twister (CPython's `random.Random`, whose integer seeding and
    `random()` are stable across versions and platforms) seeded from the stream's name.
    Only `random()`, `getrandbits()` and `shuffle()` are relied on.
    """

    #: The bits `fast_stream` seeded it with (None for a generator made otherwise).
    seed_bits: int | None = None

    def integers(self, low: int, high: int | None = None, size: int | None = None) -> Any:
        """Like `Generator.integers`: uniform in [low, high) (or [0, low))."""
        if high is None:
            low, high = 0, low
        span = int(high) - int(low)
        if span <= 0:
            raise ValueError(f"high <= low ({low}, {high})")
        # int(random() * span): a C-speed draw; its bias (< span / 2**53) is far below anything
        # a task could show, and it is the same on every platform.
        rnd = self.random
        if size is None:
            return int(low) + int(rnd() * span)
        return [int(low) + int(rnd() * span) for _ in range(int(size))]

    def exponential(self, scale: float = 1.0) -> float:
        """An exponential draw with mean `scale` (inverse transform, stable across versions)."""
        return -float(scale) * math.log(1.0 - self.random())

    def permutation(self, n: int) -> list[int]:
        """A random permutation of range(n).

        `random.shuffle`'s Fisher-Yates with its `_randbelow` written out: the same
        `getrandbits` calls and swaps (a test compares them), pinned here rather than to the
        standard library's version.
        """
        out = list(range(int(n)))
        getrandbits = self.getrandbits
        for i in range(len(out) - 1, 0, -1):
            bound = i + 1
            bits = bound.bit_length()
            j = getrandbits(bits)
            while j >= bound:
                j = getrandbits(bits)
            out[i], out[j] = out[j], out[i]
        return out

    def choice(self, seq: Any, size: int | None = None, replace: bool = True) -> Any:  # type: ignore[override]
        """One element of `seq` (or of range(seq) for an int); with `size`, a list of them."""
        pool = range(seq) if isinstance(seq, int) else seq
        if size is None:
            return pool[self._randbelow(len(pool))]
        if replace:
            return [pool[self._randbelow(len(pool))] for _ in range(int(size))]
        return [pool[i] for i in self.permutation(len(pool))[: int(size)]]


def stream_bits(seed: int, name: str) -> int:
    """The 128 random bits stream `name` of episode `seed` starts from: a BLAKE2b digest of the
    episode seed and the name, stable in every process (unlike `hash()`); distinct names give
    unrelated bits. A consumer that needs only a draw or two reads them here (e.g. ``bits % n``,
    uniform to within 2**-120) without making a generator."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    digest = hashlib.blake2b(f"{int(seed)}/{name}".encode("utf-8"), digest_size=16).digest()
    return int.from_bytes(digest, "little")


def fast_stream(seed: int, name: str) -> Rng:
    """A fresh `Rng` for stream `name` of episode `seed`, seeded with `stream_bits(seed, name)`.

    The generator keeps those bits as ``seed_bits``, so a consumer that draws from it rarely can
    keep a few draws, let it go and make it again (`agentgym.users.picks.LivePicks`)."""
    bits = stream_bits(seed, name)
    rng = seeded_random(Rng, bits)
    rng.seed_bits = bits
    return rng
