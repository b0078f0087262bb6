"""Benchmark suites, versioned like envs: a published suite never changes.

A suite is env ids x noise settings x seeds x trials, all on the `test` split. Its seeds start at
`TEST_SEED_BASE`, apart from the seeds people train on. Users can also write a suite as a TOML
file (see `load_suite`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Sequence

from agentgym.core.seeding import MAX_SEED
from agentgym.core.task import SPLITS
from agentgym.eval.jobs import EpisodeJob
from agentgym.noise.spec import NoiseSpecError, parse_noise

__all__ = ["Suite", "SUITES", "get_suite", "load_suite", "TEST_SEED_BASE", "MAX_SUITE_FILE_BYTES", "PRIMARY_METRICS"]

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
    #: Make kwargs for every env of the suite; read-only (suites are shared, by every thread too).
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "envs", tuple(self.envs))
        object.__setattr__(self, "noise", tuple(self.noise))
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))

    @property
    def seeds(self) -> range:
        return range(self.seed_base, self.seed_base + self.n_seeds)

    def jobs(self, seeds: Sequence[int] | None = None) -> list[EpisodeJob]:
        """Every episode of the suite, in a fixed order: env x noise x seed x trial.

        Args:
            seeds: the task seeds in place of the public `seeds` (a sealed run's, drawn by the
                board): `n_seeds` of them, every cell dealt the same tasks as on the public seeds;
                or `n_seeds` per cell (`n_cells` times as many, cell after cell in the suite's
                order), so that no task is dealt in two cells.

        Raises:
            ValueError: `seeds` is neither length.
        """
        cells = [(env_id, noise) for env_id in self.envs for noise in self.noise]
        if seeds is None:
            per_cell = [self.seeds] * len(cells)
        elif len(seeds) == self.n_seeds:
            per_cell = [seeds] * len(cells)
        elif len(seeds) == self.n_seeds * len(cells):
            per_cell = [seeds[i * self.n_seeds:(i + 1) * self.n_seeds] for i in range(len(cells))]
        else:
            raise ValueError(f"suite {self.id} has {self.n_seeds} seeds per cell and {len(cells)} cells: give "
                             f"{self.n_seeds} or {self.n_seeds * len(cells)} seeds, not {len(seeds)}")
        kw = tuple(sorted({"split": self.split, **self.kwargs}.items()))
        return [
            EpisodeJob(env_id=env_id, seed=seed, trial=trial, noise=None if noise == "none" else noise,
                       kwargs=kw, suite=self.id)
            for (env_id, noise), cell_seeds in zip(cells, per_cell)
            for seed in cell_seeds
            for trial in range(self.trials)
        ]

    @property
    def cells(self) -> int:
        """How many env x noise cells the suite has."""
        return len(self.envs) * len(self.noise)

    def __len__(self) -> int:
        return len(self.envs) * len(self.noise) * self.n_seeds * self.trials


_ALL_IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
_KINDS = ("tool_failure", "corruption", "ambiguity", "goal_shift", "typos")

# 200 seeds x 2 trials = 400 episodes per (env, noise) cell: a 95% CI half-width under 5 points on
# success at any rate (1.96 * sqrt(.25 / 400) = 4.9).
_CORE = Suite(
    id="core-v0",
    description="Every family on unseen test domains, without noise and with the medium preset.",
    envs=_ALL_IDS,
    noise=("none", "medium"),
    n_seeds=200,
    trials=2,
)

SUITES: dict[str, Suite] = {
    s.id: s
    for s in (
        _CORE,
        # The hard tier alone, on core-v0's layout and seeds (so its CIs are core-v0's), for the
        # strongest agents; core-v0 keeps drawing the difficulty, so its entries stay comparable.
        replace(
            _CORE,
            id="hard-v0",
            description="Every family's hard tier on unseen test domains, without noise and with the medium preset.",
            kwargs={"difficulty": "hard"},
        ),
        Suite(
            id="robustness-v0",
            description="Each noise kind alone at rates 0, 0.1, 0.3 and 0.5 on every family.",
            envs=_ALL_IDS,
            noise=("none",) + tuple(f"{k}={r}" for k in _KINDS for r in (0.1, 0.3, 0.5)),
            n_seeds=100,
            trials=1,
        ),
        # A small suite for smoke tests and quick looks (core-v0's layout on 20 seeds); not for ranking.
        replace(_CORE, id="smoke-v0", description="A quick look: 20 seeds per family, with and without medium noise.",
                n_seeds=20, trials=1),
    )
}


def get_suite(name: str) -> Suite:
    """A built-in suite by id, or a user suite from a ``.toml`` path."""
    if name in SUITES:
        return SUITES[name]
    if name.endswith(".toml"):
        return load_suite(name)
    raise ValueError(f"unknown suite {name!r}; built-in suites: {', '.join(SUITES)}; or give a .toml file")


#: A suite file past this size is refused unread (a real one is well under 1 KiB).
MAX_SUITE_FILE_BYTES = 64 * 1024
#: Bounds on what a suite file may ask for; its job list is built in memory.
MAX_SUITE_EPISODES = 1_000_000
_MAX_LIST_ITEMS = 64
_MAX_TEXT_CHARS = 1000
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_TOML_FIELDS = {"id", "description", "envs", "noise", "n_seeds", "trials", "split", "seed_base", "primary", "kwargs"}
#: What a suite may rank by: the board's summary aggregates where higher is better (a recovery
#: time is not one: the board ranks the highest first).
PRIMARY_METRICS = ("success", "score", "tool_validity", "tool_correctness", "tool_efficiency", "tool_recall",
                   "tool_f1", "recovery_share", "goal_consistency")


def _text(table: dict[str, Any], key: str, where: str, default: str | None = None, *, empty_ok: bool = False) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or len(value) > _MAX_TEXT_CHARS or not (empty_ok or value.strip()):
        raise ValueError(f"{where}: {key} must be a{'' if empty_ok else ' non-empty'} string of at most "
                         f"{_MAX_TEXT_CHARS} characters")
    return value


def _count(table: dict[str, Any], key: str, where: str, lo: int, hi: int, default: int | None = None) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{where}: {key} must be an integer in [{lo}, {hi}], got {value!r}"[:300])
    return value


def _names(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table[key]
    if (not isinstance(value, list) or not 1 <= len(value) <= _MAX_LIST_ITEMS
            or not all(isinstance(v, str) and 0 < len(v) <= 200 for v in value)):
        raise ValueError(f"{where}: {key} must be a list of 1 to {_MAX_LIST_ITEMS} non-empty strings")
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: {key} lists a value twice")
    return tuple(value)


def _kwargs(table: dict[str, Any], where: str) -> dict[str, Any]:
    """The suite's env arguments: those an env server's client may set (`EnvKwargs`), within its bounds."""
    from pydantic import ValidationError

    from agentgym.server.models import EnvKwargs

    value = table.get("kwargs", {})
    if not isinstance(value, dict):
        raise ValueError(f"{where}: kwargs must be a table")
    for own in ("split", "noise"):
        if own in value:
            raise ValueError(f"{where}: give the {own} as the suite's own `{own}` key, not in kwargs")
    try:
        EnvKwargs.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(map(str, first.get("loc", ()))) or "kwargs"
        allowed = ", ".join(f for f in EnvKwargs.model_fields if f not in ("split", "noise"))
        why = "not an env argument a suite may set" if first.get("type") == "extra_forbidden" else first.get("msg")
        raise ValueError(f"{where}: kwargs.{name}: {why} (a suite may set {allowed})"[:500]) from None
    return value


def _envs(table: dict[str, Any], where: str) -> tuple[str, ...]:
    import gymnasium as gym

    import agentgym  # noqa: F401  (registers the ids)
    from agentgym.registration import import_env_module, is_agentgym_env

    envs = _names(table, "envs", where)
    for named in envs:
        try:
            import_env_module(named)  # an id of your own, ``module:Namespace/Name-vN``, as gym.make takes it
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        env_id = named.rpartition(":")[2]
        if env_id not in gym.registry:
            raise ValueError(f"{where}: unknown environment {env_id!r}; agentgym's are {', '.join(agentgym.ENV_IDS)}"
                             " (and those register_env adds)")
        if not is_agentgym_env(env_id):
            raise ValueError(f"{where}: {env_id!r} is not an agentgym env (a suite plays agentgym's envs, or ones "
                             "registered with agentgym.register_env)")
    return envs


def _toml(raw: bytes, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise ValueError(f"{where}: nested too deep to be a suite") from None


def load_suite(path: str | Path) -> Suite:
    """A suite from a TOML file with a ``[suite]`` table, parsed strictly.

    The file is read only if it is at most MAX_SUITE_FILE_BYTES; unknown keys, wrong types,
    values out of range, a noise spec that does not parse, an id of a built-in suite, an env that
    is not an agentgym one, env arguments an env server's client may not set (`EnvKwargs`), a
    primary metric the board does not rank by (`PRIMARY_METRICS`), nesting too deep to read and
    more than MAX_SUITE_EPISODES episodes are errors, each one line. Example::

        [suite]
        id = "my-suite-v0"
        description = "Dialog only, light noise"
        envs = ["AgentRL/Dialog-v0"]
        noise = ["none", "light"]
        n_seeds = 50
        trials = 1

    Raises:
        ValueError: the file is too large, not UTF-8, not TOML, or not a valid suite; the
            message names the file and the problem.
    """
    where = str(path)
    with open(path, "rb") as f:
        raw = f.read(MAX_SUITE_FILE_BYTES + 1)
    if len(raw) > MAX_SUITE_FILE_BYTES:
        raise ValueError(f"{where}: a suite file is at most {MAX_SUITE_FILE_BYTES} bytes")
    data = _toml(raw, where)
    table = data.get("suite")
    if not isinstance(table, dict) or set(data) != {"suite"}:
        raise ValueError(f"{where}: expected exactly one [suite] table")
    unknown = set(table) - _TOML_FIELDS
    missing = {"id", "envs", "noise", "n_seeds"} - set(table)
    if unknown or missing:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
    suite_id = _text(table, "id", where)
    if not _ID_RE.fullmatch(suite_id):
        raise ValueError(f"{where}: id must be letters, digits, '.', '_' or '-' (at most 100), got {suite_id!r}")
    if suite_id in SUITES:
        raise ValueError(f"{where}: {suite_id!r} is a built-in suite; give yours another id")
    noise = _names(table, "noise", where)
    for spec in noise:
        try:
            parse_noise(None if spec == "none" else spec)
        except NoiseSpecError as exc:
            raise ValueError(f"{where}: noise: {exc}") from None
    split = table.get("split", "test")
    if split not in SPLITS:
        raise ValueError(f"{where}: split must be one of {SPLITS}, got {split!r}"[:300])
    envs = _envs(table, where)
    n_seeds = _count(table, "n_seeds", where, 1, MAX_SUITE_EPISODES)
    trials = _count(table, "trials", where, 1, 100, default=1)
    seed_base = _count(table, "seed_base", where, 0, MAX_SEED - n_seeds + 1, default=TEST_SEED_BASE)
    episodes = len(envs) * len(noise) * n_seeds * trials
    if episodes > MAX_SUITE_EPISODES:
        raise ValueError(f"{where}: {episodes} episodes, over the limit of {MAX_SUITE_EPISODES}")
    primary = _text(table, "primary", where, default="success")
    if primary not in PRIMARY_METRICS:
        raise ValueError(f"{where}: primary must be one of {', '.join(PRIMARY_METRICS)}, got {primary!r}"[:300])
    return Suite(
        id=suite_id,
        description=_text(table, "description", where, default="", empty_ok=True),
        envs=envs,
        noise=noise,
        n_seeds=n_seeds,
        trials=trials,
        split=split,
        seed_base=seed_base,
        primary=primary,
        kwargs=_kwargs(table, where),
    )
