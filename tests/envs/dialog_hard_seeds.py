"""Seeds of Dialog's hard tier by the kind of task they draw: the tests of the single booking
(give-ways, the remembered need, options, today) play only seeds that draw it, and the
itinerary's tests only seeds that draw an itinerary (`agentgym.envs.dialog.hard_tier` draws the
kind per seed, and falls back to the single booking when a world carries no itinerary).

Seeds 5000-5999 are the playtests' and never drawn here.
"""

from __future__ import annotations

from agentgym.envs.dialog import hard_tier

__all__ = ["single_seeds", "single_seed", "itinerary_seeds"]

#: Seeds scanned at most (below the playtests' 5000).
_LIMIT = 5000


#: Per (split, whether an itinerary): the seeds found so far, and the next seed to look at.
_FOUND: dict[tuple[str, bool], tuple[list[int], list[int]]] = {}


def _kinds(split: str, itinerary: bool, n: int) -> list[int]:
    found, cursor = _FOUND.setdefault((split, itinerary), ([], [0]))
    while len(found) < n:
        seed = cursor[0]
        if seed >= _LIMIT:
            raise AssertionError(f"fewer than {n} such seeds below {_LIMIT}")
        cursor[0] += 1
        task = hard_tier.generate_task(seed, {"split": split, "difficulty": "hard"})
        if (task.extra.get("kind") == "itinerary") is itinerary:
            found.append(seed)
    return found[:n]


def single_seeds(split: str, stop: int, start: int = 0) -> list[int]:
    """The single-booking hard seeds of `split` from the `start`-th to before the `stop`-th, in
    seed order (what ``range(start, stop)`` was before the tier drew itineraries too)."""
    return _kinds(split, False, stop)[start:]


def single_seed(split: str, k: int) -> int:
    """The `k`-th single-booking hard seed of `split` (counting from 0)."""
    return _kinds(split, False, k + 1)[k]


def itinerary_seeds(split: str, n: int) -> list[int]:
    """The first `n` hard seeds of `split` that draw an itinerary."""
    return _kinds(split, True, n)
