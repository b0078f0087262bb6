"""The PPO training loop over candidate actions: the thin "optimise the whole interaction" baseline.

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
    agentgym train ppo --env AgentRL/Dialog-v0 --split test --init runs/ppo/RUN/checkpoint.pt
    python -m agentgym.baselines.ppo --env AgentRL/Dialog-v0 --env AgentRL/ToolUse-v0 --actors 2
    agentgym eval AgentRL/Dialog-v0 --agent ppo --agent-arg checkpoint=runs/ppo/RUN/checkpoint.pt

Synchronous runs (``--actors 0``) with the same seed give the same result, bit for bit.
Checkpoints are loaded weights-only (untrusted files run no code: `load_checkpoint`).

The other parts are modules of `agentgym.baselines.ppo` (see its docstring); this one is the
training loop.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from agentgym.baselines.ppo.acting import (
    build_policy,
    make_env,
    resolve_env_ids,
)
from agentgym.baselines.ppo.checkpoint import save_checkpoint, warm_start
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.demos import demo_coef, demo_step, run_demos
from agentgym.baselines.ppo.reporting import Logger, episode_metrics, evaluate, harm_metrics
from agentgym.baselines.ppo.rollout import ActorPool, Collector, Rollout
from agentgym.baselines.ppo.update import make_batch, make_optimizers, ppo_update

__all__ = ["TrainResult", "train", "main"]


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
    #: Where a warm-started run began (`warm_start`'s record); None for a cold start.
    init: dict[str, Any] | None = None
    #: What the run learned from demonstrations before PPO (`run_demos`'s record); None without.
    demos: dict[str, Any] | None = None

    def summary(self) -> str:
        def fmt(ev: dict[str, Any] | None) -> str:
            if not ev:
                return "-"
            return f"{ev['success']:.1%} success" if ev.get("success") is not None else f"return {ev['return']:.1f}"

        target = f"{self.time_to_target:.0f} s" if self.time_to_target is not None else "not reached"
        warm = f"warm start from {self.init['checkpoint']} (sha256 {self.init['sha256'][:12]})\n" if self.init else ""
        if self.demos:
            warm += _demo_line(self.demos) + "\n"
        return (f"ppo: {self.updates} updates, {self.global_step} steps in {self.train_s:.0f} s "
                f"({self.sps:.0f} steps/s); evaluation {fmt(self.initial_eval)} -> {fmt(self.final_eval)}; "
                f"time to target {target}; dropped {self.dropped} stale segments\n"
                f"{warm}run folder {self.run_dir}, checkpoint {self.checkpoint}")


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


def _demo_line(d: dict[str, Any]) -> str:
    return (f"demonstrations: {d['agent']}, {d['kept_episodes']} of {d['episodes']} episodes kept (succeeded), "
            f"{d['kept_steps']} steps ({d['exact_share']:.0%} of its actions exactly a candidate); fit "
            f"{d['fit']['epochs']} epochs to {d['fit']['accuracy']:.0%} of the steps right; {d['seconds']:.0f} s")


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
    slots = [args.env[i % len(args.env)] for i in range(args.num_envs)]
    probe = make_env(args.env[0], args)
    policy = build_policy(args, probe)
    probe.close()
    # A warm start replaces the fresh weights (drawn all the same, so the seed's other streams are
    # those of a cold run); a checkpoint that does not fit is refused before the run folder exists.
    init = warm_start(policy, args.init) if args.init else None
    if args.demos is not None and not getattr(policy, "candidates", False):
        raise ValueError("--demos needs an AgentRL env (a policy over candidate actions)")
    policy.eval()  # no dropout anywhere: rollout and update log-probabilities must agree
    run_dir = _run_dir(args)
    (run_dir / "args.json").write_text(json.dumps(asdict(args), indent=2))
    if init is not None:
        (run_dir / "init.json").write_text(json.dumps(init, indent=2))
    # The optimizer starts fresh on a warm start too: Adam's moments are the old task's gradient
    # statistics (checkpoints do not keep them), and fine-tuning with fresh moments is the usual
    # choice; the first updates' step sizes then come from the new task's gradients alone.
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
    # Demonstrations: collected and fitted before PPO, on training time (the budget pays for them),
    # then evaluated at step 0 of PPO. Their random streams are their own: the rest of the run
    # draws what a run without them draws.
    demos = demo_record = None
    demo_generator = torch.Generator().manual_seed(args.seed + 0xDE30)
    if args.demos is not None:
        demos, demo_record = run_demos(policy, args, demo_generator)
        (run_dir / "demos.json").write_text(json.dumps(demo_record, indent=2))
        train_s = demo_record["seconds"]
        if args.progress:
            print(_demo_line(demo_record), flush=True)
        run_eval()
    last_line = 0.0
    collector = pool = None
    first: Rollout | None = None
    startup = time.perf_counter()
    if args.actors == 0:
        collector = Collector(args, policy, slots, seed=args.seed)
    else:
        pool = ActorPool(args, policy, slots)
        # The actors' start (a fresh interpreter each, importing torch) is not training time.
        first = pool.get()
    startup_s = time.perf_counter() - startup
    try:
        t0 = time.perf_counter() - train_s  # the demonstrations' seconds count in the budget
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
            coef = demo_coef(args, update) if demos is not None and demos.obs else 0.0
            if coef > 0:
                stats["demo_loss"] = demo_step(policy, optimizers, demos, args, coef, demo_generator)  # type: ignore[arg-type]
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
                save_checkpoint(checkpoint, policy, args, update, global_step, init, demo_record)
            if args.stop_at_target and time_to_target is not None:
                break
    finally:
        if collector is not None:
            collector.close()
        if pool is not None:
            pool.close()
    if not evals or evals[-1][0] != global_step:
        run_eval()
    save_checkpoint(checkpoint, policy, args, update, global_step, init, demo_record)
    if args.plot and logger.rows:
        logger.plot(run_dir / "learning_curve.png", evals)
    logger.close()
    result = TrainResult(run_dir=run_dir, checkpoint=checkpoint, updates=update, global_step=global_step,
                         train_s=train_s, sps=global_step / max(train_s, 1e-9),
                         initial_eval=evals[0][2] if initial is not None else None,
                         final_eval=evals[-1][2] if evals else None, evals=evals, time_to_target=time_to_target,
                         dropped=dropped, startup_s=startup_s, init=init, demos=demo_record)
    (run_dir / "result.json").write_text(json.dumps(
        {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(result).items()}, indent=2, default=str))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentgym.baselines.ppo [options]``: the same as ``agentgym train ppo``."""
    from agentgym.cli_parser import parse_dataclass

    args = parse_dataclass(Args, argv, prog="python -m agentgym.baselines.ppo")
    print(train(args).summary())
    return 0
