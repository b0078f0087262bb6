"""The best case's units: one per (subject, operation), each owning its env instance.

A unit's ``block(n)`` runs ``n`` timed calls and returns their wall-clock durations in nanoseconds
(``time.perf_counter_ns`` taken right before and right after the one call). Whatever has to happen
between two timed calls (a reset before a step, a fresh ``ta.make`` before a TextArena reset,
choosing the next action, checking the outcome) runs untimed.

Subjects:

- ``floor``: `perf.floor`'s minimal env.
- ``textarena``: ``ta.make("GuessTheNumber-v0")`` (TextArena's default wrappers
  ``LLMObservationWrapper`` + ``ActionFormattingWrapper``). Its documented loop gets the
  observation with ``env.get_observation()`` after ``env.step(action)``: a step is both, a reset is
  ``env.reset(num_players=1, seed=s)`` plus the first ``get_observation()``. Its
  ``LLMObservationWrapper`` keeps the history across resets (every observation would grow with
  every episode played), so each episode gets a fresh ``ta.make`` (untimed), as its examples do.
- ``gem``: ``gem.make("game:GuessTheNumber-v0-hard")`` (GEM's text-game port of it, bare, as
  ``gem.make`` returns it): ``env.step(action)``, ``env.reset(seed=s)``.
- ``AgentRL/*``: ``gym.make(id)`` and ``gym.make(id, noise="medium")``; a message step sends
  ``envbench.MESSAGE``, a tool step a valid read-only tool call chosen per episode by
  ``envbench.choose_tool_action`` (the pytest benchmarks' choice), a reset is ``env.reset(seed=s)``.

Steps are timed on live episodes: an untimed reset starts a new one (seeds cycle 0..99) every
``STEPS_PER_EPISODE`` (8) steps, or sooner: an AgentRL episode takes as many as an untimed probe
of the same seed and action, in an env of its own, shows can be taken before one ends the episode
(a turn budget, a user who gives up on a question asked again, a noise budget), and a seed whose
first step would end it is passed over; so no timed step ends an episode (one that does anyway is
counted, and without noise is an error). The guessing
games get a fixed valid action each step: the next unguessed number, skipping the target (read
from the env untimed), so every timed step is a valid, non-final guess with a hint. This is the
best case of the results: one repeated call with no arguments, one repeated sentence; whole
episodes as agents play them are `perf.real_episodes`'.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
from envbench import MESSAGE, N_SEEDS, STEPS_PER_EPISODE, bench_env_ids, choose_tool_action

from perf import floor

ns = time.perf_counter_ns

TEXTARENA_ID = "GuessTheNumber-v0"
GEM_ID = "game:GuessTheNumber-v0-hard"
NOISE_PRESETS: tuple[str | None, ...] = (None, "medium")


def make_textarena() -> Any:
    import textarena as ta

    return ta.make(TEXTARENA_ID)


def make_gem() -> Any:
    import gem

    return gem.make(GEM_ID)


def make_agentrl(env_id: str, noise: str | None) -> gym.Env:
    import agentgym  # noqa: F401

    return gym.make(env_id) if noise is None else gym.make(env_id, noise=noise)


def agentrl_ids() -> list[str]:
    """Every live AgentRL id (remote ones excluded), sorted."""
    import agentgym  # noqa: F401

    return bench_env_ids()


def _guesses(lo: int, hi: int, target: int, n: int, fmt: str) -> list[str]:
    """`n` valid, non-final guesses: distinct numbers in [lo, hi] other than the target."""
    return [fmt.format(g) for g in range(lo, hi + 1) if g != target][:n]


# ------------------------------------------------------------------------------- units
@dataclass
class Unit:
    """One timed operation of one subject. `block(n)` -> the wall-clock ns of n timed calls."""

    subject: str          # "floor", "textarena", "gem", or an AgentRL id
    kind: str             # "floor", "peer" or "agentrl"
    noise: str | None
    op: str               # "reset", "step" (peers, floor), "step:message", "step:tool"
    block: Callable[[int], list[int]] = field(repr=False)
    stats: dict[str, Any] = field(default_factory=dict)
    #: what each timed call is, for the report
    what: str = ""

    @property
    def label(self) -> str:
        return f"{self.subject} noise={self.noise or 'off'} {self.op}"


def _seed_cycle() -> Any:
    return itertools.cycle(range(N_SEEDS))


# --- resets
def reset_unit_gym(subject: str, kind: str, noise: str | None, env: Any, what: str) -> Unit:
    return Unit(subject, kind, noise, "reset", floor.reset_block(env), what=what)


def reset_unit_textarena() -> Unit:
    seeds = _seed_cycle()

    def block(n: int) -> list[int]:
        wall: list[int] = []
        for _ in range(n):
            s = next(seeds)
            env = make_textarena()  # fresh per episode (its history wrapper outlives reset): untimed
            t0 = ns()
            env.reset(num_players=1, seed=s)
            env.get_observation()
            t1 = ns()
            wall.append(t1 - t0)
        return wall

    return Unit("textarena", "peer", None, "reset", block,
                what="env.reset(num_players=1, seed=s); env.get_observation() on a fresh ta.make")


# --- steps
def step_unit_floor() -> Unit:
    return Unit("floor", "floor", None, "step", floor.step_block(), what=floor.WHAT["step"])


def step_unit_textarena() -> Unit:
    seeds = _seed_cycle()
    st: dict[str, Any] = {"env": None, "actions": []}

    def new_episode() -> None:
        env = make_textarena()
        env.reset(num_players=1, seed=next(seeds))
        env.get_observation()
        budget = env.max_turns - 1  # the guess at max_turns ends the game
        st["env"] = env
        st["actions"] = _guesses(env.min_number, env.max_number, env.game_number,
                                 min(STEPS_PER_EPISODE, budget), "[{}]")[::-1]

    def block(n: int) -> list[int]:
        wall: list[int] = []
        for _ in range(n):
            if not st["actions"]:
                new_episode()
            env, action = st["env"], st["actions"].pop()
            t0 = ns()
            done, _info = env.step(action)
            env.get_observation()
            t1 = ns()
            wall.append(t1 - t0)
            if done:
                raise AssertionError(f"textarena: timed step {action} ended the game")
        return wall

    return Unit("textarena", "peer", None, "step", block,
                what="env.step('[k]'); env.get_observation() (k: next unguessed number, not the target)")


def step_unit_gem() -> Unit:
    env = make_gem()
    seeds = _seed_cycle()
    st: dict[str, Any] = {"actions": []}
    step = env.step

    def new_episode() -> None:
        env.reset(seed=next(seeds))
        budget = env.max_turns - 1  # turn_count >= max_turns ends the game
        st["actions"] = _guesses(env.min_number, env.max_number, env.game_number,
                                 min(STEPS_PER_EPISODE, budget), "\\boxed{{{}}}")[::-1]

    def block(n: int) -> list[int]:
        wall: list[int] = []
        for _ in range(n):
            if not st["actions"]:
                new_episode()
            action = st["actions"].pop()
            t0 = ns()
            result = step(action)
            t1 = ns()
            wall.append(t1 - t0)
            if result[2] or result[3]:
                raise AssertionError(f"gem: timed step {action} ended the game")
        return wall

    return Unit("gem", "peer", None, "step", block,
                what="env.step('\\boxed{k}') (k: next unguessed number, not the target)")


def step_unit_agentrl(env_id: str, noise: str | None, op: str) -> Unit:
    env, probe = make_agentrl(env_id, noise), make_agentrl(env_id, noise)
    seeds = _seed_cycle()
    st: dict[str, Any] = {"left": 0, "done": True, "action": MESSAGE}
    tool_cache: dict[int, str] = {}
    allowed: dict[int, int] = {}
    counts = {"steps": 0, "ended": 0, "episodes": 0, "calls": 0, "valid": 0, "injected": 0}
    chosen: dict[str, int] = {}
    step = env.step

    def steps_before_end(seed: int, action: str) -> int:
        probe.reset(seed=seed)
        for k in range(STEPS_PER_EPISODE):
            out = probe.step(action)
            if out[2] or out[3]:
                return k
        return STEPS_PER_EPISODE

    def new_episode() -> None:
        for _ in range(N_SEEDS):
            seed = next(seeds)
            obs, info = env.reset(seed=seed)
            action = MESSAGE
            if op == "step:tool":
                action = tool_cache.get(seed)
                if action is None:
                    action, how = choose_tool_action(env, obs, info)
                    tool_cache[seed] = action
                    chosen[f"`{action}` ({how})"] = chosen.get(f"`{action}` ({how})", 0) + 1
            if seed not in allowed:
                allowed[seed] = steps_before_end(seed, action)
            if allowed[seed]:
                st.update(left=allowed[seed], done=False, action=action)
                counts["episodes"] += 1
                return
        raise AssertionError(f"{env_id} {op}: the first step ends every episode")

    def block(n: int) -> list[int]:
        wall: list[int] = []
        for _ in range(n):
            if st["done"] or st["left"] <= 0:
                new_episode()
            action = st["action"]
            t0 = ns()
            result = step(action)
            t1 = ns()
            wall.append(t1 - t0)
            st["left"] -= 1
            counts["steps"] += 1
            info = result[4]
            if op == "step:tool":
                calls = info.get("calls", ())
                counts["calls"] += len(calls)
                counts["valid"] += sum(1 for c in calls if c.get("valid"))
                counts["injected"] += sum(1 for c in calls if c.get("injected"))
            if result[2] or result[3]:
                st["done"] = True
                counts["ended"] += 1
                if noise is None:
                    raise AssertionError(f"{env_id} {op}: a timed step ended the episode without noise")
        return wall

    what = f"env.step({MESSAGE!r})" if op == "step:message" else "env.step(<valid read-only tool call>)"
    unit = Unit(env_id, "agentrl", noise, op, block, what=what)
    unit.stats = {"counts": counts, "chosen": chosen}
    return unit


def build_units(ids: list[str] | None = None, with_peers: bool = True) -> list[Unit]:
    """Every unit of the interleaved run: the floor, the peers, then each AgentRL id x noise x op."""
    units = [step_unit_floor(), reset_unit_gym("floor", "floor", None, floor.make_floor(), floor.WHAT["reset"])]
    if with_peers:
        units += [step_unit_textarena(), reset_unit_textarena(),
                  step_unit_gem(), reset_unit_gym("gem", "peer", None, make_gem(), "env.reset(seed=s)")]
    for env_id in ids if ids is not None else agentrl_ids():
        for noise in NOISE_PRESETS:
            units.append(reset_unit_gym(env_id, "agentrl", noise, make_agentrl(env_id, noise), "env.reset(seed=s)"))
            units.append(step_unit_agentrl(env_id, noise, "step:message"))
            units.append(step_unit_agentrl(env_id, noise, "step:tool"))
    return units


# ------------------------------------------------------------------------------- memory
def memory_factories() -> dict[str, Callable[[int], Any]]:
    """label -> (seed -> a made and reset env, kept live by the caller)."""

    def agentrl(env_id: str, noise: str | None) -> Callable[[int], Any]:
        def make(seed: int) -> Any:
            env = make_agentrl(env_id, noise)
            env.reset(seed=seed)
            return env
        return make

    def floor_(seed: int) -> Any:
        env = floor.make_floor()
        env.reset(seed=seed)
        return env

    def textarena(seed: int) -> Any:
        env = make_textarena()
        env.reset(num_players=1, seed=seed)
        env.get_observation()
        return env

    def gem_(seed: int) -> Any:
        env = make_gem()
        env.reset(seed=seed)
        return env

    out: dict[str, Callable[[int], Any]] = {"floor": floor_, "textarena": textarena, "gem": gem_}
    for env_id in agentrl_ids():
        for noise in NOISE_PRESETS:
            out[f"{env_id} noise={noise or 'off'}"] = agentrl(env_id, noise)
    return out
