"""The targets of `make perf`, in one place; each measurement judges its own figures against them.

Real-episode targets are ratios to the floor's median step measured in the same run (issue 30:
a machine's speed cancels out); the best-case ones are the earlier absolute targets, kept.
"""

from __future__ import annotations

from typing import Any

#: Real episodes, every id, with noise off and with ``medium``: median and p90 step over the
#: floor's median step, median reset over the floor's median step.
REAL_STEP_MEDIAN_X = 60.0
REAL_STEP_P90_X = 200.0
REAL_RESET_MEDIAN_X = 600.0
#: Real episodes, every id, with noise off and with ``medium``: the hard tier's median reset and
#: median step over the easy tier's (issue 29: the hard tier is harder by reasoning, not by cost).
TIER_X = 2.0
#: Bytes per live env, in KB of RSS (real-episode prefixes; the made-and-reset best case too).
MEM_TARGET_KB = 30.0
#: The harness's CPU time over the bare loop's, minus 1.
HARNESS_TARGET = 0.20
#: ``import agentgym``, wall clock, without torch.
IMPORT_TARGET_S = 0.3
#: Best case: no row's ratio to the floor worse than this times the baseline's.
BEST_CASE_SLACK = 1.1
#: Best case, absolute: a step without noise / with ``medium``, a reset (microseconds).
STEP_TARGET_US = {"off": 10.0, "medium": 15.0}
RESET_TARGET_US = 200.0


def row(target: str, figure: str, result: str) -> dict[str, Any]:
    """One line of the results' targets table."""
    return {"target": target, "figure": figure, "result": result}
