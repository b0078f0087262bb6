"""Online policy calibration for the thin PPO: a learned risk of harm, applied when acting.

What the env reports as harmful is known after each step, from the step's call records
(``info["calls"]``): a policy violation (``POLICY_VIOLATION``), a write the tools refused or
that failed for the agent's reasons, and a call the constraint layer denied (``BLOCKED``, from
`agentgym.noise.ActionConstraint`). Injected faults are the env's, never the agent's, and are
not harm. The policy's risk head learns, online with every PPO update, the risk that a candidate
does harm (binary cross-entropy on the candidates taken, a violation or a denial counting 1 and
a refused write one half: `StepHarm.severity`). Calibration weighs each
candidate's probability by its estimated chance of being safe, ``(1 - r) ** risk_coef``
(``risk_coef * log(1 - r)`` added to its logit), in training rollouts and when acting; when
acting (evaluation, the `ppo` agent) it also masks candidates whose risk is over
``risk_threshold``. The constraint layer, when configured, is a hard mask on top, everywhere:
a candidate it would deny is never sampled.

Everything here works on plain lists and tensors, so the trainer, the evaluation and the
`ppo` agent apply exactly the same rule.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import torch

from agentgym.core.protocol import parse_action

__all__ = ["StepHarm", "step_harm", "ConstraintMask", "adjustments", "RiskStats", "MASKED"]

#: The adjustment of a masked candidate (finite, like the policies' padding).
MASKED = -1e9


@dataclass(frozen=True)
class StepHarm:
    """What one step did that the env reports as harmful."""

    violations: int = 0
    denied: int = 0
    refused_writes: int = 0

    @property
    def harmful(self) -> bool:
        return bool(self.violations or self.denied or self.refused_writes)

    @property
    def severity(self) -> float:
        """The risk head's target: 1 for a policy violation or a denied call (what calibration
        exists to prevent), 0.5 for a write the tools only refused (it did nothing, and its
        refusal often says what would work), 0 for none."""
        return 1.0 if self.violations or self.denied else 0.5 if self.refused_writes else 0.0


def step_harm(info: Mapping[str, Any]) -> StepHarm:
    """The harm of a step, from its call records (injected faults excluded)."""
    violations = denied = refused = 0
    for c in info.get("calls") or ():
        if not isinstance(c, Mapping) or c.get("injected"):
            continue
        error = c.get("error")
        if error == "POLICY_VIOLATION":
            violations += 1
        elif error == "BLOCKED":
            denied += 1
        elif error is not None and c.get("kind") == "write":
            refused += 1
    return StepHarm(violations, denied, refused)


class ConstraintMask:
    """The agent-side copy of an `ActionConstraint`'s rule: which candidates it would deny.

    A candidate is denied when one of its calls names a tool outside `allowed_tools`, or a
    `forbid` pattern matches the call's name followed by its arguments as sorted-key JSON,
    exactly as the env-side wrapper decides (a test checks that the two agree). A message
    (no call) is never denied.
    """

    def __init__(self, allowed_tools: Sequence[str] | None = None, forbid: Sequence[str] = ()) -> None:
        self.allowed = None if allowed_tools is None else frozenset(allowed_tools)
        self.forbid = tuple(re.compile(p) for p in forbid)

    @property
    def active(self) -> bool:
        return self.allowed is not None or bool(self.forbid)

    def denies(self, candidate: str) -> bool:
        for call in parse_action(candidate).calls:
            if self.allowed is not None and call.name not in self.allowed:
                return True
            if self.forbid:
                text = call.name + json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)
                if any(p.search(text) for p in self.forbid):
                    return True
        return False


def adjustments(risk_logits: torch.Tensor, counts: Sequence[int], candidates: Sequence[Sequence[str]],
                calibrate: bool, threshold: float, coef: float, constraint: ConstraintMask | None
                ) -> tuple[list[torch.Tensor], int]:
    """Per step, the additive adjustment of each candidate's logit; and how many were masked.

    Args:
        risk_logits: [steps, max candidates] risk-head logits (padding ignored).
        counts: the number of candidates of each step.
        candidates: each step's candidate texts (for the constraint mask).
        calibrate: apply the learned risk (else only the constraint, if any).
        threshold: mask candidates whose risk exceeds this (1.0: never).
        coef: the weight of ``log(1 - risk)``.
        constraint: the constraint layer's rule, or None.

    A step keeps at least its safest candidate: when everything would be masked, the one
    with the lowest risk (among those the constraint allows, if any) stays.
    """
    out: list[torch.Tensor] = []
    masked = 0
    risk = torch.sigmoid(risk_logits.detach())
    for i, n in enumerate(counts):
        r = risk[i, :n]
        adj = coef * torch.log1p(-r.clamp(max=1 - 1e-6)) if calibrate else torch.zeros(n)
        hard = (r > threshold) if calibrate else torch.zeros(n, dtype=torch.bool)
        if constraint is not None and constraint.active:
            denied = torch.tensor([constraint.denies(c) for c in candidates[i]], dtype=torch.bool)
            hard = hard | denied
        else:
            denied = torch.zeros(n, dtype=torch.bool)
        if bool(hard.all()):
            allowed = ~denied if bool((~denied).any()) else torch.ones(n, dtype=torch.bool)
            keep = int(torch.where(allowed, r, torch.full_like(r, 2.0)).argmin())
            hard = hard.clone()
            hard[keep] = False
        masked += int(hard.sum())
        out.append(torch.where(hard, torch.full_like(adj, MASKED), adj).float())
    return out, masked


@dataclass
class RiskStats:
    """How well the risk estimate predicted its target (`StepHarm.severity`) over the candidates
    taken: the Brier score, the expected calibration error (10 bins), the mean target and the
    mean predicted risk."""

    predicted: list[float] = field(default_factory=list)
    harmed: list[float] = field(default_factory=list)

    def add(self, predicted: Sequence[float], harmed: Sequence[float]) -> None:
        self.predicted += [float(p) for p in predicted]
        self.harmed += [float(h) for h in harmed]

    def summary(self) -> dict[str, float | None]:
        n = len(self.predicted)
        if not n:
            return {"risk_brier": None, "risk_ece": None, "harm_rate": None, "risk_mean": None}
        p, y = torch.tensor(self.predicted), torch.tensor(self.harmed)
        bins = torch.clamp((p * 10).long(), max=9)
        ece = 0.0
        for b in range(10):
            sel = bins == b
            if bool(sel.any()):
                ece += float(sel.float().mean()) * abs(float(p[sel].mean()) - float(y[sel].mean()))
        return {"risk_brier": float(((p - y) ** 2).mean()), "risk_ece": ece, "harm_rate": float(y.mean()),
                "risk_mean": float(p.mean())}
