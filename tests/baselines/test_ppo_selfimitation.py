"""Self-imitation: the returns, the buffer of scoring episodes, the update, and the rollouts that feed it."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agentgym.baselines.ppo import Args, train  # noqa: E402
from agentgym.baselines.ppo_acting import build_policy, make_env  # noqa: E402
from agentgym.baselines.ppo_rollout import Collector  # noqa: E402
from agentgym.baselines.ppo_selfimitation import (  # noqa: E402
    SelfImitationBuffer,
    Trajectory,
    discounted_returns,
    self_imitation_update,
)
from agentgym.baselines.ppo_update import make_optimizers  # noqa: E402

DIALOG_ID = "AgentRL/Dialog-v0"


def _args(tmp_path: Path, **kw: Any) -> Args:
    base = dict(env=(DIALOG_ID,), difficulty="easy", num_envs=4, num_steps=16, minibatch_size=32, update_epochs=2,
                total_timesteps=256, eval_episodes=0, out=str(tmp_path), run_name="run", plot=False,
                tensorboard=False, seed=3, progress=False, sil_coef=1.0)
    base.update(kw)
    return Args(**base)


def _traj(rewards: list[float], start: int = 0) -> Trajectory:
    n = len(rewards)
    return Trajectory([("obs", start + t) for t in range(n)], np.arange(start, start + n, dtype=np.int64),
                      np.asarray(rewards, dtype=np.float32))


def test_discounted_returns_match_a_hand_computation() -> None:
    got = discounted_returns(np.asarray([0.0, 0.0, 1.0], dtype=np.float32), 0.5)
    assert got.tolist() == [0.25, 0.5, 1.0]
    assert discounted_returns(np.asarray([1.0, 0.0, 2.0], dtype=np.float32), 0.9).tolist() == pytest.approx(
        [1.0 + 0.9 * 0 + 0.81 * 2, 0.9 * 2, 2.0])


def test_the_buffer_keeps_scoring_episodes_only_and_drops_the_oldest_past_its_capacity() -> None:
    buf = SelfImitationBuffer(capacity=6, gamma=1.0)
    buf.add(_traj([0.0, 0.0]))  # no return: nothing to imitate
    assert len(buf) == 0 and buf.episodes == 0
    buf.add(_traj([0.0, 1.0], start=10))
    buf.add(_traj([0.0, 0.0, 0.5], start=20))
    assert len(buf) == 5 and buf.episodes == 2
    buf.add(_traj([0.0, 0.0, 0.0, 1.0], start=30))  # 9 steps > 6: the first episode goes, then the second
    assert len(buf) == 4 and buf.episodes == 1
    buf.add(_traj([1.0] * 7, start=40))  # longer than the buffer: never kept
    assert len(buf) == 4
    idx, obs, actions, returns, adjust = buf.sample(64, torch.Generator().manual_seed(0))
    assert adjust is None
    assert set(actions.tolist()) == {30, 31, 32, 33}  # the one episode left, every step drawn
    assert all(o == ("obs", int(a)) for o, a in zip(obs, actions.tolist()))
    assert [actions[k] - 30 for k in range(64)] == idx
    assert returns.tolist() == [1.0] * 64  # gamma 1: every step's return is the episode's


def test_steps_are_drawn_by_how_far_their_return_beats_the_critic_and_replays_update_that() -> None:
    buf = SelfImitationBuffer(capacity=100, gamma=1.0)
    # Played with values 0.9 (gap 0.1) and 0.0 (gap 1.0): the second episode is drawn ~10x as often.
    for start, value in ((0, 0.9), (10, 0.0)):
        t = _traj([0.0, 1.0], start=start)
        t.values = np.full(2, value, dtype=np.float32)
        buf.add(t)
    gen = torch.Generator().manual_seed(0)
    idx, *_ = buf.sample(2000, gen)
    share = np.mean(np.asarray(idx) >= 2)
    assert 0.85 < share < 0.96
    # The critic caught up with the second episode: its steps fall to the floor priority.
    buf.reprioritise([2, 3], np.asarray([-0.5, 0.0]))
    idx, *_ = buf.sample(2000, gen)
    assert np.mean(np.asarray(idx) >= 2) < 0.05
    # Priorities survive the buffer's changes: a new episode does not reset them.
    buf.add(_traj([0.0, 1.0], start=20))
    idx, *_ = buf.sample(3000, gen)
    counts = np.bincount(idx, minlength=6)
    assert counts[2] + counts[3] < 0.05 * 3000 and counts[4] + counts[5] > 0.6 * 3000


def _probe(args: Args) -> Any:
    torch.manual_seed(args.seed)
    env = make_env(DIALOG_ID, args)
    policy = build_policy(args, env)
    env.close()
    return policy


def test_collected_trajectories_are_the_segments_own_steps_of_each_scoring_episode(tmp_path: Path) -> None:
    args = _args(tmp_path)
    policy = _probe(args)
    collector = Collector(args, policy, [DIALOG_ID] * args.num_envs, seed=5)
    try:
        segments = [collector.collect(args.num_steps) for _ in range(4)]
    finally:
        collector.close()
    finished = [t for seg in segments for t in seg.finished]
    scoring = [e for seg in segments for e in seg.episodes if e["return"] > 0]
    assert finished and len(finished) == len(scoring)
    assert [t.ret for t in finished] == pytest.approx([e["return"] for e in scoring])
    assert [len(t.actions) for t in finished] == [e["length"] for e in scoring]
    # Each step of a trajectory is one the segments hold: its encoded observation and its action.
    steps = {id(o): int(a) for seg in segments for o, a in zip(seg.obs, seg.actions.reshape(-1).tolist())}
    for t in finished:
        assert t.adjust is not None and len(t.adjust) == len(t.actions)
        for o, a in zip(t.obs, t.actions.tolist()):
            assert id(o) in steps and steps[id(o)] == a
    # Off, nothing is kept.
    off = _args(tmp_path, sil_coef=0.0)
    collector = Collector(off, policy, [DIALOG_ID] * off.num_envs, seed=5)
    try:
        assert all(not collector.collect(off.num_steps).finished for _ in range(4))
    finally:
        collector.close()


def _logp(policy: Any, obs: list[Any], actions: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        logits, _ = policy(policy.collate(obs))
        return torch.log_softmax(logits, -1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def test_the_update_raises_the_replayed_actions_where_the_return_beats_the_critic(tmp_path: Path) -> None:
    args = _args(tmp_path, sil_batches=24)
    policy = _probe(args)
    collector = Collector(args, policy, [DIALOG_ID] * args.num_envs, seed=5)
    try:
        finished = [t for _ in range(6) for t in collector.collect(args.num_steps).finished]
    finally:
        collector.close()
    buf = SelfImitationBuffer(args.sil_capacity, args.gamma)
    for t in finished:
        buf.add(t)
    obs = [o for t in finished for o in t.obs]
    actions = torch.from_numpy(np.concatenate([t.actions for t in finished]))
    before = _logp(policy, obs, actions)
    stats = self_imitation_update(policy, make_optimizers(policy, args.learning_rate), buf, args,
                                  torch.Generator().manual_seed(0))
    after = _logp(policy, obs, actions)
    assert stats["sil_steps"] == len(obs) and stats["sil_episodes"] == len(finished)
    assert 0 < stats["sil_beaten"] <= 1 and stats["sil_loss"] > 0
    # Every step beat the untrained critic; the episodes disagree in places, so not every step rises.
    assert float((after - before).mean()) > 0.05
    assert float(after.exp().mean()) > 1.1 * float(before.exp().mean())


def test_a_critic_that_already_expects_the_return_learns_nothing_from_it(tmp_path: Path) -> None:
    """(R - V)+ is 0 for every step: no gradient, the weights stay as they were."""
    args = _args(tmp_path)
    policy = _probe(args)
    collector = Collector(args, policy, [DIALOG_ID] * args.num_envs, seed=5)
    try:
        finished = [t for _ in range(4) for t in collector.collect(args.num_steps).finished]
    finally:
        collector.close()
    buf = SelfImitationBuffer(args.sil_capacity, gamma=args.gamma)
    for t in finished:
        # Returns far below any value the critic gives: nothing beats it.
        buf.add(Trajectory(t.obs, t.actions, t.rewards * 1e-6, t.adjust))
    with torch.no_grad():
        for p in policy.parameters():
            if p.dim() == 1 and p.shape[0] == 1:
                p.add_(10.0)  # the value head's bias: V is about 10 everywhere
    weights = {k: v.clone() for k, v in policy.state_dict().items()}
    stats = self_imitation_update(policy, make_optimizers(policy, args.learning_rate), buf, args,
                                  torch.Generator().manual_seed(0))
    assert stats["sil_beaten"] == 0.0 and stats["sil_loss"] == 0.0
    assert all(torch.equal(weights[k], v) for k, v in policy.state_dict().items())


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path) as f:
        return [{k: v for k, v in r.items() if k not in {"train_s", "sps", "rollout_s", "update_s"}}
                for r in csv.DictReader(f)]


def test_runs_with_self_imitation_are_deterministic_and_log_it(tmp_path: Path) -> None:
    a = train(_args(tmp_path / "a"))
    b = train(_args(tmp_path / "b"))
    rows = _rows(a.run_dir / "progress.csv")
    assert rows == _rows(b.run_dir / "progress.csv")
    assert any(r["sil_steps"] not in ("", "0.0") for r in rows)
    off = _rows(train(_args(tmp_path / "off", sil_coef=0.0)).run_dir / "progress.csv")
    assert all(r["sil_steps"] == "" for r in off)
    assert [r["global_step"] for r in off] == [r["global_step"] for r in rows]
    assert off != rows


def test_bad_self_imitation_options_are_refused(tmp_path: Path) -> None:
    for kw in ({"sil_coef": -1.0}, {"sil_value_coef": -0.1}, {"sil_batches": 0}, {"sil_capacity": 0}):
        with pytest.raises(ValueError):
            _args(tmp_path, **kw)
