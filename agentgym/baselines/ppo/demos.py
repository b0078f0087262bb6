"""Learning from demonstrations before (and beside) PPO: ``agentgym train ppo --demos AGENT``.

The standard recipe of LLM-agent training is supervised fine-tuning on a strong agent's
trajectories, then RL (AgentGym's behavioural cloning then evolution). Here the strong agent is
a built-in one (`agentgym.agents.AGENTS`, e.g. ``expert``); the policy chooses among candidate
actions, so each of the agent's actions is mapped to the candidate the policy could play (the
same calls with the same arguments, else the nearest: `nearest`), and the episode continues
with that candidate, so the demonstration's transcripts are ones the policy can meet. The policy
is then fitted by cross-entropy to those choices, and its critic by squared error to the
demonstration's discounted returns; PPO starts from there. With ``--demo-coef`` the same
cross-entropy stays in the loss for a while after, one demonstration minibatch per update,
its weight decaying linearly to 0 over ``--demo-decay`` updates.

Demonstration seeds are drawn from a stream of their own (the run's seed) and never fall in
the evaluation window (``--eval-seed`` and the 10,000 seeds after it), so a fitted policy is not
evaluated on the episodes it imitated; the run's other random streams are those of a run
without demonstrations.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from agentgym.baselines.ppo.acting import make_env
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.features import Transcript
from agentgym.core.protocol import parse_action

__all__ = ["DEMO_SEED_GAP", "DemoSet", "accuracy", "canonical", "collect_demos", "demo_coef", "demo_loss",
           "demo_seeds", "demo_step", "demonstrated", "fit_demos", "nearest", "run_demos"]

#: Demonstration seeds skip [eval_seed, eval_seed + DEMO_SEED_GAP): every evaluation of the
#: benchmarks (200 seeds at most) lies inside it.
DEMO_SEED_GAP = 10_000
#: What the demonstrator says when its strategy raises on a turn it did not plan (the candidate
#: played was not its own action, so its state and the conversation parted).
FALLBACK = "I have done what I can for this request."


def canonical(action: str) -> tuple[str, Any]:
    """An action as what it does: its calls (name, sorted-key arguments), or its text."""
    parsed = parse_action(action)
    if parsed.calls:
        return "call", tuple((c.name, json.dumps(c.arguments, sort_keys=True)) for c in parsed.calls)
    return "msg", action


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def nearest(action: str, candidates: Sequence[str]) -> str:
    """The candidate equal to `action` (the same calls with the same arguments), else the nearest:
    for a call, the candidate of the same tool with the most equal arguments; for a message, the
    candidate message sharing most words; else the first candidate."""
    target = canonical(action)
    kinds = [canonical(c) for c in candidates]
    for c, k in zip(candidates, kinds):
        if k == target:
            return c
    if target[0] == "call":
        name, args = target[1][0][0], json.loads(target[1][0][1])
        same_tool = [(sum(json.loads(k[1][0][1]).get(a) == v for a, v in args.items()), i)
                     for i, k in enumerate(kinds) if k[0] == "call" and k[1][0][0] == name]
        return candidates[max(same_tool)[1]] if same_tool else candidates[0]
    messages = [c for c, k in zip(candidates, kinds) if k[0] == "msg"]
    return max(messages, key=lambda c: len(_words(c) & _words(action)), default=candidates[0])


def demonstrated(agent: Any, obs: str, info: dict[str, Any]) -> tuple[Any, str]:
    """The agent's action on this step and the candidate it is played as (`nearest`; the first
    candidate for an action that is not text). An agent that raises says `FALLBACK`: its strategy
    met a turn it did not plan, since the candidate it got was not its own action."""
    try:
        wanted = agent.act(obs, info)
    except Exception:  # noqa: BLE001  (see above: the demonstration goes on)
        wanted = FALLBACK
    candidates = info["candidates"]
    return wanted, nearest(wanted, candidates) if isinstance(wanted, str) else candidates[0]


@dataclass
class DemoSet:
    """The demonstration's steps as the policy sees them, and what they say about the agent."""

    #: Per kept step: the policy's encoding, the index of the candidate played, its return to go.
    obs: list[Any] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    episodes: int = 0
    #: Episodes kept (successful ones, or all when the env reports no success).
    kept_episodes: int = 0
    successes: int = 0
    steps: int = 0
    #: Steps whose candidate was exactly the agent's action.
    exact: int = 0
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """The record the run keeps (demos.json, the checkpoint's ``demos``)."""
        return {"episodes": self.episodes, "kept_episodes": self.kept_episodes, "successes": self.successes,
                "success": self.successes / max(self.episodes, 1), "steps": self.steps, "kept_steps": len(self.obs),
                "exact_share": self.exact / max(self.steps, 1), "collect_s": round(self.seconds, 3)}


