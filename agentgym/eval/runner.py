"""The evaluation runner: play an agent over a list of episode jobs and write one record each.

Backends:
- ``process`` (default): a local process pool (env steps are CPU-bound Python); ``workers=1``
  runs in this process.
- ``async``: bounded asyncio concurrency in this process, for agents that wait on I/O (HTTP
  models); an agent with ``async def aact(obs, info)`` is awaited, others run in threads.
- ``ray``: the same jobs as Ray tasks, on ``ray.init(address=...)`` or a local cluster.

Resume: records already in the output file are matched by episode key and not run again; a torn
last line is cut and its episode re-run. Agent faults never abort a run: an agent that raises,
hangs past the per-episode timeout, or returns something other than a string (or an OpenAI
assistant-message dict) is recorded as an agent error for that episode.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from agentgym.eval.records import RecordWriter, episode_key, provenance, read_records, step_summary, trajectory_digest
from agentgym.registration import entry_point_text

__all__ = ["EpisodeJob", "AgentSpec", "run_jobs", "play_job", "AgentTimeout", "RunSummary"]

#: Record fields that may differ between two runs of the same jobs (wall-clock only).
TIMING_FIELDS = ("timing",)


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to play: an env (id and make kwargs), a seed and a trial."""

    env_id: str
    seed: int
    trial: int = 0
    noise: str | None = None
    kwargs: tuple[tuple[str, Any], ...] = ()
    suite: str | None = None

    @functools.cached_property
    def key(self) -> str:
        # Cached (a frozen job's key never changes): resume asks for it three times, the record once.
        extra = ",".join(f"{k}={v}" for k, v in self.kwargs)
        base = episode_key(self.env_id, self.noise, self.seed, self.trial)
        return f"{base}|{extra}" if extra else base

    def make_kwargs(self) -> dict[str, Any]:
        kw = dict(self.kwargs)
        if self.noise not in (None, "none"):
            kw["noise"] = self.noise
        return kw


@dataclass(frozen=True)
class AgentSpec:
    """How to build the agent in any process: a built-in name or ``module:Class``, and kwargs."""

    name: str
    kwargs: tuple[tuple[str, Any], ...] = ()

    def build(self) -> Any:
        from agentgym.agents import make_agent

        return make_agent(self.name, **dict(self.kwargs))


class AgentTimeout(Exception):
    """The agent did not finish the episode within the per-episode timeout."""


@dataclass
class RunSummary:
    """What a run did: episodes run now, skipped (already recorded), and agent errors."""

    path: Path
    ran: int = 0
    skipped: int = 0
    agent_errors: int = 0
    successes: int = 0
    wall_s: float = 0.0
    keys: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Playing one job (in whatever process the backend chose)
# ---------------------------------------------------------------------------------------------
@dataclass
class Slot:
    """The env and agent instances one episode at a time plays with, kept between episodes.

    A process has one slot; the async backend has one per concurrent episode, since envs and
    agents hold one episode's state. (An agent that batches model calls across episodes shares
    its model between instances itself.)
    """

    envs: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = field(default_factory=dict)
    agents: dict[AgentSpec, Any] = field(default_factory=dict)
    #: An env server's URL: envs are `AgentRL/Remote-v0` clients of it (None: in process).
    remote: str | None = None

    def env_for(self, job: EpisodeJob) -> Any:
        import gymnasium as gym

        import agentgym  # noqa: F401  (registers the ids in worker processes)

        kw = job.make_kwargs()
        cache_key = (job.env_id, tuple(sorted(kw.items())))
        env = self.envs.get(cache_key)
        if env is None:
            if self.remote:
                env = gym.make("AgentRL/Remote-v0", url=self.remote, env_id=job.env_id, **kw)
            else:
                env = gym.make(job.env_id, **kw)
            self.envs[cache_key] = env
        return env

    def agent_for(self, spec: AgentSpec) -> Any:
        agent = self.agents.get(spec)
        if agent is None:
            agent = self.agents[spec] = spec.build()
        return agent


#: This process's slot (the process backend plays one episode at a time per process).
_SLOT = Slot()


