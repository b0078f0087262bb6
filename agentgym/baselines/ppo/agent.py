"""`ppo`: plays a policy trained by `agentgym.baselines.ppo` from its checkpoint.

The agent sees only ``(obs, info)``, as every agent does; it rebuilds the candidate actions
from that public information with the same builder class (and config, from the checkpoint) that
the `ActionCandidates` wrapper used in training, adjusts the policy's scores as the run acted
(calibration: the learned risk of harm as a penalty and a mask; the constraint layer's mask),
and picks the best-scored candidate (or samples one, seeded). It lives beside the trainer, above
the agents (docs/ARCHITECTURE.md): it plays what the trainer wrote. torch is imported when the
agent is made, not when its class is looked up (`agentgym eval` checks the arguments first).

    agentgym eval AgentRL/Dialog-v0 --agent ppo --agent-arg checkpoint=runs/ppo/RUN/checkpoint.pt
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentgym.agents.base import Agent
from agentgym.agents.candidates import CandidateBuilder, make_builder

__all__ = ["PPOAgent"]


class PPOAgent(Agent):
    """A trained PPO candidate policy.

    Args:
        checkpoint: a ``checkpoint.pt`` written by `agentgym.baselines.ppo`.
        greedy: pick the best-scored candidate (True) or sample from the policy.
        seed: seeds the sampling when ``greedy`` is False (reset per episode by its seed).
        calibration: ``on`` or ``off`` to override the run's calibration (None: as trained).
    """

    name = "ppo"

    def __init__(self, checkpoint: str | None = None, greedy: bool = True, seed: int = 0,
                 calibration: str | None = None) -> None:
        if checkpoint is None:
            raise ValueError("the ppo agent plays a trained policy: give --checkpoint PATH (the checkpoint.pt "
                             "that `agentgym train ppo` writes in its run folder)")
        import torch

        from agentgym.baselines.ppo.acting import Acting, act
        from agentgym.baselines.ppo.checkpoint import load_checkpoint, trained_args
        from agentgym.baselines.ppo.features import Transcript

        self.checkpoint = str(checkpoint)
        if not Path(self.checkpoint).is_file():
            raise ValueError(f"no PPO checkpoint at {self.checkpoint!r}")
        self.greedy = bool(greedy)
        self.seed = int(seed)
        self._torch = torch
        self.policy, meta = load_checkpoint(self.checkpoint)
        if not getattr(self.policy, "candidates", False):
            raise ValueError(f"{self.checkpoint} holds a {meta['policy']['kind']} policy for a non-text env; "
                             "the ppo agent plays candidate policies (AgentRL envs)")
        if calibration not in (None, "on", "off"):
            raise ValueError(f"calibration must be 'on' or 'off', got {calibration!r}")
        self.candidate_config = dict(meta["candidates"])
        run = trained_args(meta)
        self._acting = Acting.of(run, calibration)
        self._act = act
        self._meta = {"update": meta.get("update"), "global_step": meta.get("global_step"),
                      "policy": meta["policy"]["kind"], "trained_on": list((meta.get("args") or {}).get("env", ())),
                      "calibration": "on" if self._acting.calibrate else "off"}
        self._transcript = Transcript()
        self._builder: CandidateBuilder | None = None
        self._last: str | None = None
        self._generator = torch.Generator()

    def config(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "greedy": self.greedy, "seed": self.seed, **self._meta}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._builder = make_builder((info.get("task") or {}).get("family"), self.candidate_config)
        self._builder.reset(obs, info)
        self._transcript.reset(info)
        self._last = None
        self._generator.manual_seed(self.seed * 1_000_003 + int(info.get("seed", 0) or 0) % 1_000_003)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._builder is None:
            raise RuntimeError("call reset() before act()")
        if self._last is not None:
            self._builder.step(self._last, obs, info)
            self._transcript.add(self._last, info)
        candidates = self._builder.candidates()
        acted = self._act(self.policy, [self.policy.encode((self._transcript, candidates))], [candidates],
                          self._acting)
        logits = acted.logits
        if self.greedy:
            index = int(logits[0].argmax())
        else:
            probs = self._torch.softmax(logits[0], dim=-1)
            index = int(self._torch.multinomial(probs, 1, generator=self._generator))
        self._last = candidates[index]
        return self._last
