"""Evaluation of a PPO policy, the training log (CSV, TensorBoard) and the learning curve."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from agentgym.baselines.calibration import RiskStats, step_harm
from agentgym.baselines.ppo.acting import (
    Acting,
    act,
    make_env,
    sample,
)
from agentgym.baselines.ppo.config import Args
from agentgym.baselines.ppo.rollout import LiveEpisode, Rollout

__all__ = ["COLUMNS", "Logger", "episode_metrics", "evaluate", "harm_metrics", "learning_curve"]


@torch.no_grad()
def evaluate(policy: nn.Module, args: Args, env_ids: Sequence[str] | None = None, episodes: int | None = None,
             greedy: bool | None = None, split: str | None = None, parallel: int = 16, calibration: str | None = None,
             seed: int | None = None) -> dict[str, Any]:
    """Play `episodes` fixed-seed episodes per env id (seeds ``seed + k``, by default
    ``eval_seed + k``) on `split` (default: the run's) and summarise, acting as `calibration`
    says (default: the run's setting).

    Returns:
        ``{"success", "score", "return", "episodes", "steps", "violations", "violations_per_1000",
        "harm_per_1000", "risk_brier", "risk_ece", ..., "by_env": {id: {...}}, "per_episode": [...]}``;
        success and score are None for envs without them (CartPole).
    """
    env_ids = list(env_ids or args.env)
    n = args.eval_episodes if episodes is None else episodes
    greedy = args.eval_greedy if greedy is None else greedy
    first = args.eval_seed if seed is None else seed
    split = split or args.split
    acting = Acting.of(args, calibration)
    jobs = [(env_id, first + k) for env_id in env_ids for k in range(n)]
    generator = torch.Generator().manual_seed(first)
    results: list[dict[str, Any]] = []
    envs: dict[str, list[gym.Env]] = {}
    live: list[tuple[LiveEpisode, int, dict[str, Any]]] = []
    risk = RiskStats()
    was_training = policy.training
    policy.eval()

    def start(env_id: str, seed: int) -> None:
        pool = envs.setdefault(env_id, [])
        s = LiveEpisode(env_id, pool.pop() if pool else make_env(env_id, args, split=split))
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
        still: list[tuple[LiveEpisode, int, dict[str, Any]]] = []
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
           "risk_mean", "eval_success", "eval_score", "eval_return", "eval_violations_per_1000", "eval_harm_per_1000",
           "demo_loss")


def harm_metrics(segments: Sequence[Rollout]) -> dict[str, float | None]:
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


