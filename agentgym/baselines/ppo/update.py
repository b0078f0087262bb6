"""Advantages (GAE, then normalisation per task family) and the clipped PPO update."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from agentgym.baselines.ppo.acting import (
    pad_adjust,
)
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.rollout import Rollout

__all__ = ["Batch", "clip_grad_norm", "gae", "make_batch", "make_optimizers", "normalise_advantages", "ppo_update"]


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
    normalisation: one task family's large returns do not drown another's; the group is a step's
    task family, env id, or the family and domain of the task it works on, ``task``), over the
    whole batch (``batch``) or not at all (``none``)."""
    adv = np.asarray(adv, dtype=np.float32).copy()
    if mode == "none":
        return adv
    keys = np.asarray(groups if mode in ("family", "env", "task") else ["all"] * len(adv))
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


def make_batch(segments: list[Rollout], policy: nn.Module, version: int, args: Args) -> Batch:
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
                logits = logits + pad_adjust([b.adjust[i] for i in idx.tolist()], logits.shape[1])  # type: ignore[index]
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
