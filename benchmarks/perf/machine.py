"""What the results say about where they were measured: machine, load, versions, the timer's cost."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from importlib import metadata

from perf.config import ROOT

#: Distributions whose versions the results list (those not installed say so).
DISTRIBUTIONS = ("agentrl-gym", "gymnasium", "numpy", "textarena", "gem-llm", "reasoning-gym", "pandas", "tabulate",
                 "py-spy")


def versions() -> dict[str, str]:
    """Python's and each distribution's version, and the agentgym commit (marked when the tree differs)."""
    out = {"python": platform.python_version()}
    for dist in DISTRIBUTIONS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    # An editable install's metadata keeps the version it was installed at; the code measured is
    # the checkout's, whose version the package states.
    try:
        import agentgym

        out["agentrl-gym"] = agentgym.__version__
    except ImportError:
        pass
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
        out["agentgym git"] = commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        out["agentgym git"] = "unknown"
    return out


def machine() -> str:
    """CPU model, count, OS and architecture in one line."""
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, {platform.machine()}"


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages, or ``?``."""
    try:
        with open("/proc/loadavg") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "?"


def timer_overhead_ns() -> float:
    """The timer's own cost inside a sample (two back-to-back ``perf_counter_ns`` reads), median."""
    ns = time.perf_counter_ns
    out = []
    for _ in range(20000):
        t0 = ns()
        out.append(ns() - t0)
    return statistics.median(out)
