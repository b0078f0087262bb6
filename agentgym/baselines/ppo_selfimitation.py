"""Self-imitation (Oh et al., 2018, "Self-Imitation Learning"): replay the run's own scoring
episodes where they beat the critic.

PPO learns from an episode once. When the reward comes only at a chain's end (a payout scores
only when the transfer is right), the sampling policy may complete a long chain once in many
hundreds of episodes; one update nudges it, later updates forget it. Self-imitation keeps the
episodes that scored (a positive return) in a buffer and, after each PPO update, trains on a few
minibatches of their steps: where the discounted return R beats the critic's value V, the policy
is pushed toward the action taken, in proportion to (R - V)+, and the value toward R. Where the
critic already expects R, a step teaches nothing, so an episode stops being imitated once the
policy plays it as well; no episode is imitated for scoring less than the policy expects.

Nothing here sees more than the policy did: the buffer holds the run's own observations
(the encoded transcript and candidates), actions and rewards.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from agentgym.baselines.ppo_acting import pad_adjust
from agentgym.baselines.ppo_config import Args
from agentgym.baselines.ppo_update import clip_grad_norm

__all__ = ["Trajectory", "SelfImitationBuffer", "discounted_returns", "self_imitation_update"]


@dataclass
class Trajectory:
    """One finished episode, as the policy saw and played it."""

    obs: list[Any]
    actions: np.ndarray
    rewards: np.ndarray
    #: Per step: the acting adjustment its action was sampled with (None: a non-candidate policy).
    adjust: list[np.ndarray] | None = None
    #: Per step: the critic's value when the step was played (the first priority of its replay).
    values: np.ndarray | None = None

    @property
    def ret(self) -> float:
        return float(self.rewards.sum())


def discounted_returns(rewards: np.ndarray, gamma: float) -> np.ndarray:
    """R_t = r_t + gamma * R_{t+1} over one finished episode."""
    out = np.zeros(len(rewards), dtype=np.float32)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = float(rewards[t]) + gamma * running
        out[t] = running
    return out


class SelfImitationBuffer:
    """The run's scoring episodes, their steps with discounted returns, oldest dropped first.

    Steps are drawn in proportion to their last known gap (R - V)+ (prioritised replay, as in
    the paper): a step's gap when it was played, then the one each replay measures. So the
    episodes that still beat the critic (a rare chain) are replayed, not those it has learned
    (the many easy ones that would otherwise fill most minibatches).

    Args:
        capacity: the most steps held; whole episodes are dropped to stay under it.
        gamma: the discount of the returns.
    """

    #: The priority every step keeps over its gap: one the critic caught up with may be drawn again.
    FLOOR = 1e-3

    def __init__(self, capacity: int, gamma: float) -> None:
        self.capacity, self.gamma = capacity, gamma
        self._episodes: deque[tuple[Trajectory, np.ndarray, np.ndarray]] = deque()
        self._steps = 0
        self._flat: tuple[list[Any], list[int], list[float], list[np.ndarray] | None] | None = None
        self._priority: np.ndarray | None = None

    def __len__(self) -> int:
        return self._steps

    @property
    def episodes(self) -> int:
        return len(self._episodes)

    def add(self, trajectory: Trajectory) -> None:
        """Keep `trajectory` if it scored (a positive return) and fits."""
        n = len(trajectory.actions)
        if trajectory.ret <= 0 or n == 0 or n > self.capacity:
            return
        self._store_priorities()
        returns = discounted_returns(trajectory.rewards, self.gamma)
        values = trajectory.values if trajectory.values is not None else np.zeros(n, dtype=np.float32)
        self._episodes.append((trajectory, returns, np.maximum(returns - values, 0.0) + self.FLOOR))
        self._steps += n
        while self._steps > self.capacity:
            old, _, _ = self._episodes.popleft()
            self._steps -= len(old.actions)
        self._flat = self._priority = None

    def _store_priorities(self) -> None:
        """Copy the flat priorities the replays updated back into their episodes."""
        if self._priority is None:
            return
        at = 0
        for _, _, priority in self._episodes:
            priority[:] = self._priority[at: at + len(priority)]
            at += len(priority)

    def _flatten(self) -> tuple[list[Any], list[int], list[float], list[np.ndarray] | None]:
        if self._flat is None:
            obs: list[Any] = []
            actions: list[int] = []
            returns: list[float] = []
            adjust: list[np.ndarray] | None = [] if all(t.adjust is not None for t, _, _ in self._episodes) else None
            for traj, rets, _ in self._episodes:
                obs += traj.obs
                actions += traj.actions.tolist()
                returns += rets.tolist()
                if adjust is not None:
                    adjust += traj.adjust  # type: ignore[operator]
            self._flat = (obs, actions, returns, adjust)
            self._priority = np.concatenate([p for _, _, p in self._episodes]).astype(np.float64)
        return self._flat

    def sample(self, n: int, generator: torch.Generator) -> tuple[list[int], list[Any], torch.Tensor, torch.Tensor,
                                                                  list[np.ndarray] | None]:
        """`n` steps drawn in proportion to their priority (with replacement):
        (indices, obs, actions, returns, adjustments)."""
        obs, actions, returns, adjust = self._flatten()
        assert self._priority is not None
        idx = torch.multinomial(torch.from_numpy(self._priority), n, replacement=True, generator=generator).tolist()
        return (idx, [obs[i] for i in idx], torch.tensor([actions[i] for i in idx], dtype=torch.int64),
                torch.tensor([returns[i] for i in idx], dtype=torch.float32),
                [adjust[i] for i in idx] if adjust is not None else None)

    def reprioritise(self, idx: list[int], gaps: np.ndarray) -> None:
        """Set the priorities of the steps `idx` (as `sample` returned them) from their new gaps."""
        assert self._priority is not None
        self._priority[idx] = np.maximum(gaps, 0.0) + self.FLOOR


def self_imitation_update(policy: nn.Module, optimizers: list[torch.optim.Optimizer], buffer: SelfImitationBuffer,
                          args: Args, generator: torch.Generator) -> dict[str, float]:
    """`args.sil_batches` minibatches of the buffer's steps: the loss
    ``sil_coef * (-log pi(a|s) * (R - V)+ + sil_value_coef * 0.5 * ((R - V)+)^2)``.

    Returns the mean loss, the share of steps whose return beat the critic, and the buffer's size.
    """
    if not len(buffer) or args.sil_coef <= 0:
        return {}
    params = [p for p in policy.parameters() if p.requires_grad]
    losses, beaten = [], []
    for _ in range(args.sil_batches):
        idx, obs, actions, returns, adjust = buffer.sample(args.minibatch_size, generator)
        logits, value = policy(policy.collate(obs))
        if adjust is not None:
            # The candidates' logits as they were acted on: a candidate masked then stays masked.
            logits = logits + pad_adjust(adjust, logits.shape[1])
        logp = torch.log_softmax(logits, dim=-1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        gap = (returns - value).clamp(min=0.0)
        buffer.reprioritise(idx, gap.detach().numpy())
        loss = args.sil_coef * (-(logp * gap.detach()).mean() + args.sil_value_coef * 0.5 * (gap ** 2).mean())
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        loss.backward()
        clip_grad_norm(params, args.max_grad_norm)
        for opt in optimizers:
            opt.step()
        losses.append(float(loss.detach()))
        beaten.append(float((gap > 0).float().mean()))
    return {"sil_loss": float(np.mean(losses)), "sil_beaten": float(np.mean(beaten)),
            "sil_steps": float(len(buffer)), "sil_episodes": float(buffer.episodes)}
