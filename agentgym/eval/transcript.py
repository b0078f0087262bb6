"""The texts of a recorded episode, recovered by replaying its actions.

A record keeps what the metrics need (calls, errors, injections, a digest of each observation),
not the texts: the tool results and the user's words. Episodes are deterministic in their seed
and actions, so playing the recorded actions again in the same env gives them back; each step's
summary (its observation's digest, calls, errors, injections) is checked against the record's, and the texts stop at the first step
that differs (an env changed since the run), with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from agentgym.core.plain_turn import stepped_turn
from agentgym.eval.records import canonical_json, step_summary

__all__ = ["Transcript", "replay_transcript", "job_of"]


@dataclass(frozen=True)
class Transcript:
    """What the env said in one episode.

    Attributes:
        opening: the messages of the reset (the task brief as a system message, the user's opening).
        steps: the messages each step returned (tool results, user replies), in turn order, for
            the steps whose observation matched the record; never the assistant's own turn.
        problem: why the texts stop before the record's last step (or are missing), else None.
    """

    opening: tuple[Mapping[str, Any], ...] = ()
    steps: tuple[tuple[Mapping[str, Any], ...], ...] = ()
    problem: str | None = None


def job_of(record: Mapping[str, Any]) -> Any:
    """The `agentgym.eval.jobs.EpisodeJob` that played a record."""
    from agentgym.eval.jobs import EpisodeJob

    env = record.get("env") or {}
    kwargs = env.get("kwargs") or {}
    return EpisodeJob(str(env.get("id")), seed=int(record.get("seed", 0)), trial=int(record.get("trial", 0)),
                      noise=env.get("noise"), kwargs=tuple(sorted(kwargs.items())), suite=record.get("suite"))


def _env_messages(info: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    # The assistant's own turn is the record's action; only what the env said is kept.
    return tuple(dict(m) for m in info.get("messages") or () if isinstance(m, Mapping) and m.get("role") != "assistant")


def replay_transcript(record: Mapping[str, Any]) -> Transcript:
    """Replay a record's actions and return the texts of its episode.

    Never raises for a record it cannot replay: the reason is in `Transcript.problem`.

    Args:
        record: one episode record.

    Returns:
        The episode's `Transcript`.
    """
    import gymnasium as gym

    import agentgym  # noqa: F401  (registers the ids)

    job = job_of(record)
    try:
        env = gym.make(job.env_id, **job.make_kwargs())
    except Exception as exc:  # noqa: BLE001 - any failure to make the env only means no texts
        return Transcript(problem=f"cannot make {job.env_id} here ({type(exc).__name__}: {exc})")
    try:
        return _replay(env, job, record)
    finally:
        env.close()


def _replay(env: Any, job: Any, record: Mapping[str, Any]) -> Transcript:
    try:
        _, info = env.reset(seed=job.seed, options={"trial": job.trial} if job.trial else None)
    except Exception as exc:  # noqa: BLE001
        return Transcript(problem=f"the env failed to reset ({type(exc).__name__}: {exc})")
    opening = _env_messages(info)
    if canonical_json(info.get("task", {})) != canonical_json(record.get("task", {})):
        return Transcript(problem="this seed draws another task than the record's: the env changed since the run")
    steps: list[tuple[Mapping[str, Any], ...]] = []
    actions = record.get("actions") or []
    for i, recorded in enumerate(record.get("steps") or ()):
        turn = i + 1
        if i >= len(actions):
            return Transcript(opening, tuple(steps), f"the record has no action for turn {turn}")
        try:
            outcome = env.step(stepped_turn(actions[i]))
            obs = outcome[0]
        except Exception as exc:  # noqa: BLE001
            return Transcript(opening, tuple(steps), f"the env raised {type(exc).__name__} at turn {turn}")
        _, reward, terminated, truncated, info = outcome
        if canonical_json(step_summary(turn, float(reward), obs, info)) != canonical_json(recorded):
            return Transcript(opening, tuple(steps), f"turn {turn} replays differently from the record (the env "
                                                     f"changed since the run): texts end at turn {turn - 1}")
        steps.append(_env_messages(info))
        if terminated or truncated:
            break
    return Transcript(opening, tuple(steps))
