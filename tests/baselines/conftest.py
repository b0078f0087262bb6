"""Fixtures of the PPO tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _one_thread() -> Iterator[None]:
    """Torch on one thread during each test of this folder; its thread count is restored after."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
