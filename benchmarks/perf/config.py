"""The options of a `make perf` run: one dataclass, its defaults, the ``--quick`` preset, and the
command line derived from it (each field is an option of the same name, its doc the help)."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1]
ROOT = BENCHMARKS.parent

#: Parts of a run that ``--skip`` names.
PARTS = ("time", "real", "transcripts", "memory", "imports", "harness", "profiles", "server", "ppo")


def _opt(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class PerfConfig:
    """Everything a run measures and how; see the help of each option."""

    out: Path = _opt(BENCHMARKS / "RESULTS.md", "Markdown file to write (the profiles go beside it, *-profiles.md)")
    json: Path | None = _opt(None, "also dump the raw figures here")
    from_json: Path | None = _opt(None, "do not measure: render a saved --json dump")
    quick: bool = _opt(False, "small counts, for a smoke run (figures are rough)")
    skip: str = _opt("", f"comma-separated parts to skip: {','.join(PARTS)}")
    # ---- best case: one repeated call per unit, beside the peers
    rounds: int = _opt(20, "best case: timed rounds after one warm-up round")
    block: int = _opt(200, "timed steps per unit per round (best case, and the floor beside real episodes)")
    reset_block: int = _opt(25, "timed resets per unit per round (best case, and the floor beside real episodes)")
    # ---- real episodes: played by agents, replayed and timed
    agents: str = _opt("heuristic,expert,lm-mix", "agents that play the real episodes (names or module:Class)")
    noises: str = _opt("off,medium", "noise presets of the real episodes")
    difficulties: str = _opt("easy,medium,hard", "difficulties of the real episodes")
    splits: str = _opt("train,test", "splits of the real episodes")
    ids: str = _opt("all", "AgentRL ids measured (comma-separated, or 'all': every live id)")
    episodes: int = _opt(100, "real episodes per cell (id x noise x difficulty x split x agent), seeds 0..N-1")
    episode_block: int = _opt(10, "real episodes each cell replays per round")
    first_steps: int = _opt(3, "steps after a reset reported apart ('first steps')")
    recordings: Path | None = _opt(None, "reuse the recorded episodes in this file when it exists, else save them there")
    # ---- memory
    mem_n: int = _opt(1000, "live envs per memory process")
    mem_traced_n: int = _opt(100, "envs per tracemalloc process (tracing is slow; bytes per env is an average)")
    mem_prefix: float = _opt(0.5, "share of each real episode's steps a live env has played (memory on real episodes)")
    # ---- import time
    import_runs: int = _opt(10, "fresh interpreters per import")
    # ---- harness overhead
    harness_rounds: int = _opt(7, "rounds of the bare loop against the harness")
    harness_episodes: int = _opt(200, "episodes per loop (live heuristic; and per id x noise, replayed)")
    harness_ids: str = _opt("all", "comma-separated ids, or 'all'")
    # ---- profiles
    profile_seconds: float = _opt(3.0, "seconds of profiled calls per profile (the harness profile: twice that)")
    profile_rate: int = _opt(1000, "py-spy samples per second")
    # ---- targets
    baseline: Path = _opt(Path(__file__).resolve().parent / "baseline-best-case.json",
                          "best-case figures the best-case target compares with (1.1x at most)")
    save_baseline: Path | None = _opt(None, "write this run's best-case figures here, as a future --baseline")
    # ---- env server and PPO
    project_python: Path = _opt(ROOT / ".venv" / "bin" / "python",
                                "the agentgym dev venv's Python, for the server and PPO benchmarks")
    openenv_python: Path = _opt(Path("/tmp/openenv-venv/bin/python"),
                                "a Python with openenv-core, for the server benchmark's OpenEnv side")
    sb3_python: Path = _opt(Path("/tmp/sb3-venv/bin/python"),
                            "a Python with stable-baselines3, for the CartPole comparison")

    def skipped(self) -> set[str]:
        """The parts ``--skip`` names; ValueError for an unknown one."""
        parts = {s.strip() for s in self.skip.split(",") if s.strip()}
        unknown = parts - set(PARTS)
        if unknown:
            raise ValueError(f"--skip: unknown parts {sorted(unknown)}; known: {', '.join(PARTS)}")
        return parts

    def quick_preset(self) -> PerfConfig:
        """The same run with small counts (``--quick``)."""
        return dataclasses.replace(
            self, rounds=3, block=50, reset_block=5, episodes=8, episode_block=4, mem_n=100, mem_traced_n=50,
            import_runs=2, harness_rounds=1, harness_episodes=20, profile_seconds=0.5)


def names(text: str) -> list[str]:
    """A comma-separated option as a list."""
    return [s.strip() for s in text.split(",") if s.strip()]


def parse_args(argv: list[str] | None, description: str) -> PerfConfig:
    """The config from the command line: ``--<field>`` for every field (``--quick`` applies its
    preset first; an option given explicitly wins over it)."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(PerfConfig):
        flag = "--" + f.name.replace("_", "-")
        doc = f.metadata["doc"]
        if f.type == "bool":
            ap.add_argument(flag, action="store_true", help=doc)
            continue
        kind = {"int": int, "float": float, "str": str}.get(str(f.type), Path)
        ap.add_argument(flag, type=kind, default=argparse.SUPPRESS, help=f"{doc} (default: {f.default})")
    given = vars(ap.parse_args(argv))
    cfg = PerfConfig(quick=given.pop("quick", False))
    if cfg.quick:
        cfg = cfg.quick_preset()
    return dataclasses.replace(cfg, **given)
