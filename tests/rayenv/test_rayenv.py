"""Env sessions as Ray actors on a local two-node cluster (`ray.cluster_utils.Cluster`): the
actors spread over both nodes, `RayEnv` and `RayVectorEnv` play the in-process episodes, the
ray backend of `agentgym eval` gives the records of the process backend (its tasks joining the
cluster on their own, or stepping their envs on the actors), and nothing is left open afterwards.

Every test here shares the module's one cluster: starting one takes most of this file's time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

ray = pytest.importorskip("ray")

from agentgym.agents import make_agent  # noqa: E402
from agentgym.eval.jobs import AgentSpec, EpisodeJob  # noqa: E402
from agentgym.eval.records import read_records  # noqa: E402
from agentgym.eval.runner import run_jobs  # noqa: E402
from agentgym.rayenv.client import RayEnv  # noqa: E402
from agentgym.rayenv.pool import EnvActorPool  # noqa: E402
from agentgym.rayenv.vector import RayVectorEnv  # noqa: E402

pytestmark = pytest.mark.ray
DIALOG = "AgentRL/Dialog-v0"


@pytest.fixture(scope="module")
def nodes() -> Iterator[Any]:
    """The module's two-node cluster, which this process may not have joined (see `cluster`)."""
    from ray.cluster_utils import Cluster

    started = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    started.add_node(num_cpus=2, resources={"env_node": 2})
    try:
        yield started
    finally:
        ray.shutdown()
        started.shutdown()


@pytest.fixture
def cluster(nodes: Any) -> Any:
    """The module's cluster, joined by this process (a test of the eval backend's own join leaves
    it unjoined, so each test joins if it must)."""
    if not ray.is_initialized():
        ray.init(address=nodes.address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    return nodes


def _canonical(*parts: Any) -> str:
    return json.dumps(parts, sort_keys=True)


def _play(env: Any, seed: int) -> list[str]:
    agent = make_agent("heuristic")
    obs, info = env.reset(seed=seed)
    out = [_canonical(obs, info)]
    agent.reset(obs, info)
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        out.append(_canonical(obs, reward, terminated, truncated, info))
        if terminated or truncated:
            return out


def _strip(rec: dict[str, Any]) -> dict[str, Any]:
    """A record without its wall-clock fields (the only ones allowed to differ between runs)."""
    return {k: v for k, v in rec.items() if k != "timing"}


def test_eval_ray_backend_joins_the_cluster_and_gives_identical_records(nodes: Any, tmp_path: Path) -> None:
    """The ray backend's tasks play the process backend's records; a process that has not joined
    a cluster joins the one it is given and leaves it when done."""
    if ray.is_initialized():
        ray.shutdown()  # an earlier test's join: the backend must make its own
    jobs = [EpisodeJob(DIALOG, seed=s, trial=t) for s in range(10) for t in range(2)]
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    run_jobs(jobs, AgentSpec("heuristic"), local, workers=1, progress=False)
    run_jobs(jobs, AgentSpec("heuristic"), remote, backend="ray", ray_address=nodes.address, progress=False)
    assert not ray.is_initialized()

    def by_key(path: Path) -> dict[str, dict[str, Any]]:
        recs = list(read_records(path))
        assert len(recs) == len({r["key"] for r in recs}), "an episode was recorded twice"
        return {r["key"]: _strip(r) for r in recs}

    assert by_key(local) == by_key(remote)


def test_ray_env_actors_on_two_nodes_play_the_in_process_episodes(cluster: Any) -> None:
    pool = EnvActorPool(size=2, num_cpus=0.5)
    try:
        assert len(set(pool.nodes())) == 2  # spread: one actor on each node
        for noise in (None, "medium"):
            envs = [RayEnv(DIALOG, pool, noise=noise) for _ in range(4)]
            for seed, env in enumerate(envs):
                here = gym.make(DIALOG, **({"noise": noise} if noise else {}))
                assert _play(env, 40 + seed) == _play(here, 40 + seed)
            assert pool.sessions() == 4
            for env in envs:
                env.close()
                env.close()  # twice is once
        assert pool.sessions() == 0
    finally:
        pool.shutdown()


def test_a_vector_env_over_the_pool_steps_every_env_as_in_process(cluster: Any) -> None:
    pool = EnvActorPool(size=2, num_cpus=0.5, resources={"env_node": 0.5})  # only the node that offers it
    vec = RayVectorEnv(DIALOG, 4, pool)
    try:
        assert len(set(pool.nodes())) == 1
        obs, infos = vec.reset(seed=100)
        agents = [make_agent("heuristic") for _ in range(4)]
        here = [gym.make(DIALOG) for _ in range(4)]
        expected = [h.reset(seed=100 + i) for i, h in enumerate(here)]
        assert [_canonical(o, i) for o, i in zip(obs, infos)] == [_canonical(o, i) for o, i in expected]
        for agent, o, info in zip(agents, obs, infos):
            agent.reset(o, info)
        done = [False] * 4
        for _ in range(40):
            if all(done):
                break
            actions = [a.act(o, i) if not d else "" for a, o, i, d in zip(agents, obs, infos, done)]
            stepped = vec.step(actions)
            obs, infos = stepped[0], stepped[4]
            for k in range(4):
                if done[k]:
                    continue
                want = here[k].step(actions[k])
                got = (obs[k], float(stepped[1][k]), bool(stepped[2][k]), bool(stepped[3][k]), infos[k])
                assert _canonical(*got) == _canonical(*want)
                done[k] = bool(want[2] or want[3])
        assert all(done)
        assert pool.sessions() == 4
    finally:
        vec.close()
        assert pool.sessions() == 0
        pool.shutdown()


def test_eval_ray_backend_steps_envs_on_actors_to_the_same_records(cluster: Any, tmp_path: Path) -> None:
    jobs = [EpisodeJob(DIALOG, seed=s, noise="medium") for s in range(6)]
    local, actors = tmp_path / "local.jsonl", tmp_path / "actors.jsonl"
    run_jobs(jobs, AgentSpec("heuristic"), local, workers=1, progress=False)
    run_jobs(jobs, AgentSpec("heuristic"), actors, backend="ray", remote="ray", chunk=3, progress=False)

    def by_key(path: Path) -> dict[str, str]:
        return {r["key"]: r["trajectory_sha256"] for r in read_records(path)}

    assert by_key(local) == by_key(actors) and len(by_key(local)) == 6


def test_a_trainer_adapter_session_plays_on_the_actors(cluster: Any) -> None:
    from agentgym.integrations._tasks import EnvSession, TaskSpec

    session = EnvSession("ray")
    spec = TaskSpec(env_id=DIALOG, seed=7)
    obs, info = session.reset(spec)
    assert isinstance(session._env, RayEnv)
    assert _canonical(obs, info) == _canonical(*gym.make(DIALOG).reset(seed=7))
    session.close()
