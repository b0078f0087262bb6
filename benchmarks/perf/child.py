"""A function of the `perf` modules run in a fresh interpreter, its JSON result read back.

Memory is measured in a process that made nothing else, and py-spy samples a process of its own,
so those measurements call ``module:function`` here with keyword arguments given as JSON:

    python -m perf.child perf.memory:child_memory '{"label": "floor", "n": 100, "mode": "rss"}'

The function's return value is printed as the last line of stdout, as JSON.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from typing import Any

from perf.config import BENCHMARKS


def command(target: str, kwargs: dict[str, Any]) -> list[str]:
    """The argv that runs `target` (``module:function``) with `kwargs` in a fresh interpreter."""
    return [sys.executable, "-m", "perf.child", target, json.dumps(kwargs, default=str)]


def child_env() -> dict[str, str]:
    """This environment with ``benchmarks/`` first on the import path (the child runs in it too)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCHMARKS), env.get("PYTHONPATH", "")) if p)
    return env


def call(target: str, **kwargs: Any) -> Any:
    """Run `target` in a fresh interpreter and return what it returned.

    Raises:
        RuntimeError: the child failed (its stderr's end in the message).
    """
    proc = subprocess.run(command(target, kwargs), capture_output=True, text=True, cwd=BENCHMARKS, env=child_env())
    if proc.returncode != 0:
        raise RuntimeError(f"child {target} {kwargs} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    target, raw = argv
    module, _, func = target.partition(":")
    result = getattr(importlib.import_module(module), func)(**json.loads(raw))
    print(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
