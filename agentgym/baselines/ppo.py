"""PPO over candidate actions: the thin "optimise the whole interaction" baseline.

A language-model agent writes text; a thin baseline on a CPU cannot learn that from scratch. So
this one chooses among candidate actions, as text-game RL does with admissible commands: the
`ActionCandidates` wrapper lists sensible next actions built from public information only, and a
policy scores each (conversation, candidate) pair (`hash`: hashed n-grams and an MLP; `lm`: a
causal LM's log-likelihood of the candidate). The PPO below is the textbook one (clipped ratios,
GAE, an entropy bonus, minibatches) with four additions:

* multi-task: several env ids in one run, advantages normalised per task family (AgentRL's
  task-advantage normalisation), episodes drawn from the ``train`` split;
* asynchronous rollouts: ``--actors N`` processes act with the latest weights they have, at
  their own pace; the learner drops trajectories more than ``--max-lag`` updates stale and
  corrects the rest with the PPO ratio against the behaviour policy's log-probabilities;
* online policy calibration (``--calibration on``, the default): the policy's risk head learns,
  with every update, the probability that a candidate does harm from what the env reports
  (policy violations, refused or failed writes, calls the constraint layer denies); when
  acting, each candidate's probability is scaled by its chance of being safe and candidates over
  ``--risk-threshold`` are masked; ``--constraint-allowed``/``--constraint-forbid`` add the
  constraint layer (`agentgym.noise.ActionConstraint`) to the envs and as a hard mask
  (`agentgym.baselines.calibration`);
* the same file trains a plain Box/Discrete env (CartPole) with an MLP, so a comparison with
  stable-baselines3 measures this code.

Usage::

    agentgym train ppo --env AgentRL/Dialog-v0 --difficulty easy --max-seconds 600
    python -m agentgym.baselines.ppo --env AgentRL/Dialog-v0 --env AgentRL/ToolUse-v0 --actors 2
    agentgym eval AgentRL/Dialog-v0 --agent ppo --agent-arg checkpoint=runs/ppo/RUN/checkpoint.pt

Synchronous runs (``--actors 0``) with the same seed give the same result, bit for bit.
Checkpoints are loaded weights-only (untrusted files run no code: `load_checkpoint`).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import pickle
import queue as queue_lib
import re
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
import torch
import torch.multiprocessing as mp
from torch import nn

from agentgym.baselines.calibration import ConstraintMask, RiskStats, adjustments, step_harm
from agentgym.baselines.policies import HashPolicy, LMPolicy, MLPPolicy, Transcript, make_policy, policy_spec
from agentgym.wrappers.candidates import ActionCandidates, CandidateConfig

__all__ = ["Args", "train", "TrainResult", "gae", "normalise_advantages", "load_checkpoint", "evaluate", "act",
           "Acting", "learning_curve", "main"]

CHECKPOINT_FORMAT = "agentgym-ppo/1"


# ============================================================================================
# 1. Configuration
# ============================================================================================
@dataclass
class Args:
    """PPO over candidate actions (AgentRL envs) or over discrete actions (Box envs)."""

    env: tuple[str, ...] = ("AgentRL/Dialog-v0",)
    """Env ids (or AgentRL task families, e.g. dialog) to train on; several make one multi-task run."""
    difficulty: str | None = field(default=None, metadata={"choices": ("easy", "medium", "hard")})
    """Fix the difficulty of AgentRL tasks; unset draws one per episode."""
    noise: str | None = None
    """A noise spec or preset for AgentRL envs, e.g. 'tool_failure=0.2' or 'medium'."""
    policy: str = field(default="hash", metadata={"choices": ("hash", "lm")})
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
    adv_norm: str = field(default="family", metadata={"choices": ("family", "env", "batch", "none")})
    """Advantage normalisation: per task family (AgentRL), per env id, over the batch, or none."""
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
    calibration: str = field(default="on", metadata={"choices": ("on", "off")})
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
    """First seed of the evaluation episodes (train split, apart from the training seeds)."""
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
        self.env = tuple(self.env)
        if not self.env:
            raise ValueError("give at least one --env")
        for f in dataclasses.fields(self):
            choices = f.metadata.get("choices")
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


# ============================================================================================
# 2. Environments and policies
# ============================================================================================
def resolve_env_ids(names: Sequence[str]) -> tuple[str, ...]:
    """Env ids from ids or AgentRL task-family names (``dialog`` -> every AgentRL id of that family)."""
    from gymnasium.envs.registration import load_env_creator

    import agentgym  # noqa: F401  (registers the ids)

    out: list[str] = []
    for name in names:
        if "/" in name or name in gym.registry:
            out.append(name)
            continue
        hits = []
        for i in sorted(gym.registry):
            entry = gym.spec(i).kwargs.get("env_entry_point") if i.startswith("AgentRL/") else None
            if isinstance(entry, str) and getattr(load_env_creator(entry), "family", None) == name:
                hits.append(i)
        if not hits:
            raise ValueError(f"{name!r} is neither a registered env id nor an AgentRL task family")
        out += hits
    return tuple(dict.fromkeys(out))


def candidate_config(args: Args) -> CandidateConfig:
    return CandidateConfig(max_entities=args.max_entities, max_candidates=args.max_candidates)


def make_env(env_id: str, args: Args, split: str = "train") -> gym.Env:
    """An AgentRL id on `split`, inside `ActionCandidates`; any other id as `gym.make` gives it."""
    if env_id.startswith("AgentRL/"):
        import agentgym  # noqa: F401  (registers the ids)

        kwargs: dict[str, Any] = {"split": split}
        if args.difficulty is not None:
            kwargs["difficulty"] = args.difficulty
        if args.noise not in (None, "none"):
            kwargs["noise"] = args.noise
        env = gym.make(env_id, **kwargs)
        if args.constraint is not None:
            from agentgym.noise import ActionConstraint

            env = ActionConstraint(env, allowed_tools=list(args.constraint_allowed) or None,
                                   forbid=list(args.constraint_forbid))
        return ActionCandidates(env, config=candidate_config(args))
    env = gym.make(env_id)
    if not isinstance(env.observation_space, gym.spaces.Box) or not isinstance(env.action_space, gym.spaces.Discrete):
        raise ValueError(f"{env_id}: only AgentRL ids and Box-observation, Discrete-action envs are supported")
    return env


def build_policy(args: Args, env: gym.Env) -> nn.Module:
    """The policy for `env`: an MLP for a Box env, else the candidate policy `args.policy` names."""
    if isinstance(env.observation_space, gym.spaces.Box):
        return MLPPolicy(int(np.prod(env.observation_space.shape)), int(env.action_space.n))
    if args.policy == "lm":
        return LMPolicy(args.model, args.lm_max_context, args.lm_max_candidate)  # type: ignore[arg-type]
    return HashPolicy(args.hash_buckets, args.hash_dim, args.hidden)


def group_of(env_id: str, info: dict[str, Any], mode: str) -> str:
    """The advantage-normalisation group of an episode: its task family, its env id, or one."""
    if mode == "family":
        return str((info.get("task") or {}).get("family") or env_id)
    if mode == "env":
        return env_id
    return "all"


@dataclass(frozen=True)
class Acting:
    """How a candidate policy's logits are adjusted when it acts: calibration (the learned risk
    of harm as a penalty, and a threshold mask) and the constraint layer (a hard mask); see
    `agentgym.baselines.calibration`. Evaluation and the `ppo` agent act with all of it;
    training rollouts with the penalty and the constraint but not the threshold mask (`of` with
    ``rollout=True``): a mask there would keep the policy from ever learning that a candidate
    the risk estimate still fears is sometimes the right one."""

    calibrate: bool = False
    threshold: float = 1.0
    coef: float = 0.0
    constraint: ConstraintMask | None = None

    @classmethod
    def of(cls, args: Args, calibration: str | None = None, rollout: bool = False) -> "Acting":
        """The acting rule of a run's Args (`calibration` overrides ``args.calibration``)."""
        return cls((calibration or args.calibration) == "on", 1.0 if rollout else args.risk_threshold,
                   args.risk_coef, args.constraint)


