"""A sealed run's id and seeds: unpredictable without the board's secret, fresh for every run.

The run id is 192 bits from ``os.urandom``. The seed of the run's i-th task is
HMAC-SHA256(secret, ``agentgym-sealed/1|RUN_ID|SUITE|i``), read as a number in
[`SEED_FLOOR`, `agentgym.core.seeding.MAX_SEED`]. Each cell of the suite (env x noise) is dealt
tasks of its own, `Suite.n_seeds` of them, where the public suite deals every cell the same ones:
within a run no task is played under two noise settings, so an agent cannot play a task without
noise and carry what it learnt into the same task with noise (which would erase what a noise
setting measures). The trials of a task stay on its seed. The same generators draw the tasks on
the test split from these seeds as from the public ones. Two runs share a seed only if
HMAC-SHA256 collides on 63 bits, about 2^-63 per pair of tasks.

The order the board deals a cell's episodes in is a permutation drawn the same way
(`deal_order`), so no label or position of an episode tells which task it is.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import random

from agentgym.bench.suites import Suite
from agentgym.core.seeding import MAX_SEED

__all__ = ["SEED_FLOOR", "new_run_id", "task_seed", "run_seeds", "deal_order"]

#: Every sealed seed has 19 decimal digits, so its digits never hide inside a shorter number of
#: an observation, and a view can be checked for them (`agentgym.leaderboard.sealed.view`).
SEED_FLOOR = 10**18


def new_run_id() -> str:
    """A fresh run id: 192 random bits, URL-safe (32 characters)."""
    return base64.urlsafe_b64encode(os.urandom(24)).decode("ascii")


def task_seed(secret: bytes, run_id: str, suite_id: str, index: int) -> int:
    """The seed of task `index` of run `run_id` of suite `suite_id`."""
    mac = hmac.new(secret, f"agentgym-sealed/1|{run_id}|{suite_id}|{index}".encode("utf-8"), hashlib.sha256).digest()
    return SEED_FLOOR + int.from_bytes(mac[:8], "big") % (MAX_SEED - SEED_FLOOR + 1)


def run_seeds(secret: bytes, run_id: str, suite: Suite) -> tuple[int, ...]:
    """The seeds of a run of `suite`: `Suite.n_seeds` for each cell, cell after cell (`Suite.jobs(seeds)`
    lays them out)."""
    return tuple(task_seed(secret, run_id, suite.id, i) for i in range(suite.n_seeds * suite.cells))


def deal_order(secret: bytes, run_id: str, n: int) -> list[int]:
    """A permutation of ``range(n)``, secret and fresh for each run: the order episodes are dealt in."""
    mac = hmac.new(secret, f"agentgym-sealed/1|{run_id}|order".encode("utf-8"), hashlib.sha256).digest()
    order = list(range(n))
    random.Random(int.from_bytes(mac, "big")).shuffle(order)
    return order
