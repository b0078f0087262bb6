"""The serving processes' garbage-collector settings (`agentgym.server.gc_policy`)."""

from __future__ import annotations

import json
import subprocess
import sys

from agentgym.server.gc_policy import SERVING_THRESHOLDS


def test_tune_for_serving_freezes_what_exists_and_raises_the_thresholds() -> None:
    # In a process of its own: the settings are process-wide, and this one keeps the defaults.
    code = ("import gc, json; from agentgym.server.gc_policy import tune_for_serving; import agentgym.envs; "
            "before = gc.get_threshold(); tune_for_serving(); "
            "print(json.dumps([before, gc.get_threshold(), gc.get_freeze_count()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    before, after, frozen = json.loads(out.stdout)
    assert before == [700, 10, 10] and after == list(SERVING_THRESHOLDS)
    assert frozen > 10_000  # the imported modules' objects, out of every collection