@dataclass
class Acted:
    """One forward pass of a batch of steps, adjusted for acting."""

    logits: torch.Tensor
    values: torch.Tensor
    #: Per step: the adjustment added to each candidate's logit (None for non-candidate policies).
    adjust: list[np.ndarray] | None
    #: [steps, max candidates] estimated risk of harm (None without a risk head).
    risk: torch.Tensor | None
    masked: int = 0


@torch.no_grad()
def act(policy: nn.Module, encoded: Sequence[Any], candidates: Sequence[Sequence[str]] | None,
        acting: Acting) -> Acted:
    """The policy's adjusted logits, values and risks for a batch of encoded observations."""
    batch = policy.collate(list(encoded))
    if candidates is None or not hasattr(policy, "forward_with_risk"):
        logits, values = policy(batch)
        return Acted(logits, values, None, None)
    logits, values, risk_logits = policy.forward_with_risk(batch)
    counts = [len(c) for c in candidates]
    adjust, masked = adjustments(risk_logits, counts, candidates, acting.calibrate, acting.threshold, acting.coef,
                                 acting.constraint)
    padded = _pad_adjust([a.numpy() for a in adjust], logits.shape[1])
    return Acted(logits + padded, values, [a.numpy() for a in adjust], torch.sigmoid(risk_logits), masked)


def _pad_adjust(adjust: Sequence[np.ndarray], width: int) -> torch.Tensor:
    """Per-step adjustments as a [steps, width] tensor (padding slots 0: they are masked anyway)."""
    out = np.zeros((len(adjust), width), dtype=np.float32)
    for i, a in enumerate(adjust):
        out[i, : len(a)] = a
    return torch.from_numpy(out)


