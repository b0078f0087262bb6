"""Real episodes: the cells they are played in, playing them, and the recordings a replay times.

A *cell* is one env id, noise preset, difficulty, split and agent. Playing a cell runs the agent
on seeds 0..N-1 with `agentgym.eval.episode.run_episode` (the harness's own loop, so an agent sees
exactly what it sees in a run) and keeps, per episode, the actions, each step's kind (a message to
the user, a tool call, or an action the env rejected before any call) and a digest of what the env
returned. Episodes are deterministic in seed and actions, so replaying the actions in a fresh env
is the same episode: `Digest` is how the replay proves it.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import gymnasium as gym

#: Agent names of these benchmarks that are not built-in agents: their ``module:Class``.
AGENT_PATHS = {"lm-mix": "perf.lm_mix:LmMixAgent"}
#: Recordings file format; bump when its fields change.
FORMAT = 1


@dataclass(frozen=True, order=True)
class Cell:
    """What one set of real episodes is played in and by."""

    env_id: str
    noise: str
    difficulty: str
    split: str
    agent: str

    def make_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``gym.make(env_id, ...)``."""
        kw: dict[str, Any] = {"difficulty": self.difficulty, "split": self.split}
        if self.noise != "off":
            kw["noise"] = self.noise
        return kw

    @property
    def label(self) -> str:
        return f"{self.env_id} noise={self.noise} {self.difficulty} {self.split} {self.agent}"


@dataclass
class Recording:
    """One played episode: its seed, actions, step kinds and the digest of what the env returned."""

    seed: int
    actions: list[Any]
    kinds: list[str]
    digest: str


@dataclass
class Recordings:
    """Every cell's recorded episodes, and the seconds the agents took to play them."""

    cells: dict[Cell, list[Recording]] = field(default_factory=dict)
    play_s: float = 0.0

    def of(self, env_id: str, noise: str) -> list[tuple[Cell, Recording]]:
        """Every episode of one id and noise preset, the cells' in turn (each cell's first, then
        each cell's second, ...), so any prefix of the list holds every cell alike."""
        mine = [(c, recs) for c, recs in self.cells.items() if c.env_id == env_id and c.noise == noise]
        longest = max((len(recs) for _c, recs in mine), default=0)
        return [(c, recs[j]) for j in range(longest) for c, recs in mine if j < len(recs)]

    def save(self, path: Path) -> None:
        """Write as JSON (one object; cells as their fields)."""
        data = {"format": FORMAT, "play_s": self.play_s,
                "cells": [{"cell": asdict(c), "episodes": [asdict(r) for r in recs]} for c, recs in self.cells.items()]}
        path.write_text(json.dumps(data), "utf-8")

    @classmethod
    def load(cls, path: Path) -> Recordings:
        """Read what `save` wrote; ValueError for another format."""
        data = json.loads(Path(path).read_text("utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"{path}: recordings format {data.get('format')!r}, expected {FORMAT}")
        cells = {Cell(**c["cell"]): [Recording(**r) for r in c["episodes"]] for c in data["cells"]}
        return cls(cells, data["play_s"])


def cells(ids: Iterable[str], noises: Iterable[str], difficulties: Iterable[str], splits: Iterable[str],
          agents: Iterable[str]) -> list[Cell]:
    """Every combination, in a fixed order."""
    return [Cell(i, n, d, s, a) for i in ids for n in noises for d in difficulties for s in splits for a in agents]


def make_env(cell: Cell) -> gym.Env:
    """A fresh env of `cell`."""
    import agentgym  # noqa: F401  (registers the ids)

    return gym.make(cell.env_id, **cell.make_kwargs())


def make_player(agent: str) -> Any:
    """An agent by built-in name, `AGENT_PATHS` name or ``module:Class``."""
    from agentgym.agents import make_agent

    return make_agent(AGENT_PATHS.get(agent, agent))


class Digest:
    """A running SHA-256 of an episode as the env returned it: the reset's observation, then each
    step's observation, reward and end flags."""

    def __init__(self, obs: Any) -> None:
        self._h = hashlib.sha256(str(obs).encode())

    def step(self, obs: Any, reward: float, terminated: bool, truncated: bool) -> None:
        self._h.update(f"\x1e{obs}\x1f{float(reward)!r}\x1f{bool(terminated):d}{bool(truncated):d}".encode())

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def step_kind(info: dict[str, Any]) -> str:
    """``tool`` (the action made calls), ``error`` (rejected before any call) or ``message``."""
    if info.get("calls"):
        return "tool"
    return "error" if info.get("errors") else "message"


class _Recorder(gym.Wrapper):
    """Keeps the digest and step kinds of the episode played through it."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.digest, self.kinds = Digest(obs), []
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.digest.step(obs, reward, terminated, truncated)
        self.kinds.append(step_kind(info))
        return obs, reward, terminated, truncated, info


def play_cell(cell: Cell, seeds: Iterable[int]) -> list[Recording]:
    """Play `cell`'s agent on each seed and record the episodes."""
    from agentgym.eval.episode import run_episode

    env, agent = _Recorder(make_env(cell)), make_player(cell.agent)
    out = []
    for seed in seeds:
        result = run_episode(env, agent, seed)
        out.append(Recording(seed, list(result.actions), list(env.kinds), env.digest.hexdigest()))
    env.close()
    return out


def play(all_cells: list[Cell], episodes: int, log: Callable[..., None]) -> Recordings:
    """Play `episodes` episodes (seeds 0..N-1) of every cell."""
    rec = Recordings()
    t0 = time.perf_counter()
    for i, cell in enumerate(all_cells):
        rec.cells[cell] = play_cell(cell, range(episodes))
        if i % 12 == 11 or i == len(all_cells) - 1:
            log(f"[play] {i + 1}/{len(all_cells)} cells ({time.perf_counter() - t0:.0f} s)")
    rec.play_s = time.perf_counter() - t0
    return rec
