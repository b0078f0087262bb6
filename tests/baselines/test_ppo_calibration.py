"""Online policy calibration: harm read from the env's reports, a risk learned in training and
applied when acting, and the constraint layer as a hard mask."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch")

import agentgym  # noqa: E402,F401  (registers the ids)
from agentgym.agents import make_agent  # noqa: E402
from agentgym.baselines.calibration import MASKED, ConstraintMask, RiskStats, adjustments, step_harm  # noqa: E402
from agentgym.baselines.ppo import Args, evaluate, load_checkpoint, train  # noqa: E402
from agentgym.eval.episode import run_episode  # noqa: E402
from agentgym.noise import ActionConstraint  # noqa: E402
from agentgym.wrappers import ActionCandidates  # noqa: E402

TOOLUSE_ID = "AgentRL/ToolUse-v0"


# ------------------------------------------------------------------ what counts as harm
def test_harm_is_what_the_env_reports_of_the_agents_own_calls() -> None:
    calls = [{"error": "POLICY_VIOLATION", "kind": "write", "injected": False},
             {"error": "BLOCKED", "kind": "read", "injected": False},
             {"error": "TOOL_ERROR", "kind": "write", "injected": False},
             {"error": "TOOL_ERROR", "kind": "read", "injected": False},   # a failed look-up: no harm
             {"error": "TOOL_ERROR", "kind": "write", "injected": True},   # an injected fault: the env's
             {"error": None, "kind": "write", "injected": False}]
    harm = step_harm({"calls": calls})
    assert (harm.violations, harm.denied, harm.refused_writes) == (1, 1, 1) and harm.harmful
    assert harm.severity == 1.0 and step_harm({"calls": calls[2:]}).severity == 0.5
    assert not step_harm({"calls": calls[3:]}).harmful and not step_harm({}).harmful
    assert step_harm({"calls": calls[3:]}).severity == 0.0


def test_a_real_policy_violation_is_harm() -> None:
    env = gym.make(TOOLUSE_ID, domain="orders", difficulty="easy")
    for seed in range(40):
        env.reset(seed=seed)
        plan = env.unwrapped.task.gold.plan
        refund = next((s for s in plan if s.name == "refund_item" and "approval_id" in s.arguments), None)
        if refund is None:
            continue
        args = {k: v for k, v in refund.arguments.items() if k != "approval_id"}  # over the limit, no approval
        _, _, _, _, info = env.step(json.dumps({"name": "refund_item", "arguments": args}))
        assert step_harm(info).violations == 1
        break
    else:
        pytest.fail("no refund over the approval limit in 40 seeds")
    env.close()


# ------------------------------------------------------------------ the constraint mask
def test_the_constraint_mask_denies_exactly_what_the_constraint_layer_refuses() -> None:
    allowed = ["get_order", "find_customer", "list_orders", "get_return_policy", "refund_item", "check_stock"]
    forbid = [r'"amount": [2-9]\d\d', "^check_stock"]
    mask = ConstraintMask(allowed, forbid)
    env = ActionCandidates(ActionConstraint(gym.make(TOOLUSE_ID, domain="orders"), allowed_tools=allowed, forbid=forbid))
    pick = random.Random(3)
    compared = 0
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        for _ in range(8):
            action = pick.choice(info["candidates"])
            obs, _, terminated, truncated, info_next = env.step(action)
            blocked = any(c.get("error") == "BLOCKED" for c in info_next.get("calls") or ())
            assert mask.denies(action) == blocked, action
            compared += 1
            info = info_next
            if terminated or truncated:
                break
    assert compared > 60
    env.close()


# ------------------------------------------------------------------ acting
def test_calibration_scales_probabilities_by_the_chance_of_safety_and_masks_over_the_threshold() -> None:
    risk = torch.tensor([[0.1, 0.6, 0.3]])
    logits = torch.logit(risk)
    cands = [["{}", "{}", "{}"]]
    adjust, masked = adjustments(logits, [3], cands, calibrate=True, threshold=0.5, coef=1.0, constraint=None)
    assert masked == 1 and adjust[0][1] == MASKED
    assert torch.allclose(adjust[0][[0, 2]], torch.log(torch.tensor([0.9, 0.7])), atol=1e-5)
    off, masked_off = adjustments(logits, [3], cands, calibrate=False, threshold=0.5, coef=1.0, constraint=None)
    assert masked_off == 0 and torch.equal(off[0], torch.zeros(3))
    # Everything over the threshold: the safest candidate stays.
    high = torch.logit(torch.tensor([[0.9, 0.7, 0.95]]))
    kept, n = adjustments(high, [3], cands, calibrate=True, threshold=0.5, coef=1.0, constraint=None)
    assert n == 2 and kept[0][1] > MASKED


def test_the_constraint_is_a_hard_mask_with_or_without_calibration() -> None:
    cands = [['{"name": "cancel_booking", "arguments": {"booking_id": "B1"}}', "Which day?",
              '{"name": "search", "arguments": {}}']]
    mask = ConstraintMask(None, ["^cancel_booking"])
    zero = torch.zeros(1, 3) - 5.0
    for calibrate in (True, False):
        adjust, masked = adjustments(zero, [3], cands, calibrate=calibrate, threshold=1.0, coef=1.0, constraint=mask)
        assert masked == 1 and adjust[0][0] == MASKED and adjust[0][1] > MASKED and adjust[0][2] > MASKED


def test_risk_stats_report_calibration() -> None:
    stats = RiskStats()
    stats.add([0.9, 0.9, 0.1, 0.1], [1, 1, 0, 0])
    good = stats.summary()
    worse = RiskStats()
    worse.add([0.1, 0.1, 0.9, 0.9], [1, 1, 0, 0])
    assert good["risk_brier"] < worse.summary()["risk_brier"] and good["harm_rate"] == 0.5
    assert RiskStats().summary()["risk_brier"] is None


# ------------------------------------------------------------------ training
def _run(tmp_path: Path, **kw: Any) -> Any:
    base = dict(env=(TOOLUSE_ID,), num_envs=8, num_steps=32, minibatch_size=64, update_epochs=4,
                total_timesteps=2048, eval_episodes=20, eval_every=1000, out=str(tmp_path), run_name="run",
                plot=True, tensorboard=False, progress=False, seed=2)
    base.update(kw)
    return train(Args(**base))


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One calibrated run of 2,048 steps: its logs, plot and checkpoint serve the tests below."""
    return _run(tmp_path_factory.mktemp("calibrated"))