def spec_dict(env: Any) -> dict[str, Any]:
    """The env spec with its wrapper stack, as plain JSON-able data (``max_episode_steps`` only
    when a `TimeLimit` set it, since it caps the env's turn budget)."""
    spec = env.spec
    if spec is None:
        return {}
    out = {
        "id": spec.id,
        "entry_point": entry_point_text(spec.entry_point),
        "kwargs": {k: v for k, v in spec.kwargs.items() if _jsonable(v)},
        "additional_wrappers": [
            {"name": w.name, "entry_point": w.entry_point, "kwargs": {k: v for k, v in (w.kwargs or {}).items() if _jsonable(v)}}
            for w in spec.additional_wrappers
        ],
    }
    if spec.max_episode_steps is not None:
        out["max_episode_steps"] = spec.max_episode_steps
    return out


def _jsonable(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool, list, tuple, dict))


def _can_alarm() -> bool:
    """SIGALRM can interrupt the agent: the platform has it and this is the main thread."""
    return hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()


class _Deadline:
    """A per-episode wall-clock limit: SIGALRM in a main thread, a checked deadline elsewhere.

    Installing a signal handler, and restoring the previous one, costs about 6 us each (the
    `signal` module's enum conversions), 1% of a short episode: a run holds `_on_alarm` for all
    its episodes (`_alarm_handler`), and each deadline then only sets and clears the timer.
    """

    #: The deadline the alarm is set for (None between episodes).
    armed: "_Deadline | None" = None
    #: True while `_alarm_handler` holds SIGALRM for a run.
    held = False

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._use_alarm = bool(seconds) and _can_alarm()
        # The alarm interrupts the agent at the deadline; a clock read after every act is only
        # needed where there is no alarm.
        self._end = time.monotonic() + seconds if seconds and not self._use_alarm else None

    def __enter__(self) -> "_Deadline":
        if self._use_alarm:
            if not _Deadline.held:
                self._old = signal.signal(signal.SIGALRM, _on_alarm)
            _Deadline.armed = self
            signal.setitimer(signal.ITIMER_REAL, float(self.seconds))
        return self

    def expired(self) -> AgentTimeout:
        return AgentTimeout(f"episode exceeded {self.seconds} s")

    def check(self) -> None:
        if self._end is not None and time.monotonic() > self._end:
            raise self.expired()

    def __exit__(self, *exc: object) -> None:
        if self._use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _Deadline.armed = None
            if not _Deadline.held:
                signal.signal(signal.SIGALRM, self._old)


def _on_alarm(*_: Any) -> None:
    deadline = _Deadline.armed
    if deadline is not None:  # else a late alarm, after its episode ended
        raise deadline.expired()


@contextlib.contextmanager
def _alarm_handler() -> Iterator[None]:
    """Hold SIGALRM's handler for the episodes played inside, so their deadlines only set the
    timer; the previous handler is back afterwards. (Does nothing where SIGALRM cannot be used,
    or when an enclosing run already holds it.)"""
    if _Deadline.held or not _can_alarm():
        yield
        return
    old = signal.signal(signal.SIGALRM, _on_alarm)
    _Deadline.held = True
    try:
        yield
    finally:
        _Deadline.held = False
        signal.signal(signal.SIGALRM, old)


def agent_view(info: dict[str, Any]) -> dict[str, Any]:
    """The info an ordinary agent sees: without the noise log and the episode summary, which
    would tell it where faults were injected."""
    if "noise" not in info and "episode_summary" not in info:
        return info
    # A copy less two keys: about 5x faster than a filtering dict comprehension, same dict.
    view = info.copy()
    view.pop("noise", None)
    view.pop("episode_summary", None)
    return view


