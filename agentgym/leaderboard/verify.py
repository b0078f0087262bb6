"""Verification: trust no number a submission sends; replay every episode and recompute.

In order, each stage refusing the whole submission at its first problem:

1. schema: every record validates against the committed record schema
   (`agentgym.leaderboard.record_schema`); the manifest's package version is one this
   agentgym replays (`REPLAYABLE_VERSIONS`);
2. suite: the manifest's suite is known (`SUITES` or an injected registry); an old version
   (``current=False``) is verified and stored but not ranked;
3. completeness: every episode of the suite is there once, with every trial, and nothing else
   (a sealed run's episodes are the suite's layout on the seeds its manifest publishes);
   each record's env id, noise, kwargs, seed, trial and suite agree with its episode key; one
   agent throughout; the records' package version is the manifest's;
4. replay: each episode is played again in the pinned env (made from the suite's job, never
   from the record's claims) with the suite's seed and trial and the recorded actions; every
   step summary (reward, observation digest, errors, calls, noise) must equal the recorded one,
   the episode must end exactly at its last action (unless the agent failed), and the env's
   final ``info["episode_summary"]`` must equal the recorded metrics;
5. numbers: the summary is computed by `agentgym.eval.metrics` from the replayed metrics;
   numbers the manifest claims must equal it.

An episode whose ``agent_error`` is set is replayed up to its last recorded step and counts as a
failure (the metrics' convention). A rejection names the first offending episode in the suite's
order, its step (0 is the reset) and field. A suite whose env this process cannot make is
`Unverifiable` (the server's fault, not the submitter's).

What replay cannot tell: whether the agent peeked at hidden state. ``agent.privileged`` is the
submitter's own word; replay proves only that the numbers are those of the recorded actions.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Collection, Iterator, Mapping

from agentgym import __version__
from agentgym.bench.suites import SUITES, Suite
from agentgym.core.plain_turn import stepped_turn
from agentgym.eval.jobs import EpisodeJob
from agentgym.eval.records import canonical_json, spec_dict, step_summary, trajectory_digest
from agentgym.leaderboard.record_schema import check_record
from agentgym.leaderboard.record_schema_fast import known_valid
from agentgym.leaderboard.scoring import check_claims, summarise_submission
from agentgym.leaderboard.submission import Manifest, Rejected, Submission, Unverifiable

__all__ = ["Verified", "verify_submission", "replay_episode", "Mismatch", "config_hash", "PARALLEL_FROM",
           "REPLAYABLE_VERSIONS"]

#: Below this many episodes replay runs in this process: a process pool's start-up (spawned
#: workers importing the package) costs more than it saves.
PARALLEL_FROM = 600

#: The agentgym versions whose records this one verifies: its own, and any release whose episodes
#: are byte for byte this one's (its golden trajectories unchanged). A record of another version
#: would replay in envs that are not the ones it was made in, so its numbers would not be its own.
REPLAYABLE_VERSIONS: tuple[str, ...] = (__version__, "0.3.0", "0.2.0")


@dataclass
class Verified:
    """A submission that passed every check, with its recomputed numbers."""

    manifest: Manifest
    suite: Suite
    #: The agent as the records name it: ``{"name", "config", "privileged"}``.
    agent: dict[str, Any]
    #: SHA-256 of the canonical agent dict: with model, revision and suite, the entry's identity.
    config_hash: str
    #: A privileged agent (it reads the hidden task): shown as a reference, never ranked.
    reference: bool
    #: The records, in the suite's order, with the replayed metrics.
    records: list[dict[str, Any]]
    #: The recomputed numbers (`agentgym.leaderboard.scoring.summarise_submission`).
    summary: dict[str, Any]
    verify_s: float


# ============================================================================ 3. completeness
def config_hash(agent: Mapping[str, Any]) -> str:
    """The identity of an agent's configuration: SHA-256 of its canonical JSON."""
    return hashlib.sha256(canonical_json({"name": agent["name"], "config": agent["config"],
                                 "privileged": agent["privileged"]}).encode()).hexdigest()


def _canon(value: Any) -> str:
    return canonical_json(value)


