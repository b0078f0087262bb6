"""`agentgym train ppo --demos AGENT`: a built-in agent's episodes, mapped onto the candidates,
fitted before PPO; the fit makes the agent's choices likelier, a run with demonstrations is
deterministic for its seed, records them and pays for them from its time budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from agentgym.baselines.ppo import Args, load_checkpoint, train  # noqa: E402
from agentgym.baselines.ppo.acting import build_policy, make_env  # noqa: E402
from agentgym.baselines.ppo.checkpoint import read_checkpoint, warm_start  # noqa: E402
from agentgym.baselines.ppo.demos import (  # noqa: E402
    DEMO_SEED_GAP,
    collect_demos,
    demo_coef,
    demo_seeds,
    fit_demos,
    nearest,
)

SMALL = {"hash_buckets": 2048, "hash_dim": 16, "hidden": 32}
TOOLUSE = ("AgentRL/ToolUse-v0",)


def _call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def test_nearest_takes_the_same_call_else_the_closest_of_its_tool_else_the_closest_message() -> None:
    candidates = [_call("get_order", order_id="O-1"), _call("get_order", order_id="O-2"),
                  _call("refund", order_id="O-2", amount=5), "Which date should I use?", "Done. Anything else?"]
    # The same call written another way (key order, tags) is that candidate.
    assert nearest('<tool_call>{"arguments": {"order_id": "O-2"}, "name": "get_order"}</tool_call>',
                   candidates) == candidates[1]
    assert nearest(_call("refund", order_id="O-2", amount=7), candidates) == candidates[2]
    assert nearest("What date would you like?", candidates) == candidates[3]
    assert nearest(_call("cancel", order_id="O-1"), candidates) == candidates[0]  # no such tool: the first


def test_demonstration_seeds_avoid_the_evaluation_window_and_follow_the_seed() -> None:
    args = Args(env=TOOLUSE, seed=3)
    seeds = demo_seeds(args, 50)
    assert seeds == demo_seeds(args, 50) and seeds != demo_seeds(Args(env=TOOLUSE, seed=4), 50)
    # An evaluation window placed on the stream's first seed pushes that seed out, not the count.
    moved = demo_seeds(Args(env=TOOLUSE, seed=3, eval_seed=seeds[0]), 50)
    assert len(moved) == 50 and seeds[0] not in moved and moved[:49] == seeds[1:]
    assert not any(seeds[0] <= s < seeds[0] + DEMO_SEED_GAP for s in moved)


def test_the_fit_makes_the_demonstrators_candidates_likelier() -> None:
    torch.manual_seed(0)
    args = Args(env=TOOLUSE, seed=1, demos="heuristic", demo_episodes=16, demo_epochs=40,
                learning_rate=1e-2, **SMALL)  # a fit of ~100 Adam steps: a larger step than PPO's
    probe = make_env(TOOLUSE[0], args)
    policy = build_policy(args, probe)
    probe.close()
    policy.eval()
    demos = collect_demos(args, policy, "heuristic", args.demo_episodes)
    # The heuristic succeeds at some of these tasks through the candidates, and only those are kept.
    assert 0 < demos.kept_episodes < demos.episodes and len(demos.obs) > 40
    assert demos.exact > 0.3 * demos.steps

    def mean_logp() -> float:
        with torch.no_grad():
            logits, _ = policy(policy.collate(demos.obs))
            logp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(demos.actions).unsqueeze(-1))
        return float(logp.mean())

    before = mean_logp()
    fit = fit_demos(policy, demos, args, torch.Generator().manual_seed(0))
    after = mean_logp()
    # From about uniform over ~20 candidates (log 1/20 = -3) to most of the mass on the agent's.
    assert before < -2.0 and after > -0.5, (before, after)
    assert fit["accuracy"] > 0.8, fit


def test_the_demonstration_loss_decays_to_nothing() -> None:
    args = Args(env=TOOLUSE, demos="heuristic", demo_coef=0.5, demo_decay=4)
    assert [demo_coef(args, u) for u in range(6)] == [0.5, 0.375, 0.25, 0.125, 0.0, 0.0]
    assert demo_coef(Args(env=TOOLUSE, demos="heuristic"), 0) == 0.0


def _run(tmp: Path, name: str, **kw: Any) -> Any:
    return train(Args(env=TOOLUSE, out=str(tmp), run_name=name, num_envs=4, num_steps=16, total_timesteps=128,
                      eval_episodes=4, eval_every=1, demos="heuristic", demo_episodes=12, demo_epochs=4,
                      demo_coef=0.5, demo_decay=4, tensorboard=False, plot=False, progress=False, **SMALL, **kw))


def test_a_run_with_demonstrations_is_deterministic_records_them_and_pays_for_them(tmp_path: Path) -> None:
    first, second = _run(tmp_path, "a"), _run(tmp_path, "b")
    a, _ = load_checkpoint(first.checkpoint)
    b, _ = load_checkpoint(second.checkpoint)
    for key, value in a.state_dict().items():
        assert torch.equal(b.state_dict()[key], value), key
    assert [e for _, _, e in first.evals] == [e for _, _, e in second.evals]
    record = json.loads((first.run_dir / "demos.json").read_text())
    assert record == first.demos == read_checkpoint(first.checkpoint)["demos"]
    assert record["agent"] == "heuristic" and record["episodes"] == 12 and record["kept_steps"] > 0
    assert json.loads((first.run_dir / "args.json").read_text())["demos"] == "heuristic"
    # The fit moved the policy before PPO: the evaluation right after it (step 0, at the
    # demonstrations' seconds) differs from the one before; its time counts as training time.
    (s0, t0, before), (s1, t1, after) = first.evals[:2]
    assert s0 == s1 == 0 and t0 == 0 and t1 == record["seconds"] > 0 and first.train_s > record["seconds"]
    assert before != after
    rows = (first.run_dir / "progress.csv").read_text().splitlines()
    assert "demo_loss" in rows[0] and rows[1].split(",")[rows[0].split(",").index("demo_loss")] != ""
    assert "demonstrations: heuristic" in first.summary()
    # A run warm-started from it records where its source's policy came from.
    source = warm_start(load_checkpoint(first.checkpoint)[0], str(first.checkpoint))
    assert source["args"]["demos"] == "heuristic" and source["args"]["demo_episodes"] == 12


def test_demonstrations_need_candidates(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--demos needs an AgentRL env"):
        train(Args(env=("CartPole-v1",), demos="heuristic", out=str(tmp_path), total_timesteps=64, progress=False))
    assert not any(tmp_path.iterdir())


def test_help_explains_demos(agentgym_here: Any) -> None:
    done = agentgym_here("train", "ppo", "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for option in ("--demos", "--demo-episodes", "--demo-epochs", "--demo-coef", "--demo-decay"):
        assert option in text, option
    assert "nearest" in text and "cross-entropy" in text and "--max-seconds" in text
