"""pytest fixtures of the env speed benchmarks; the helpers live in `envbench.py`.

Run with ``.venv/bin/pytest benchmarks --benchmark-only`` (the project's addopts hold
``--benchmark-skip``; ``--benchmark-only`` overrides it). ``benchmarks/`` is not in ``testpaths``,
so ``make test`` never runs these. ``python benchmarks/report.py`` runs them and writes a table.
"""

from __future__ import annotations

import pytest
from envbench import NOISE_PRESETS, bench_env_ids, make_env


@pytest.fixture
def env(env_id: str, noise: str | None):
    """A fresh ``gym.make`` env per benchmark; skips when the noise preset is not accepted yet."""
    e = make_env(env_id, noise)
    yield e
    e.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise over the live registry (read at collection time) and the noise presets."""
    if "env_id" in metafunc.fixturenames:
        metafunc.parametrize("env_id", bench_env_ids())
    if "noise" in metafunc.fixturenames:
        metafunc.parametrize("noise", NOISE_PRESETS, ids=lambda n: f"noise={n or 'off'}")
