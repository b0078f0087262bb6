"""The episode loop: one agent plays one episode of one env, in a sync and an async form.

Every episode agentgym plays goes through `play` (or `play_async`, its twin for agents that wait
on I/O): `run_episode` (a bare env and agent, for scripts and tests), `play_job` and
`play_job_async` (an `EpisodeJob`, returning its record; the backends of `agentgym.eval.backends`
run these), and a board's sealed run (`agentgym.leaderboard.sealed`), which steps an
`EpisodeState` itself for an agent that acts elsewhere.

What the loop does, in both forms: the agent's ``reset`` with the reset's observation, then
``act`` and ``env.step`` until the episode terminates or is truncated, then the env's summary
(`ended_summary`: from the last info, or asked of the env when a wrapper truncated the episode
without the env knowing). An ordinary agent sees `agent_view` of each info (no noise log, no
episode summary); a privileged one (the oracle) sees the whole info and is bound to
``env.unwrapped`` after the reset.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from agentgym.core.plain_turn import recorded_turn, stepped_turn
from agentgym.eval.deadline import AgentTimeout, Deadline
from agentgym.eval.jobs import AgentSpec, EpisodeJob
from agentgym.eval.record_budget import MAX_RECORD_BYTES, RecordBudget
from agentgym.eval.records import provenance, spec_dict, step_summary, trajectory_digest

__all__ = ["Episode", "EpisodeResult", "EpisodeState", "InstanceCache", "agent_view", "ended_summary", "play",
           "play_async", "play_job", "play_job_async", "process_instances", "run_episode"]


def agent_view(info: dict[str, Any]) -> dict[str, Any]:
    """The info an ordinary agent sees: without the noise log and the episode summary, which
    would tell it where faults were injected."""
    if "noise" not in info and "episode_summary" not in info:
        return info  # the summary is under both of its keys or neither
    # A copy less a few keys is cheaper than a filtering dict comprehension, and the same dict.
    view = info.copy()
    view.pop("noise", None)
    view.pop("episode_summary", None)
    view.pop("episode", None)
    return view


def ended_summary(env: Any, info: dict[str, Any]) -> dict[str, Any] | None:
    """The summary of an episode that has just ended, given the env and the last step's info.

    The env's own end puts it in ``info["episode_summary"]``. A wrapper that ended the episode
    in its own step (Gymnasium's `TimeLimit`) did so without the env knowing, so the summary is
    asked of the env (`agentgym.core.env.AgentEnv.episode_summary`). None for an env that keeps
    no summary.
    """
    summary = info.get("episode_summary")
    if summary is None:
        ask = getattr(getattr(env, "unwrapped", env), "episode_summary", None)
        if callable(ask):
            summary = ask()
    return summary


# ---------------------------------------------------------------------------------------------
# Where an episode's env and agent come from
# ---------------------------------------------------------------------------------------------
@dataclass
class InstanceCache:
    """The env and agent instances one episode at a time plays with, kept between episodes.

    A worker process has one per env server (`process_instances`); the async backend has one per
    concurrent episode, since envs and agents hold one episode's state. (An agent that batches
    model calls across episodes shares its model between its own instances.)
    """

    envs: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = field(default_factory=dict)
    agents: dict[AgentSpec, Any] = field(default_factory=dict)
    #: An env server's URL: envs are `AgentRL/Remote-v0` clients of it (None: in process).
    remote: str | None = None
    #: `envs` by a job's (env id, noise, kwargs), and each env's spec (by its id, with the env).
    _by_fields: dict[tuple[Any, ...], Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _specs: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict, init=False, repr=False,
                                                          compare=False)

    def env_for(self, job: EpisodeJob) -> Any:
        """The env for the job's id and make kwargs, made on first use."""
        # A job's own fields find its env without building its make kwargs (jobs that differ
        # only in how they spell them, e.g. noise "none" and None, find the same env below).
        fields = (job.env_id, job.noise, job.kwargs)
        env = self._by_fields.get(fields)
        if env is not None:
            return env
        kw = job.make_kwargs()
        cache_key = (job.env_id, tuple(sorted(kw.items())))
        env = self.envs.get(cache_key)
        if env is None:
            import gymnasium as gym

            import agentgym  # noqa: F401  (registers the ids in worker processes)

            if self.remote:
                env = gym.make("AgentRL/Remote-v0", url=self.remote, env_id=job.env_id, **kw)
            else:
                env = gym.make(job.env_id, **kw)
            self.envs[cache_key] = env
        self._by_fields[fields] = env
        return env

    def spec_of(self, env: Any) -> dict[str, Any]:
        """`records.spec_dict` of one of these envs, built once: an env's spec (its id, kwargs
        and wrapper stack) is fixed when it is made, so the records of its episodes share one."""
        got = self._specs.get(id(env))
        if got is None or got[0] is not env:
            got = self._specs[id(env)] = (env, spec_dict(env))
        return got[1]

    def agent_for(self, spec: AgentSpec) -> Any:
        """The agent for `spec`, built on first use."""
        agent = self.agents.get(spec)
        if agent is None:
            agent = self.agents[spec] = spec.build()
        return agent

    def close(self) -> None:
        """Close the envs (the cache can be used again: it makes them anew)."""
        for env in self.envs.values():
            env.close()
        self.envs.clear()
        self._by_fields.clear()
        self._specs.clear()


