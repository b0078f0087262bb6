"""The thin PPO's parts: advantages (GAE, per-family normalisation), config and CLI, determinism,
checkpoints and the `ppo` agent, the Box/Discrete path, and the `lm` policy with a tiny model."""

from __future__ import annotations

import argparse
import csv
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agentgym.agents import make_agent  # noqa: E402
from agentgym.baselines.commands import add_train_command  # noqa: E402
from agentgym.baselines.ppo import (  # noqa: E402
    Args,
    Rollout,
    gae,
    load_checkpoint,
    make_batch,
    normalise_advantages,
    resolve_env_ids,
    train,
)
from agentgym.baselines.ppo.acting import group_of, switched_group  # noqa: E402
from agentgym.baselines.ppo.rollout import AdaptiveMix, Collector  # noqa: E402
from agentgym.cli_parser import parse_dataclass  # noqa: E402
from agentgym.eval.episode import run_episode  # noqa: E402

DIALOG_ID = "AgentRL/Dialog-v0"
#: Columns that hold wall-clock measurements, the only ones two identical runs may differ in.
TIMING = {"train_s", "sps", "rollout_s", "update_s"}


def tiny(tmp_path: Path, **kw: Any) -> Args:
    """A few seconds of training: small batches, no plot, no TensorBoard."""
    base = dict(env=(DIALOG_ID,), difficulty="easy", num_envs=4, num_steps=16, minibatch_size=32, update_epochs=2,
                total_timesteps=192, eval_episodes=8, eval_every=2, out=str(tmp_path), run_name="run", plot=False,
                tensorboard=False, seed=3, progress=False)
    base.update(kw)
    return Args(**base)


# ------------------------------------------------------------------ advantages
def test_gae_matches_a_hand_computation() -> None:
    rewards = np.array([[0.0], [0.0], [1.0], [0.0]], dtype=np.float32)
    values = np.array([[0.1], [0.2], [0.3], [0.4]], dtype=np.float32)
    dones = np.array([[0.0], [0.0], [1.0], [0.0]], dtype=np.float32)
    nxt = np.array([0.5], dtype=np.float32)
    adv, ret = gae(rewards, values, dones, nxt, gamma=0.9, lam=0.8)
    d3 = 0.0 + 0.9 * 0.5 - 0.4
    d2 = 1.0 - 0.3  # the episode ends at step 2: no bootstrap
    d1 = 0.0 + 0.9 * 0.3 - 0.2
    d0 = 0.0 + 0.9 * 0.2 - 0.1
    a2 = d2
    a1 = d1 + 0.9 * 0.8 * a2
    a0 = d0 + 0.9 * 0.8 * a1
    np.testing.assert_allclose(adv[:, 0], [a0, a1, a2, d3], rtol=1e-6)
    np.testing.assert_allclose(ret, adv + values, rtol=1e-6)


def test_advantages_are_normalised_with_each_task_familys_own_statistics() -> None:
    # Dialog advantages are large, tool-use ones small: one batch-wide scale would drown the latter.
    dialog = np.array([10.0, 20.0, 30.0, 40.0])
    tooluse = np.array([0.1, 0.2, 0.3])
    adv = np.concatenate([dialog, tooluse])
    groups = ["dialog"] * 4 + ["tooluse"] * 3
    out = normalise_advantages(adv, groups, "family")
    for g, raw in (("dialog", dialog), ("tooluse", tooluse)):
        got = out[[x == g for x in groups]]
        np.testing.assert_allclose(got, (raw - raw.mean()) / (raw.std() + 1e-8), rtol=1e-5, atol=1e-6)
        assert abs(got.mean()) < 1e-5 and abs(got.std() - 1) < 1e-3
    whole = normalise_advantages(adv, groups, "batch")
    np.testing.assert_allclose(whole, (adv - adv.mean()) / (adv.std() + 1e-8), rtol=1e-5, atol=1e-6)
    assert np.all(np.abs(whole[4:] - whole[4:].mean()) < 1e-2), "batch-wide statistics flatten the small family"
    np.testing.assert_array_equal(normalise_advantages(adv, groups, "none"), adv.astype(np.float32))


def _segment(rewards: list[float], group: str, version: int = 0) -> Rollout:
    t = len(rewards)
    r = np.array(rewards, dtype=np.float32).reshape(t, 1)
    return Rollout(obs=[None] * t, actions=np.zeros((t, 1), dtype=np.int64), logprobs=np.zeros((t, 1), np.float32),
                   values=np.zeros((t, 1), np.float32), rewards=r, dones=np.ones((t, 1), np.float32),
                   groups=[group] * t, next_obs=[None], next_values=np.zeros(1, np.float32), version=version,
                   episodes=[])


