"""py-spy under a `perf.child` function, and its samples read back: by module, function, line and area.

A sampler does not slow the code it watches, unlike cProfile, which inflates code made of many
small calls (most of an env step). The profiled function marks what counts by running it under a
frame of a known name (``_timed_*``); samples outside any marker (set-up, untimed resets) are dropped.
"""

from __future__ import annotations

import fnmatch
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from perf import child
from perf.config import BENCHMARKS

PY_SPY = Path(sys.executable).parent / "py-spy"

#: One sample: its stack, outermost first, as (function, short file, line), and its count.
Frame = tuple[str, str, str]
Stacks = list[tuple[list[Frame], int]]

#: Where a sample's time goes: (name, what it is, by any frame, patterns). Patterns are ``file`` or ``file::function`` (fnmatch, on short
#: paths). The first two areas claim a sample when any frame of its stack matches (a world's
#: objects are made inside the generator that calls them); the others by its innermost frame that
#: matches any of theirs, in this order (a frame of a file named nowhere, such as a random stream's
#: draw, counts for its caller). Samples with no frame of any area fall to "other".
AREAS: tuple[tuple[str, str, bool, tuple[str, ...]], ...] = (
    ("set-up", "task set-up: worlds, goals, random streams", True, (
        "*::generate*", "*::_make_*", "*::_draw_*", "*::solve", "*::_tables", "*::place_phrases", "*::brief_for",
        "agentgym/envs/dialog/domain.py", "agentgym/core/_fast.py::seeded_random*",
        "agentgym/core/_fast.py::LazyNpRandom*")),
    ("scoring", "scoring and commitments", True, (
        "*::score_*", "agentgym/core/commitments.py", "agentgym/envs/*/commitments.py", "agentgym/core/gold.py")),
    ("users", "simulated users reading messages and replying", False, (
        "agentgym/users/*", "agentgym/core/typos.py", "agentgym/envs/*/user.py",
        "agentgym/envs/crosstask/followup.py", "agentgym/envs/crosstask/session.py::SessionUser*")),
    ("noise layers", "the noise wrappers' own code", False, ("agentgym/noise/*",)),
    ("tools", "tool calls on the world, search included", False, (
        "agentgym/envs/*/tools.py", "agentgym/envs/tooluse/domains/*", "agentgym/envs/tooluse/base.py",
        "agentgym/envs/tooluse/policies.py", "agentgym/envs/dialog/tasks.py", "agentgym/core/tools.py",
        "agentgym/core/tool_spec.py", "agentgym/envs/crosstask/session.py::SessionToolkit*")),
    ("rendering", "rendering and parsing: JSON in and out, copies", False, (
        "agentgym/core/render.py", "agentgym/core/protocol.py", "agentgym/core/_fast.py")),
    ("env loop", "the env's own loop", False, (
        "agentgym/core/env.py", "agentgym/envs/*/env.py", "agentgym/envs/crosstask/*", "agentgym/core/hooks.py")),
    ("Gymnasium", "Gymnasium's wrappers", False, ("gymnasium/*",)),
)


def available() -> bool:
    """Whether py-spy is installed beside this interpreter."""
    return PY_SPY.exists()


def short_path(filename: str) -> str:
    """A file as the tables name it: from its package (``agentgym/...``), or its last parts."""
    for marker in ("agentgym/", "gymnasium/", "textarena/", "gem/"):
        i = filename.rfind("/" + marker)
        if i >= 0:
            return filename[i + 1:]
    if filename.startswith("<"):
        return filename
    parts = Path(filename).parts
    if len(parts) >= 2 and parts[-2] in ("json", "re", "encodings", "collections"):
        return "/".join(parts[-2:])
    return parts[-1] if parts else filename


def _frame(text: str) -> Frame:
    """A py-spy raw frame ``func (file:line)`` -> (func, short file, line)."""
    func, _, loc = text.rpartition(" (")
    file, _, line = loc.rstrip(")").rpartition(":")
    return func, short_path(file), line


def read_raw(text: str) -> Stacks:
    """Stacks from py-spy's ``--format raw`` output."""
    stacks = []
    for line in text.splitlines():
        body, _, count = line.rpartition(" ")
        if body and count.isdigit():
            stacks.append(([_frame(f) for f in body.split(";")], int(count)))
    return stacks


def record(target: str, rate: int, **kwargs: Any) -> Stacks:
    """Run `target` (a `perf.child` function) under py-spy; its samples.

    Raises:
        RuntimeError: py-spy or the child failed.
    """
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "raw.txt"
        cmd = [str(PY_SPY), "record", "--rate", str(rate), "--format", "raw", "--full-filenames", "--output",
               str(out), "--", *child.command(target, kwargs)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=BENCHMARKS, env=child.child_env())
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"py-spy {target} {kwargs} failed ({proc.returncode}): {proc.stderr[-3000:]}")
        return read_raw(out.read_text("utf-8", "replace"))


def inside(stacks: Stacks, marker: str) -> Stacks:
    """The samples taken inside a frame of function `marker`, with the frames below it only."""
    out: Stacks = []
    for st, c in stacks:
        names = [fn for fn, _f, _l in st]
        if marker in names:
            out.append((st[names.index(marker) + 1:], c))
    return out


def _matches(frame: Frame, patterns: tuple[str, ...]) -> bool:
    func, file, _line = frame
    return any(fnmatch.fnmatch(f"{file}::{func}" if "::" in p else file, p) for p in patterns)


def area_of(stack: list[Frame]) -> str:
    """The area of one sample (see `AREAS`)."""
    for area, _what, anywhere, patterns in AREAS:
        if anywhere and any(_matches(f, patterns) for f in stack):
            return area
    for frame in reversed(stack):
        for area, _what, anywhere, patterns in AREAS:
            if not anywhere and _matches(frame, patterns):
                return area
    return "other"


def attribute(stacks: Stacks, top: int = 12) -> dict[str, Any]:
    """Shares of the samples: self time by module, function and line (the innermost Python frame:
    C code counts in the Python line that called it), each function's inclusive time, and areas."""
    total = sum(c for _st, c in stacks) or 1
    by_mod: dict[str, int] = {}
    self_fn: dict[str, int] = {}
    self_line: dict[str, int] = {}
    incl: dict[str, int] = {}
    areas: dict[str, int] = {}
    for st, c in stacks:
        if not st:
            continue
        func, file, line = st[-1]
        by_mod[file] = by_mod.get(file, 0) + c
        self_fn[f"{file} {func}"] = self_fn.get(f"{file} {func}", 0) + c
        self_line[f"{file}:{line} {func}"] = self_line.get(f"{file}:{line} {func}", 0) + c
        for k in {f"{f} {fn}" for fn, f, _l in st}:
            incl[k] = incl.get(k, 0) + c
        area = area_of(st)
        areas[area] = areas.get(area, 0) + c

    def top_of(d: dict[str, int], n: int) -> list[tuple[str, float]]:
        return [(k, v / total) for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:n]]

    return {
        "samples": sum(c for _st, c in stacks),
        "by_module": top_of(by_mod, 10),
        "functions": [{"func": k, "self": n / total, "incl": incl[k] / total}
                      for k, n in sorted(self_fn.items(), key=lambda kv: -kv[1])[:top]],
        "inclusive": top_of(incl, top + 4),
        "lines": top_of(self_line, 8),
        "areas": top_of(areas, len(AREAS) + 1),
    }
