"""The replay fingerprint: `trajectory_hash` of an episode (what the leaderboard compares) and
`fresh_process_hashes`, the same replayed in a fresh Python process with another PYTHONHASHSEED."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from agentgym.eval.records import canonical_json

__all__ = ["TrajectoryHasher", "canonical_json", "fresh_process_hashes", "play_actions", "trajectory_hash"]

_HASH_MARKER = "AGENTGYM-HASHES "
_CHILD_CODE = "import sys; from agentgym.testing.replay import child_main; sys.exit(child_main())"


class TrajectoryHasher:
    """An incremental sha256 over the canonical JSON of a trajectory's records.

    Feed it the reset and then every step as they happen (each record is serialised at once,
    so later mutation of returned objects cannot change the digest); `hexdigest()` gives the
    same value as `trajectory_hash` for the same episode.

    Args:
        keep_lines: also keep each record's canonical JSON in ``lines`` (to locate a difference).
    """

    def __init__(self, *, keep_lines: bool = False) -> None:
        self._sha = hashlib.sha256()
        self.lines: list[str] | None = [] if keep_lines else None
        self.records = 0

    def _add(self, record: dict[str, Any]) -> None:
        line = canonical_json(record)
        self._sha.update(line.encode("ascii"))
        self._sha.update(b"\n")
        self.records += 1
        if self.lines is not None:
            self.lines.append(line)

    def reset(self, obs: Any, info: dict[str, Any]) -> None:
        """Record what ``env.reset`` returned."""
        self._add({"obs": obs, "info": info})

    def step(self, obs: Any, reward: Any, terminated: Any, truncated: Any, info: dict[str, Any]) -> None:
        """Record what ``env.step`` returned."""
        self._add({"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated, "info": info})

    def hexdigest(self) -> str:
        """The sha256 of the records so far, as hex."""
        return self._sha.hexdigest()


def play_actions(env: gym.Env, seed: int | None, actions: Sequence[Any], hasher: TrajectoryHasher) -> int:
    """Reset with `seed` and step `actions` until the episode ends; returns the steps taken."""
    hasher.reset(*env.reset(seed=seed))
    taken = 0
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        hasher.step(obs, reward, terminated, truncated, info)
        taken += 1
        if terminated or truncated:
            break
    return taken


def trajectory_hash(env_id_or_env: str | gym.Env, seed: int, actions: Sequence[Any], **make_kwargs: Any) -> str:
    """The sha256 of one episode's trajectory: reset with `seed`, then step `actions`.

    Hashed are the reset's (obs, info) and each step's (obs, reward, terminated, truncated,
    info), as canonical JSON (`canonical_json`: ``sort_keys=True, ensure_ascii=True``). Stepping
    stops at the first terminated or truncated step; actions left over are ignored. The actions
    themselves are inputs and are not hashed.

    Args:
        env_id_or_env: a registered id (made with ``gym.make(id, **make_kwargs)`` and closed
            afterwards) or an env instance (reset and stepped as it is).
        seed: the episode seed.
        actions: the assistant turns to send.
        **make_kwargs: keyword arguments for ``gym.make``; only with an id.

    Returns:
        The hex digest.

    Raises:
        TypeError: something returned is not plain JSON data, or make_kwargs came with an instance.
        ValueError: something returned holds NaN or an infinity.
    """
    hasher = TrajectoryHasher()
    if isinstance(env_id_or_env, str):
        env = gym.make(env_id_or_env, **make_kwargs)
        try:
            play_actions(env, seed, actions, hasher)
        finally:
            env.close()
    else:
        if make_kwargs:
            raise TypeError("make_kwargs apply only when an env id is given, not an env instance")
        play_actions(env_id_or_env, seed, actions, hasher)
    return hasher.hexdigest()


# ------------------------------------------------------------------------------ fresh process
def _other_hash_seed() -> str:
    """A PYTHONHASHSEED other than this process's."""
    current = os.environ.get("PYTHONHASHSEED", "")
    return "4242" if current != "4242" else "4243"