def _same_json(a: Any, b: Any) -> bool:
    """True only if `a` and `b` have the same canonical JSON: equal, and of the same types all the
    way down (``True == 1 == 1.0`` in Python, not in JSON). False says nothing: compare `_canon`."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same_json(v, b[k]) for k, v in a.items())
    if type(a) is list:
        return len(a) == len(b) and all(map(_same_json, a, b))
    if type(a) is float:
        return repr(a) == repr(b)  # 0.0 == -0.0 and nan != nan in Python; JSON writes them apart
    return bool(a == b)


def _suite_jobs(suite: Suite, manifest: Manifest) -> list[EpisodeJob]:
    # A sealed run plays the suite's layout on the seeds its board drew; an upload, the public seeds.
    if manifest.sealed is None:
        return suite.jobs()
    try:
        return suite.jobs(manifest.sealed.seeds)
    except ValueError as exc:
        raise Rejected("sealed_seeds", f"the sealed run's seeds do not fit suite {suite.id}: {exc}",
                       field="sealed.seeds") from None


def _match_suite(records: list[dict[str, Any]], suite: Suite,
                 manifest: Manifest) -> list[tuple[EpisodeJob, dict[str, Any]]]:
    jobs = _suite_jobs(suite, manifest)
    by_key = {j.key: j for j in jobs}
    seen: dict[str, dict[str, Any]] = {}
    agent0 = records[0]["agent"] if records else None
    for rec in records:
        key = rec["key"]
        job = by_key.get(key)
        if job is None:
            raise Rejected("unknown_episode", f"episode {key!r} is not part of suite {suite.id}", episode=key,
                           field="key")
        if key in seen:
            raise Rejected("duplicate_episode", f"episode {key!r} appears twice", episode=key, field="key")
        seen[key] = rec
        checks = (
            ("suite", rec["suite"], suite.id),
            ("env.id", rec["env"]["id"], job.env_id),
            ("env.noise", rec["env"]["noise"], job.noise),
            ("env.kwargs", rec["env"]["kwargs"], dict(job.kwargs)),
            ("seed", rec["seed"], job.seed),
            ("trial", rec["trial"], job.trial),
        )
        for name, got, want in checks:
            if not _same_json(got, want) and _canon(got) != _canon(want):
                raise Rejected("inconsistent_record", f"{name} is {got!r} but the episode key says {want!r}",
                               episode=key, field=name)
        if not _same_json(rec["agent"], agent0) and _canon(rec["agent"]) != _canon(agent0):
            raise Rejected("mixed_agents", "the records come from more than one agent or configuration",
                           episode=key, field="agent")
        version = rec["provenance"].get("agentgym")
        if version != manifest.package_version:
            raise Rejected("mixed_versions", f"the record was made by agentgym {version!r}, the manifest says "
                           f"{manifest.package_version!r}", episode=key, field="provenance.agentgym")
    missing = [j for j in jobs if j.key not in seen]
    if missing:
        trials_short = all(j.trial > 0 for j in missing) and not any(r["trial"] > 0 for r in records)
        what = (f"too few trials: suite {suite.id} needs {suite.trials} per seed" if trials_short
                else f"{len(missing)} of {len(jobs)} episodes of suite {suite.id} are missing")
        raise Rejected("incomplete", f"{what}; the first missing is {missing[0].key!r}", episode=missing[0].key)
    return [(j, seen[j.key]) for j in jobs]


# ============================================================================ 4. replay
_STEP_FIELDS = ("turn", "reward", "obs_sha256", "errors", "calls", "noise")


class _EnvPool:
    """The pinned envs, by id and kwargs, each lent to one replay at a time.

    Verifications run at once in a server's worker threads, and an env is state: two replays
    stepping one instance interleave their episodes and each sees the other's (false replay
    mismatches). So an env is lent, never shared; after its episode it goes back for the next
    replay (making one costs more than replaying an episode), and a key never holds more envs
    than ever replayed at once.
    """

    def __init__(self) -> None:
        self._free: dict[tuple[str, str], list[tuple[Any, str]]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def lend(self, job: EpisodeJob) -> Iterator[tuple[Any, str]]:
        """An env of `job`'s id and kwargs that no one else steps until the block ends, and its canonical spec.

        Raises:
            Unverifiable: this process cannot make the env.
        """
        kw = job.make_kwargs()
        key = (job.env_id, _canon(kw))
        with self._lock:
            free = self._free.get(key)
            lent = free.pop() if free else None
        if lent is None:
            lent = _make_env(job, kw)
        try:
            yield lent
        except BaseException:
            lent[0].close()  # an episode broken off (an interrupt): not lent again
            raise
        with self._lock:
            self._free.setdefault(key, []).append(lent)


def _make_env(job: EpisodeJob, kw: dict[str, Any]) -> tuple[Any, str]:
    import gymnasium as gym

    # The ids are registered: this module imports agentgym (so do replay worker processes).
    try:
        env = gym.make(job.env_id, **kw)
    except gym.error.Error as exc:
        raise Unverifiable("unverifiable", f"this leaderboard cannot make {job.env_id} with {kw}: {exc}",
                           episode=job.key) from exc
    return env, _canon(spec_dict(env))


_ENVS = _EnvPool()


def _first_difference(got: Mapping[str, Any], want: Mapping[str, Any], order: tuple[str, ...] = ()) -> str:
    keys = [*order, *sorted((set(got) | set(want)) - set(order))]
    for k in keys:
        if k not in got or k not in want or _canon(got[k]) != _canon(want[k]):
            return k
    return "?"


@dataclass(frozen=True)
class Mismatch:
    """Where a replay first disagreed with a record."""

    key: str
    step: int
    field: str
    message: str

    def error(self) -> Rejected:
        return Rejected("replay_mismatch", self.message, episode=self.key, step=self.step, field=self.field)


def replay_episode(job: EpisodeJob, rec: Mapping[str, Any]) -> tuple[dict[str, Any], Mismatch | None]:
    """Replay one record's actions in the pinned env of `job` and compare every step.

    Safe to call from several threads at once: each replay has an env of its own.

    Returns:
        ``(metrics, None)`` with the env's own ``info["episode_summary"]`` (``{}`` for an episode cut
        short by an agent error), or ``({}, mismatch)`` at the first disagreement.
    """
    with _ENVS.lend(job) as (env, spec):
        return _replay(env, spec, job, rec)


def _replay(env: Any, spec: str, job: EpisodeJob, rec: Mapping[str, Any]) -> tuple[dict[str, Any], Mismatch | None]:
    key = job.key

    def miss(step: int, field: str, message: str) -> tuple[dict[str, Any], Mismatch]:
        return {}, Mismatch(key, step, field, message)

    obs, info = env.reset(seed=job.seed, options={"trial": job.trial} if job.trial else None)
    reset_obs = obs
    if spec != _canon(rec["env"]["spec"]):
        return miss(0, "env.spec", "the recorded env spec is not the pinned env's")
    if _canon(info.get("task", {})) != _canon(rec["task"]):
        return miss(0, "task", "the recorded task is not the one the seed draws")
    actions, steps = rec["actions"], rec["steps"]
    failed = rec["agent_error"] is not None
    # An agent error can interrupt the step that its last action started (a timeout mid-step).
    if not (len(actions) == len(steps) or (failed and len(actions) == len(steps) + 1)):
        return miss(min(len(actions), len(steps)) + 1, "actions",
                    f"{len(actions)} actions but {len(steps)} steps recorded")
    replayed: list[dict[str, Any]] = []
    episode: dict[str, Any] | None = None
    for i, recorded in enumerate(steps):
        turn = i + 1
        if episode is not None:
            return miss(turn, "steps", f"step {turn} is recorded after the episode ended at step {turn - 1}")
        try:
            obs, reward, terminated, truncated, info = env.step(stepped_turn(actions[i]))
        except Exception as exc:  # noqa: BLE001 - whatever the env does with a sent action, it is not accepted
            return miss(turn, "actions", f"the env raised {type(exc).__name__} on this action: {exc}")
        summary = step_summary(turn, float(reward), obs, info)
        # Plain equality first (fast); the canonical JSON decides when it disagrees (tuples vs lists).
        if summary != recorded and _canon(summary) != _canon(recorded):
            field = _first_difference(summary, recorded, _STEP_FIELDS)
            return miss(turn, field, f"step {turn}: the recorded {field} differs from the replay")
        replayed.append(summary)
        if terminated or truncated:
            episode = info["episode_summary"]
    # Equal as Python values is not yet equal as data (True == 1 == 1.0): compare the canonical JSON once.
    if _canon(replayed) != _canon(steps):
        turn = next(i + 1 for i, (a, b) in enumerate(zip(replayed, steps)) if _canon(a) != _canon(b))
        field = _first_difference(replayed[turn - 1], steps[turn - 1], _STEP_FIELDS)
        return miss(turn, field, f"step {turn}: the recorded {field} differs from the replay")
    if episode is not None and len(actions) > len(steps):
        return miss(len(steps) + 1, "actions", "an action is recorded after the episode ended")
    if episode is None and not failed:
        return miss(len(steps), "steps", f"the episode had not ended after its {len(steps)} recorded steps "
                    "and no agent error is recorded")
    if trajectory_digest(replayed, reset_obs) != rec["trajectory_sha256"]:
        return miss(0, "trajectory_sha256", "the trajectory digest differs from the replay's (reset observation "
                    "or digest edited)")
    canonical = _canon(episode if episode is not None else {})
    if canonical != _canon(rec["metrics"]):
        metrics = json.loads(canonical)
        field = _first_difference(metrics, rec["metrics"])
        return miss(len(steps), f"metrics.{field}", f"the recorded metrics.{field} differs from the replay's")
    return json.loads(canonical), None


def _replay_chunk(items: list[tuple[EpisodeJob, dict[str, Any]]]) -> list[Mismatch | None]:
    # Only the verdicts travel back: a record that passed has metrics canonically equal to the replay's.
    return [replay_episode(job, rec)[1] for job, rec in items]


def replay_lines(items: list[tuple[EpisodeJob, bytes]]) -> list[Mismatch | None]:
    """The verdicts of replaying records given as their JSON lines (a worker process's job: the
    bytes it parses are the bytes that were written)."""
    return _replay_chunk([(job, json.loads(line)) for job, line in items])


def _slim(rec: Mapping[str, Any]) -> dict[str, Any]:
    # What a replay reads of a record: sent to worker processes instead of the whole record.
    return {"env": {"spec": rec["env"]["spec"]}, "task": rec["task"], "actions": rec["actions"],
            "steps": rec["steps"], "agent_error": rec["agent_error"], "metrics": rec["metrics"],
            "trajectory_sha256": rec["trajectory_sha256"]}


_POOL: dict[tuple[int, bool], ProcessPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def _pool(workers: int, *, background: bool = False) -> ProcessPoolExecutor:
    """A process pool kept for the life of this process, so a server pays the start-up (and the
    workers' env construction) once, not per submission. `background` workers run at the lowest
    CPU priority: they use the cycles a server leaves free, never the ones it needs."""
    import multiprocessing as mp

    with _POOL_LOCK:
        pool = _POOL.get((workers, background))
        if pool is None:
            # spawn, not fork: the server that calls this runs threads.
            pool = _POOL[workers, background] = ProcessPoolExecutor(
                max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_worker_start,
                initargs=(os.getpid(), background))
        return pool


def background_pool() -> ProcessPoolExecutor:
    """The process's one background replay worker (`_pool`, lowest priority)."""
    return _pool(1, background=True)


def _worker_start(parent: int, background: bool) -> None:
    # A server stopped by a signal exits without its exit hooks (uvicorn re-raises the signal),
    # and a killed one has none: its workers would live on. Each watches its parent instead.
    threading.Thread(target=_exit_with_parent, args=(parent,), name="agentgym-orphan-watch", daemon=True).start()
    if background:
        _idle_priority()


def _idle_priority() -> None:
    # SCHED_IDLE where there is one (Linux): any other task that wakes takes the CPU at once, so
    # the worker never delays the server or its clients; elsewhere the lowest nice.
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        os.nice(19)


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def drop_pool(pool: ProcessPoolExecutor) -> None:
    """Forget `pool` (broken: its next user gets a new one) and shut it down."""
    with _POOL_LOCK:
        for k, v in list(_POOL.items()):
            if v is pool:
                del _POOL[k]
    pool.shutdown(wait=False, cancel_futures=True)


@atexit.register
def _shutdown_pools() -> None:
    for pool in list(_POOL.values()):
        pool.shutdown(wait=True, cancel_futures=True)
    _POOL.clear()


def _replay_all(pairs: list[tuple[EpisodeJob, dict[str, Any]]], workers: int | None,
                replayed: Mapping[str, Mismatch | None] | None = None) -> list[dict[str, Any]]:
    if replayed:
        # Replayed already (a board's own records, as they were written): only the rest are
        # replayed now, and the first mismatch in the suite's order decides, as it would have.
        known = next((i for i, (job, _) in enumerate(pairs) if replayed.get(job.key) is not None), len(pairs))
        _replay_all([p for p in pairs[:known] if p[0].key not in replayed], workers)  # raises an earlier one
        if known < len(pairs):
            raise replayed[pairs[known][0].key].error()  # type: ignore[union-attr]
        # A passed replay says the recorded metrics equal the replay's as canonical JSON, and a
        # board's records are parsed from canonical lines: they are that JSON's values already.
        return [rec["metrics"] for _, rec in pairs]
    n = len(pairs)
    if workers is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        # On two cores a pool does not repay its spawn start-up and the records pickled to its
        # workers: it is used from four cores on.
        workers = 1 if n < PARALLEL_FROM or cores < 4 else min(cores, 16, max(1, n // 150))
    if workers <= 1:
        out = []
        for job, rec in pairs:
            metrics, mismatch = replay_episode(job, rec)
            if mismatch is not None:
                raise mismatch.error()
            out.append(metrics)
        return out
    size = max(1, -(-n // (workers * 4)))
    chunks = [[(j, _slim(r)) for j, r in pairs[i: i + size]] for i in range(0, n, size)]
    pool = _pool(workers)
    try:
        verdicts = [v for chunk in pool.map(_replay_chunk, chunks) for v in chunk]
    except BrokenProcessPool:
        drop_pool(pool)
        raise
    for mismatch in verdicts:
        if mismatch is not None:
            raise mismatch.error()
    return [json.loads(_canon(rec["metrics"])) for _, rec in pairs]


# ============================================================================ all of it
def _check_version(manifest: Manifest, versions: Collection[str]) -> None:
    if manifest.package_version not in versions:
        raise Rejected("unreplayable_version", f"the submission was made by agentgym {manifest.package_version!r}; "
                       f"this leaderboard replays records of agentgym {', '.join(sorted(versions))} (rerun the "
                       "suite with one of them)", field="package_version")


def verify_submission(sub: Submission, suites: Mapping[str, Suite] | None = None, *,
                      workers: int | None = None, versions: Collection[str] = REPLAYABLE_VERSIONS,
                      replayed: Mapping[str, Mismatch | None] | None = None) -> Verified:
    """Verify a decoded submission end to end.

    Args:
        sub: from `agentgym.leaderboard.submission.decode_submission`.
        suites: the suite registry (default: `agentgym.bench.suites.SUITES`).
        workers: replay processes (default: one below `PARALLEL_FROM` episodes or four cores, else one
            per core up to 16).
        versions: the agentgym versions whose records are accepted (default: `REPLAYABLE_VERSIONS`).
        replayed: the verdicts, by episode key, of replays made earlier of these very records (a
            board's sealed run replays its records as they are written: `ReplayAhead`); those
            episodes are not replayed again. Every other stage runs as without it.

    Returns:
        The `Verified` submission.

    Raises:
        MalformedSubmission: a record breaks the schema.
        Rejected: a package version this leaderboard does not replay, unknown suite, incomplete or
            inconsistent records, a replay mismatch, or a claimed number that is not the recomputed one.
    """
    t0 = time.perf_counter()
    registry = SUITES if suites is None else suites
    for i, rec in enumerate(sub.records, start=1):
        if not known_valid(rec):
            check_record(rec, i)
    _check_version(sub.manifest, versions)
    suite = registry.get(sub.manifest.suite)
    if suite is None:
        raise Rejected("unknown_suite", f"suite {sub.manifest.suite!r} is not known here; known: "
                       f"{', '.join(sorted(registry))}", field="suite")
    if not sub.records:
        raise Rejected("incomplete", f"the submission holds no records of suite {suite.id}")
    pairs = _match_suite(sub.records, suite, sub.manifest)
    metrics_of = _replay_all(pairs, workers, replayed)
    records = [{**rec, "metrics": metrics} for (_, rec), metrics in zip(pairs, metrics_of)]
    summary = summarise_submission(records, suite)
    check_claims(sub.manifest.claimed, summary)
    agent = dict(records[0]["agent"])
    return Verified(manifest=sub.manifest, suite=suite, agent=agent, config_hash=config_hash(agent),
                    reference=bool(agent["privileged"]), records=records, summary=summary,
                    verify_s=time.perf_counter() - t0)