def test_a_batch_from_hand_made_segments_uses_per_family_statistics() -> None:
    args = Args(gamma=1.0, gae_lambda=1.0)
    segments = [_segment([1.0, 0.0, 1.0, 1.0], "dialog"), _segment([0.01, 0.03], "tooluse")]
    batch = make_batch(segments, policy=None, version=0, args=args)  # current segments: no policy needed
    adv = batch.advantages.numpy()
    dialog, tooluse = np.array([1.0, 0.0, 1.0, 1.0]), np.array([0.01, 0.03])
    np.testing.assert_allclose(adv[:4], (dialog - dialog.mean()) / (dialog.std() + 1e-8), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(adv[4:], (tooluse - tooluse.mean()) / (tooluse.std() + 1e-8), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(batch.returns.numpy(), [1.0, 0.0, 1.0, 1.0, 0.01, 0.03], rtol=1e-6)
    pooled = make_batch(segments, policy=None, version=0, args=dataclasses.replace(args, adv_norm="batch"))
    assert not np.allclose(pooled.advantages.numpy()[4:], adv[4:])


# ------------------------------------------------------------------ config and command line
def _field_docs(cls: type) -> dict[str, str]:
    """The doc line under each field of a dataclass, read from its source."""
    import ast
    import inspect
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body  # type: ignore[attr-defined]
    return {node.target.id: " ".join(nxt.value.value.split()) for node, nxt in zip(body, body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)}


def _help(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        parse_dataclass(Args, ["--help"], prog="agentgym train ppo")
    assert info.value.code in (0, None)
    # tyro draws a frame for a terminal: keep the words only.
    return " ".join("".join(" " if 0x2500 <= ord(c) <= 0x257F else c for c in capsys.readouterr().out).split())


def test_every_args_field_has_a_doc_line_an_option_and_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    docs = _field_docs(Args)
    assert set(docs) == {f.name for f in dataclasses.fields(Args)}
    assert all(len(d) > 10 for d in docs.values())
    text = _help(capsys)
    assert text.startswith("usage: agentgym train ppo") and (Args.__doc__ or "").strip() in text
    for f in dataclasses.fields(Args):
        assert "--" + f.name.replace("_", "-") in text, f.name
        assert " ".join(docs[f.name].split()[:4]) in text, f.name
    assert "--no-plot" in text and "{easy,medium,hard}" in text.replace("None,", "") and "(default: 32)" in text


def test_options_parse_into_args_with_the_dataclass_defaults() -> None:
    args = parse_dataclass(Args, ["--env", DIALOG_ID, "--env", "AgentRL/ToolUse-v0", "--actors", "2", "--no-plot",
                                  "--target-kl", "0.05", "--difficulty", "easy"], prog="t")
    assert args.env == (DIALOG_ID, "AgentRL/ToolUse-v0") and args.actors == 2 and args.plot is False
    assert args.target_kl == 0.05 and args.difficulty == "easy"
    assert parse_dataclass(Args, [], prog="t") == Args() and Args().env == (DIALOG_ID,)
    assert parse_dataclass(Args, ["--env", "AgentRL/ToolUse-v0"], prog="t").env == ("AgentRL/ToolUse-v0",), \
        "an --env replaces the default, it does not add to it"
    assert parse_dataclass(Args, ["--constraint-forbid", "^refund", "--constraint-forbid", "x"],
                           prog="t").constraint_forbid == ("^refund", "x")
    assert parse_dataclass(Args, ["--anneal-lr", "--no-progress"], prog="t").anneal_lr is True
    with pytest.raises(ValueError, match="--policy lm needs --model"):
        Args(policy="lm")
    with pytest.raises(ValueError, match="--policy must be one of"):
        Args(policy="transformer")  # type: ignore[arg-type]


@pytest.mark.parametrize("argv, says", [
    (["--policy", "transformer"], "invalid choice 'transformer' for argument '--policy'"),
    (["--seed", "x"], "--seed"),
    (["--bogus"], "Unrecognized options: --bogus"),
    (["--env"], "--env"),
    (["--policy", "lm"], "--policy lm needs --model PATH"),
    (["--num-envs", "0"], "--num-envs must be at least 1, got 0"),
])
def test_a_bad_option_is_one_line_and_exit_status_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                    says: str) -> None:
    with pytest.raises(SystemExit) as info:
        parse_dataclass(Args, argv, prog="agentgym train ppo")
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("agentgym train ppo: error: ") and says in err, err
    assert err.rstrip().endswith("(see `agentgym train ppo --help`)") and "Args" not in err


def test_env_options_take_ids_or_task_families() -> None:
    assert resolve_env_ids(["dialog", "CartPole-v1", DIALOG_ID]) == (DIALOG_ID, "CartPole-v1")
    with pytest.raises(ValueError, match="neither a registered env id nor an AgentRL task family"):
        resolve_env_ids(["no-such-family"])


def test_the_train_command_hands_its_options_to_ppo(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="agentgym")
    add_train_command(parser.add_subparsers(dest="command"))
    ns = parser.parse_args(["train", "ppo", "--env", DIALOG_ID, "--seed", "4"])
    assert ns.algo == "ppo" and ns.options == ["--env", DIALOG_ID, "--seed", "4"]
    with pytest.raises(SystemExit):
        ns = parser.parse_args(["train", "ppo", "--help"])
        ns.func(ns)
    assert "--max-lag" in capsys.readouterr().out


# ------------------------------------------------------------------ determinism, checkpoints, agent
def _rows(path: Path) -> list[dict[str, str]]:
    with open(path) as f:
        return [{k: v for k, v in row.items() if k not in TIMING} for row in csv.DictReader(f)]


def test_synchronous_runs_with_one_seed_give_identical_results(tmp_path: Path) -> None:
    a = train(tiny(tmp_path / "a"))
    b = train(tiny(tmp_path / "b"))
    assert _rows(a.run_dir / "progress.csv") == _rows(b.run_dir / "progress.csv")
    wa = torch.load(a.checkpoint, weights_only=True)["state_dict"]
    wb = torch.load(b.checkpoint, weights_only=True)["state_dict"]
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    c = train(tiny(tmp_path / "c", seed=4))
    assert _rows(a.run_dir / "progress.csv") != _rows(c.run_dir / "progress.csv")


def test_a_run_writes_logs_a_plot_and_a_checkpoint_the_ppo_agent_plays(tmp_path: Path) -> None:
    result = train(tiny(tmp_path, plot=True, total_timesteps=128))
    rows = _rows(result.run_dir / "progress.csv")
    assert len(rows) == result.updates == 2
    for col in ("return", "success", "tool_validity", "goal_consistency", "recovery_share", "entropy"):
        assert col in rows[0]
    assert (result.run_dir / "learning_curve.png").stat().st_size > 1000
    assert result.initial_eval is not None and result.final_eval is not None
    policy, meta = load_checkpoint(result.checkpoint)
    assert meta["policy"]["kind"] == "hash" and meta["candidates"]["max_candidates"] == 64

    import gymnasium as gym

    agent = make_agent("ppo", checkpoint=str(result.checkpoint))
    assert agent.config()["policy"] == "hash"
    env = gym.make(DIALOG_ID, difficulty="easy")
    first = run_episode(env, agent, 17)
    again = run_episode(env, make_agent("ppo", checkpoint=str(result.checkpoint)), 17)
    assert first.actions == again.actions and first.episode["turns"] == len(first.actions)
    sampled = run_episode(env, make_agent("ppo", checkpoint=str(result.checkpoint), greedy=False, seed=1), 17)
    assert sampled.episode["turns"] >= 1
    env.close()


def test_training_prints_a_line_per_update_and_every_evaluation(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    result = train(tiny(tmp_path, total_timesteps=128, progress=True))
    out = capsys.readouterr().out
    evals = [line for line in out.splitlines() if line.strip().startswith("eval at")]
    assert out.splitlines()[0].strip().startswith("eval at 0 steps") and "success" in evals[0]
    assert len(evals) == len(result.evals) >= 2
    assert "update 1: 64/128 steps" in out and "steps/s" in out
    train(tiny(tmp_path / "quiet", total_timesteps=64, progress=False))
    assert capsys.readouterr().out == ""


def test_the_learning_curve_starts_with_the_evaluation_before_training_and_has_labelled_axes(tmp_path: Path) -> None:
    from agentgym.baselines.ppo import learning_curve

    result = train(tiny(tmp_path, total_timesteps=128))
    assert result.evals[0][0] == 0 and result.initial_eval is not None
    with open(result.run_dir / "progress.csv") as f:
        rows = [{k: (float(v) if v not in ("", None) else None) for k, v in row.items()} for row in csv.DictReader(f)]
    fig = learning_curve(rows, result.evals, "run")
    curve, harm = fig.axes[0], fig.axes[1]
    assert curve.get_xlabel() == "environment steps" and curve.get_ylabel() == "success rate"
    assert harm.get_ylabel() == "policy violations per 1,000 steps"
    evaluation = next(line for line in curve.get_lines() if line.get_label().startswith("evaluation"))
    assert list(evaluation.get_xdata())[0] == 0 and len(evaluation.get_xdata()) == len(result.evals)
    legend = curve.get_legend()
    assert legend is not None and {t.get_text() for t in legend.get_texts()} >= {"evaluation (greedy)"}
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_a_multi_task_run_trains_on_every_family_of_its_train_split(tmp_path: Path) -> None:
    result = train(tiny(tmp_path, env=("dialog", "tooluse"), difficulty=None, total_timesteps=64, eval_episodes=2))
    assert result.final_eval is not None
    assert set(result.final_eval["by_env"]) == {DIALOG_ID, "AgentRL/ToolUse-v0"}
    import json

    saved = json.loads((result.run_dir / "args.json").read_text())
    assert saved["env"] == [DIALOG_ID, "AgentRL/ToolUse-v0"] and saved["adv_norm"] == "family"


def test_the_adaptive_mix_gives_the_samples_of_mastered_ids_to_failing_ones() -> None:
    mix = AdaptiveMix(["a", "b", "c"], floor=0.1)
    assert np.allclose(mix.weights(), [1 / 3] * 3)  # nothing seen yet: every id at full weight
    for _ in range(200):
        mix.record("a", True)  # mastered
        mix.record("b", False)  # always failing
        mix.record("c", bool(_ % 2))  # half
    w = dict(zip(mix.ids, mix.weights()))
    assert w["b"] > w["c"] > w["a"] > 0
    assert w["a"] == pytest.approx(0.1 / (0.1 + 1.0 + 0.5), rel=0.05)  # the floor keeps it played
    rng = np.random.default_rng(0)
    drawn = [mix.draw(rng) for _ in range(2000)]
    assert drawn.count("b") > drawn.count("c") > drawn.count("a") > 50


def test_an_adaptive_multi_task_run_switches_slots_among_its_ids_and_repeats_itself(tmp_path: Path) -> None:
    def run(name: str) -> Any:
        return train(tiny(tmp_path / name, env=("dialog", "tooluse"), difficulty=None, mix="adaptive",
                          total_timesteps=128, eval_episodes=1))

    a, b = run("a"), run("b")
    assert _rows(a.run_dir / "progress.csv") == _rows(b.run_dir / "progress.csv")
    args = tiny(tmp_path / "c", env=("dialog", "tooluse"), difficulty=None, mix="adaptive")
    args = dataclasses.replace(args, env=resolve_env_ids(args.env))
    from agentgym.baselines.ppo.networks import HashPolicy

    collector = Collector(args, HashPolicy(1024, 8, 16).eval(), [DIALOG_ID] * 4, seed=5)
    played = set()
    for _ in range(8):
        played |= {e["env"] for e in collector.collect(16).episodes}
    collector.close()
    assert played == {DIALOG_ID, "AgentRL/ToolUse-v0"}  # slots made for Dialog-v0 alone also play ToolUse-v0


def test_task_normalisation_groups_a_sessions_steps_by_the_sub_task_they_work_on() -> None:
    assert group_of("X", {"task": {"family": "tooluse", "domain": "finance"}}, "task") == "tooluse/finance"
    session = {"task": {"family": "crosstask", "domain": "dialog:stays+tooluse:finance"},
               "segment": {"index": 0, "family": "dialog", "domain": "stays"}}
    assert group_of("X", session, "task") == "dialog/stays"
    assert group_of("X", session, "family") == "crosstask"
    switch = {"segment_switch": [{"ended": {"index": 0}, "started": {"index": 1, "family": "tooluse",
                                                                     "domain": "finance"}}]}
    assert switched_group(switch) == "tooluse/finance" and switched_group({}) is None
    args = dataclasses.replace(tiny(Path("/nonexistent"), env=("AgentRL/CrossTask-v0",), difficulty=None,
                                    adv_norm="task"), env=("AgentRL/CrossTask-v0",))
    from agentgym.baselines.ppo.networks import HashPolicy

    collector = Collector(args, HashPolicy(1024, 8, 16).eval(), ["AgentRL/CrossTask-v0"] * 2, seed=1)
    groups = set(collector.collect(64).groups)
    collector.close()
    assert any(g.startswith("dialog/") for g in groups) and any(g.startswith("tooluse/") for g in groups), groups
    adv = normalise_advantages(np.array([1.0, 2.0, 10.0, 20.0]), ["a", "a", "b", "b"], "task")
    assert np.allclose(adv, [-1, 1, -1, 1], atol=1e-4)


def test_subtask_rewards_pay_a_sessions_sub_tasks_as_they_end_with_the_same_returns() -> None:
    from agentgym.baselines.ppo.acting import make_env
    from agentgym.baselines.ppo.networks import HashPolicy
    from agentgym.wrappers import SubtaskRewards

    returns = {}
    for paid in (False, True):
        args = tiny(Path("/nonexistent"), env=("AgentRL/CrossTask-v0",), difficulty=None, subtask_rewards=paid)
        assert isinstance(make_env("AgentRL/CrossTask-v0", args).env, SubtaskRewards) is paid
        collector = Collector(args, HashPolicy(1024, 8, 16).eval(), ["AgentRL/CrossTask-v0"] * 2, seed=1)
        rollout = collector.collect(96)
        collector.close()
        returns[paid] = [round(e["return"], 9) for e in rollout.episodes]
        early = rollout.rewards[rollout.dones == 0]
        assert bool((early != 0).any()) is paid  # only the paying run rewards a step before a session's last
    assert returns[True] == returns[False] and returns[True]


def test_a_bad_mix_floor_is_refused() -> None:
    with pytest.raises(ValueError, match="--mix-floor"):
        Args(mix="adaptive", mix_floor=0.0)


def test_the_ppo_agent_rejects_what_it_cannot_play(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no PPO checkpoint"):
        make_agent("ppo", checkpoint=str(tmp_path / "missing.pt"))
    result = train(Args(env=("CartPole-v1",), num_envs=1, num_steps=64, minibatch_size=32, update_epochs=1,
                        total_timesteps=64, eval_episodes=0, out=str(tmp_path), run_name="cp", plot=False,
                        tensorboard=False))
    with pytest.raises(ValueError, match="non-text env"):
        make_agent("ppo", checkpoint=str(result.checkpoint))


def test_a_box_discrete_env_trains_with_the_mlp_path(tmp_path: Path) -> None:
    result = train(Args(env=("CartPole-v1",), num_envs=1, num_steps=256, minibatch_size=64, update_epochs=4,
                        learning_rate=3e-4, ent_coef=0.0, total_timesteps=2048, eval_episodes=5, eval_every=100,
                        out=str(tmp_path), run_name="cp", plot=True, tensorboard=False))
    rows = _rows(result.run_dir / "progress.csv")
    assert len(rows) == 8 and all(r["success"] == "" for r in rows) and float(rows[-1]["return"]) > 0
    assert result.final_eval is not None and result.final_eval["return"] > 0
    assert (result.run_dir / "learning_curve.png").exists()


# ------------------------------------------------------------------ the lm policy
@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from agentgym.testing.models import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-lm"), vocab_size=512, hidden_size=32, num_layers=1)


def test_the_lm_policy_trains_a_tiny_model_whose_loss_and_weights_change(tiny_lm: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    args = tiny(tmp_path, policy="lm", model=str(tiny_lm), num_envs=2, num_steps=6, minibatch_size=6,
                update_epochs=2, total_timesteps=24, eval_episodes=0, lm_max_context=128, learning_rate=3e-3)
    result = train(args)
    rows = _rows(result.run_dir / "progress.csv")
    assert result.updates == 2 and len(rows) == 2
    losses = [float(r["policy_loss"]) + float(r["value_loss"]) for r in rows]
    assert all(np.isfinite(losses)) and losses[0] != losses[1]
    before = AutoModelForCausalLM.from_pretrained(tiny_lm, local_files_only=True).state_dict()
    after = torch.load(result.checkpoint, weights_only=True)["state_dict"]
    changed = [k for k in before if not torch.equal(before[k], after["lm." + k])]
    assert changed, "PPO gradients reach the language model's weights"
    policy, meta = load_checkpoint(result.checkpoint)
    assert meta["policy"]["kind"] == "lm" and meta["policy"]["config"]["model"] == str(tiny_lm)
