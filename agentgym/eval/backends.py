"""Where the episodes of a run are played: each backend plays a list of jobs with `play_job` (or
`play_job_async`) and hands the records to a callback as they finish.

- `play_sequential`: one after another in this process (``agentgym run``, ``workers=1``).
- `play_in_processes`: a local process pool (env steps are CPU-bound Python), jobs sent in chunks.
- `play_concurrently`: bounded asyncio concurrency in this process, for agents that wait on I/O
  (HTTP models); an agent with ``async def aact(obs, info)`` is awaited, others run in threads.
- `play_on_ray`: the same chunks as Ray tasks, on ``ray.init(address=...)`` or a local cluster;
  with ``remote="ray"`` (`RAY_ACTORS`) the tasks step their envs on a pool of env actors spread
  over the cluster's CPU nodes (`agentgym.rayenv`), as a trainer on Ray places its envs.

The callback gets the records in the order episodes finish, which is not the jobs' order once
episodes run side by side; `agentgym.eval.runner.run_jobs` writes them and keeps the tally.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable

from agentgym.eval.deadline import alarm_handler
from agentgym.eval.episode import InstanceCache, play_job, play_job_async, process_instances
from agentgym.eval.jobs import AgentSpec, EpisodeJob

__all__ = ["Accept", "RAY_ACTORS", "play_concurrently", "play_in_processes", "play_on_ray", "play_sequential"]

#: Takes finished records (one or a chunk's worth).
Accept = Callable[[list[dict[str, Any]]], None]
#: The `remote` of the ray backend that steps the envs on Ray env actors, not on an env server.
RAY_ACTORS = "ray"


@dataclass
class _ActorInstances(InstanceCache):
    """Instances whose envs live on the actors of an `agentgym.rayenv.pool.EnvActorPool`."""

    pool: Any = None

    def env_for(self, job: EpisodeJob) -> Any:
        kw = job.make_kwargs()
        cache_key = (job.env_id, tuple(sorted(kw.items())))
        env = self.envs.get(cache_key)
        if env is None:
            from agentgym.rayenv.client import RayEnv

            env = self.envs[cache_key] = RayEnv(job.env_id, self.pool, **kw)
        return env


#: This process's actor instances (a Ray worker plays one chunk at a time with them).
_ACTOR_INSTANCES: list[_ActorInstances] = []


def play_sequential(todo: list[EpisodeJob], agent: AgentSpec, timeout_s: float | None, accept: Accept, *,
                    remote: str | None = None, instances: InstanceCache | None = None) -> None:
    """Play the jobs one after another in this process, with `instances` (default: this
    process's, or fresh ones for the env server `remote`)."""
    instances = instances or (InstanceCache(remote=remote) if remote else None)
    with alarm_handler():
        for job in todo:
            accept([play_job(job, agent, timeout_s, instances)])


def _play_chunk(jobs: list[EpisodeJob], agent_spec: AgentSpec, timeout_s: float | None,
                remote: str | None = None, pool: Any = None) -> list[dict[str, Any]]:
    """A worker's task: play a chunk of jobs with the worker process's instances (its envs on
    `pool`'s actors when given), return the records."""
    if pool is not None:
        if not _ACTOR_INSTANCES or _ACTOR_INSTANCES[0].pool.actors != pool.actors:
            _ACTOR_INSTANCES[:] = [_ActorInstances(pool=pool)]
        instances = _ACTOR_INSTANCES[0]
    else:
        instances = process_instances(remote)
    with alarm_handler():
        return [play_job(j, agent_spec, timeout_s, instances) for j in jobs]


def _chunks(todo: list[EpisodeJob], size: int) -> list[list[EpisodeJob]]:
    return [todo[i: i + size] for i in range(0, len(todo), size)]


def play_in_processes(todo: list[EpisodeJob], agent: AgentSpec, timeout_s: float | None, accept: Accept, *,
                      workers: int, chunk: int, remote: str | None = None) -> None:
    """Play the jobs in a pool of `workers` processes, in chunks of up to `chunk` jobs (one worker
    or one job: `play_sequential`)."""
    if workers <= 1 or len(todo) <= 1:
        play_sequential(todo, agent, timeout_s, accept, remote=remote)
        return
    import multiprocessing as mp

    # fork would copy any threads (tqdm's monitor, a user's) into workers; spawn is safe.
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: set[Future[list[dict[str, Any]]]] = set()
        queue = _chunks(todo, max(1, min(chunk, len(todo) // (workers * 4) or 1)))
        while queue or pending:
            while queue and len(pending) < workers * 2:
                pending.add(pool.submit(_play_chunk, queue.pop(0), agent, timeout_s, remote))
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                accept(fut.result())


def play_concurrently(todo: list[EpisodeJob], agent: AgentSpec, timeout_s: float | None, accept: Accept, *,
                      concurrency: int, remote: str | None = None) -> None:
    """Play up to `concurrency` jobs at once as asyncio tasks, each with instances of its own."""
    import asyncio

    async def main() -> None:
        idle: asyncio.Queue[InstanceCache] = asyncio.Queue()
        for _ in range(max(1, concurrency)):
            idle.put_nowait(InstanceCache(remote=remote))

        async def one(job: EpisodeJob) -> None:
            instances = await idle.get()
            try:
                accept([await play_job_async(job, agent, timeout_s, instances)])
            finally:
                idle.put_nowait(instances)

        await asyncio.gather(*(one(j) for j in todo))

    asyncio.run(main())


def play_on_ray(todo: list[EpisodeJob], agent: AgentSpec, timeout_s: float | None, accept: Accept, *,
                address: str | None, chunk: int, remote: str | None = None) -> None:
    """Play the jobs in chunks of `chunk` as Ray tasks, on the cluster at `address` (None: a
    local one, started and shut down here when Ray is not already initialised). With `remote`
    `RAY_ACTORS`, the envs step on a pool of env actors made here (half the cluster's CPUs, the
    tasks' agents on the rest) and killed at the end."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ValueError("the ray backend needs `pip install agentrl-gym[ray]`") from exc
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False, ignore_reinit_error=True)
        started = True
    pool = None
    try:
        if remote == RAY_ACTORS:
            from agentgym.rayenv.pool import EnvActorPool

            cpus = ray.cluster_resources().get("CPU", 1)
            pool, remote = EnvActorPool(size=max(1, int(cpus // 2)), num_cpus=0.5), None
        task = ray.remote(_play_chunk)
        refs = [task.remote(c, agent, timeout_s, remote, pool) for c in _chunks(todo, chunk)]
        while refs:
            ready, refs = ray.wait(refs, num_returns=1)
            accept(ray.get(ready[0]))
    finally:
        if pool is not None:
            pool.shutdown()
        if started:
            ray.shutdown()