class EpisodeState:
    """One episode in progress: the env side of `play_job` and its async twin, and of a board's
    sealed run, where the board steps the env for an agent that acts elsewhere.

    Args:
        job: the episode.
        agent_spec: the agent as the record names it.
        slot: where the env and the agent come from (default: this process's slot).
        env: the env to play in instead of the slot's (a board session's own env).
        agent: the agent instead of the slot's; for a sealed run, the declaration of an agent
            that acts elsewhere (the record keeps its ``config()`` and ``privileged``).
    """

    def __init__(self, job: EpisodeJob, agent_spec: AgentSpec, slot: Slot | None = None, *, env: Any = None,
                 agent: Any = None) -> None:
        slot = slot or _SLOT
        self.job, self.agent_spec = job, agent_spec
        self.env = slot.env_for(job) if env is None else env
        self.agent = slot.agent_for(agent_spec) if agent is None else agent
        self.started, self.t0 = time.time(), time.perf_counter()
        self.actions: list[Any] = []
        self.steps: list[dict[str, Any]] = []
        self.metrics: dict[str, Any] = {}
        self.agent_error: dict[str, Any] | None = None
        #: How the last step ended the episode (both False while it goes on).
        self.terminated = self.truncated = False
        self.obs, self.info = self.env.reset(seed=job.seed, options={"trial": job.trial} if job.trial else None)
        self.reset_obs, self.task = self.obs, self.info.get("task", {})
        self.privileged = bool(getattr(self.agent, "privileged", False))
        if self.privileged:
            self.agent.bind(self.env.unwrapped)

    def view(self) -> dict[str, Any]:
        return self.info if self.privileged else agent_view(self.info)

    def apply(self, action: Any) -> bool:
        """Step the env with the agent's action; True when the episode ended."""
        if not isinstance(action, (str, dict)):
            raise TypeError(f"act() returned {type(action).__name__}, expected str")
        self.actions.append(action)
        self.obs, reward, terminated, truncated, self.info = self.env.step(action)
        self.terminated, self.truncated = bool(terminated), bool(truncated)
        self.steps.append(step_summary(len(self.steps) + 1, float(reward), self.obs, self.info))
        if terminated or truncated:
            self.metrics = self.info["episode_summary"]
            return True
        return False

    def fail(self, exc: BaseException) -> None:
        self.agent_error = {"type": type(exc).__name__, "message": str(exc)[:2000],
                            "traceback": traceback.format_exc(limit=5)[-4000:]}

    def record(self) -> dict[str, Any]:
        job, agent = self.job, self.agent
        usage = getattr(agent, "usage", None)
        return {
            "provenance": provenance(),
            "suite": job.suite,
            "env": {"id": job.env_id, "noise": job.noise, "kwargs": dict(job.kwargs), "spec": spec_dict(self.env)},
            "key": job.key,
            "seed": job.seed,
            "trial": job.trial,
            "agent": {"name": self.agent_spec.name, "config": _agent_config(agent), "privileged": self.privileged},
            "task": self.task,
            "actions": self.actions,
            "steps": self.steps,
            "metrics": self.metrics,
            "trajectory_sha256": trajectory_digest(self.steps, self.reset_obs),
            "agent_error": self.agent_error,
            "usage": usage() if callable(usage) else usage,
            "timing": {"started_at": round(self.started, 3), "wall_s": round(time.perf_counter() - self.t0, 6)},
        }


def play_job(job: EpisodeJob, agent_spec: AgentSpec, timeout_s: float | None = None,
             slot: Slot | None = None) -> dict[str, Any]:
    """Play one job and return its record (never raises for agent faults)."""
    ep = EpisodeState(job, agent_spec, slot)
    try:
        with _Deadline(timeout_s) as deadline:
            ep.agent.reset(ep.obs, ep.view())
            while True:
                action = ep.agent.act(ep.obs, ep.view())
                deadline.check()
                if ep.apply(action):
                    break
    except Exception as exc:  # noqa: BLE001 - agent faults are data here, by design (R3)
        ep.fail(exc)
    return ep.record()


def _agent_config(agent: Any) -> dict[str, Any]:
    config = getattr(agent, "config", None)
    return config() if callable(config) else {}


def _play_many(jobs: list[EpisodeJob], agent_spec: AgentSpec, timeout_s: float | None,
               remote: str | None = None) -> list[dict[str, Any]]:
    _SLOT.remote = remote
    with _alarm_handler():
        return [play_job(j, agent_spec, timeout_s) for j in jobs]


# ---------------------------------------------------------------------------------------------
# Running a list of jobs
# ---------------------------------------------------------------------------------------------
def _pending(jobs: Iterable[EpisodeJob], out: Path) -> tuple[list[EpisodeJob], int]:
    done = {r["key"] for r in read_records(out)}
    todo, seen = [], set()
    for j in jobs:
        if j.key in done or j.key in seen:
            continue
        seen.add(j.key)
        todo.append(j)
    return todo, len(done)


