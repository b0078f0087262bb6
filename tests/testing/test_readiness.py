"""Tests for agentgym.testing.readiness: the report says, per metric, what an env gives it and what
it lacks, for envs that lack each thing in turn."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import agentgym
from agentgym.core.env import AgentEnv
from agentgym.core.spaces import UnicodeText
from agentgym.core.task import Score, SimulatedUser, Task, UserTurn
from agentgym.core.tools import Toolkit, tool
from agentgym.testing import CHECKS, EnvReport, Finding, check_agent_env
from agentgym.testing.readiness import METRICS, metric_findings
from agentgym.toolenv import Detail, ToolTask, gold_call, make_tool_env


def look(world: dict, key: str) -> dict:
    """Look something up.

    Args:
        key: What.
    """
    return {"item_id": "it-12", "key": key}


def _statuses(findings: tuple[Finding, ...]) -> dict[tuple[str, str], str]:
    return {(f.metric, f.subject): f.status for f in findings}


def _message(findings: tuple[Finding, ...], metric: str, subject: str) -> str:
    return next(f.message for f in findings if (f.metric, f.subject) == (metric, subject))


def test_a_task_without_gold_details_or_writes_is_reported_per_metric() -> None:
    env = make_tool_env(tools=[look], task_generator=lambda seed: ToolTask(request="Hi.", gold_calls=[]),
                        scorer=lambda task, world: False)
    findings = metric_findings(env, seeds=(0,))
    got = _statuses(findings)
    assert got[("tool_accuracy", "gold calls")] == "missing"
    assert "no gold calls, so tool recall is undefined" in _message(findings, "tool_accuracy", "gold calls")
    assert got[("goal_consistency", "constraints")] == "missing"
    assert "the user exposes no constraints, so goal consistency is n/a" in _message(
        findings, "goal_consistency", "constraints")
    assert got[("goal_consistency", "commitments")] == "missing"
    assert got[("recovery", "tool_failure")] == "missing"  # failures hit no gold step
    assert got[("recovery", "ambiguity")] == "missing"  # nothing up front to blur
    assert got[("recovery", "goal_shift")] == "missing"  # the task offers no shift
    assert got[("completion", "success, score")] == "ok"  # no gold to play: nothing suspect


def test_a_gold_plan_that_never_succeeds_as_written_is_suspect() -> None:
    def task(seed: int) -> ToolTask:
        return ToolTask(request="Look it up.", details=[Detail("key", "k", "The key is {value}.")],
                        gold_calls=[gold_call("look", key="k")])

    env = make_tool_env(tools=[look], task_generator=task, scorer=lambda t, world: False)
    findings = metric_findings(env, seeds=(0, 1))
    assert _statuses(findings)[("completion", "gold plan")] == "suspect"
    assert "succeeded in none of 2" in _message(findings, "completion", "gold plan")
    # A read result whose id no later step takes: corruption injects but hits nothing.
    assert _statuses(findings)[("recovery", "corruption")] == "missing"
    assert "no corrupted value is one a later gold step takes" in _message(findings, "recovery", "corruption")


class _Kit(Toolkit):
    @tool
    def ping(self) -> str:
        """Ping."""
        return "pong"


class _PlainUser(SimulatedUser):
    """A user that implements nothing beyond talking: no constraints, no noise support."""

    def opening(self) -> str:
        return "Hello."

    def reply(self, message: str, turn: int) -> UserTurn:
        return UserTurn("Okay, thanks for letting me know.")


def _plain_task(seed: int, options: dict[str, Any]) -> Task:
    return Task(family="plain", domain="d", difficulty="easy", split="train", seed=seed, task_id=f"plain/{seed}",
                brief="Ping.", world=None, goal=None, gold={"calls": [{"name": "pong", "arguments": {}}]}, max_turns=3)


def test_a_user_without_noise_support_and_a_gold_of_unknown_tools_are_named() -> None:
    env = AgentEnv(task_generator=_plain_task, toolkit_factory=lambda task: _Kit(),
                   user_factory=lambda task, rng: _PlainUser(), scorer=lambda task, kit: Score(0.0, False))
    findings = metric_findings(env, seeds=(0,))
    got = _statuses(findings)
    assert "does not implement blur()" in _message(findings, "recovery", "ambiguity")
    assert "does not implement plan_goal_shift()" in _message(findings, "recovery", "goal_shift")
    assert got[("goal_consistency", "contradictions")] == "missing"
    assert got[("tool_accuracy", "contradictions")] == "missing"
    assert got[("tool_accuracy", "gold calls")] == "suspect"
    assert "['pong']" in _message(findings, "tool_accuracy", "gold calls")
    assert got[("noise", "typos")] == "ok" and got[("noise", "distractors")] == "ok"
    assert got[("recovery", "latency")] == "missing"  # the probe made no valid call (the gold names none)


class _TextEnv(gym.Env[str, str]):
    """A contract env not built on AgentEnv, with no tools: noise cannot reach it."""

    metadata = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = self.action_space = UnicodeText(1000)
        self._turn = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._turn = 0
        return "hi", {"messages": [], "tools": [], "seed": seed or 0,
                      "task": {"family": "t", "domain": "d", "difficulty": "easy", "split": "train", "id": "t"}}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._turn += 1
        done = self._turn >= 2
        info: dict[str, Any] = {"messages": []}
        if done:
            info["episode_summary"] = {"success": False, "score": 0.0, "turns": 2, "tool_calls": 0, "gold": "not a plan"}
        return "ok", 0.0, done, False, info


def test_an_env_noise_cannot_reach_is_reported_so() -> None:
    findings = metric_findings(_TextEnv(), seeds=(0,))
    got = _statuses(findings)
    assert got[("recovery", "noise")] == "missing"
    assert "not an agentgym AgentEnv" in _message(findings, "recovery", "noise")
    assert got[("tool_accuracy", "tools")] == "missing"
    assert got[("goal_consistency", "commitments")] == "missing"


def test_the_report_renders_every_finding_under_its_metric_and_serialises() -> None:
    findings = (Finding("completion", "success, score", "ok", "fine"),
                Finding("tool_accuracy", "gold calls", "missing", "no gold calls, so tool recall is undefined"),
                Finding("tool_accuracy", "contradictions", "ok", "fine too"))
    report = EnvReport("MyOrg/Shop-v0", CHECKS, findings)
    text = report.render()
    lines = text.splitlines()
    assert lines[0] == f"MyOrg/Shop-v0: env contract ok ({len(CHECKS)} checks)"
    assert lines[1].split()[:3] == ["completion", "ok", "success,"]
    assert lines[2].startswith("  tool accuracy") and "missing" in lines[2] and "tool recall" in lines[2]
    assert lines[3].startswith(" " * 19) and "contradictions" in lines[3]
    assert str(report) == text
    assert not report.ok and report.missing("tool_accuracy") == [findings[1]] and report.missing("completion") == []
    data = report.to_dict()
    assert data["ok"] is False and data["checks"] == list(CHECKS) and len(data["findings"]) == 3


def test_check_agent_env_returns_the_report_and_can_skip_the_probe() -> None:
    report = check_agent_env("AgentRL/Dialog-v0", fresh_process=False, n_garbage=10, metrics=False)
    assert isinstance(report, EnvReport) and report.checks == CHECKS and report.findings == () and report.ok


@pytest.mark.parametrize("env_id", agentgym.ENV_IDS)
def test_every_family_gets_a_finding_for_every_metric(env_id: str) -> None:
    env = gym.make(env_id)
    findings = metric_findings(env, seeds=(0,))
    env.close()
    assert {f.metric for f in findings} == set(METRICS)
    assert all(f.message for f in findings)
