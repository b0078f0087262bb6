"""Benchmark suites, versioned like envs: a published suite never changes.

A suite is env ids x noise settings x seeds x trials, all on the `test` split. Its seeds start at
`TEST_SEED_BASE`, apart from the seeds people train on. Users can also write a suite as a TOML
file (see `load_suite`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from agentgym.eval.runner import EpisodeJob

__all__ = ["Suite", "SUITES", "get_suite", "load_suite", "TEST_SEED_BASE"]

#: Suites draw their seeds from here on, so a published suite's tasks stay out of training seeds.
TEST_SEED_BASE = 10_000_000


@dataclass(frozen=True)
class Suite:
    """A frozen benchmark: which episodes to play and how to rank them."""

    id: str
    description: str
    envs: tuple[str, ...]
    noise: tuple[str, ...]
    n_seeds: int
    trials: int = 1
    split: str = "test"
    seed_base: int = TEST_SEED_BASE
    #: The metric the leaderboard ranks by.
    primary: str = "success"
    #: False once a newer version replaces it: stored and shown, not ranked.
    current: bool = True
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def seeds(self) -> range:
        return range(self.seed_base, self.seed_base + self.n_seeds)

    def jobs(self, seeds: Sequence[int] | None = None) -> list[EpisodeJob]:
        """Every episode of the suite, in a fixed order.

        Args:
            seeds: the task seeds in place of the public `seeds`, one per seed of the suite (a
                sealed run's, drawn by the board); the layout is the same: every env x noise x
                seed x trial.

        Raises:
            ValueError: `seeds` is not `n_seeds` long.
        """
        if seeds is not None and len(seeds) != self.n_seeds:
            raise ValueError(f"suite {self.id} has {self.n_seeds} seeds per cell, got {len(seeds)}")
        kw = tuple(sorted({"split": self.split, **self.kwargs}.items()))
        return [
            EpisodeJob(env_id=env_id, seed=seed, trial=trial, noise=None if noise == "none" else noise,
                       kwargs=kw, suite=self.id)
            for env_id in self.envs
            for noise in self.noise
            for seed in (self.seeds if seeds is None else seeds)
            for trial in range(self.trials)
        ]

    def __len__(self) -> int:
        return len(self.envs) * len(self.noise) * self.n_seeds * self.trials


_ALL_IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
_KINDS = ("tool_failure", "corruption", "ambiguity", "goal_shift", "typos")

SUITES: dict[str, Suite] = {
    s.id: s
    for s in (
        # 200 seeds x 2 trials = 400 episodes per (env, noise) cell: a 95% CI half-width under
        # 5 points on success at any rate (1.96 * sqrt(.25 / 400) = 4.9).
        Suite(
            id="core-v0",
            description="Every family on unseen test domains, without noise and with the medium preset.",
            envs=_ALL_IDS,
            noise=("none", "medium"),
            n_seeds=200,
            trials=2,
        ),
        Suite(
            id="robustness-v0",
            description="Each noise kind alone at rates 0, 0.1, 0.3 and 0.5 on every family.",
            envs=_ALL_IDS,
            noise=("none",) + tuple(f"{k}={r}" for k in _KINDS for r in (0.1, 0.3, 0.5)),
            n_seeds=100,
            trials=1,
        ),
        # A small suite for smoke tests and quick looks; not for ranking.
        Suite(
            id="smoke-v0",
            description="A quick look: 20 seeds per family, with and without medium noise.",
            envs=_ALL_IDS,
            noise=("none", "medium"),
            n_seeds=20,
            trials=1,
        ),
    )
}


def get_suite(name: str) -> Suite:
    """A built-in suite by id, or a user suite from a ``.toml`` path."""
    if name in SUITES:
        return SUITES[name]
    if name.endswith(".toml"):
        return load_suite(name)
    raise ValueError(f"unknown suite {name!r}; built-in suites: {', '.join(SUITES)}; or give a .toml file")


_TOML_FIELDS = {"id", "description", "envs", "noise", "n_seeds", "trials", "split", "seed_base", "primary", "kwargs"}


def load_suite(path: str | Path) -> Suite:
    """A suite from a TOML file with a ``[suite]`` table; unknown keys are an error.

    Example::

        [suite]
        id = "my-suite-v0"
        description = "Dialog only, light noise"
        envs = ["AgentRL/Dialog-v0"]
        noise = ["none", "light"]
        n_seeds = 50
        trials = 1
    """
    data = tomllib.loads(Path(path).read_text("utf-8"))
    table = data.get("suite")
    if not isinstance(table, dict) or set(data) != {"suite"}:
        raise ValueError(f"{path}: expected exactly one [suite] table")
    unknown = set(table) - _TOML_FIELDS
    missing = {"id", "envs", "noise", "n_seeds"} - set(table)
    if unknown or missing:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
    if not isinstance(table["n_seeds"], int) or table["n_seeds"] < 1:
        raise ValueError(f"{path}: n_seeds must be a positive integer")
    return Suite(
        id=str(table["id"]),
        description=str(table.get("description", "")),
        envs=tuple(table["envs"]),
        noise=tuple(table["noise"]),
        n_seeds=int(table["n_seeds"]),
        trials=int(table.get("trials", 1)),
        split=str(table.get("split", "test")),
        seed_base=int(table.get("seed_base", TEST_SEED_BASE)),
        primary=str(table.get("primary", "success")),
        kwargs=dict(table.get("kwargs", {})),
    )
