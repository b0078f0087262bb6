"""benchmarks/users/plan_sweep.py: the hard tier's users hear plans, requests for a yes and
give-way claims in many agents' words, on a sample."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("plan_sweep", ROOT / "benchmarks" / "users" / "plan_sweep.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_sweep_keeps_its_promise_and_every_phrasing_is_understood_on_a_sample() -> None:
    sweep = _load()
    assert len(sweep.PLAN_STYLES) >= 25 and len(sweep.ASKS) >= 20 and len(sweep.GIVE_WAY) >= 20
    trials = sweep.sweep(range(0, 3), ("train",), False, 2)
    kinds = {t.kind for t in trials}
    assert {"right", "twice", "missing", "give-way"} <= kinds, kinds
    missed = [(t.kind, t.message, t.reply) for t in trials if not t.ok or t.outcome is False]
    assert not missed, missed[:3]


def test_reserved_seeds_are_refused() -> None:
    sweep = _load()
    try:
        sweep.sweep(range(5000, 5001), ("train",), False, 1)
    except ValueError as exc:
        assert "5000-5999" in str(exc)
    else:
        raise AssertionError("a playtest seed was swept")