def _make_payload(env: str | gym.Env, make_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(env, str):
        payload: dict[str, Any] = {"env_id": env, "make_kwargs": dict(make_kwargs or {}), "spec": None}
        spec = gym.registry.get(env)
        if spec is not None and isinstance(spec.entry_point, str):
            # Lets the child make an id that only a module imported here registered.
            try:
                payload["spec"] = spec.to_json()
            except (TypeError, ValueError):
                pass
        return payload
    if make_kwargs:
        raise TypeError("make_kwargs apply only when an env id is given, not an env instance")
    spec = env.spec
    if spec is None:
        raise ValueError("the env has no spec, so a fresh process cannot make it: pass a registered id")
    try:
        spec_json = spec.to_json()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the env's spec cannot be serialised for a fresh process: {exc}") from exc
    return {"env_id": None, "make_kwargs": {}, "spec": spec_json}


def fresh_process_hashes(
    env_id_or_env: str | gym.Env,
    episodes: Sequence[tuple[int, Sequence[str]]],
    *,
    make_kwargs: dict[str, Any] | None = None,
    hash_seed: str | None = None,
    timeout: float = 600.0,
) -> list[str]:
    """`trajectory_hash` of each episode, computed in ONE fresh Python process.

    The child runs ``sys.executable -c`` with another ``PYTHONHASHSEED``, imports `agentgym`, makes
    one env and replays every ``(seed, actions)`` pair in order, so a batch costs one start-up.

    Args:
        env_id_or_env: a registered id, or an instance whose ``spec`` serialises to JSON.
        episodes: ``(seed, actions)`` pairs; actions are strings.
        make_kwargs: keyword arguments for ``gym.make`` (with an id only).
        hash_seed: the child's PYTHONHASHSEED; default: one that differs from this process's.
        timeout: seconds before the child is killed.

    Returns:
        One hex digest per episode, in order.

    Raises:
        ValueError: the env cannot be recreated in a fresh process.
        RuntimeError: the child failed (its stderr is in the message).
    """
    payload = _make_payload(env_id_or_env, make_kwargs)
    payload["episodes"] = [[int(seed), [str(a) for a in actions]] for seed, actions in episodes]
    env_vars = dict(os.environ)
    env_vars["PYTHONHASHSEED"] = hash_seed if hash_seed is not None else _other_hash_seed()
    # The child must import what this process can (a user's env module, a test's fake env).
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    if env_vars.get("PYTHONPATH"):
        paths.append(env_vars["PYTHONPATH"])
    env_vars["PYTHONPATH"] = os.pathsep.join(paths)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD_CODE],
        input=canonical_json(payload),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",  # the env may print anything; only the marked line is read
        env=env_vars,
        timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(_HASH_MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"fresh-process replay failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    hashes = json.loads(lines[-1][len(_HASH_MARKER):])
    if len(hashes) != len(episodes):
        raise RuntimeError(f"fresh-process replay returned {len(hashes)} hashes for {len(episodes)} episodes")
    return hashes


def child_main() -> int:
    """Entry point of the fresh-process replay (reads the payload as JSON from stdin)."""
    import agentgym  # noqa: F401  (registers every AgentRL/* id)

    payload = json.loads(sys.stdin.read())
    env_id, spec_json = payload["env_id"], payload["spec"]
    if env_id is not None and (env_id in gym.registry or ":" in env_id or spec_json is None):
        env = gym.make(env_id, **payload["make_kwargs"])
    else:
        env = gym.make(EnvSpec.from_json(spec_json), **payload["make_kwargs"])
    hashes = []
    try:
        for seed, actions in payload["episodes"]:
            hasher = TrajectoryHasher()
            play_actions(env, seed, actions, hasher)
            hashes.append(hasher.hexdigest())
    finally:
        env.close()
    sys.stdout.write("\n" + _HASH_MARKER + json.dumps(hashes) + "\n")
    sys.stdout.flush()
    return 0