#: This process's instance caches, by env server (None: envs in process).
_PROCESS_INSTANCES: dict[str | None, InstanceCache] = {}


def process_instances(remote: str | None = None) -> InstanceCache:
    """This process's instances for envs of `remote` (None: in process), made on first use; a
    process plays one episode at a time with them."""
    instances = _PROCESS_INSTANCES.get(remote)
    if instances is None:
        instances = _PROCESS_INSTANCES[remote] = InstanceCache(remote=remote)
    return instances


# ---------------------------------------------------------------------------------------------
# One episode in progress
# ---------------------------------------------------------------------------------------------
class Episode:
    """One episode in progress: the env reset from a seed, the agent, the actions and rewards.

    Args:
        env: the env (reset here, with `seed` and `options`).
        agent: the agent; bound to ``env.unwrapped`` when it is ``privileged``.
        seed: the reset's seed.
        options: the reset's options.
    """

    def __init__(self, env: Any, agent: Any, seed: int | None, options: dict[str, Any] | None = None) -> None:
        self.env, self.agent = env, agent
        self.actions: list[Any] = []
        self.rewards: list[float] = []
        #: The env's ``info["episode_summary"]`` once the episode ended (empty before).
        self.summary: dict[str, Any] = {}
        #: How the last step ended the episode (both False while it goes on).
        self.terminated = self.truncated = False
        self.obs, self.info = env.reset(seed=seed, options=options)
        #: The seed the env says it reset with (the one asked for when it does not say).
        self.seed = self.info.get("seed", seed)
        self.privileged = bool(getattr(agent, "privileged", False))
        if self.privileged:
            agent.bind(env.unwrapped)

    def view(self) -> dict[str, Any]:
        """The info the agent sees now (see `agent_view`)."""
        return self.info if self.privileged else agent_view(self.info)

    def apply(self, action: Any) -> bool:
        """Step the env with the agent's action; True when the episode ended.

        The action is kept, and stepped, as plain JSON (`agentgym.core.plain_turn`): what is
        recorded is what was played, and replays the same.

        Raises:
            TypeError: the action is neither a string nor an assistant-message dict.
        """
        if not isinstance(action, (str, dict)):
            raise TypeError(f"act() returned {type(action).__name__}, expected str")
        turn = self._turn(action)
        self.actions.append(turn)
        self.obs, reward, terminated, truncated, self.info = self.env.step(stepped_turn(turn))
        self.terminated, self.truncated = bool(terminated), bool(truncated)
        self._stepped(float(reward))
        if terminated or truncated:
            self._ended()
            return True
        return False

    def _turn(self, action: str | dict[str, Any]) -> Any:
        return recorded_turn(action)

    def _stepped(self, reward: float) -> None:
        self.rewards.append(reward)

    def _ended(self) -> None:
        # Any Gymnasium env can be played here; one without a summary gives an empty one.
        self.summary = ended_summary(self.env, self.info) or {}


