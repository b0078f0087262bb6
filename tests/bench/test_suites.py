"""Suites are frozen, their jobs are well formed, and trivial agents cannot pass them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agentgym.bench.run import run_suite
from agentgym.bench.suites import SUITES, TEST_SEED_BASE, get_suite, load_suite
from agentgym.eval import metrics
from agentgym.eval.records import read_records
from agentgym.eval.runner import AgentSpec

#: sha256 of the episode keys of each published suite: a published suite never changes. A new
#: version of a suite gets a new id (core-v1), never a new hash here.
FROZEN = {
    "core-v0": "9e73e60954c34ba41bb32d79da9459c56ead9508725f08bf331dbc05a269825f",
    "robustness-v0": "275dee06c1e2870f765a24c380dc6cd3e1d4366b1196e8358e8e9925d29cc555",
}


def _digest(suite_id: str) -> str:
    return hashlib.sha256("\n".join(j.key for j in SUITES[suite_id].jobs()).encode()).hexdigest()


@pytest.mark.parametrize("suite_id", sorted(FROZEN))
def test_published_suites_never_change(suite_id: str) -> None:
    assert _digest(suite_id) == FROZEN[suite_id]


def test_core_suite_has_every_family_on_the_test_split_with_enough_episodes() -> None:
    core = SUITES["core-v0"]
    assert set(core.envs) == {"AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"}
    assert set(core.noise) == {"none", "medium"} and core.split == "test"
    # 95% CI half-width under 5 points on success in every (env, noise) cell, at any rate.
    n = core.n_seeds * core.trials
    assert 1.96 * (0.25 / n) ** 0.5 < 0.05
    assert all(j.seed >= TEST_SEED_BASE for j in core.jobs())
    assert len({j.key for j in core.jobs()}) == len(core)


def test_robustness_suite_covers_each_kind_at_each_rate() -> None:
    rob = SUITES["robustness-v0"]
    for kind in ("tool_failure", "corruption", "ambiguity", "goal_shift", "typos"):
        assert {f"{kind}={r}" for r in (0.1, 0.3, 0.5)} <= set(rob.noise)
    assert "none" in rob.noise


def test_toml_suites_are_parsed_strictly(tmp_path: Path) -> None:
    good = tmp_path / "mine.toml"
    good.write_text('[suite]\nid = "mine-v0"\nenvs = ["AgentRL/Dialog-v0"]\nnoise = ["none"]\nn_seeds = 3\n')
    suite = get_suite(str(good))
    assert suite.id == "mine-v0" and len(suite.jobs()) == 3
    bad = tmp_path / "bad.toml"
    bad.write_text('[suite]\nid = "x"\nenvs = []\nnoise = []\nn_seeds = 3\nseeds = 4\n')
    with pytest.raises(ValueError, match="unknown keys"):
        load_suite(bad)
    with pytest.raises(ValueError, match="unknown suite"):
        get_suite("core-v9")


@pytest.mark.parametrize("agent", ["agentgym.agents.trivial:ConstantAgent", "agentgym.agents.trivial:EchoAgent"])
def test_trivial_agents_score_zero_on_core(tmp_path: Path, agent: str) -> None:
    summary = run_suite("core-v0", AgentSpec(agent), tmp_path / "run", workers=2, progress=False)
    records = list(read_records(tmp_path / "run" / "records.jsonl"))
    assert summary.ran == len(SUITES["core-v0"]) == len(records)
    assert metrics.completion(records)["success_rate"]["value"] == 0.0
    assert metrics.completion(records)["mean_score"]["value"] == 0.0


def test_the_oracle_scores_100_percent_on_core_without_noise(tmp_path: Path) -> None:
    core = SUITES["core-v0"]
    jobs = [j for j in core.jobs() if j.noise is None]
    from agentgym.eval.runner import run_jobs

    run_jobs(jobs, AgentSpec("oracle"), tmp_path / "oracle.jsonl", workers=2, progress=False)
    records = list(read_records(tmp_path / "oracle.jsonl"))
    assert len(records) == len(jobs) == 1200
    assert all(r["metrics"]["success"] for r in records)