def run_jobs(
    jobs: Iterable[EpisodeJob],
    agent: AgentSpec,
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    backend: str = "process",
    timeout_s: float | None = 300.0,
    concurrency: int = 8,
    ray_address: str | None = None,
    progress: bool = True,
    chunk: int = 8,
    remote: str | None = None,
) -> RunSummary:
    """Play every job not yet in `out` and append its record there.

    Args:
        jobs: the episodes to play (duplicates by key are played once).
        agent: how to build the agent.
        out: the records file (JSONL); an existing one is resumed.
        workers: processes for the ``process`` backend (default: the number of cores).
        backend: ``process``, ``async`` or ``ray``.
        timeout_s: per-episode wall-clock limit for the agent (None: no limit).
        concurrency: concurrent episodes for the ``async`` backend.
        ray_address: the Ray cluster to join (None: start a local one).
        progress: show a progress bar on stderr.
        chunk: episodes per task sent to a worker (amortises inter-process overhead).
        remote: an env server's URL (``agentgym serve``): step the envs there, not in process.

    Returns:
        A `RunSummary`.
    """
    from agentgym.eval.progress import Progress

    out_path = Path(out)
    todo, already = _pending(jobs, out_path)
    summary = RunSummary(path=out_path, skipped=already)
    t0 = time.perf_counter()
    workers = workers or os.cpu_count() or 1
    with RecordWriter(out_path) as writer, Progress(total=len(todo), desc=f"{agent.name}", enabled=progress) as bar:

        def accept(records: list[dict[str, Any]]) -> None:
            for rec in records:
                writer.write(rec)
                summary.ran += 1
                summary.keys.append(rec["key"])
                summary.agent_errors += rec["agent_error"] is not None
                summary.successes += bool(rec["metrics"].get("success", False))
                bar.update(1, success=summary.successes / summary.ran)

        if backend == "process":
            _run_process(todo, agent, timeout_s, workers, chunk, accept, remote)
        elif backend == "async":
            _run_async(todo, agent, timeout_s, concurrency, accept, remote)
        elif backend == "ray":
            _run_ray(todo, agent, timeout_s, ray_address, chunk, accept, remote)
        else:
            raise ValueError(f"unknown backend {backend!r}; use process, async or ray")
    summary.wall_s = time.perf_counter() - t0
    return summary


def _chunks(todo: list[EpisodeJob], size: int) -> list[list[EpisodeJob]]:
    return [todo[i: i + size] for i in range(0, len(todo), size)]


def _run_process(todo: list[EpisodeJob], agent: AgentSpec, timeout_s: float | None, workers: int, chunk: int,
                 accept: Callable[[list[dict[str, Any]]], None], remote: str | None = None) -> None:
    if workers <= 1 or len(todo) <= 1:
        slot = Slot(remote=remote) if remote else None
        with _alarm_handler():
            for job in todo:
                accept([play_job(job, agent, timeout_s, slot)])
        return
    import multiprocessing as mp

    # fork would copy any threads (tqdm's monitor, a user's) into workers; spawn is safe.
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: set[Future[list[dict[str, Any]]]] = set()
        queue = _chunks(todo, max(1, min(chunk, len(todo) // (workers * 4) or 1)))
        while queue or pending:
            while queue and len(pending) < workers * 2:
                pending.add(pool.submit(_play_many, queue.pop(0), agent, timeout_s, remote))
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                accept(fut.result())


def _run_async(todo: list[EpisodeJob], agent: AgentSpec, timeout_s: float | None, concurrency: int,
               accept: Callable[[list[dict[str, Any]]], None], remote: str | None = None) -> None:
    import asyncio

    from agentgym.eval.async_episode import play_job_async

    async def main() -> None:
        slots: asyncio.Queue[Slot] = asyncio.Queue()
        for _ in range(max(1, concurrency)):
            slots.put_nowait(Slot(remote=remote))

        async def one(job: EpisodeJob) -> None:
            slot = await slots.get()
            try:
                accept([await play_job_async(job, agent, timeout_s, slot)])
            finally:
                slots.put_nowait(slot)

        await asyncio.gather(*(one(j) for j in todo))

    asyncio.run(main())


def _run_ray(todo: list[EpisodeJob], agent: AgentSpec, timeout_s: float | None, address: str | None, chunk: int,
             accept: Callable[[list[dict[str, Any]]], None], remote: str | None = None) -> None:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ValueError("the ray backend needs `pip install agentrl-gym[ray]`") from exc
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False, ignore_reinit_error=True)
        started = True
    try:
        task = ray.remote(_play_many)
        refs = [task.remote(c, agent, timeout_s, remote) for c in _chunks(todo, chunk)]
        while refs:
            ready, refs = ray.wait(refs, num_returns=1)
            accept(ray.get(ready[0]))
    finally:
        if started:
            ray.shutdown()


def job_dict(job: EpisodeJob) -> dict[str, Any]:
    """A job as plain data (for logs)."""
    return asdict(job)