def sample(logits: torch.Tensor, generator: torch.Generator, greedy: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Actions drawn from (or the argmax of) the logits, and their log-probabilities."""
    logp = torch.log_softmax(logits, dim=-1)
    if greedy:
        actions = logits.argmax(dim=-1)
    else:
        actions = torch.multinomial(logp.exp(), 1, generator=generator).squeeze(-1)
    return actions, logp.gather(-1, actions.unsqueeze(-1)).squeeze(-1)


# ============================================================================================
# 3. Rollouts (the synchronous loop and every actor use the same Collector)
# ============================================================================================
@dataclass
class Segment:
    """`T` steps of `E` envs made with one version of the weights; arrays are [T, E]."""

    obs: list[Any]
    actions: np.ndarray
    logprobs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    groups: list[str]
    next_obs: list[Any]
    next_values: np.ndarray
    version: int
    episodes: list[dict[str, Any]]
    #: Per step, in `obs` order: the acting adjustment of each candidate's logit (None: none).
    adjust: list[np.ndarray] | None = None
    #: [T, E]: the harm the step did (`StepHarm.severity`), and the estimated risk of the candidate taken.
    harm: np.ndarray | None = None
    risk: np.ndarray | None = None
    violations: int = 0
    masked: int = 0

    @property
    def size(self) -> int:
        return int(self.actions.size)


class Slot:
    """One env and the episode it is playing: the policy's encoding of its latest observation."""

    def __init__(self, env_id: str, env: gym.Env) -> None:
        self.env_id, self.env = env_id, env
        self.text = not isinstance(env.observation_space, gym.spaces.Box)
        self.transcript = Transcript()
        self.candidates: list[str] = []
        self.encoded: Any = None
        self.group = env_id
        self.ret, self.length = 0.0, 0

    def begin(self, policy: nn.Module, seed: int, adv_norm: str) -> None:
        """Reset the env with `seed` and encode the first observation."""
        obs, info = self.env.reset(seed=seed)
        self.ret, self.length = 0.0, 0
        self.group = group_of(self.env_id, info, adv_norm)
        if self.text:
            self.transcript.reset(info)
        self._encode(policy, obs, info)

    def act(self, index: int) -> tuple[Any, float, bool, dict[str, Any]]:
        """Take action `index` (a candidate, or a discrete action); (action, reward, done, info)."""
        action = self.candidates[index] if self.text else index
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.ret += float(reward)
        self.length += 1
        self._last = (action, obs)
        return action, float(reward), bool(terminated or truncated), info

    def advance(self, policy: nn.Module, action: Any, info: dict[str, Any]) -> None:
        """Encode the observation the last `act` returned (the episode goes on)."""
        if self.text:
            self.transcript.add(action, info)
        self._encode(policy, self._last[1], info)

    def _encode(self, policy: nn.Module, obs: Any, info: dict[str, Any]) -> None:
        if self.text:
            self.candidates = info["candidates"]
            self.encoded = policy.encode((self.transcript, self.candidates))
        else:
            self.encoded = policy.encode(obs)


class Collector:
    """Steps `len(env_ids)` envs with a policy, continuing episodes across calls to `collect`.

    Args:
        args: the run's Args. policy: the acting policy (read only here).
        env_ids: one id per env slot. seed: seeds the episode seeds and the action sampling.
    """

    def __init__(self, args: Args, policy: nn.Module, env_ids: Sequence[str], seed: int) -> None:
        self.args, self.policy = args, policy
        self.acting = Acting.of(args, rollout=True)
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator().manual_seed(seed)
        self.slots = [Slot(env_id, make_env(env_id, args)) for env_id in env_ids]
        for s in self.slots:
            self._start(s)

    def _start(self, s: Slot) -> None:
        s.begin(self.policy, int(self.rng.integers(2**31 - 1)), self.args.adv_norm)

    @torch.no_grad()
    def collect(self, num_steps: int, version: int = 0) -> Segment:
        policy, n = self.policy, len(self.slots)
        obs: list[Any] = []
        groups: list[str] = []
        adjust: list[np.ndarray] = []
        actions = np.zeros((num_steps, n), dtype=np.int64)
        logprobs = np.zeros((num_steps, n), dtype=np.float32)
        values = np.zeros((num_steps, n), dtype=np.float32)
        rewards = np.zeros((num_steps, n), dtype=np.float32)
        dones = np.zeros((num_steps, n), dtype=np.float32)
        harm = np.zeros((num_steps, n), dtype=np.float32)
        risk = np.zeros((num_steps, n), dtype=np.float32)
        episodes: list[dict[str, Any]] = []
        violations = masked = 0
        text = self.slots[0].text
        for t in range(num_steps):
            acted = act(policy, [s.encoded for s in self.slots], [s.candidates for s in self.slots] if text else None,
                        self.acting)
            a, logp = sample(acted.logits, self.generator)
            actions[t], logprobs[t], values[t] = a.numpy(), logp.numpy(), acted.values.numpy()
            masked += acted.masked
            if acted.adjust is not None:
                adjust += acted.adjust
            if acted.risk is not None:
                risk[t] = acted.risk.gather(-1, a.unsqueeze(-1)).squeeze(-1).numpy()
            for e, s in enumerate(self.slots):
                obs.append(s.encoded)
                groups.append(s.group)
                action, rewards[t, e], done, info = s.act(int(actions[t, e]))
                h = step_harm(info)
                harm[t, e] = h.severity
                violations += h.violations
                if done:
                    dones[t, e] = 1.0
                    episodes.append(self._episode(s, info))
                    self._start(s)
                else:
                    s.advance(self.policy, action, info)
        next_obs = [s.encoded for s in self.slots]
        _, next_values = policy(policy.collate(next_obs))
        return Segment(obs, actions, logprobs, values, rewards, dones, groups, next_obs,
                       next_values.numpy().astype(np.float32), version, episodes,
                       adjust if text else None, harm, risk if text else None, violations, masked)

    @staticmethod
    def _episode(s: Slot, info: dict[str, Any]) -> dict[str, Any]:
        ep = {"env": s.env_id, "group": s.group, "return": s.ret, "length": s.length}
        summary = info.get("episode_summary")
        if isinstance(summary, dict) and "success" in summary:
            ep["metrics"] = summary
        return ep

    def close(self) -> None:
        for s in self.slots:
            s.env.close()


# ============================================================================================
# 4. Advantages: GAE, then normalisation per task family
# ============================================================================================
def gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, next_values: np.ndarray,
        gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimates and returns for [T, E] arrays (dones[t]: ended at t)."""
    adv = np.zeros_like(rewards)
    last = np.zeros(rewards.shape[1], dtype=np.float32)
    for t in reversed(range(len(rewards))):
        nonterminal = 1.0 - dones[t]
        nxt = next_values if t == len(rewards) - 1 else values[t + 1]
        delta = rewards[t] + gamma * nxt * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + values


def normalise_advantages(adv: np.ndarray, groups: Sequence[str], mode: str = "family") -> np.ndarray:
    """Advantages scaled to mean 0 and std 1 within each group (AgentRL's task-advantage
    normalisation: one task family's large returns do not drown another's), over the whole
    batch (``batch``) or not at all (``none``)."""
    adv = np.asarray(adv, dtype=np.float32).copy()
    if mode == "none":
        return adv
    keys = np.asarray(groups if mode in ("family", "env") else ["all"] * len(adv))
    for g in sorted(set(keys.tolist())):
        idx = keys == g
        adv[idx] = (adv[idx] - adv[idx].mean()) / (adv[idx].std() + 1e-8)
    return adv


@dataclass
class Batch:
    """Flat training data of one update."""

    obs: list[Any]
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    #: Per step: the acting adjustment its action was sampled with (None: a non-candidate policy).
    adjust: list[np.ndarray] | None = None
    #: Per step: the harm the action taken did (`StepHarm.severity`: the risk head's target).
    harm: torch.Tensor | None = None


@torch.no_grad()
def _values(policy: nn.Module, obs: list[Any], chunk: int = 256) -> np.ndarray:
    out = [policy(policy.collate(obs[i: i + chunk]))[1] for i in range(0, len(obs), chunk)]
    return torch.cat(out).numpy().astype(np.float32)


def make_batch(segments: list[Segment], policy: nn.Module, version: int, args: Args) -> Batch:
    """GAE per segment (values recomputed with the current weights for stale segments), then
    advantages normalised per group across the whole batch."""
    obs, groups, acts, logps, vals, advs, rets = [], [], [], [], [], [], []
    adjust: list[np.ndarray] | None = [] if all(seg.adjust is not None for seg in segments) else None
    harms = []
    for seg in segments:
        if adjust is not None:
            adjust += seg.adjust  # type: ignore[operator]
        harms.append((seg.harm if seg.harm is not None else np.zeros_like(seg.rewards)).reshape(-1))
        values, next_values = seg.values, seg.next_values
        if seg.version != version:
            values = _values(policy, seg.obs).reshape(seg.values.shape)
            next_values = _values(policy, seg.next_obs)
        adv, ret = gae(seg.rewards, values, seg.dones, next_values, args.gamma, args.gae_lambda)
        obs += seg.obs
        groups += seg.groups
        acts.append(seg.actions.reshape(-1))
        logps.append(seg.logprobs.reshape(-1))
        vals.append(values.reshape(-1))
        advs.append(adv.reshape(-1))
        rets.append(ret.reshape(-1))
    adv = normalise_advantages(np.concatenate(advs), groups, args.adv_norm)
    return Batch(obs, torch.from_numpy(np.concatenate(acts)), torch.from_numpy(np.concatenate(logps)),
                 torch.from_numpy(np.concatenate(vals)), torch.from_numpy(adv), torch.from_numpy(np.concatenate(rets)),
                 adjust, torch.from_numpy(np.concatenate(harms)))


# ============================================================================================
# 5. The PPO update
# ============================================================================================
def make_optimizers(policy: nn.Module, lr: float) -> list[torch.optim.Optimizer]:
    """Adam for dense parameters, SparseAdam for sparse embeddings (the hash policy's)."""
    sparse_ids = {id(m.weight) for m in policy.modules() if isinstance(m, (nn.Embedding, nn.EmbeddingBag)) and m.sparse}
    dense = [p for p in policy.parameters() if p.requires_grad and id(p) not in sparse_ids]
    sparse = [p for p in policy.parameters() if id(p) in sparse_ids]
    out: list[torch.optim.Optimizer] = [torch.optim.Adam(dense, lr=lr, eps=1e-5, fused=True)]
    if sparse:
        out.append(torch.optim.SparseAdam(sparse, lr=lr, eps=1e-5))
    return out


def clip_grad_norm(params: Sequence[nn.Parameter], max_norm: float) -> float:
    """Scale all gradients, sparse ones included, so that their joint norm is at most `max_norm`."""
    norms = []
    for p in params:
        if p.grad is None:
            continue
        if p.grad.is_sparse:
            p.grad = p.grad.coalesce()
            norms.append(p.grad._values().norm())
        else:
            norms.append(p.grad.norm())
    total = float(torch.stack(norms).norm()) if norms else 0.0
    if total > max_norm:
        for p in params:
            if p.grad is not None:
                p.grad.mul_(max_norm / (total + 1e-6))
    return total


def ppo_update(policy: nn.Module, optimizers: list[torch.optim.Optimizer], b: Batch, args: Args,
               generator: torch.Generator) -> dict[str, float]:
    """Clipped-ratio PPO epochs over minibatches; returns the last epoch's mean statistics."""
    n = len(b.obs)
    params = [p for p in policy.parameters() if p.requires_grad]
    stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [], "approx_kl": [],
                                     "clipfrac": [], "loss": [], "risk_loss": []}
    with_risk = b.adjust is not None and hasattr(policy, "forward_with_risk")
    for _ in range(args.update_epochs):
        for k in stats:
            stats[k].clear()
        perm = torch.randperm(n, generator=generator)
        for start in range(0, n, args.minibatch_size):
            idx = perm[start: start + args.minibatch_size]
            batch = policy.collate([b.obs[i] for i in idx.tolist()])
            risk_loss = torch.zeros(())
            if with_risk:
                logits, value, risk_logits = policy.forward_with_risk(batch)
                # The logits the actions were sampled from: the policy's plus their acting adjustment.
                logits = logits + _pad_adjust([b.adjust[i] for i in idx.tolist()], logits.shape[1])  # type: ignore[index]
                chosen = risk_logits.gather(-1, b.actions[idx].unsqueeze(-1)).squeeze(-1)
                risk_loss = nn.functional.binary_cross_entropy_with_logits(chosen, b.harm[idx])  # type: ignore[index]
            else:
                logits, value = policy(batch)
            logp_all = torch.log_softmax(logits, dim=-1)
            newlogp = logp_all.gather(-1, b.actions[idx].unsqueeze(-1)).squeeze(-1)
            entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
            logratio = newlogp - b.logprobs[idx]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfrac = ((ratio - 1.0).abs() > args.clip_coef).float().mean()
            adv = b.advantages[idx]
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            if args.clip_vloss:
                clipped = b.values[idx] + (value - b.values[idx]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((value - b.returns[idx]) ** 2, (clipped - b.returns[idx]) ** 2).mean()
            else:
                v_loss = 0.5 * ((value - b.returns[idx]) ** 2).mean()
            loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss + args.risk_loss_coef * risk_loss
            for opt in optimizers:
                opt.zero_grad(set_to_none=True)
            loss.backward()
            clip_grad_norm(params, args.max_grad_norm)
            for opt in optimizers:
                opt.step()
            for k, v in (("policy_loss", pg_loss), ("value_loss", v_loss), ("entropy", entropy),
                         ("approx_kl", approx_kl), ("clipfrac", clipfrac), ("loss", loss), ("risk_loss", risk_loss)):
                stats[k].append(float(v.detach()))
        if args.target_kl is not None and np.mean(stats["approx_kl"]) > args.target_kl:
            break
    return {k: float(np.mean(v)) for k, v in stats.items()}


# ============================================================================================
# 6. Asynchronous actors
# ============================================================================================
def _actor_main(rank: int, args: Args, spec: dict[str, Any], env_ids: list[str], shared: dict[str, torch.Tensor],
                version: Any, lock: Any, credits: Any, out: Any, stop: Any) -> None:
    """An actor: take a credit, pull the newest published weights, collect a segment, send it."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed + 1 + rank)
    policy = make_policy(spec)
    policy.eval()
    mine = -1
    collector = Collector(args, policy, env_ids, seed=args.seed + 7919 * (rank + 1))
    try:
        while not stop.is_set():
            if not credits.acquire(timeout=0.1):
                continue
            if version.value != mine:
                with lock:
                    policy.load_state_dict(shared)
                    mine = version.value
            seg = collector.collect(args.num_steps, version=mine)
            out.put(seg)
    finally:
        collector.close()


class ActorPool:
    """`n` actor processes; the learner publishes weights to them through shared memory.

    Pacing is by credits: an actor collects a segment only when it holds one, and the learner
    grants a batch's worth per update, starting with two batches. So actors collect the next
    batch while the learner trains on the last one (the overlap that makes this faster than the
    synchronous loop), each at its own pace, and trajectories are typically one update stale.
    """

    def __init__(self, args: Args, policy: nn.Module, slots: list[str]) -> None:
        ctx = mp.get_context("spawn")
        self.shared = {k: v.detach().clone().share_memory_() for k, v in policy.state_dict().items()}
        self.version = ctx.Value("l", 0)
        self.lock = ctx.Lock()
        self.credits = ctx.Semaphore(0)
        self.queue = ctx.Queue()
        self.stop = ctx.Event()
        # Contiguous shares of the slots, so each actor plays a mix of the run's env ids.
        bounds = np.linspace(0, len(slots), args.actors + 1).round().astype(int)
        per = [slots[lo:hi] or slots[:1] for lo, hi in zip(bounds, bounds[1:])]
        segment = min(len(p) for p in per) * args.num_steps
        #: Segments that make one batch.
        self.per_batch = -(-args.batch_size // segment)
        self.procs = [ctx.Process(target=_actor_main, daemon=True,
                                  args=(r, args, policy_spec(policy), per[r], self.shared, self.version,
                                        self.lock, self.credits, self.queue, self.stop))
                      for r in range(args.actors)]
        for p in self.procs:
            p.start()
        self.grant(2 * self.per_batch)

    def grant(self, n: int) -> None:
        for _ in range(n):
            self.credits.release()

    def publish(self, policy: nn.Module, version: int) -> None:
        with self.lock:
            for k, v in policy.state_dict().items():
                self.shared[k].copy_(v)
            self.version.value = version
        self.grant(self.per_batch)

    def get(self, timeout: float = 600.0) -> Segment:
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.queue.get(timeout=1.0)
            except queue_lib.Empty:
                dead = [p.pid for p in self.procs if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"actor processes {dead} died")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no trajectory from the actors in {timeout} s")

    def close(self) -> None:
        self.stop.set()
        end = time.monotonic() + 10
        while time.monotonic() < end and any(p.is_alive() for p in self.procs):
            try:  # drain, so an actor blocked on a full queue sees the stop
                self.queue.get(timeout=0.05)
            except queue_lib.Empty:
                pass
        for p in self.procs:
            p.join(timeout=1)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)


# ============================================================================================
# 7. Evaluation, logging, checkpoints
# ============================================================================================
@torch.no_grad()
def evaluate(policy: nn.Module, args: Args, env_ids: Sequence[str] | None = None, episodes: int | None = None,
             greedy: bool | None = None, split: str = "train", parallel: int = 16, calibration: str | None = None,
             seed: int | None = None) -> dict[str, Any]:
    """Play `episodes` fixed-seed episodes per env id (seeds ``seed + k``, by default
    ``eval_seed + k``) and summarise, acting as `calibration` says (default: the run's setting).

    Returns:
        ``{"success", "score", "return", "episodes", "steps", "violations", "violations_per_1000",
        "harm_per_1000", "risk_brier", "risk_ece", ..., "by_env": {id: {...}}, "per_episode": [...]}``;
        success and score are None for envs without them (CartPole).
    """
    env_ids = list(env_ids or args.env)
    n = args.eval_episodes if episodes is None else episodes
    greedy = args.eval_greedy if greedy is None else greedy
    first = args.eval_seed if seed is None else seed
    acting = Acting.of(args, calibration)
    jobs = [(env_id, first + k) for env_id in env_ids for k in range(n)]
    generator = torch.Generator().manual_seed(first)
    results: list[dict[str, Any]] = []
    envs: dict[str, list[gym.Env]] = {}
    live: list[tuple[Slot, int, dict[str, Any]]] = []
    risk = RiskStats()
    was_training = policy.training
    policy.eval()

    def start(env_id: str, seed: int) -> None:
        pool = envs.setdefault(env_id, [])
        s = Slot(env_id, pool.pop() if pool else make_env(env_id, args, split=split))
        s.begin(policy, seed, args.adv_norm)
        live.append((s, seed, {"violations": 0, "harm": 0}))

    queue = list(reversed(jobs))
    while queue and len(live) < parallel:
        start(*queue.pop())
    while live:
        text = live[0][0].text
        acted = act(policy, [s.encoded for s, _, _ in live], [s.candidates for s, _, _ in live] if text else None,
                    acting)
        actions, _ = sample(acted.logits, generator, greedy=greedy)
        chosen_risk = (acted.risk.gather(-1, actions.unsqueeze(-1)).squeeze(-1).tolist()
                       if acted.risk is not None else None)
        still: list[tuple[Slot, int, dict[str, Any]]] = []
        for i, ((s, seed, harm), a) in enumerate(zip(live, actions.tolist())):
            action, _, done, info = s.act(a)
            h = step_harm(info)
            harm["violations"] += h.violations
            harm["harm"] += int(h.harmful)
            if chosen_risk is not None:
                risk.add([chosen_risk[i]], [h.severity])
            if done:
                ep = info.get("episode_summary") if isinstance(info.get("episode_summary"), dict) else {}
                results.append({"env": s.env_id, "seed": seed, "return": s.ret, "length": s.length,
                                "success": ep.get("success"), "score": ep.get("score"), **harm})
                envs.setdefault(s.env_id, []).append(s.env)
            else:
                s.advance(policy, action, info)
                still.append((s, seed, harm))
        live = still
        while queue and len(live) < parallel:
            start(*queue.pop())
    for pool in envs.values():
        for env in pool:
            env.close()
    policy.train(was_training)
    return {**_summary(results, env_ids), **risk.summary(),
            "calibration": "on" if acting.calibrate else "off", "split": split,
            "per_episode": sorted(results, key=lambda r: (r["env"], r["seed"]))}


def _mean(values: list[Any]) -> float | None:
    values = [float(v) for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _summary(results: list[dict[str, Any]], env_ids: Sequence[str]) -> dict[str, Any]:
    def summarise(rs: list[dict[str, Any]]) -> dict[str, Any]:
        steps = sum(r["length"] for r in rs)
        violations = sum(r.get("violations", 0) for r in rs)
        harmful = sum(r.get("harm", 0) for r in rs)
        return {"success": _mean([r["success"] for r in rs]), "score": _mean([r["score"] for r in rs]),
                "return": _mean([r["return"] for r in rs]), "episodes": len(rs), "steps": steps,
                "violations": violations, "violations_per_1000": 1000 * violations / steps if steps else None,
                "harm_per_1000": 1000 * harmful / steps if steps else None}

    return {**summarise(results), "by_env": {e: summarise([r for r in results if r["env"] == e]) for e in env_ids}}


def episode_metrics(episodes: list[dict[str, Any]]) -> dict[str, float | None]:
    """Return, success and the four metric families over finished training episodes."""
    from agentgym.eval.metrics import completion, goal_consistency, recovery, tool_accuracy

    out: dict[str, float | None] = {"return": _mean([e["return"] for e in episodes]),
                                    "length": _mean([e["length"] for e in episodes])}
    records = [{"metrics": e["metrics"]} for e in episodes if "metrics" in e]
    if not records:
        return {**out, "success": None, "score": None, "tool_validity": None, "tool_f1": None,
                "recovery_share": None, "goal_consistency": None}
    comp, tools = completion(records, n_boot=1), tool_accuracy(records, n_boot=1)
    return {**out, "success": comp["success_rate"]["value"], "score": comp["mean_score"]["value"],
            "tool_validity": tools["validity"]["value"], "tool_f1": tools["f1"]["value"],
            "recovery_share": recovery(records, n_boot=1)["share"]["value"],
            "goal_consistency": goal_consistency(records, n_boot=1)["goal_consistency"]["value"]}


COLUMNS = ("update", "global_step", "train_s", "sps", "episodes", "return", "success", "score", "length",
           "tool_validity", "tool_f1", "recovery_share", "goal_consistency", "policy_loss", "value_loss",
           "entropy", "approx_kl", "clipfrac", "learning_rate", "lag", "dropped", "rollout_s", "update_s",
           "risk_loss", "violations_per_1000", "harm_per_1000", "masked_per_step", "risk_brier", "risk_ece",
           "risk_mean", "eval_success", "eval_score", "eval_return", "eval_violations_per_1000", "eval_harm_per_1000")


def harm_metrics(segments: Sequence[Segment]) -> dict[str, float | None]:
    """Harm in a batch of rollouts (per 1,000 steps), the masked candidates per step, and how
    well the risk estimate predicted harm on the candidates taken."""
    steps = sum(seg.size for seg in segments)
    risk = RiskStats()
    for seg in segments:
        if seg.risk is not None and seg.harm is not None:
            risk.add(seg.risk.reshape(-1).tolist(), seg.harm.reshape(-1).tolist())
    harmful = sum(int((seg.harm > 0).sum()) for seg in segments if seg.harm is not None)
    stats = risk.summary()
    stats.pop("harm_rate")
    return {"violations_per_1000": 1000 * sum(seg.violations for seg in segments) / max(steps, 1),
            "harm_per_1000": 1000 * harmful / max(steps, 1),
            "masked_per_step": sum(seg.masked for seg in segments) / max(steps, 1), **stats}


def _smoothed(points: Sequence[tuple[float, float]], window: int = 10) -> tuple[list[float], list[float]]:
    """A trailing mean over `window` points (the first ones over what there is)."""
    xs = [p[0] for p in points]
    ys = np.asarray([p[1] for p in points], dtype=float)
    cum = np.concatenate([[0.0], np.cumsum(ys)])
    means = [(cum[i + 1] - cum[max(0, i + 1 - window)]) / (i + 1 - max(0, i + 1 - window)) for i in range(len(ys))]
    return xs, means


def learning_curve(rows: Sequence[dict[str, Any]], evals: Sequence[tuple[int, float, dict[str, Any]]],
                   title: str, greedy: bool = True, calibration: str = "on") -> Any:
    """A run's figure: the learning curve (training and evaluation, the evaluation before
    training included, at step 0) and, for candidate policies, harm: policy violations per 1,000
    steps in training rollouts and in evaluation, and how well the risk estimate is calibrated
    (its Brier score). `rows` are the logged rows (progress.csv), `evals` the run's evaluations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["global_step"] for r in rows]
    key = "success" if any(r.get("success") is not None for r in rows) else "return"
    harm = any(r.get("violations_per_1000") is not None for r in rows) and key == "success"
    fig, axes = plt.subplots(1, 2 if harm else 1, figsize=(12 if harm else 7, 4), squeeze=False)
    ax = axes[0][0]
    train = [(s, r[key]) for s, r in zip(steps, rows) if r.get(key) is not None]
    if train:
        ax.plot(*zip(*train), color="tab:blue", alpha=0.2)
        ax.plot(*_smoothed(train), color="tab:blue", label=f"training episodes ({key}, mean of 10 updates)")
    ev = [(s, e[key]) for s, _, e in evals if e.get(key) is not None]
    if ev:
        ax.plot(*zip(*ev), "o-", label=f"evaluation ({'greedy' if greedy else 'sampled'})")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("success rate" if key == "success" else "episode return")
    if key == "success":
        ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{title}: learning curve", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    if harm:
        ax = axes[0][1]
        tv = [(s, r["violations_per_1000"]) for s, r in zip(steps, rows) if r.get("violations_per_1000") is not None]
        ax.plot(*zip(*tv), color="tab:blue", alpha=0.2)
        ax.plot(*_smoothed(tv), color="tab:blue", label="training rollouts (mean of 10 updates)")
        ev = [(s, e["violations_per_1000"]) for s, _, e in evals if e.get("violations_per_1000") is not None]
        if ev:
            ax.plot(*zip(*ev), "o-", label="evaluation")
        ax.set_xlabel("environment steps")
        ax.set_ylabel("policy violations per 1,000 steps")
        ax.set_title(f"harm, calibration {calibration}", fontsize=9)
        ax.grid(alpha=0.3)
        brier = [(s, r["risk_brier"]) for s, r in zip(steps, rows) if r.get("risk_brier") is not None]
        lines, labels = ax.get_legend_handles_labels()
        if brier:
            twin = ax.twinx()
            twin.plot(*_smoothed(brier), color="grey", linestyle=":", label="risk estimate: Brier score (right)")
            twin.set_ylabel("Brier score of the risk estimate")
            more, names = twin.get_legend_handles_labels()
            lines, labels = lines + more, labels + names
        ax.legend(lines, labels, loc="best", fontsize=8)
    fig.tight_layout()
    return fig


class Logger:
    """progress.csv (one row per update), TensorBoard when installed, learning_curve.png."""

    def __init__(self, run_dir: Path, args: Args) -> None:
        self.run_dir = run_dir
        self.greedy = args.eval_greedy
        self.calibration = args.calibration
        self.rows: list[dict[str, Any]] = []
        self._file = open(run_dir / "progress.csv", "w", newline="")
        self._csv = csv.DictWriter(self._file, fieldnames=COLUMNS)
        self._csv.writeheader()
        self._tb = None
        if args.tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:  # tensorboard is optional
                SummaryWriter = None  # type: ignore[assignment,misc]
            if SummaryWriter is not None:
                self._tb = SummaryWriter(str(run_dir / "tb"))

    def log(self, row: dict[str, Any]) -> None:
        clean = {k: ("" if row.get(k) is None else row.get(k)) for k in COLUMNS}
        self.rows.append(row)
        self._csv.writerow(clean)
        self._file.flush()
        if self._tb is not None:
            for k, v in row.items():
                if isinstance(v, (int, float)) and k not in ("update", "global_step") and math.isfinite(v):
                    self._tb.add_scalar(f"ppo/{k}", v, row["global_step"])

    def plot(self, path: Path, evals: Sequence[tuple[int, float, dict[str, Any]]] = ()) -> None:
        """Write the run's `learning_curve` to `path`."""
        import matplotlib.pyplot as plt

        fig = learning_curve(self.rows, evals, self.run_dir.name, self.greedy, self.calibration)
        fig.savefig(path, dpi=100)
        plt.close(fig)

    def close(self) -> None:
        self._file.close()
        if self._tb is not None:
            self._tb.close()


def save_checkpoint(path: Path, policy: nn.Module, args: Args, update: int, global_step: int) -> None:
    """Weights, architecture, candidate-builder config and the run's Args, in one file."""
    tmp = path.with_suffix(".tmp")
    torch.save({"format": CHECKPOINT_FORMAT, "policy": policy_spec(policy), "state_dict": policy.state_dict(),
                "candidates": asdict(candidate_config(args)), "args": asdict(args), "update": update,
                "global_step": global_step}, tmp)
    tmp.replace(path)


#: The largest checkpoint file `load_checkpoint` reads: the hash policy's is a few MB, an `lm`
#: policy's holds its model's weights; past this, the file is refused before it is read.
CHECKPOINT_MAX_BYTES = 8 << 30


def load_checkpoint(path: str | Path, max_bytes: int = CHECKPOINT_MAX_BYTES) -> tuple[nn.Module, dict[str, Any]]:
    """The policy of a checkpoint (in eval mode) and the checkpoint's other fields.

    The file is untrusted input: it is read with torch's weights-only unpickler, which builds
    tensors and plain data (dicts, lists, strings, numbers) and refuses anything else, so a file
    crafted to run code when unpickled is refused and nothing in it runs.

    Raises:
        ValueError: a one-line reason when the file is missing, too large, not a weights-only
            file, or not an agentgym PPO checkpoint.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ValueError(f"no PPO checkpoint at {str(path)!r} ({exc.strerror or exc})") from None
    if size > max_bytes:
        raise ValueError(f"{path}: {size} bytes, over the {max_bytes}-byte limit of a PPO checkpoint")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError(f"{path}: refused: it holds objects other than tensors and plain data, and such a file "
                         "can run code when loaded (PPO checkpoints are loaded weights-only)") from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"{path}: not a readable PPO checkpoint ({reason})") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not an agentgym PPO checkpoint ({CHECKPOINT_FORMAT})")
    spec, state = ckpt.get("policy"), ckpt.get("state_dict")
    if not isinstance(spec, dict) or not isinstance(spec.get("config", {}), dict) or not isinstance(state, dict):
        raise ValueError(f"{path}: a {CHECKPOINT_FORMAT} checkpoint needs a policy spec and a state_dict")
    try:
        policy = make_policy(spec)
        policy.load_state_dict(state)
    except (TypeError, RuntimeError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"{path}: its weights do not fit its policy spec ({reason})") from None
    policy.eval()
    return policy, {k: v for k, v in ckpt.items() if k != "state_dict"}


# ============================================================================================
# 8. Training
# ============================================================================================
@dataclass
class TrainResult:
    """What a run did and where it wrote it."""

    run_dir: Path
    checkpoint: Path
    updates: int
    global_step: int
    train_s: float
    #: Environment steps per second of training (evaluation excluded).
    sps: float
    initial_eval: dict[str, Any] | None
    final_eval: dict[str, Any] | None
    #: (global_step, train_s, evaluation) for every evaluation.
    evals: list[tuple[int, float, dict[str, Any]]]
    #: Training seconds at which evaluation success first reached args.target_success.
    time_to_target: float | None
    dropped: int = 0
    #: Seconds to start the envs (and, with --actors, the actor processes) before training.
    startup_s: float = 0.0

    def summary(self) -> str:
        def fmt(ev: dict[str, Any] | None) -> str:
            if not ev:
                return "-"
            return f"{ev['success']:.1%} success" if ev.get("success") is not None else f"return {ev['return']:.1f}"

        target = f"{self.time_to_target:.0f} s" if self.time_to_target is not None else "not reached"
        return (f"ppo: {self.updates} updates, {self.global_step} steps in {self.train_s:.0f} s "
                f"({self.sps:.0f} steps/s); evaluation {fmt(self.initial_eval)} -> {fmt(self.final_eval)}; "
                f"time to target {target}; dropped {self.dropped} stale segments\n"
                f"run folder {self.run_dir}, checkpoint {self.checkpoint}")


def _eval_line(ev: dict[str, Any]) -> str:
    parts = [f"success {ev['success']:.1%}" if ev.get("success") is not None else f"return {ev['return']:.1f}"]
    if ev.get("score") is not None:
        parts.append(f"score {ev['score']:.3f}")
    if ev.get("violations_per_1000") is not None and ev.get("success") is not None:
        parts.append(f"{ev['violations_per_1000']:.1f} violations/1000 steps")
    by_env = ev.get("by_env") or {}
    if len(by_env) > 1:
        parts.append("; ".join(f"{e.split('/')[-1]} {v['success']:.0%}" for e, v in by_env.items()
                               if v.get("success") is not None))
    return f"{', '.join(parts)} over {ev['episodes']} episodes"


def _update_line(row: dict[str, Any], args: Args) -> str:
    done = f"{row['global_step']}/{args.total_timesteps} steps"
    if args.max_seconds:
        done += f", {row['train_s']:.0f}/{args.max_seconds:.0f} s"
    parts = [f"update {row['update']}: {done}", f"{row['sps']:.0f} steps/s"]
    if row.get("success") is not None:
        parts.append(f"training success {row['success']:.0%} ({row['episodes']} episodes)")
    elif row.get("return") is not None:
        parts.append(f"training return {row['return']:.1f}")
    if row.get("violations_per_1000") is not None and row.get("success") is not None:
        parts.append(f"{row['violations_per_1000']:.1f} violations/1000 steps")
    parts.append(f"entropy {row['entropy']:.2f}")
    return ", ".join(parts)


def _run_dir(args: Args) -> Path:
    name = args.run_name or "{}__{}__s{}__{}".format(
        "+".join(re.sub(r"[^A-Za-z0-9]+", "-", e).strip("-") for e in args.env), args.policy, args.seed,
        time.strftime("%Y%m%d-%H%M%S"))
    path = Path(args.out) / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def train(args: Args) -> TrainResult:
    """Train a policy with PPO as `args` says; write logs and checkpoints; return the result."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the ops used here are deterministic on a CPU (tests check it)
    args = dataclasses.replace(args, env=resolve_env_ids(args.env))
    if args.target_env is not None and args.target_env not in args.env:
        raise ValueError(f"--target-env {args.target_env!r} is not one of the env ids {list(args.env)}")
    run_dir = _run_dir(args)
    (run_dir / "args.json").write_text(json.dumps(asdict(args), indent=2))
    slots = [args.env[i % len(args.env)] for i in range(args.num_envs)]
    probe = make_env(args.env[0], args)
    policy = build_policy(args, probe)
    probe.close()
    policy.eval()  # no dropout anywhere: rollout and update log-probabilities must agree
    optimizers = make_optimizers(policy, args.learning_rate)
    generator = torch.Generator().manual_seed(args.seed)
    logger = Logger(run_dir, args)
    checkpoint = run_dir / "checkpoint.pt"

    evals: list[tuple[int, float, dict[str, Any]]] = []
    time_to_target: float | None = None
    global_step = update = dropped = 0
    train_s = 0.0

    def run_eval() -> dict[str, Any] | None:
        nonlocal time_to_target
        if not args.eval_episodes:
            return None
        ev = evaluate(policy, args)
        evals.append((global_step, train_s, {k: v for k, v in ev.items() if k != "per_episode"}))
        success = ev["by_env"][args.target_env]["success"] if args.target_env else ev["success"]
        if time_to_target is None and success is not None and success >= args.target_success:
            time_to_target = train_s
        if args.progress:
            print(f"  eval at {global_step} steps ({train_s:.0f} s): {_eval_line(ev)}", flush=True)
        return ev

    initial = run_eval()
    last_line = 0.0
    collector = pool = None
    first: Segment | None = None
    startup = time.perf_counter()
    if args.actors == 0:
        collector = Collector(args, policy, slots, seed=args.seed)
    else:
        pool = ActorPool(args, policy, slots)
        # The actors' start (a fresh interpreter each, importing torch) is not training time.
        first = pool.get()
    startup_s = time.perf_counter() - startup
    try:
        t0 = time.perf_counter()
        while global_step < args.total_timesteps and not (args.max_seconds and train_s >= args.max_seconds):
            if args.anneal_lr:
                for opt in optimizers:
                    for g in opt.param_groups:
                        g["lr"] = args.learning_rate * max(0.0, 1.0 - global_step / args.total_timesteps)
            # ---- rollouts: inline, or from the actors' queue (stale segments dropped)
            t_rollout = time.perf_counter()
            if collector is not None:
                segments = [collector.collect(args.num_steps, version=update)]
            else:
                assert pool is not None
                segments, steps = [], 0
                while steps < args.batch_size:
                    seg, first = (first, None) if first is not None else (pool.get(), None)
                    if update - seg.version > args.max_lag:
                        dropped += 1
                        pool.grant(1)  # the dropped segment's credit goes back, so the batch fills
                        continue
                    segments.append(seg)
                    steps += seg.size
            t_learn = time.perf_counter()
            batch = make_batch(segments, policy, update, args)
            # ---- learning
            stats = ppo_update(policy, optimizers, batch, args, generator)
            stats.update(rollout_s=t_learn - t_rollout, update_s=time.perf_counter() - t_learn)
            update += 1
            if pool is not None:
                pool.publish(policy, update)
            global_step += len(batch.obs)
            train_s = time.perf_counter() - t0
            # ---- logging, evaluation, checkpoints (evaluation time is not training time)
            episodes = [e for seg in segments for e in seg.episodes]
            row: dict[str, Any] = {"update": update, "global_step": global_step, "train_s": round(train_s, 3),
                                   "sps": global_step / max(train_s, 1e-9), "episodes": len(episodes),
                                   "learning_rate": optimizers[0].param_groups[0]["lr"], "dropped": dropped,
                                   "lag": float(np.mean([update - 1 - s.version for s in segments])),
                                   **episode_metrics(episodes), **harm_metrics(segments), **stats}
            if args.progress and (time.perf_counter() - last_line >= 2.0 or update == 1):
                last_line = time.perf_counter()
                print(_update_line(row, args), flush=True)
            last = global_step >= args.total_timesteps or bool(args.max_seconds and train_s >= args.max_seconds)
            if update % args.eval_every == 0 or last:
                pause = time.perf_counter()
                ev = run_eval()
                if ev is not None:
                    row.update(eval_success=ev["success"], eval_score=ev["score"], eval_return=ev["return"],
                               eval_violations_per_1000=ev["violations_per_1000"],
                               eval_harm_per_1000=ev["harm_per_1000"])
                t0 += time.perf_counter() - pause
            logger.log(row)
            if update % args.save_every == 0:
                save_checkpoint(checkpoint, policy, args, update, global_step)
            if args.stop_at_target and time_to_target is not None:
                break
    finally:
        if collector is not None:
            collector.close()
        if pool is not None:
            pool.close()
    if not evals or evals[-1][0] != global_step:
        run_eval()
    save_checkpoint(checkpoint, policy, args, update, global_step)
    if args.plot and logger.rows:
        logger.plot(run_dir / "learning_curve.png", evals)
    logger.close()
    result = TrainResult(run_dir=run_dir, checkpoint=checkpoint, updates=update, global_step=global_step,
                         train_s=train_s, sps=global_step / max(train_s, 1e-9),
                         initial_eval=evals[0][2] if initial is not None else None,
                         final_eval=evals[-1][2] if evals else None, evals=evals, time_to_target=time_to_target,
                         dropped=dropped, startup_s=startup_s)
    (run_dir / "result.json").write_text(json.dumps(
        {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(result).items()}, indent=2, default=str))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentgym.baselines.ppo [options]``: the same as ``agentgym train ppo``."""
    from agentgym.baselines.cli import parse_dataclass

    args = parse_dataclass(Args, argv, prog="python -m agentgym.baselines.ppo")
    print(train(args).summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