def demo_seeds(args: Args, n: int) -> list[int]:
    """`n` episode seeds from the run's seed, none in the evaluation window (see the docstring)."""
    rng = np.random.default_rng([args.seed, 0xDE30])  # a stream of its own: PPO's episode seeds are unchanged
    out: list[int] = []
    while len(out) < n:
        s = int(rng.integers(2**31 - 1))
        if not args.eval_seed <= s < args.eval_seed + DEMO_SEED_GAP:
            out.append(s)
    return out


def collect_demos(args: Args, policy: nn.Module, agent_name: str, episodes: int) -> DemoSet:
    """Play `episodes` train-split episodes of the run's env ids (round robin) with the agent,
    each action mapped to a candidate (`nearest`), and keep the steps of the episodes that
    succeeded, encoded for `policy`, with their discounted returns to go.

    Failed episodes are dropped (filtered behavioural cloning): where the mapping to candidates
    loses the agent's path, imitating what followed would teach the failure."""
    from agentgym.agents import make_agent

    t0 = time.perf_counter()
    out = DemoSet()
    envs = {env_id: make_env(env_id, args, split="train") for env_id in args.env}
    for k, seed in enumerate(demo_seeds(args, episodes)):
        env = envs[args.env[k % len(args.env)]]
        agent = make_agent(agent_name)
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info)
        transcript = Transcript()
        transcript.reset(info)
        encoded, actions, rewards = [], [], []
        done = False
        while not done:
            candidates = info["candidates"]
            wanted, played = demonstrated(agent, obs, info)
            out.steps += 1
            out.exact += int(isinstance(wanted, str) and canonical(played) == canonical(wanted))
            encoded.append(policy.encode((transcript, candidates)))
            actions.append(candidates.index(played))
            obs, reward, terminated, truncated, info = env.step(played)
            rewards.append(float(reward))
            done = bool(terminated or truncated)
            if not done:
                transcript.add(played, info)
        out.episodes += 1
        summary = info.get("episode_summary") if isinstance(info.get("episode_summary"), dict) else {}
        success = summary.get("success")
        out.successes += int(bool(success))
        if success is None or success:
            out.kept_episodes += 1
            ret, to_go = 0.0, []
            for r in reversed(rewards):
                ret = r + args.gamma * ret
                to_go.append(ret)
            out.obs += encoded
            out.actions += actions
            out.returns += to_go[::-1]
    for env in envs.values():
        env.close()
    out.seconds = time.perf_counter() - t0
    return out


