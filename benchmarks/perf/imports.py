"""``import agentgym`` time: fresh interpreters, interleaved with ``gymnasium`` and the peers, and
``python -X importtime``'s account of where agentgym's own share goes."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any, Callable

from perf import targets
from perf.config import ROOT
from perf.tables import md_table, verdict

IMPORT_CODE = """
import sys, time, json
t0, c0 = time.perf_counter(), time.process_time()
import {mod}
dt, dc = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({{"s": dt, "cpu_s": dc, "torch": "torch" in sys.modules, "modules": len(sys.modules)}}))
"""

IMPORTS = ("agentgym", "gymnasium", "numpy", "textarena", "gem")


def run(runs: int, log: Callable[..., None]) -> dict[str, Any]:
    """`runs` timed imports of each module (after one untimed pass for the OS file cache)."""
    res: dict[str, list[dict]] = {k: [] for k in IMPORTS}
    for r in range(runs + 1):
        for mod in IMPORTS:
            proc = subprocess.run([sys.executable, "-c", IMPORT_CODE.format(mod=mod)], capture_output=True,
                                  text=True, cwd=ROOT)
            if proc.returncode != 0:
                raise RuntimeError(f"import {mod} failed: {proc.stderr[-2000:]}")
            if r:
                res[mod].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out: dict[str, Any] = {}
    for name, rs in res.items():
        ts = [x["s"] for x in rs]
        out[name] = {"median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts),
                     "cpu_median_s": statistics.median(x["cpu_s"] for x in rs),
                     "torch": any(x["torch"] for x in rs), "modules": rs[-1]["modules"], "runs": len(ts)}
        log(f"[import] {name}: {out[name]['median_s']:.3f} s (CPU {out[name]['cpu_median_s']:.3f} s), "
            f"torch={out[name]['torch']}")
    out["_importtime"] = importtime_profile()
    return out


def _importtime(mod: str) -> list[dict[str, Any]]:
    """``python -X importtime -c 'import mod'``, the middle of three runs by total self time."""
    runs = []
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {mod}"], capture_output=True,
                              text=True, cwd=ROOT)
        entries = []
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            _, rest = line.split(":", 1)
            self_us, cum_us, name = rest.split("|", 2)
            entries.append({"name": name.strip(), "self": int(self_us), "cum": int(cum_us)})
        runs.append(entries)
    return sorted(runs, key=lambda e: sum(x["self"] for x in e))[1]


def importtime_profile() -> dict[str, Any]:
    """Where ``import agentgym``'s time goes: by top-level package, and what it adds to gymnasium's."""
    entries = _importtime("agentgym")
    gym_names = {e["name"] for e in _importtime("gymnasium")}
    by_top: dict[str, int] = {}
    for e in entries:
        top = e["name"].split(".")[0]
        by_top[top] = by_top.get(top, 0) + e["self"]
    extra = [e for e in entries if e["name"] not in gym_names]
    return {
        "total_us": sum(e["self"] for e in entries),
        "by_top_package": sorted(by_top.items(), key=lambda kv: -kv[1])[:12],
        "beyond_gymnasium_us": sum(e["self"] for e in extra),
        "beyond_gymnasium": sorted(((e["name"], e["self"]) for e in extra), key=lambda kv: -kv[1])[:10],
        "gymnasium_us": sum(e["self"] for e in entries if e["name"] in gym_names),
    }


def _verdict(r: dict[str, Any]) -> str:
    res = verdict(r["median_s"], targets.IMPORT_TARGET_S, "s", lambda v: f"{v:.3f}")
    return res + ("; torch not imported" if not r["torch"] else "; **torch imported**")


def target_rows(imp: dict[str, Any]) -> list[dict[str, Any]]:
    """The import line of the targets table."""
    r, g = imp["agentgym"], imp["gymnasium"]
    return [targets.row(f"`import agentgym` <= {targets.IMPORT_TARGET_S:g} s, without torch",
                        f"{r['median_s']:.3f} s wall, {r['cpu_median_s']:.3f} s CPU (`import gymnasium` alone: "
                        f"{g['median_s']:.3f} s wall, {g['cpu_median_s']:.3f} s CPU)", _verdict(r))]


def section(imp: dict[str, Any]) -> list[str]:
    """The import-time table and the ``-X importtime`` account."""
    o = ["## Import time", "",
         f"`python -c 'import X'` in fresh interpreters, {imp['agentgym']['runs']} runs each, interleaved (one "
         "untimed pass first for the OS file cache); the time of the import statement alone, wall clock (the "
         "target) and the process's CPU time (every thread's: NumPy starts its BLAS threads while it imports, so "
         "CPU time can exceed wall-clock time).", ""]
    o += md_table([{"import": f"`import {name}`", "median s": f"{imp[name]['median_s']:.3f}",
                    "min-max s": f"{imp[name]['min_s']:.3f}-{imp[name]['max_s']:.3f}",
                    "CPU s": f"{imp[name]['cpu_median_s']:.3f}", "modules loaded": str(imp[name]["modules"]),
                    "torch imported": "yes" if imp[name]["torch"] else "no",
                    "target": f"<= {targets.IMPORT_TARGET_S:g} s" if name == "agentgym" else "-",
                    "result": _verdict(imp[name]) if name == "agentgym" else "-"} for name in IMPORTS])
    it = imp.get("_importtime")
    if it:
        o += ["", f"`python -X importtime -c 'import agentgym'` (the middle of 3 runs; `-X importtime` itself slows "
              f"imports): {it['total_us'] / 1e3:.0f} ms of self time, of which {it['gymnasium_us'] / 1e3:.0f} ms in "
              f"modules `import gymnasium` loads as well and {it['beyond_gymnasium_us'] / 1e3:.1f} ms in the rest: "
              + ", ".join(f"`{n}` {us / 1e3:.1f} ms" for n, us in it["beyond_gymnasium"][:8]) + ".", ""]
        o += md_table([{"package (self time summed)": name, "ms": f"{us / 1e3:.1f}",
                        "share": f"{us / it['total_us']:.0%}"} for name, us in it["by_top_package"][:10]])
    return o + [""]
