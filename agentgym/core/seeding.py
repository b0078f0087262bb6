"""Named random streams derived from an episode seed.

Every random draw in agentgym comes from a generator made here, from the episode seed and a
stream name. Two consequences follow: adding a consumer of randomness (a noise wrapper, a new
user behaviour) never shifts the draws of another, and nothing depends on process state such as
`random`, `numpy.random` or `PYTHONHASHSEED`.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["stream", "stream_seed", "draw_episode_seed", "MAX_SEED"]

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