class EpisodeState(Episode):
    """An episode of an `EpisodeJob` that ends in a record: the env side of `play_job` and
    `play_job_async`, and of a board's sealed run, where the board steps the env for an agent
    that acts elsewhere.

    Args:
        job: the episode.
        agent_spec: the agent as the record names it.
        instances: where the env and the agent come from (default: this process's).
        env: the env to play in instead of the cached one (a board session's own env).
        agent: the agent instead of the cached one; for a sealed run, the declaration of an agent
            that acts elsewhere (the record keeps its ``config()`` and ``privileged``).
        max_record_bytes: the cap on the record: a turn that could pass it is not stepped, and
            `apply` raises `RecordTooLarge` (the episode ends as an agent error).
    """

    def __init__(self, job: EpisodeJob, agent_spec: AgentSpec, instances: InstanceCache | None = None, *,
                 env: Any = None,
                 agent: Any = None, max_record_bytes: int = MAX_RECORD_BYTES) -> None:
        instances = instances or process_instances()
        self.job, self.agent_spec = job, agent_spec
        if env is None:
            env = instances.env_for(job)
            #: The env's spec as the record keeps it (built once per env of `instances`).
            self.env_spec: dict[str, Any] | None = instances.spec_of(env)
        else:
            self.env_spec = None  # an env of the caller's: its spec is read when the record is made
        agent = instances.agent_for(agent_spec) if agent is None else agent
        self.started, self.t0 = time.time(), time.perf_counter()
        self.steps: list[dict[str, Any]] = []
        #: The metric inputs of the record: the env's episode summary once the episode ended.
        self.metrics: dict[str, Any] = {}
        self.agent_error: dict[str, Any] | None = None
        self.budget = RecordBudget(max_record_bytes)
        self._size = 0  # of the turn being stepped, as recorded
        super().__init__(env, agent, job.seed, {"trial": job.trial} if job.trial else None)
        self.reset_obs, self.task = self.obs, self.info.get("task", {})

    def _turn(self, action: str | dict[str, Any]) -> Any:
        turn = recorded_turn(action)
        self._size = self.budget.check(turn)
        return turn

    def _stepped(self, reward: float) -> None:
        self.rewards.append(reward)
        step = step_summary(len(self.steps) + 1, reward, self.obs, self.info)
        self.steps.append(step)
        self.budget.stepped(self._size, step, self.actions, self.steps)

    def _ended(self) -> None:
        # A record's metrics are the env's summary: an env without one is an error of the episode.
        summary = ended_summary(self.env, self.info)
        if summary is None:
            raise KeyError("episode_summary")
        self.metrics = self.summary = summary

    def fail(self, exc: BaseException) -> None:
        """Record `exc` as the episode's agent error (call it inside the ``except`` block)."""
        self.agent_error = {"type": type(exc).__name__, "message": str(exc)[:2000],
                            "traceback": traceback.format_exc(limit=5)[-4000:]}

    def record(self) -> dict[str, Any]:
        """The episode's record (see `agentgym.eval.records`; the writer puts the schema version first)."""
        job, agent = self.job, self.agent
        usage = getattr(agent, "usage", None)
        return {
            "provenance": provenance(),
            "suite": job.suite,
            "env": {"id": job.env_id, "noise": job.noise, "kwargs": dict(job.kwargs),
                    "spec": spec_dict(self.env) if self.env_spec is None else self.env_spec},
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


def _agent_config(agent: Any) -> dict[str, Any]:
    config = getattr(agent, "config", None)
    return config() if callable(config) else {}


# ---------------------------------------------------------------------------------------------
# The loop, sync and async
# ---------------------------------------------------------------------------------------------
def play(ep: Episode, timeout_s: float | None = None) -> None:
    """Play `ep` to its end: the agent's reset, then act and step until the episode ends.

    Raises:
        AgentTimeout: the episode ran past `timeout_s` seconds.
        Exception: whatever the agent raised, or `Episode.apply`'s TypeError for an action
            that is not a string.
    """
    with Deadline(timeout_s) as deadline:
        ep.agent.reset(ep.obs, ep.view())
        while True:
            action = ep.agent.act(ep.obs, ep.view())
            deadline.check()
            if ep.apply(action):
                return


async def play_async(ep: Episode, timeout_s: float | None = None) -> None:
    """`play` with an awaited agent: its ``async def areset``/``aact`` when it has them, else its
    ``reset`` here and its ``act`` in a thread (so a blocking model call never stalls the loop).

    Raises:
        AgentTimeout: the episode ran past `timeout_s` seconds.
        Exception: as `play`.
    """
    try:
        # asyncio.timeout keeps the episode in this task (wait_for would run it in a child task).
        async with asyncio.timeout(timeout_s):
            await _areset(ep.agent, ep.obs, ep.view())
            while not ep.apply(await _aact(ep.agent, ep.obs, ep.view())):
                pass
    except TimeoutError:
        raise AgentTimeout(f"episode exceeded {timeout_s} s") from None


async def _areset(agent: Any, obs: str, info: dict[str, Any]) -> None:
    areset = getattr(agent, "areset", None)
    if areset is not None and inspect.iscoroutinefunction(areset):
        await areset(obs, info)
    else:
        agent.reset(obs, info)


async def _aact(agent: Any, obs: str, info: dict[str, Any]) -> Any:
    aact = getattr(agent, "aact", None)
    if aact is not None and inspect.iscoroutinefunction(aact):
        return await aact(obs, info)
    return await asyncio.to_thread(agent.act, obs, info)


# ---------------------------------------------------------------------------------------------
# What callers play: a job (to a record), or a bare env and agent
# ---------------------------------------------------------------------------------------------
def play_job(job: EpisodeJob, agent_spec: AgentSpec, timeout_s: float | None = None,
             instances: InstanceCache | None = None) -> dict[str, Any]:
    """Play one job with the env and agent of `instances` (default: this process's) and return its record;
    an agent's fault or timeout becomes the record's ``agent_error``, never an exception."""
    ep = EpisodeState(job, agent_spec, instances)
    try:
        play(ep, timeout_s)
    except Exception as exc:  # noqa: BLE001 - agent faults are data here, by design (docs/RELIABILITY.md)
        ep.fail(exc)
    return ep.record()


async def play_job_async(job: EpisodeJob, agent_spec: AgentSpec, timeout_s: float | None = None,
                         instances: InstanceCache | None = None) -> dict[str, Any]:
    """`play_job` with an awaited agent (`play_async`). Each concurrent episode needs instances of its own."""
    ep = EpisodeState(job, agent_spec, instances)
    try:
        await play_async(ep, timeout_s)
    except Exception as exc:  # noqa: BLE001 - agent faults are data here, by design (docs/RELIABILITY.md)
        ep.fail(exc)
    return ep.record()


@dataclass
class EpisodeResult:
    """One finished episode: its actions, rewards and the env's `info["episode_summary"]`."""

    seed: int
    actions: list[Any] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    episode: dict[str, Any] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        """The summary's ``success`` (False when it has none)."""
        return bool(self.episode.get("success", False))

    @property
    def score(self) -> float:
        """The summary's ``score`` (0 when it has none)."""
        return float(self.episode.get("score", 0.0))


def run_episode(env: Any, agent: Any, seed: int, options: dict[str, Any] | None = None) -> EpisodeResult:
    """Play one episode of `agent` in `env` from `seed` (with the reset's `options`); what the
    agent raises propagates (`play_job` records it instead)."""
    ep = Episode(env, agent, seed, options)
    play(ep)
    return EpisodeResult(seed=int(ep.seed), actions=ep.actions, rewards=ep.rewards, episode=ep.summary)