def demo_loss(policy: nn.Module, demos: DemoSet, idx: Sequence[int], vf_coef: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of the demonstration's candidates and the critic's squared error on their
    returns, over the steps `idx`: (policy loss, value loss)."""
    batch = policy.collate([demos.obs[i] for i in idx])
    logits, value = policy(batch)
    ce = nn.functional.cross_entropy(logits, torch.tensor([demos.actions[i] for i in idx]))
    v_loss = 0.5 * ((value - torch.tensor([demos.returns[i] for i in idx], dtype=value.dtype)) ** 2).mean()
    return ce, vf_coef * v_loss


def fit_demos(policy: nn.Module, demos: DemoSet, args: Args, generator: torch.Generator) -> dict[str, float]:
    """Fit `policy` to `demos` for ``args.demo_epochs`` passes (Adam of its own: PPO's starts fresh,
    as after a warm start); the critic learns the returns beside it, so PPO's first advantages
    are not measured against a value head that knows nothing. Returns the fit's figures."""
    if not demos.obs:
        return {"epochs": 0, "loss": float("nan"), "accuracy": float("nan"), "fit_s": 0.0}
    t0 = time.perf_counter()
    params = [p for p in policy.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
    n, losses = len(demos.obs), []
    for _ in range(args.demo_epochs):
        losses.clear()
        perm = torch.randperm(n, generator=generator).tolist()
        for start in range(0, n, args.minibatch_size):
            ce, v_loss = demo_loss(policy, demos, perm[start: start + args.minibatch_size], args.vf_coef)
            optimizer.zero_grad(set_to_none=True)
            (ce + v_loss).backward()
            nn.utils.clip_grad_norm_(params, args.max_grad_norm * 10)  # a looser clip: these are targets, not estimates
            optimizer.step()
            losses.append(float(ce.detach()))
    return {"epochs": args.demo_epochs, "loss": float(np.mean(losses)), "accuracy": accuracy(policy, demos),
            "fit_s": round(time.perf_counter() - t0, 3)}


@torch.no_grad()
def accuracy(policy: nn.Module, demos: DemoSet, chunk: int = 256) -> float:
    """The share of demonstration steps whose candidate is the policy's argmax."""
    right = 0
    for i in range(0, len(demos.obs), chunk):
        logits, _ = policy(policy.collate(demos.obs[i: i + chunk]))
        right += int((logits.argmax(-1) == torch.tensor(demos.actions[i: i + chunk])).sum())
    return right / max(len(demos.obs), 1)


def demo_coef(args: Args, update: int) -> float:
    """The weight of the demonstration loss at PPO update `update` (0-based): ``--demo-coef``
    decaying linearly to 0 over ``--demo-decay`` updates."""
    if not args.demo_coef or update >= args.demo_decay:
        return 0.0
    return args.demo_coef * (1.0 - update / args.demo_decay)


def demo_step(policy: nn.Module, optimizers: Sequence[torch.optim.Optimizer], demos: DemoSet, args: Args,
              coef: float, generator: torch.Generator) -> float:
    """One minibatch of demonstrations with weight `coef`, after a PPO update (so PPO's own
    ratios are untouched); returns the cross-entropy."""
    idx = torch.randint(len(demos.obs), (args.minibatch_size,), generator=generator).tolist()
    ce, _ = demo_loss(policy, demos, idx, 0.0)
    for opt in optimizers:
        opt.zero_grad(set_to_none=True)
    (coef * ce).backward()
    nn.utils.clip_grad_norm_([p for p in policy.parameters() if p.requires_grad], args.max_grad_norm)
    for opt in optimizers:
        opt.step()
    return float(ce.detach())


def run_demos(policy: nn.Module, args: Args, generator: torch.Generator) -> tuple[DemoSet, dict[str, Any]]:
    """Collect ``--demo-episodes`` of ``--demos`` and fit `policy` to them (minibatches drawn from
    `generator`); the run's record of it (settings, what was collected, the fit)."""
    demos = collect_demos(args, policy, args.demos, args.demo_episodes)  # type: ignore[arg-type]
    fit = fit_demos(policy, demos, args, generator)
    record = {"agent": args.demos, "episodes": args.demo_episodes, "epochs": args.demo_epochs,
              "coef": args.demo_coef, "decay": args.demo_decay, **demos.summary(), "fit": fit,
              "seconds": round(demos.seconds + fit["fit_s"], 3)}
    return demos, record
