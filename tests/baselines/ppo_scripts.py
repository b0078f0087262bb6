"""The PPO benchmarks' scripts (`benchmarks/ppo`) as modules, for the tests of their bookkeeping."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

#: Where the scripts are.
PPO_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "ppo"


def ppo_benchmark(name: str) -> Iterator[ModuleType]:
    """Yield the script `name` of `benchmarks/ppo` as a module, its folder on `sys.path` only
    meanwhile (the scripts import one another by name)."""
    sys.path.insert(0, str(PPO_BENCHMARKS))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(PPO_BENCHMARKS))