def test_the_risk_is_learned_in_training_logged_and_plotted_and_cuts_harm_when_acting(trained: Any) -> None:
    result = trained
    rows = (result.run_dir / "progress.csv").read_text().splitlines()
    header = rows[0].split(",")
    for col in ("risk_loss", "risk_brier", "violations_per_1000", "harm_per_1000", "masked_per_step",
                "eval_violations_per_1000"):
        assert col in header
    assert (result.run_dir / "learning_curve.png").stat().st_size > 5000
    policy, _ = load_checkpoint(result.checkpoint)
    args = Args(env=(TOOLUSE_ID,), eval_episodes=40, eval_seed=7_000_000, progress=False)
    on = evaluate(policy, args, calibration="on")
    off = evaluate(policy, args, calibration="off")
    # Paired: the same policy, the same episodes; only acting differs.
    assert on["harm_per_1000"] < off["harm_per_1000"], (on["harm_per_1000"], off["harm_per_1000"])
    assert on["risk_brier"] is not None and on["risk_brier"] < 0.25


def test_the_ppo_agent_acts_with_the_runs_calibration_and_can_turn_it_off(trained: Any) -> None:
    result = trained
    on = make_agent("ppo", checkpoint=str(result.checkpoint))
    off = make_agent("ppo", checkpoint=str(result.checkpoint), calibration="off")
    assert on.config()["calibration"] == "on" and off.config()["calibration"] == "off"
    env = gym.make(TOOLUSE_ID)
    assert run_episode(env, on, 3).episode["turns"] >= 1 and run_episode(env, off, 3).episode["turns"] >= 1
    env.close()
    with pytest.raises(ValueError, match="calibration must be"):
        make_agent("ppo", checkpoint=str(result.checkpoint), calibration="maybe")


def test_with_a_constraint_layer_no_call_is_ever_denied(tmp_path: Path) -> None:
    """The constraint is a hard mask: in training (its rollouts are logged) and when the agent
    plays the checkpoint in an env wrapped in the same constraint."""
    forbid = ("^list_policies", "^request_approval", "^find_employee")
    result = _run(tmp_path, total_timesteps=512, eval_episodes=10, constraint_forbid=forbid, calibration="off")
    assert result.final_eval is not None and result.final_eval["steps"] > 0
    env = ActionConstraint(gym.make(TOOLUSE_ID), forbid=list(forbid))
    agent = make_agent("ppo", checkpoint=str(result.checkpoint))
    calls = denied = 0
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            calls += len(info.get("calls") or ())
            denied += step_harm(info).denied
            done = terminated or truncated
    assert calls > 10 and denied == 0
    env.close()
