"""The PPO baseline's configuration: one `Args` dataclass, a line of doc under each field (the
``agentgym train ppo`` options are derived from it, `agentgym.cli_parser.parse_dataclass`)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin, get_type_hints

from agentgym.baselines.calibration import ConstraintMask

__all__ = ["Args", "DEFAULT_ENV_IDS"]

#: The env ids a run trains on when it names none.
DEFAULT_ENV_IDS: tuple[str, ...] = ("AgentRL/Dialog-v0",)


def _choices(annotation: Any) -> tuple[Any, ...]:
    """The values a ``Literal[...]`` annotation (or ``Literal[...] | None``) allows; () for any other."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return tuple(c for arg in get_args(annotation) if get_origin(arg) is Literal for c in get_args(arg))


@dataclass
class Args:
    """PPO over candidate actions (AgentRL envs) or over discrete actions (Box envs)."""

    env: tuple[str, ...] = ()
    """Env ids (or AgentRL task families, e.g. dialog) to train on, one per --env; several make one multi-task run. None given: AgentRL/Dialog-v0."""
    difficulty: Literal["easy", "medium", "hard"] | None = None
    """Fix the difficulty of AgentRL tasks; unset draws one per episode."""
    noise: str | None = None
    """A noise spec or preset for AgentRL envs, e.g. 'tool_failure=0.2' or 'medium'."""
    split: Literal["train", "test"] = "train"
    """The split of AgentRL tasks to train and evaluate on: train, or test (its unseen domains)."""
    init: str | None = None
    """Warm start: begin from this checkpoint.pt's policy (features, networks, risk head) instead of fresh weights, with a fresh optimizer. Its policy kind, features version and architecture must be this run's (repeat --hidden etc. if it changed them). The run records the checkpoint's path, sha256 and run in init.json and in its own checkpoints."""
    demos: str | None = None
    """Learn from demonstrations first: play --demo-episodes train-split episodes of the run's env ids with this built-in agent (e.g. expert, heuristic), map each of its actions to the candidate the policy could play (the same calls, else the nearest), keep the episodes that succeeded, and fit the policy to those choices by cross-entropy (the critic to their returns) before PPO starts. Seeds apart from the evaluation's; the time counts in --max-seconds; recorded in demos.json and the checkpoints. Unset: no demonstrations."""
    demo_episodes: int = 1000
    """Demonstration episodes to play (with --demos), spread round robin over the run's env ids."""
    demo_epochs: int = 10
    """Passes of the cross-entropy fit over the demonstration steps (with --demos)."""
    demo_coef: float = 0.0
    """With --demos: keep the demonstrations' cross-entropy in training, one minibatch after each PPO update with this weight, decaying linearly to 0 over --demo-decay updates; 0: fit before PPO only."""
    demo_decay: int = 200
    """Updates over which --demo-coef decays to 0."""
    policy: Literal["hash", "lm"] = "hash"
    """Policy over candidates: hash (hashed n-grams, small MLP) or lm (a causal LM). Box envs use an MLP."""
    model: str | None = None
    """The lm policy's model: a local directory with a causal LM and its tokenizer."""
    seed: int = 1
    """Seed of everything: weights, episode seeds, sampling, minibatches."""
    total_timesteps: int = 1_000_000
    """Stop after this many env steps."""
    max_seconds: float = 0.0
    """Stop after this many seconds of training (evaluation excluded); 0 for no limit."""
    num_envs: int = 8
    """Envs stepped together (split among the actors when --actors > 0)."""
    num_steps: int = 32
    """Steps per env per rollout; a batch holds num_envs * num_steps steps."""
    learning_rate: float = 2.5e-3
    """Adam's learning rate."""
    anneal_lr: bool = False
    """Decay the learning rate linearly to 0 over total_timesteps."""
    gamma: float = 0.99
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE's lambda."""
    minibatch_size: int = 64
    """Steps per minibatch."""
    update_epochs: int = 4
    """Passes over each batch."""
    subtask_rewards: bool = False
    """Cross-task sessions: pay each sub-task's share of the reward when it ends in success, the rest at the end (`agentgym.wrappers.SubtaskRewards`; an episode's return is unchanged)."""
    adv_norm: Literal["family", "env", "task", "batch", "none"] = "family"
    """Advantage normalisation: per task family (AgentRL), per env id, per task (a family and domain, e.g. tooluse/finance; a cross-task session's steps by the sub-task they work on), over the batch, or none."""
    clip_coef: float = 0.2
    """PPO's ratio clip."""
    clip_vloss: bool = False
    """Clip the value loss around the old values too."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value-loss weight."""
    max_grad_norm: float = 0.5
    """Gradient-norm clip."""
    target_kl: float | None = None
    """Stop an update's epochs early past this approximate KL; unset for never."""
    mix: Literal["fixed", "adaptive"] = "fixed"
    """How the env slots share several env ids: fixed (round robin, each slot keeps its id) or adaptive (when a slot's episode ends, it next plays an id drawn in proportion to that id's recent failure rate, at least --mix-floor: ids the policy has mastered give their samples to those it has not)."""
    mix_floor: float = 0.1
    """Adaptive mix: the least weight an env id keeps, so a mastered id is still played (and not forgotten)."""
    actors: int = 0
    """Rollout processes acting asynchronously; 0 runs the synchronous loop."""
    max_lag: int = 2
    """Async: drop trajectories made with weights more than this many updates old."""
    threads: int = 1
    """torch threads per process."""
    hash_buckets: int = 16384
    """hash policy: feature hash buckets."""
    hash_dim: int = 32
    """hash policy: embedding size."""
    hidden: int = 128
    """hash policy: MLP width (MLP policy: 64, as SB3's default)."""
    lm_max_context: int = 256
    """lm policy: conversation tokens kept (the latest)."""
    lm_max_candidate: int = 48
    """lm policy: tokens kept per candidate."""
    max_candidates: int = 64
    """Candidates offered per step, at most."""
    max_entities: int = 8
    """Entities seen in tool results that get candidate actions, most recent first."""
    calibration: Literal["on", "off"] = "on"
    """Online policy calibration: a risk of harm learned from what the env reports, applied when acting."""
    risk_threshold: float = 0.5
    """Calibration: when evaluating or deployed (not in rollouts), mask candidates whose estimated risk of harm is over this (1 for never)."""
    risk_coef: float = 1.0
    """Calibration: weight of log(1 - risk) added to each candidate's logit, in rollouts and when acting."""
    risk_loss_coef: float = 0.5
    """Weight of the risk head's loss (it trains with or without calibration; it never moves the policy)."""
    constraint_allowed: tuple[str, ...] = ()
    """Constraint layer: the only tools the agent may call (repeatable; empty: every tool). A hard mask."""
    constraint_forbid: tuple[str, ...] = ()
    """Constraint layer: regular expressions over a call's name and sorted-key JSON arguments (repeatable)."""
    eval_episodes: int = 100
    """Episodes per env id in each evaluation (0: no evaluation)."""
    eval_every: int = 10
    """Evaluate every this many updates (and before the first and after the last)."""
    eval_seed: int = 5_000_000
    """First seed of the evaluation episodes (of --split, apart from the training seeds)."""
    eval_greedy: bool = True
    """Evaluate the greedy policy (argmax over candidates) rather than a sampled one."""
    target_success: float = 0.8
    """Record the training time at which evaluation success first reaches this."""
    target_env: str | None = None
    """The env id whose evaluation success target_success applies to; unset: the success over every env id."""
    stop_at_target: bool = False
    """Stop training once evaluation success reaches target_success."""
    out: str = "runs/ppo"
    """Folder that holds one sub-folder per run."""
    run_name: str | None = None
    """The run's folder name; unset: env, policy, seed and time."""
    save_every: int = 50
    """Write checkpoint.pt every this many updates (and at the end)."""
    tensorboard: bool = True
    """Also log to TensorBoard when it is installed."""
    plot: bool = True
    """Write learning_curve.png at the end."""
    progress: bool = True
    """Print a line per update (at most one every 2 s) and every evaluation."""

    def __post_init__(self) -> None:
        if isinstance(self.env, str):
            self.env = (self.env,)
        # The default lives here, not on the field: a repeated option appends to its field's default.
        self.env = tuple(self.env) or DEFAULT_ENV_IDS
        hints = get_type_hints(type(self))
        for f in dataclasses.fields(self):
            choices = _choices(hints[f.name])
            value = getattr(self, f.name)
            if choices and value is not None and value not in choices:
                raise ValueError(f"--{f.name.replace('_', '-')} must be one of {choices}, got {value!r}")
        positive = ("num_envs", "num_steps", "minibatch_size", "update_epochs", "total_timesteps", "threads",
                    "hash_buckets", "hash_dim", "hidden", "max_candidates", "max_entities", "eval_every",
                    "save_every")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.actors < 0 or self.max_lag < 0 or self.eval_episodes < 0 or self.max_seconds < 0:
            raise ValueError("--actors, --max-lag, --eval-episodes and --max-seconds must be >= 0")
        if not 0.0 < self.mix_floor <= 1.0:
            raise ValueError(f"--mix-floor must be in (0, 1], got {self.mix_floor}")
        if self.demos is not None and (self.demo_episodes < 1 or self.demo_epochs < 0 or self.demo_coef < 0
                                       or self.demo_decay < 1):
            raise ValueError("--demo-episodes and --demo-decay must be at least 1, --demo-epochs and --demo-coef >= 0")
        if self.policy == "lm" and not self.model:
            raise ValueError("--policy lm needs --model PATH (a local causal LM directory)")
        if not 0.0 <= self.risk_threshold <= 1.0 or self.risk_coef < 0 or self.risk_loss_coef < 0:
            raise ValueError("--risk-threshold must be in [0, 1]; --risk-coef and --risk-loss-coef must be >= 0")
        for pattern in self.constraint_forbid:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"--constraint-forbid {pattern!r} is not a valid regular expression: {exc}") from None

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def constraint(self) -> ConstraintMask | None:
        """The constraint layer's rule, or None when none is configured."""
        if not self.constraint_allowed and not self.constraint_forbid:
            return None
        return ConstraintMask(self.constraint_allowed or None, self.constraint_forbid)
