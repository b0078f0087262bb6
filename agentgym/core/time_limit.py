"""The step limit of the Gymnasium `TimeLimit` wrappers around an env, read as the env resets.

`gymnasium.wrappers.TimeLimit` truncates in its own `step`, after the env has returned: the env
never learns that the episode ended, so its last info would lack the episode summary. But a
wrapper stack resets through every layer (`gymnasium.Wrapper.reset` calls ``self.env.reset``,
and `TimeLimit.reset` calls it through ``super().reset``), so while an env resets, each
`TimeLimit` around it has a frame on the call stack. `outer_step_limit` reads their
``max_episode_steps`` there; the env caps its turn budget with the smallest and truncates itself
at that step, with its summary, exactly as with ``max_turns=N``. This covers
``gym.make(id, max_episode_steps=N)`` (which adds a `TimeLimit` outside the env and records N in
``env.spec``) and a `TimeLimit` applied by hand, in vector envs too (their sub-envs reset through
their own stacks).

The walk goes up the reset chain only: it stops at the first frame whose function's name does not
hold ``reset`` (the caller of the outermost wrapper's reset), since every frame it reads costs a
frame object and a caller's stack can be deep. The two counts agree when each step of the wrapper reaches the env once, as with every
Gymnasium and agentgym wrapper. A wrapper between them that steps the env several times per step
of its own, or that resets the env from a function not named ``*reset*``, or a reset that skips
the `TimeLimit` (``env.unwrapped.reset()``), leaves the limit to the wrapper alone: the env then
ends at its own budget, and the `TimeLimit`'s last info has no summary.
"""

from __future__ import annotations

import sys
from typing import Any

from gymnasium.wrappers import TimeLimit

__all__ = ["outer_step_limit"]

_TIME_LIMIT_RESET = TimeLimit.reset.__code__
#: A bound on the walk: the frames of one reset chain (a frame or two per wrapper), with room for
#: deep stacks of wrappers.
_MAX_FRAMES = 64


def outer_step_limit(env: Any) -> int | None:
    """The smallest ``max_episode_steps`` of the `TimeLimit` wrappers now resetting `env`.

    Call it from `env`'s own ``reset`` (or a function it calls whose name holds ``reset``). Only
    wrappers whose innermost env is `env` count (a `TimeLimit` around another env that happens to
    reset this one does not).

    Returns:
        The limit, or None when no `TimeLimit` around `env` is resetting it.
    """
    limit: int | None = None
    frame = sys._getframe(1)
    for _ in range(_MAX_FRAMES):
        if frame is None or "reset" not in frame.f_code.co_name:
            break
        if frame.f_code is _TIME_LIMIT_RESET:
            wrapper = frame.f_locals.get("self")
            steps = getattr(wrapper, "_max_episode_steps", None)
            if isinstance(wrapper, TimeLimit) and isinstance(steps, int) and wrapper.unwrapped is env:
                limit = steps if limit is None else min(limit, steps)
        frame = frame.f_back
    return limit
