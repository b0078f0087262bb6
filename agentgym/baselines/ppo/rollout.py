"""Rollouts: the `Collector` that the synchronous loop and every asynchronous actor use, and the
actor processes (`ActorPool`)."""

from __future__ import annotations

import queue as queue_lib
import time
from dataclasses import dataclass
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
import torch
import torch.multiprocessing as mp
from torch import nn

from agentgym.baselines.calibration import step_harm
from agentgym.baselines.ppo.acting import (
    Acting,
    act,
    group_of,
    make_env,
    sample,
    switched_group,
)
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.features import Transcript
from agentgym.baselines.ppo.networks import make_policy, policy_spec

__all__ = ["ActorPool", "AdaptiveMix", "Collector", "LiveEpisode", "Rollout"]


@dataclass
class Rollout:
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


class LiveEpisode:
    """One env and the episode it is playing: the policy's encoding of its latest observation."""

    def __init__(self, env_id: str, env: gym.Env) -> None:
        self.env_id, self.env = env_id, env
        #: The envs this slot has played, by id (an adaptive mix switches among them).
        self.envs = {env_id: env}
        self.per_task = False
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
        self.per_task = adv_norm == "task"
        if self.text:
            self.transcript.reset(info)
        self._encode(policy, obs, info)

    def switch(self, env_id: str, args: Args) -> None:
        """Play `env_id` from the next episode on (its env made on first use, then kept)."""
        if env_id not in self.envs:
            self.envs[env_id] = make_env(env_id, args)
        self.env_id, self.env = env_id, self.envs[env_id]

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
        if self.per_task:  # a cross-task session's next steps work on the sub-task this one started
            self.group = switched_group(info) or self.group
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
        self.live = [LiveEpisode(env_id, make_env(env_id, args)) for env_id in env_ids]
        self.mix = AdaptiveMix(args.env, args.mix_floor) if args.mix == "adaptive" and len(args.env) > 1 else None
        for s in self.live:
            self._start(s)

    def _start(self, s: LiveEpisode) -> None:
        s.begin(self.policy, int(self.rng.integers(2**31 - 1)), self.args.adv_norm)

    def _next(self, s: LiveEpisode, episode: dict[str, Any]) -> None:
        """Start the slot's next episode: of the same env id, or of one the adaptive mix draws."""
        if self.mix is not None:
            self.mix.record(s.env_id, bool((episode.get("metrics") or {}).get("success")))
            s.switch(self.mix.draw(self.rng), self.args)
        self._start(s)

    @torch.no_grad()
    def collect(self, num_steps: int, version: int = 0) -> Rollout:
        policy, n = self.policy, len(self.live)
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
        text = self.live[0].text
        for t in range(num_steps):
            acted = act(policy, [s.encoded for s in self.live], [s.candidates for s in self.live] if text else None,
                        self.acting)
            a, logp = sample(acted.logits, self.generator)
            actions[t], logprobs[t], values[t] = a.numpy(), logp.numpy(), acted.values.numpy()
            masked += acted.masked
            if acted.adjust is not None:
                adjust += acted.adjust
            if acted.risk is not None:
                risk[t] = acted.risk.gather(-1, a.unsqueeze(-1)).squeeze(-1).numpy()
            for e, s in enumerate(self.live):
                obs.append(s.encoded)
                groups.append(s.group)
                action, rewards[t, e], done, info = s.act(int(actions[t, e]))
                h = step_harm(info)
                harm[t, e] = h.severity
                violations += h.violations
                if done:
                    dones[t, e] = 1.0
                    episodes.append(self._episode(s, info))
                    self._next(s, episodes[-1])
                else:
                    s.advance(self.policy, action, info)
        next_obs = [s.encoded for s in self.live]
        _, next_values = policy(policy.collate(next_obs))
        return Rollout(obs, actions, logprobs, values, rewards, dones, groups, next_obs,
                       next_values.numpy().astype(np.float32), version, episodes,
                       adjust if text else None, harm, risk if text else None, violations, masked)

    @staticmethod
    def _episode(s: LiveEpisode, info: dict[str, Any]) -> dict[str, Any]:
        ep = {"env": s.env_id, "group": s.group, "return": s.ret, "length": s.length}
        summary = info.get("episode_summary")
        if isinstance(summary, dict) and "success" in summary:
            ep["metrics"] = summary
        return ep

    def close(self) -> None:
        for s in self.live:
            for env in s.envs.values():
                env.close()


class AdaptiveMix:
    """Which env id a slot plays next in a multi-task run: each id with a weight of its recent
    failure rate (an exponential average over its finished training episodes), never under
    `floor`. An id the policy has mastered keeps `floor` of the weight, so it is still played;
    the rest of the samples go where episodes still fail. Every id starts at full weight."""

    def __init__(self, env_ids: Sequence[str], floor: float, decay: float = 0.95) -> None:
        self.ids = list(dict.fromkeys(env_ids))
        self.floor, self.decay = floor, decay
        self.success = dict.fromkeys(self.ids, 0.0)

    def record(self, env_id: str, success: bool) -> None:
        if env_id in self.success:
            self.success[env_id] = self.decay * self.success[env_id] + (1 - self.decay) * float(success)

    def weights(self) -> np.ndarray:
        w = np.array([max(self.floor, 1.0 - self.success[i]) for i in self.ids])
        return w / w.sum()

    def draw(self, rng: np.random.Generator) -> str:
        return self.ids[int(rng.choice(len(self.ids), p=self.weights()))]


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

    def get(self, timeout: float = 600.0) -> Rollout:
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
