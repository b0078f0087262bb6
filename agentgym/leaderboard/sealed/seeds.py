"""A sealed run's id and seeds: unpredictable without the board's secret, fresh for every run.

The run id is 192 bits from ``os.urandom``. The seed of the run's i-th task is
HMAC-SHA256(secret, ``agentgym-sealed/1|RUN_ID|SUITE|i``), read as a number in
[`SEED_FLOOR`, `agentgym.core.seeding.MAX_SEED`]. The suite's layout is kept: as in the public
suite, one seed per task index serves every env, noise setting and trial (so trials are the same
task under other noise, and the noise settings see the same tasks); the same generators draw the
tasks on the test split from these seeds as from the public ones. Two runs share a seed only if
HMAC-SHA256 collides on 63 bits, about 2^-63 per pair of tasks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from agentgym.bench.suites import Suite
from agentgym.core.seeding import MAX_SEED

__all__ = ["SEED_FLOOR", "new_run_id", "task_seed", "run_seeds"]

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
    """The seeds of a run of `suite`, one per task index (`Suite.jobs(seeds)` lays them out)."""
    return tuple(task_seed(secret, run_id, suite.id, i) for i in range(suite.n_seeds))
