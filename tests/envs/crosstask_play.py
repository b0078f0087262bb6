"""Playing a CrossTask session of the hard tier up to a come-back, for the tier's tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentgym.envs.crosstask.comeback import ComeBack
from agentgym.envs.crosstask.oracle import CrossTaskOracle


def at_comeback(env: Any, seed: int, wanted: str) -> tuple[Any, Any, dict[str, Any]] | None:
    """Play the oracle up to the first come-back whose words hold `wanted`: (its segment, the
    booking's world, the last info), or None when the session has none."""
    oracle = CrossTaskOracle(env.unwrapped)
    obs, info = env.reset(seed=seed)
    while True:
        seg = env.unwrapped.user.active
        if seg is None:
            return None
        if isinstance(seg.move, ComeBack) and wanted in seg.move.wanted:
            return seg, env.unwrapped.user.session.segments[seg.refers_to].task.world, info
        obs, _, terminated, truncated, info = env.step(oracle.act(obs, info))
        if terminated or truncated:
            return None


def comebacks(env: Any, seeds: range, wanted: str) -> Iterator[tuple[int, Any, Any, Any]]:
    """For each seed whose session has a come-back with `wanted` in its words (`at_comeback`):
    the seed, that segment, the booking's world and the place booked before the come-back."""
    for seed in seeds:
        found = at_comeback(env, seed, wanted)
        if found is not None:
            seg, world, _ = found
            yield seed, seg, world, world.by_id[world.bookings[seg.move.booking].item_id]
