"""`check_agent_env`: the agentgym env contract, checked (see `agentgym.testing`)."""

from __future__ import annotations

import copy
import hashlib
import math
import random
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.wrappers import RecordEpisodeStatistics

from agentgym.eval.records import canonical_json
from agentgym.testing.probes import GARBAGE_ACTIONS, probe_actions, schema_garbage
from agentgym.testing.readiness import EnvReport, metric_findings
from agentgym.testing.replay import TrajectoryHasher, fresh_process_hashes

__all__ = ["CHECKS", "HIDDEN_KEYS", "REQUIRED_TASK_KEYS", "check_agent_env"]

#: Keys the public task card (``info["task"]``) must carry.
REQUIRED_TASK_KEYS: tuple[str, ...] = ("family", "domain", "difficulty", "split", "id")
#: Keys that must never appear anywhere in a reset info or a non-final step info: the hidden goal.
HIDDEN_KEYS: frozenset[str] = frozenset({"goal", "gold", "solution", "answer", "hidden"})
_ROLES = frozenset({"system", "user", "assistant", "tool"})


class _Checker:
    """State shared by the checks of one `check_agent_env` run."""

    def __init__(self, env: gym.Env, label: str) -> None:
        self.env = env
        self.label = label

    def fail(self, check: str, message: str) -> None:
        raise AssertionError(f"check_agent_env[{check}] {self.label}: {message}")

    def require(self, condition: bool, check: str, message: str) -> None:
        if not condition:
            self.fail(check, message)

    # -------------------------------------------------------------- single results
    def reset_info(self, info: Any, check: str, seed: int | None) -> None:
        self.require(isinstance(info, dict), check, f"reset info must be a dict, got {type(info).__name__}")
        for key in ("messages", "tools", "task", "seed"):
            self.require(key in info, check, f"reset info lacks {key!r} (has {sorted(info)})")
        self.messages(info["messages"], check, "reset")
        tools = info["tools"]
        self.require(isinstance(tools, list), check, f"info['tools'] must be a list, got {type(tools).__name__}")
        for t in tools:
            fn = t.get("function") if isinstance(t, dict) else None
            self.require(
                isinstance(t, dict) and t.get("type") == "function" and isinstance(fn, dict)
                and isinstance(fn.get("name"), str) and isinstance(fn.get("description"), str)
                and isinstance(fn.get("parameters"), dict) and fn["parameters"].get("type") == "object",
                check, f"info['tools'] item is not an OpenAI function-tool schema: {str(t)[:200]}",
            )
        task = info["task"]
        self.require(isinstance(task, dict), check, f"info['task'] must be a dict, got {type(task).__name__}")
        missing = [k for k in REQUIRED_TASK_KEYS if k not in task]
        self.require(not missing, check, f"info['task'] lacks {missing}")
        self.no_hidden_keys(info, check, "reset info")
        echoed = info["seed"]
        self.require(
            type(echoed) is int and echoed >= 0, check,
            f"info['seed'] must be a non-negative Python int, got {echoed!r} ({type(echoed).__name__})",
        )
        if seed is not None:
            self.require(echoed == seed, check, f"info['seed'] is {echoed}, but reset got seed={seed}")

    def messages(self, messages: Any, check: str, where: str) -> None:
        self.require(isinstance(messages, list), check, f"{where} info['messages'] must be a list")
        for m in messages:
            if not (isinstance(m, dict) and m.get("role") in _ROLES and isinstance(m.get("content"), str)):
                self.fail(check, f"{where} info['messages'] item is not a chat message: {str(m)[:200]}")

    def step_slice(self, messages: list[dict[str, Any]], check: str, shown: str) -> None:
        """A step's messages open with the assistant's turn, and its tool messages answer its calls."""
        self.require(bool(messages) and messages[0].get("role") == "assistant", check,
                     f"step({shown}) info['messages'] must open with the assistant's turn as the env read it "
                     f"(got roles {[m.get('role') for m in messages]})")
        calls = messages[0].get("tool_calls") or []
        self.require(isinstance(calls, list), check, f"step({shown}) the assistant message's tool_calls is not a list")
        ids = {c.get("id") for c in calls if isinstance(c, dict)}
        for m in messages[1:]:
            self.require(m.get("role") != "assistant" and m.get("role") != "system", check,
                         f"step({shown}) info['messages'] holds a {m.get('role')} message after the assistant's turn")
            if m.get("role") == "tool":
                self.require(m.get("tool_call_id") in ids, check,
                             f"step({shown}) a tool message answers {m.get('tool_call_id')!r}, which is not the id "
                             f"of a tool call of the assistant's turn ({sorted(map(str, ids))})")

    def no_hidden_keys(self, value: Any, check: str, where: str) -> None:
        stack = [(value, where)]
        while stack:
            v, path = stack.pop()
            if isinstance(v, dict):
                for k, item in v.items():
                    if k in HIDDEN_KEYS:
                        self.fail(check, f"{path} exposes the hidden key {k!r} ({path}[{k!r}])")
                    if isinstance(item, (dict, list, tuple)):
                        stack.append((item, f"{path}[{k!r}]"))
            elif isinstance(v, (list, tuple)):
                stack.extend((item, f"{path}[{i}]") for i, item in enumerate(v) if isinstance(item, (dict, list, tuple)))

    def step_result(self, result: Any, check: str, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        shown = repr(action)[:80]
        self.require(isinstance(result, tuple) and len(result) == 5, check, f"step({shown}) must return a 5-tuple")
        obs, reward, terminated, truncated, info = result
        space = self.env.observation_space
        self.require(obs in space, check, f"step({shown}) returned an observation outside {space} "
                                          f"({type(obs).__name__} of length {len(obs) if hasattr(obs, '__len__') else '?'})")
        self.require(type(reward) is float, check,
                     f"step({shown}) reward must be a Python float, got {type(reward).__name__}")
        self.require(math.isfinite(reward), check, f"step({shown}) reward is {reward}")
        for name, flag in (("terminated", terminated), ("truncated", truncated)):
            self.require(type(flag) is bool, check,
                         f"step({shown}) {name} must be a Python bool, got {type(flag).__name__}")
        self.require(isinstance(info, dict), check, f"step({shown}) info must be a dict")
        self.messages(info.get("messages", []), check, f"step({shown})")
        self.step_slice(info.get("messages", []), check, shown)
        done = terminated or truncated
        if not done:
            self.no_hidden_keys(info, check, f"step({shown}) info")
            self.require(reward == 0.0, check, f"step({shown}) gave reward {reward} before the episode ended")
        else:
            ep = info.get("episode_summary")
            self.require(isinstance(ep, dict), check,
                         f"the last step's info lacks 'episode_summary' (keys {sorted(info)})")
            self.require(info.get("episode") == ep, check,
                         "the last step's info lacks 'episode' (the summary, as under 'episode_summary')")
            for key in ("success", "score", "turns", "tool_calls"):
                self.require(key in ep, check, f"info['episode_summary'] lacks {key!r}")
            self.require(type(ep["success"]) is bool, check, "info['episode_summary']['success'] must be a bool")
            score = ep["score"]
            self.require(type(score) is float and 0.0 <= score <= 1.0, check,
                         f"info['episode_summary']['score'] must be a float in [0, 1], got {score!r}")
            self.require(reward == score, check,
                         f"the final reward {reward} differs from info['episode_summary']['score'] {score}")
        try:
            canonical_json(info)
        except (TypeError, ValueError) as exc:
            self.fail(check, f"step({shown}) info is not plain JSON data: {exc}")
        return obs, reward, terminated, truncated, info

    def step(self, env: gym.Env, action: Any, check: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        try:
            result = env.step(action)
        except Exception as exc:  # noqa: BLE001 - any exception from a bad action is the finding
            self.fail(check, f"step({repr(action)[:80]}) raised {type(exc).__name__}: {str(exc)[:300]}")
        return self.step_result(result, check, action)

    def reset(self, env: gym.Env, seed: int | None, check: str) -> tuple[Any, dict[str, Any]]:
        result = env.reset(seed=seed)
        self.require(isinstance(result, tuple) and len(result) == 2, check, "reset() must return (obs, info)")
        obs, info = result
        self.require(obs in env.observation_space, check, f"reset(seed={seed}) observation is outside the space")
        self.reset_info(info, check, seed)
        try:
            canonical_json(info)
        except (TypeError, ValueError) as exc:
            self.fail(check, f"reset(seed={seed}) info is not plain JSON data: {exc}")
        return obs, info


def _fingerprint(env: gym.Env) -> dict[str, Any]:
    """A cheap picture of an env's state: scalars by value, containers by identity and size."""
    u = env.unwrapped
    # Read first: an env may make its generator on first read (AgentEnv does), which is not a
    # change of state.
    rng = getattr(u, "_np_random", None)
    fp: dict[str, Any] = {}
    for key, value in vars(u).items():
        if value is None or isinstance(value, (bool, int, float, str)):
            fp[key] = ("value", value)
        elif isinstance(value, (list, dict, set, tuple, bytes, bytearray)):
            fp[key] = ("container", id(value), len(value))
        else:
            fp[key] = ("object", id(value))
    fp["<np_random state>"] = copy.deepcopy(rng.bit_generator.state) if rng is not None else None
    return fp


@contextmanager
def _perturbed_globals(salt: int) -> Iterator[None]:
    """Reseed `random` and `numpy.random` (and draw from them); restore their state afterwards."""
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        random.seed(1_000_003 * salt + 17)
        np.random.seed((7919 * salt + 3) % 2**32)
        random.random()
        np.random.random(3)
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


def _first_difference(a: list[str], b: list[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            where = next((j for j, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            lo = max(0, where - 60)
            return f"record {i} (0 = reset) differs near: {x[lo:where + 60]!r} vs {y[lo:where + 60]!r}"
    return f"one run has {len(a)} records, the other {len(b)}"


#: The contract checks `check_agent_env` runs, in order.
CHECKS: tuple[str, ...] = ("step-before-reset", "close", "gymnasium-check_env", "reset-info", "step-types",
                           "aliasing", "determinism", "seed-echo", "garbage", "step-after-end")


def check_agent_env(
    env_or_id: str | gym.Env,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    fresh_process: bool = True,
    n_garbage: int = 200,
    metrics: bool = True,
) -> EnvReport:
    """Check that an env meets the agentgym env contract, and report what each metric gets from it.

    See the module docstring for what the env needs.

    Runs Gymnasium's ``check_env`` on the unwrapped env (render check included; any warning it
    emits fails too), then these checks, each named in the failure message:

    - ``step-before-reset``: ``step`` on a fresh, never-reset env raises ``ResetNeeded``.
    - ``reset-info``: the reset info has messages, tools, task (family, domain, difficulty,
      split, id; no hidden key such as goal or gold, anywhere in the info) and the echoed seed.
    - ``step-types``: reward is a Python float (0 until the last step, then the episode score),
      terminated and truncated are Python bools, observations lie in the space, infos are plain
      JSON data with no hidden key before the end, a step's messages open with the assistant's
      turn whose ``tool_calls`` the tool messages answer, and the last info has the summary
      under ``episode`` and ``episode_summary`` (one episode is also played inside Gymnasium's
      `RecordEpisodeStatistics`, given its own key: it refuses an env that sets ``episode``).
    - ``aliasing``: observations and infos returned earlier in an episode are not mutated by
      later steps (each is deep-copied when received and compared at the end).
    - ``determinism``: the same seed and actions give the same trajectory twice in-process,
      with `random` and `numpy.random` reseeded in between, interleaved with a second env of
      the same kind, and (``fresh_process``) in a fresh process with another PYTHONHASHSEED.
    - ``seed-echo``: ``reset()`` without a seed echoes the seed it drew, and resetting with
      that seed replays the same episode.
    - ``garbage``: `GARBAGE_ACTIONS`, hostile arguments for each of the env's tools and
      ``action_space.sample()`` never raise and give observations the space contains.
    - ``step-after-end``: once an episode ended, ``step`` raises ``ResetNeeded`` and changes
      nothing (env attributes, ``np_random`` state), and the env replays correctly afterwards.
    - ``close``: ``close()`` twice does not raise (on an env this check made itself).

    Args:
        env_or_id: a registered id, or an env instance. An instance is used as it is (not
            closed); it must not have been reset yet when it has no ``spec``, because the
            step-before-reset check then runs on it. For the fresh-process part an instance
            needs a ``spec`` that serialises to JSON; without one that part is skipped with a
            warning.
        seeds: episode seeds for the determinism and replay checks.
        fresh_process: also replay in a fresh Python process (about half a second).
        n_garbage: at least this many garbage actions (the fixed corpus is always sent whole).
        metrics: also probe what each metric gets (`agentgym.testing.readiness`: a few short
            episodes, bare and with each noise kind, on a fresh copy of the env).

    Returns:
        An `EnvReport`: the checks passed and, with `metrics`, one finding per part of each
        metric (``ok``, or what is missing, e.g. "no gold calls, so tool recall is undefined");
        ``str(report)`` renders it. What is missing is reported, not raised: an env can keep the
        contract and still give a metric nothing to measure.

    Raises:
        AssertionError: a contract check failed; the message starts with ``check_agent_env[<check>]``.
    """
    from gymnasium.utils.env_checker import check_env

    owned = isinstance(env_or_id, str)
    env = gym.make(env_or_id) if owned else env_or_id
    spec = env.spec
    label = env_or_id if owned else (spec.id if spec is not None else type(env.unwrapped).__name__)
    c = _Checker(env, str(label))
    try:
        # step-before-reset, on an env that surely was never reset (and unwrapped, so that no
        # OrderEnforcing wrapper answers for the env).
        fresh = gym.make(spec) if spec is not None else None
        target = (fresh if fresh is not None else env).unwrapped
        try:
            target.step("hello")
        except ResetNeeded:
            pass
        except Exception as exc:  # noqa: BLE001
            c.fail("step-before-reset", f"step() before reset() raised {type(exc).__name__}, not ResetNeeded: {exc}")
        else:
            c.fail("step-before-reset", "step() before reset() did not raise ResetNeeded"
                   + ("" if fresh is not None else " (an instance without spec must be passed un-reset)"))
        if fresh is not None:
            fresh.close()
            try:
                fresh.close()
            except Exception as exc:  # noqa: BLE001
                c.fail("close", f"a second close() raised {type(exc).__name__}: {exc}")

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                check_env(env.unwrapped, skip_render_check=False)
            except Exception as exc:  # noqa: BLE001
                c.fail("gymnasium-check_env", f"{type(exc).__name__}: {exc}")
        # Without a spec gymnasium cannot make the env in other render modes; that is a limit
        # of the check, not a fault of the env.
        problems = [str(w.message) for w in caught
                    if issubclass(w.category, UserWarning) and "not having a spec" not in str(w.message)]
        c.require(not problems, "gymnasium-check_env", f"check_env warned: {problems[:3]}")

        _check_runs(c, env, list(seeds), fresh_process, env_or_id if owned else env)
        _check_seed_echo(c, env)
        _check_garbage(c, env, n_garbage, seeds[0] if seeds else 0)
        _check_step_after_end(c, env, list(seeds) or [0])
        return EnvReport(str(label), CHECKS, metric_findings(env) if metrics else ())
    finally:
        if owned:
            env.close()
            try:
                env.close()
            except Exception as exc:  # noqa: BLE001
                c.fail("close", f"a second close() raised {type(exc).__name__}: {exc}")


def _run_episode(c: _Checker, env: gym.Env, seed: int | None, actions: Sequence[Any], check: str) -> list[str]:
    """Play one episode with full checks; returns its canonical records (for comparison)."""
    hasher = TrajectoryHasher(keep_lines=True)
    obs, info = c.reset(env, seed, check)
    live: list[Any] = [(obs, info)]
    copies: list[Any] = [copy.deepcopy((obs, info))]
    hasher.reset(obs, info)
    for action in actions:
        result = c.step(env, action, check)
        live.append(result)
        copies.append(copy.deepcopy(result))
        hasher.step(*result)
        if result[2] or result[3]:
            break
    for i, (now, then) in enumerate(zip(live, copies)):
        c.require(now == then, "aliasing",
                  f"what {'reset' if i == 0 else f'step {i}'} returned was changed by a later step "
                  "(the env keeps and mutates an object it handed out)")
    assert hasher.lines is not None
    return hasher.lines


#: The key `_check_statistics_wrapper` gives Gymnasium's `RecordEpisodeStatistics`, whose own
#: (``episode``) holds the env's summary.
STATS_KEY = "episode_stats"


def _check_statistics_wrapper(c: _Checker, env: gym.Env, seed: int, actions: Sequence[Any]) -> None:
    """Wrapped in Gymnasium's `RecordEpisodeStatistics` under `STATS_KEY`, the env plays an episode
    to its end: the wrapper's statistics and the env's summary both reach the last info."""
    stats = RecordEpisodeStatistics(env, stats_key=STATS_KEY)
    try:
        stats.reset(seed=seed)
        for action in actions:
            _, _, terminated, truncated, info = stats.step(action)
            if terminated or truncated:
                c.require(set(info.get(STATS_KEY) or ()) >= {"r", "l", "t"} and "episode" in info, "step-types",
                          f"under RecordEpisodeStatistics(stats_key={STATS_KEY!r}) the last info lacks the "
                          "wrapper's statistics or the env's 'episode'")
                break
    except AssertionError:
        c.require(False, "step-types", f"the last step's info holds {STATS_KEY!r}, the key given to "
                  "RecordEpisodeStatistics")


def _check_runs(c: _Checker, env: gym.Env, seeds: list[int], fresh_process: bool, source: str | gym.Env) -> None:
    episodes: list[tuple[int, list[str]]] = []
    reference: list[str] = []
    for seed in seeds:
        _, info = c.reset(env, seed, "reset-info")
        actions = probe_actions(info["tools"], seed)
        first = _run_episode(c, env, seed, actions, "step-types")
        with _perturbed_globals(seed + 1):
            second = _run_episode(c, env, seed, actions, "determinism")
        c.require(first == second, "determinism",
                  f"seed {seed}: a second run (random/numpy.random reseeded) differs: {_first_difference(first, second)}")
        episodes.append((seed, actions))
        reference.append(hashlib.sha256("".join(line + "\n" for line in first).encode("ascii")).hexdigest())

    _check_statistics_wrapper(c, env, *episodes[0])

    # Interleaved with a second env of the same kind: no shared state between instances.
    other = gym.make(env.spec) if env.spec is not None else None
    if other is not None:
        try:
            for (seed, actions), expected in zip(episodes, reference):
                h_main, h_other = TrajectoryHasher(), TrajectoryHasher()
                h_main.reset(*env.reset(seed=seed))
                h_other.reset(*other.reset(seed=seed + 1))
                done_other = False
                for action in actions:
                    if not done_other:
                        r = other.step(action)
                        h_other.step(*r)
                        done_other = r[2] or r[3]
                    r = env.step(action)
                    h_main.step(*r)
                    if r[2] or r[3]:
                        break
                c.require(h_main.hexdigest() == expected, "determinism",
                          f"seed {seed}: stepping a second env in between changed the trajectory")
        finally:
            other.close()

    if not fresh_process or not episodes:
        return
    try:
        hashes = fresh_process_hashes(source, episodes)
    except ValueError as exc:
        warnings.warn(f"check_agent_env: fresh-process replay skipped: {exc}", stacklevel=3)
        return
    except RuntimeError as exc:
        c.fail("determinism", str(exc))
        return
    for (seed, _), mine, theirs in zip(episodes, reference, hashes):
        c.require(mine == theirs, "determinism",
                  f"seed {seed}: a fresh process with another PYTHONHASHSEED gives another trajectory")


def _check_seed_echo(c: _Checker, env: gym.Env) -> None:
    obs, info = c.reset(env, None, "seed-echo")
    drawn = info["seed"]
    actions = probe_actions(info["tools"], drawn % 2**32, n=6)
    hasher = TrajectoryHasher(keep_lines=True)
    hasher.reset(obs, info)
    for action in actions:
        r = c.step(env, action, "seed-echo")
        hasher.step(*r)
        if r[2] or r[3]:
            break
    replay = _run_episode(c, env, drawn, actions, "seed-echo")
    assert hasher.lines is not None
    c.require(hasher.lines == replay, "seed-echo",
              f"reset() drew seed {drawn}, but reset(seed={drawn}) plays another episode: "
              f"{_first_difference(hasher.lines, replay)}")


def _check_garbage(c: _Checker, env: gym.Env, n_garbage: int, seed: int) -> None:
    _, info = c.reset(env, seed, "garbage")
    actions: list[Any] = list(GARBAGE_ACTIONS) + schema_garbage(info["tools"])
    space = copy.deepcopy(env.action_space)
    space.seed(seed)
    while len(actions) < n_garbage:
        actions.append(space.sample())
    done = False
    episode_seed = seed
    for action in actions:
        if done:
            episode_seed += 1
            c.reset(env, episode_seed, "garbage")
        _, _, terminated, truncated, _ = c.step(env, action, "garbage")
        done = terminated or truncated


def _end_episode(c: _Checker, env: gym.Env, seed: int, check: str, limit: int = 10_000) -> None:
    c.reset(env, seed, check)
    for _ in range(limit):
        _, _, terminated, truncated, _ = c.step(env, "OK.", check)
        if terminated or truncated:
            return
    c.fail(check, f"an episode of 'OK.' messages did not end within {limit} steps (no turn budget?)")


def _check_step_after_end(c: _Checker, env: gym.Env, seeds: list[int]) -> None:
    check = "step-after-end"
    for seed in seeds:
        _, info = c.reset(env, seed, check)
        actions = probe_actions(info["tools"], seed, n=6)
        reference = _run_episode(c, env, seed, actions, check)
        _end_episode(c, env, seed, check)
        before = _fingerprint(env)
        for action in ("OK.", "", '{"name": "x", "arguments": {}}'):
            for target in (env, env.unwrapped):
                try:
                    target.step(action)
                except ResetNeeded:
                    pass
                except Exception as exc:  # noqa: BLE001
                    c.fail(check, f"step() after the episode ended raised {type(exc).__name__}, not ResetNeeded")
                else:
                    c.fail(check, "step() after the episode ended did not raise ResetNeeded")
        after = _fingerprint(env)
        changed = sorted(k for k in before if before[k] != after.get(k)) + sorted(set(after) - set(before))
        c.require(not changed, check, f"a refused step() after the end changed the env's state: {changed}")
        again = _run_episode(c, env, seed, actions, check)
        c.require(again == reference, check,
                  f"seed {seed}: after refused steps the env replays another episode: {_first_difference(reference, again)}")
