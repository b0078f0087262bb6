"""benchmarks/users/stalling.py: stalling for half the turn budget gains nothing, on a sample."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("stalling", ROOT / "benchmarks" / "users" / "stalling.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_no_staller_gains_on_a_sample(tmp_path: Path) -> None:
    stalling = _load()
    out = tmp_path / "stall.json"
    assert stalling.main(["--episodes", "8", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 6
    for row in rows:
        for name in stalling.STALLERS:
            assert row[name] <= row["heuristic"] + stalling.MAX_GAIN, row
