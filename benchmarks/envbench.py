"""Helpers of the env speed benchmarks: registry scan, env making, tool-call choice, episode driver.

Run with ``.venv/bin/pytest benchmarks --benchmark-only`` (the project's addopts hold
``--benchmark-skip``; ``--benchmark-only`` overrides it). ``benchmarks/`` is not in ``testpaths``,
so ``make test`` never runs these. ``python benchmarks/report.py`` runs them and writes a table.

Knobs (environment variables, for quick smoke runs):
    AGENTGYM_BENCH_ROUNDS   timed rounds per benchmark (default 2000)
    AGENTGYM_BENCH_WARMUP   untimed warm-up rounds per benchmark (default 100)
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers every AgentRL/* id)
from agentgym.core.protocol import parse_action
from agentgym.core.render import call_text

#: Timed rounds per benchmark: enough for a stable median of a few-microsecond operation.
ROUNDS = int(os.environ.get("AGENTGYM_BENCH_ROUNDS", "2000"))
WARMUP_ROUNDS = int(os.environ.get("AGENTGYM_BENCH_WARMUP", "100"))
#: Resets cycle over this many fixed seeds (0..N-1), so worlds vary but runs are reproducible.
N_SEEDS = 100
#: Steps timed per episode before the (untimed) setup resets; always kept below the turn budget,
#: so no timed step truncates or terminates the episode.
STEPS_PER_EPISODE = 8
#: With noise (simulated latency can exhaust a time budget), a timed step may still end an episode
#: now and then: tolerated up to this share of the steps (the median is unaffected); never without.
MAX_ENDED_SHARE = 0.05
#: The plain assistant message of the message-step benchmark.
MESSAGE = "Could you tell me more about what you need?"
#: Noise presets benchmarked: None (off) and "medium" (skipped until `noise=` is accepted).
NOISE_PRESETS: tuple[str | None, ...] = (None, "medium")

_REMOTE_HINTS = ("remote", "http", "server", "client")
_REMOTE_KWARGS = ("url", "base_url", "endpoint", "host", "address")


def _is_remote(spec: gym.envs.registration.EnvSpec) -> bool:
    """Remote ids (an env served over the network) measure the network, not the env: excluded."""
    entry = spec.entry_point if isinstance(spec.entry_point, str) else getattr(spec.entry_point, "__module__", "")
    text = f"{spec.id} {entry}".lower()
    return any(h in text for h in _REMOTE_HINTS) or any(k in (spec.kwargs or {}) for k in _REMOTE_KWARGS)


def bench_env_ids() -> list[str]:
    """Every live ``AgentRL/*`` id in the Gymnasium registry, remote ones excluded, sorted."""
    return sorted(
        env_id for env_id, spec in gym.registry.items()
        if env_id.startswith("AgentRL/") and not _is_remote(spec)
    )


def make_env(env_id: str, noise: str | None) -> gym.Env:
    """``gym.make(env_id)`` or ``gym.make(env_id, noise=noise)``; skips when noise is not accepted."""
    if noise is None:
        return gym.make(env_id)
    try:
        return gym.make(env_id, noise=noise)
    except (TypeError, ValueError) as exc:
        pytest.skip(f"{env_id} does not accept noise={noise!r} yet: {exc}")


# ------------------------------------------------------------------------- tool-step choice


def _first_enum(schema: dict[str, Any]) -> tuple[bool, Any]:
    """(True, value) when `schema` is an enum (possibly nullable) with a non-null member."""
    for option in [schema, *schema.get("anyOf", ())]:
        for v in option.get("enum") or ():
            if v is not None:
                return True, v
    return False, None


def _tool_kind(env: gym.Env, name: str) -> str | None:
    toolkit = getattr(env.unwrapped, "toolkit", None)
    try:
        return toolkit.spec(name).kind.value if toolkit is not None else None
    except (KeyError, AttributeError):
        return None


def _is_valid_call(env: gym.Env, action: str) -> bool:
    """True when `action` parses to tool calls that the current episode's toolkit accepts."""
    parsed = parse_action(action)
    if parsed.error is not None or not parsed.calls:
        return False
    toolkit = getattr(env.unwrapped, "toolkit", None)
    for c in parsed.calls:
        if c.error is not None:
            return False
        if toolkit is not None and toolkit.validate(c.name, c.arguments) is not None:
            return False
    return True


def choose_tool_action(env: gym.Env, obs: str, info: dict[str, Any]) -> tuple[str, str]:
    """A valid, read-only tool call for the episode just reset: (action, how it was chosen).

    Dialog: ``search`` with no arguments. Otherwise the first READ tool of ``info["tools"]`` whose
    required parameters are all enums (filled with their first value) or that has none. Last
    resort: the oracle's first action, when it is a valid tool call.
    """
    family = getattr(env.unwrapped, "family", None)
    names = [t["function"]["name"] for t in info.get("tools", ())]
    if family == "dialog" and "search" in names:
        action = call_text("search")
        if _is_valid_call(env, action):
            return action, "dialog: search()"
    for t in info.get("tools", ()):
        fn = t["function"]
        if _tool_kind(env, fn["name"]) != "read":
            continue
        params = fn.get("parameters", {})
        props = params.get("properties", {})
        args: dict[str, Any] = {}
        for key in params.get("required", ()):
            ok, value = _first_enum(props.get(key, {}))
            if not ok:
                break
            args[key] = value
        else:
            action = call_text(fn["name"], **args)
            if _is_valid_call(env, action):
                return action, f"first read tool: {fn['name']}"
    from agentgym.agents.oracle import OracleAgent

    oracle = OracleAgent()
    oracle.bind(env.unwrapped)
    oracle.reset(obs, info)
    action = oracle.act(obs, info)
    if _is_valid_call(env, action):
        return action, "oracle's first action"
    pytest.fail(f"no valid tool call found for {env.spec.id if env.spec else env!r}: tools {names}")


# ------------------------------------------------------------------------- episode driver


@dataclass
class StepDriver:
    """Feeds `benchmark.pedantic` a live episode for every timed step.

    `setup()` runs untimed before each round: it books the previous step's outcome, then resets
    (next seed of the cycle) when the episode has ended or its step allowance is used up: at most
    STEPS_PER_EPISODE, and once the timed action is known (`timed_step`), as many as an untimed
    probe of the same seed and action, in an env of its own, takes before one ends the episode (a
    turn budget, a user who gives up on a question asked again); a seed whose first step would end
    it is passed over. `ended` counts timed steps that ended an episode; the benchmarks assert it
    stays 0 without noise. The timed callable does only ``env.step(action)`` and one attribute store.
    """

    env: gym.Env
    seeds: Any = field(default_factory=lambda: itertools.cycle(range(N_SEEDS)))
    obs: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    last: Any = None
    last_info: dict[str, Any] = field(default_factory=dict)
    steps_left: int = 0
    done: bool = True
    ended: int = 0
    resets: int = 0
    steps: int = 0
    action: str | None = None
    probe: gym.Env | None = None
    allowed: dict[int, int] = field(default_factory=dict)

    def _allowed(self, seed: int) -> int:
        """Steps of `action` the episode of `seed` takes before one ends it (at most STEPS_PER_EPISODE)."""
        if self.action is None:
            return STEPS_PER_EPISODE
        if seed not in self.allowed:
            self.probe = self.probe or gym.make(self.env.spec)
            self.probe.reset(seed=seed)
            self.allowed[seed] = STEPS_PER_EPISODE
            for k in range(STEPS_PER_EPISODE):
                out = self.probe.step(self.action)
                if out[2] or out[3]:
                    self.allowed[seed] = k
                    break
        return self.allowed[seed]

    def reset(self) -> None:
        for _ in range(N_SEEDS):
            seed = next(self.seeds)
            self.obs, self.info = self.env.reset(seed=seed)
            budget = int(self.info.get("max_turns", STEPS_PER_EPISODE + 1))
            self.steps_left = min(budget - 1, self._allowed(seed))
            if self.steps_left > 0:
                break
        else:
            raise AssertionError(f"the first step of {self.action!r} ends every episode")
        self.done = False
        self.resets += 1

    def _book(self) -> None:
        out, self.last = self.last, None
        if out is None:
            return
        self.last_info = out[4]
        self.steps += 1
        self.steps_left -= 1
        if out[2] or out[3]:
            self.done = True
            self.ended += 1

    def setup(self) -> None:
        self._book()
        if self.done or self.steps_left <= 0:
            self.reset()

    def finish(self) -> None:
        """Book the last timed step (call after `benchmark.pedantic`)."""
        self._book()

    def timed_step(self, action: str) -> Callable[[], None]:
        """The timed callable: one ``env.step(action)`` (`reset` probes each seed with this action)."""
        self.action = action
        step = self.env.step
        driver = self

        def timed() -> None:
            driver.last = step(action)

        return timed
