"""The one episode loop: every way of playing an episode plays the same one, and the shared
types load without the runner."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym
from agentgym.agents import make_agent
from agentgym.eval.episode import InstanceCache, play_job, play_job_async, run_episode
from agentgym.eval.jobs import AgentSpec, EpisodeJob
from agentgym.eval.metrics import completion


def _strip(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k != "timing"}


@pytest.mark.parametrize("env_id", agentgym.ENV_IDS)
@pytest.mark.parametrize("agent", ["heuristic", "oracle"])
def test_run_episode_and_play_job_play_the_same_episode(env_id: str, agent: str) -> None:
    env = gym.make(env_id, noise="medium")
    bare = make_agent(agent)
    for seed in range(3):
        result = run_episode(env, bare, seed)
        rec = play_job(EpisodeJob(env_id, seed=seed, noise="medium"), AgentSpec(agent), instances=InstanceCache())
        assert rec["agent_error"] is None
        assert result.actions == rec["actions"]
        assert result.rewards == [s["reward"] for s in rec["steps"]]
        assert result.episode == rec["metrics"]


@pytest.mark.parametrize("env_id", agentgym.ENV_IDS)
def test_the_async_form_writes_the_same_record(env_id: str) -> None:
    jobs = [EpisodeJob(env_id, seed=s, trial=t, noise="light") for s in range(2) for t in range(2)]
    sync = [play_job(j, AgentSpec("heuristic"), instances=InstanceCache()) for j in jobs]

    async def main() -> list[dict[str, Any]]:
        instances = InstanceCache()
        return [await play_job_async(j, AgentSpec("heuristic"), 60.0, instances) for j in jobs]

    assert [_strip(r) for r in asyncio.run(main())] == [_strip(r) for r in sync]


def test_an_agent_that_raises_ends_play_job_as_an_agent_error_and_run_episode_with_the_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    spec = AgentSpec("fake_agents:RaisingAgent")  # raises on the second turn of an odd seed
    rec = play_job(EpisodeJob("AgentRL/Dialog-v0", seed=1), spec, instances=InstanceCache())
    assert rec["agent_error"]["type"] == "RuntimeError" and rec["metrics"] == {}
    with pytest.raises(RuntimeError):
        run_episode(gym.make("AgentRL/Dialog-v0"), spec.build(), 1)


def test_suites_and_the_verifier_load_the_jobs_without_the_runner() -> None:
    code = ("import sys, agentgym.bench.suites, agentgym.leaderboard.verify, agentgym.eval.jobs; "
            "print([m for m in ('agentgym.eval.runner', 'agentgym.eval.backends', 'agentgym.eval.episode') "
            "if m in sys.modules])")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_agentgym_run_scores_with_the_metrics_of_eval() -> None:
    done = subprocess.run([sys.executable, "-m", "agentgym.cli", "run", "AgentRL/ToolUse-v0", "--episodes", "12",
                           "--seed", "5", "--json"], capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout)
    records = [play_job(EpisodeJob("AgentRL/ToolUse-v0", seed=5 + i), AgentSpec("heuristic"), instances=InstanceCache())
               for i in range(12)]
    comp = completion(records)
    assert summary["success_rate"] == comp["success_rate"]["value"]
    assert summary["success_ci"] == comp["success_rate"]["ci"]
    assert summary["mean_score"] == comp["mean_score"]["value"]
    assert summary["episodes"] == 12 and summary["agent_errors"] == 0


def test_an_instance_cache_makes_an_env_once_per_job_spelling_and_its_spec_once() -> None:
    from agentgym.eval.records import spec_dict

    instances = InstanceCache()
    job = EpisodeJob("AgentRL/Dialog-v0", seed=0, noise="medium", kwargs=(("split", "test"),))
    env = instances.env_for(job)
    assert instances.env_for(EpisodeJob("AgentRL/Dialog-v0", seed=5, noise="medium", kwargs=(("split", "test"),))) is env
    plain = instances.env_for(EpisodeJob("AgentRL/Dialog-v0", seed=0))
    assert instances.env_for(EpisodeJob("AgentRL/Dialog-v0", seed=0, noise="none")) is plain is not env
    assert len(instances.envs) == 2
    first, second = (play_job(EpisodeJob("AgentRL/Dialog-v0", seed=s, noise="medium", kwargs=(("split", "test"),)),
                              AgentSpec("heuristic"), instances=instances) for s in range(2))
    assert first["env"]["spec"] == spec_dict(env) and first["env"]["spec"] is second["env"]["spec"]
    instances.close()
    assert instances.env_for(job) is not env
