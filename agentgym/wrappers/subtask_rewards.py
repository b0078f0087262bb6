"""`SubtaskRewards`: a cross-task session's reward paid as its sub-tasks end, its return unchanged.

`AgentRL/CrossTask-v0` pays the mean of its sub-tasks' scores once, on the session's last step. A
trainer with a discount then credits the actions of the first sub-task with the outcome of the
last, forty steps later. This wrapper pays a share of the session's reward when a sub-task ends in
success (``info["segment_switch"]``, public to every agent) and, on the last step, the env's reward
less what it has paid, so every episode's return is the env's (to float rounding) and only when it
is paid moves. Any env that has no sub-tasks passes through unchanged.
"""

from __future__ import annotations

from typing import Any, Mapping, SupportsFloat

import gymnasium as gym

__all__ = ["SubtaskRewards"]


class SubtaskRewards(gym.Wrapper):
    """Pays ``1 / n`` when a sub-task of a session of ``n`` ends in success, and the rest at the end.

    ``n`` is the number of sub-tasks the session's task names (``info["task"]["domain"]`` joins
    them with ``+``). A follow-up the session adds, or a failed sub-task's partial score, is settled
    on the last step: the return is always the env's.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._share: float | None = None
        self._paid = 0.0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._share, self._paid = _share(info.get("task")), 0.0
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._share is None:
            return obs, reward, terminated, truncated, info
        if terminated or truncated:  # the session's reward arrives whole: what was paid comes off it
            paid, self._paid = self._paid, 0.0
            return obs, float(reward) - paid, terminated, truncated, info
        succeeded = sum(1 for s in info.get("segment_switch") or () if _succeeded(s))
        early = self._share * succeeded
        self._paid += early
        return obs, float(reward) + early, terminated, truncated, info


def _share(task: Any) -> float | None:
    """1 / the sub-tasks a cross-task session's task names; None for a task of any other family."""
    if not isinstance(task, Mapping) or task.get("family") != "crosstask":
        return None
    parts = [p for p in str(task.get("domain") or "").split("+") if p]
    return 1.0 / len(parts) if parts else None


def _succeeded(switch: Any) -> bool:
    ended = switch.get("ended") if isinstance(switch, Mapping) else None
    return isinstance(ended, Mapping) and ended.get("success") is True
