"""Whether an env's last info also carries its summary under ``info["episode"]``.

The summary lives under ``info["episode_summary"]``. agentgym 0.1 wrote it under
``info["episode"]``, and code written for 0.1 (and env-contract checkers) still reads that key,
so the env keeps it as an alias of the same dict wherever no Gymnasium layer owns the key.
Gymnasium's `RecordEpisodeStatistics` wrappers write ``info["episode"]`` themselves and refuse an
info that already holds it (the single-env wrapper per env, the vector wrapper in the infos a
vector env merges), so the alias is left out when any of these is around the env:

* a `gymnasium.wrappers.RecordEpisodeStatistics` whose innermost env is this env;
* a vector env or vector wrapper (`SyncVectorEnv` resets and auto-resets its sub-envs from its
  own ``reset`` and ``step``, so one of its frames is on the stack);
* the worker of an `AsyncVectorEnv` (its sub-envs live in a worker process whose loop resets them).

Like `agentgym.core.time_limit`, this is read from the call stack while the env resets: every
Gymnasium wrapper resets through the layers inside it (an auto-resetting wrapper from its own
``step``), and a vector env resets or auto-resets its sub-envs from its ``reset`` or ``step``.
The walk follows that chain of ``*reset*`` and ``*step*`` frames and reads the one frame that
called it (an async worker's loop), at most `_MAX_FRAMES` frames.
"""

from __future__ import annotations

import sys
from typing import Any

from gymnasium.vector import VectorEnv, VectorWrapper, async_vector_env
from gymnasium.wrappers import RecordEpisodeStatistics

__all__ = ["ALIAS_KEY", "summary_alias_wanted"]

#: The key of agentgym 0.1's summary, kept as an alias where Gymnasium does not own it.
ALIAS_KEY = "episode"

_ASYNC_WORKER = async_vector_env._async_worker.__code__
#: A bound on the walk: a reset chain through a deep wrapper stack, inside a vector env, inside
#: a harness or a test runner.
_MAX_FRAMES = 64


def summary_alias_wanted(env: Any) -> bool:
    """True when no Gymnasium layer that owns ``info["episode"]`` is resetting `env`.

    Call it from `env`'s own ``reset``.
    """
    frame = sys._getframe(1)
    for _ in range(_MAX_FRAMES):
        if frame is None:
            return True
        code = frame.f_code
        if code is _ASYNC_WORKER:
            return False
        owner = frame.f_locals.get("self")
        if isinstance(owner, (VectorEnv, VectorWrapper)):
            return False
        if isinstance(owner, RecordEpisodeStatistics) and owner.unwrapped is env:
            return False
        if "reset" not in code.co_name and "step" not in code.co_name:
            return True  # the caller of the outermost layer: nothing above it wraps the env
        frame = frame.f_back
    return True
