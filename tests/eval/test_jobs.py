"""`EpisodeJob` and its key: a frozen dataclass whose key is computed once, as before."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from agentgym.eval.jobs import EpisodeJob, episode_key


def test_a_jobs_key_is_the_episode_key_with_its_make_kwargs() -> None:
    assert EpisodeJob("AgentRL/Dialog-v0", 3).key == episode_key("AgentRL/Dialog-v0", None, 3, 0)
    job = EpisodeJob("AgentRL/ToolUse-v0", seed=4, trial=1, noise="medium",
                     kwargs=(("difficulty", "hard"), ("split", "test"), ("n", 2)), suite="core-v0")
    assert job.key == "AgentRL/ToolUse-v0|noise=medium|seed=4|trial=1|difficulty=hard,split=test,n=2"
    assert job.key is job.key  # computed once


def test_a_job_is_a_frozen_dataclass_of_its_six_fields() -> None:
    job = EpisodeJob(env_id="AgentRL/Dialog-v0", seed=1, trial=2, noise=None, kwargs=(("split", "test"),), suite="s")
    assert [f.name for f in dataclasses.fields(job)] == ["env_id", "seed", "trial", "noise", "kwargs", "suite"]
    assert repr(job) == ("EpisodeJob(env_id='AgentRL/Dialog-v0', seed=1, trial=2, noise=None, "
                         "kwargs=(('split', 'test'),), suite='s')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.seed = 3  # type: ignore[misc]
    twin = EpisodeJob("AgentRL/Dialog-v0", 1, 2, None, (("split", "test"),), "s")
    assert job == twin and hash(job) == hash(twin) and {job: 1}[twin] == 1
    _ = job.key  # a key kept in the job changes neither its equality nor its copies
    assert job == twin and pickle.loads(pickle.dumps(job)) == job
    assert dataclasses.replace(job, seed=5).key == episode_key("AgentRL/Dialog-v0", None, 5, 2) + "|split=test"
    assert dataclasses.asdict(job) == {"env_id": "AgentRL/Dialog-v0", "seed": 1, "trial": 2, "noise": None,
                                       "kwargs": (("split", "test"),), "suite": "s"}
