"""The envs a PPO run plays, its policy, and how the policy acts (scores, calibration, sampling)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from agentgym.baselines.calibration import ConstraintMask, adjustments
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.networks import HashPolicy, LMPolicy, MLPPolicy
from agentgym.wrappers.candidates import ActionCandidates, CandidateConfig
from agentgym.wrappers.subtask_rewards import SubtaskRewards

__all__ = ["Acted", "Acting", "act", "build_policy", "candidate_config", "group_of", "make_env", "pad_adjust",
           "resolve_env_ids", "sample", "switched_group", "task_group"]


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


def make_env(env_id: str, args: Args, split: str | None = None) -> gym.Env:
    """An AgentRL id on `split` (default: ``args.split``), inside `ActionCandidates`; any other id
    as `gym.make` gives it."""
    if env_id.startswith("AgentRL/"):
        import agentgym  # noqa: F401  (registers the ids)

        kwargs: dict[str, Any] = {"split": split or args.split}
        if args.difficulty is not None:
            kwargs["difficulty"] = args.difficulty
        if args.noise not in (None, "none"):
            kwargs["noise"] = args.noise
        env = gym.make(env_id, **kwargs)
        if args.constraint is not None:
            from agentgym.noise import ActionConstraint

            env = ActionConstraint(env, allowed_tools=list(args.constraint_allowed) or None,
                                   forbid=list(args.constraint_forbid))
        if args.subtask_rewards:
            env = SubtaskRewards(env)
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
    """The advantage-normalisation group of an episode at its reset: its task family, its task
    (family and domain; a cross-task session's first sub-task), its env id, or one."""
    if mode == "family":
        return str((info.get("task") or {}).get("family") or env_id)
    if mode == "task":
        return task_group(info.get("segment") or info.get("task") or {}, env_id)
    if mode == "env":
        return env_id
    return "all"


def task_group(task: dict[str, Any], default: str) -> str:
    """``family/domain`` of a task or a session's sub-task (``info["segment"]``), e.g. tooluse/finance."""
    family, domain = task.get("family"), task.get("domain")
    return f"{family}/{domain}" if family and domain else str(family or default)


def switched_group(info: dict[str, Any]) -> str | None:
    """The task group of the sub-task a cross-task step started (``info["segment_switch"]``), if any."""
    started = [s["started"] for s in info.get("segment_switch") or () if isinstance(s, dict) and s.get("started")]
    return task_group(started[-1], "") or None if started else None


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
    padded = pad_adjust([a.numpy() for a in adjust], logits.shape[1])
    return Acted(logits + padded, values, [a.numpy() for a in adjust], torch.sigmoid(risk_logits), masked)


def pad_adjust(adjust: Sequence[np.ndarray], width: int) -> torch.Tensor:
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
