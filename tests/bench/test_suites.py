"""Suites are frozen, their jobs are well formed, and trivial agents cannot pass them."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

import pytest

from agentgym.bench.run import run_suite
from agentgym.bench.suites import PRIMARY_METRICS, SUITES, TEST_SEED_BASE, Suite, get_suite, load_suite
from agentgym.eval import metrics
from agentgym.eval.records import read_records
from agentgym.eval.runner import AgentSpec

#: sha256 of the episode keys of each published suite: a published suite never changes. A new
#: version of a suite gets a new id (core-v1), never a new hash here.
FROZEN = {
    "core-v0": "9e73e60954c34ba41bb32d79da9459c56ead9508725f08bf331dbc05a269825f",
    "robustness-v0": "275dee06c1e2870f765a24c380dc6cd3e1d4366b1196e8358e8e9925d29cc555",
    "hard-v0": "bd3514d51ed2c1610bd2f19e58f03443b693cfb0c8b7af6e0a20ac32cd8dcc72",
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


def test_hard_suite_is_core_layout_on_the_hard_tier_of_every_family() -> None:
    import gymnasium as gym

    core, hard = SUITES["core-v0"], SUITES["hard-v0"]
    assert (hard.envs, hard.noise, hard.split, hard.seeds, hard.trials) == (
        core.envs, core.noise, core.split, core.seeds, core.trials)
    assert dict(hard.kwargs) == {"difficulty": "hard"} and not core.kwargs and hard.current
    assert {dict(j.kwargs)["difficulty"] for j in hard.jobs()} == {"hard"}
    # The tasks it deals are the hard tier's, in every family and noise setting.
    for job in hard.jobs()[::hard.n_seeds * hard.trials]:
        env = gym.make(job.env_id, **job.make_kwargs())
        _, info = env.reset(seed=job.seed)
        env.close()
        assert (info["task"]["difficulty"], info["task"]["split"]) == ("hard", "test"), job.key


def test_the_readme_lists_every_built_in_suite() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    listed = readme[readme.index("The built-in suites"):]
    listed = listed[:listed.index("\n\n")]
    assert set(re.findall(r"`([a-z]+-v\d+)`", listed)) == set(SUITES)


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


_GOOD = {"id": '"mine-v0"', "envs": '["AgentRL/Dialog-v0"]', "noise": '["none"]', "n_seeds": "3"}


def _suite_file(tmp_path: Path, **fields: str) -> Path:
    body = {**_GOOD, **fields}
    path = tmp_path / "suite.toml"
    path.write_text("[suite]\n" + "".join(f"{k} = {v}\n" for k, v in body.items() if v is not None), "utf-8")
    return path


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"envs": '"AgentRL/Dialog-v0"'}, "envs must be a list"),
        ({"envs": "[]"}, "envs must be a list"),
        ({"envs": '["AgentRL/Dialog-v0", "AgentRL/Dialog-v0"]'}, "twice"),
        ({"envs": "[1]"}, "envs must be a list"),
        ({"noise": '["tool_failure=2"]'}, "noise"),
        ({"noise": '["nonsense"]'}, "unknown noise kind"),
        ({"n_seeds": "true"}, "n_seeds must be an integer"),
        ({"n_seeds": "3.0"}, "n_seeds must be an integer"),
        ({"n_seeds": "0"}, "n_seeds must be an integer"),
        ({"n_seeds": "1000000000000"}, "n_seeds must be an integer"),
        ({"n_seeds": "600000", "envs": '["AgentRL/Dialog-v0", "AgentRL/ToolUse-v0"]'}, "over the limit"),
        ({"trials": "0"}, "trials must be an integer"),
        ({"trials": '"2"'}, "trials must be an integer"),
        ({"seed_base": "-1"}, "seed_base must be an integer"),
        ({"seed_base": str(2**63 - 2)}, "seed_base must be an integer"),
        ({"split": '"validation"'}, "split must be one of"),
        ({"id": "3"}, "id must be"),
        ({"id": '""'}, "id must be"),
        ({"id": '"../../etc"'}, "id must be letters"),
        ({"id": '"core-v0"'}, "built-in suite"),
        ({"description": "[1, 2]"}, "description must be"),
        ({"primary": '"success; drop"'}, "primary must be one of"),
        ({"primary": '"recovery_median"'}, "primary must be one of"),  # lower is better: not a rank
        ({"primary": '"mean_score"'}, "primary must be one of"),  # not a summary metric
        ({"kwargs": '{split = "train"}'}, "not in kwargs"),
        ({"kwargs": '{noise = "heavy"}'}, "not in kwargs"),
        ({"kwargs": "{difficulty = [1]}"}, "kwargs.difficulty: "),
        ({"kwargs": "{max_turns = nan}"}, "kwargs.max_turns: "),
        ({"kwargs": "{max_turns = 1e9}"}, "kwargs.max_turns: "),
        ({"kwargs": "{max_turns = 1000000000}"}, "kwargs.max_turns: "),
        ({"kwargs": "{when = 1979-05-27}"}, "kwargs.when: not an env argument a suite may set"),
        ({"kwargs": '{scorer = "x"}'}, "kwargs.scorer: not an env argument a suite may set"),
        ({"kwargs": '{env_entry_point = "os:system"}'}, "kwargs.env_entry_point: not an env argument"),
        ({"kwargs": '{user = "agentgym.agents.oracle:OracleAgent"}'}, "kwargs.user: not an env argument"),
        ({"envs": '["AgentRL/Nope-v0"]'}, "unknown environment 'AgentRL/Nope-v0'"),
        ({"envs": '["CartPole-v1"]'}, "'CartPole-v1' is not an agentgym env"),
        ({"envs": '["AgentRL/Remote-v0"]'}, "is not an agentgym env"),
        ({"description": "[" * 20_000 + "]" * 20_000}, "nested too deep"),
        ({"kwargs": "{a = " + "[" * 20_000 + "]" * 20_000 + "}"}, "nested too deep"),
    ],
)
def test_suite_files_are_parsed_strictly(tmp_path: Path, fields: dict[str, str], needle: str) -> None:
    with pytest.raises(ValueError, match=re.escape(needle)):
        load_suite(_suite_file(tmp_path, **fields))


def test_suite_files_have_a_size_budget_and_must_be_utf8_toml(tmp_path: Path) -> None:
    big = _suite_file(tmp_path, description='"' + "d" * 900 + '"')
    assert load_suite(big).description == "d" * 900
    huge = tmp_path / "huge.toml"
    with open(huge, "wb") as f:  # 64 MiB of comments: refused without being read whole
        f.write(b"[suite]\n")
        f.write(b"#" * (64 * 2**20) + b"\n")
    start = time.perf_counter()
    with pytest.raises(ValueError, match="at most 65536 bytes"):
        load_suite(huge)
    assert time.perf_counter() - start < 0.5
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(_suite_file(tmp_path).read_bytes().replace(b"mine-v0", b"mine\xe9-v0"))
    with pytest.raises(ValueError, match="not UTF-8"):
        load_suite(latin1)
    broken = tmp_path / "broken.toml"
    broken.write_text("[suite]\nid = \n", "utf-8")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_suite(broken)
    dup = tmp_path / "dup.toml"
    dup.write_text('[suite]\nid = "a"\nid = "b"\n', "utf-8")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_suite(dup)


def test_a_valid_suite_file_round_trips(tmp_path: Path) -> None:
    path = _suite_file(tmp_path, noise='["none", "light", "tool_failure=0.2"]', trials="2", seed_base="5",
                       kwargs='{difficulty = "hard", max_turns = 256}', primary='"score"')
    suite = load_suite(path)
    assert (suite.noise, suite.trials, suite.seed_base, suite.primary) == (
        ("none", "light", "tool_failure=0.2"), 2, 5, "score")
    assert len(suite.jobs()) == len(suite) == 3 * 2 * 3
    assert {dict(j.kwargs)["difficulty"] for j in suite.jobs()} == {"hard"}


def test_every_primary_metric_is_a_summary_aggregate_the_board_ranks() -> None:
    from agentgym.eval.episode import play_job
    from agentgym.leaderboard.scoring import summarise_submission

    suite = Suite(id="t", description="", envs=("AgentRL/Dialog-v0",), noise=("none",), n_seeds=2)
    records = [play_job(job, AgentSpec("heuristic")) for job in suite.jobs()]
    for primary in PRIMARY_METRICS:
        summary = summarise_submission(records, Suite(**{**suite.__dict__, "primary": primary}))
        assert isinstance(summary[primary], dict) and "value" in summary[primary], primary


def test_a_hostile_suite_file_is_one_line_from_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    deep = _suite_file(tmp_path, description="[" * 20_000 + "]" * 20_000)
    done = subprocess.run([sys.executable, "-m", "agentgym.cli", "bench", str(deep), "--agent", "random"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "nested too deep" in done.stderr, done.stderr


def test_suites_are_read_only_when_shared() -> None:
    core = SUITES["core-v0"]
    with pytest.raises(TypeError):
        core.kwargs["difficulty"] = "easy"  # type: ignore[index]
    assert isinstance(core.envs, tuple) and isinstance(core.noise, tuple)
    # A suite made from lists and a dict keeps copies: editing them later changes nothing.
    envs, kwargs = ["AgentRL/Dialog-v0"], {"difficulty": "hard"}
    mine = Suite(id="x-v0", description="", envs=envs, noise=["none"], n_seeds=1, kwargs=kwargs)  # type: ignore[arg-type]
    envs.append("AgentRL/ToolUse-v0")
    kwargs["difficulty"] = "easy"
    assert mine.envs == ("AgentRL/Dialog-v0",) and dict(mine.kwargs) == {"difficulty": "hard"}
