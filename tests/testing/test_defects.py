"""The sensitivity matrix: each metric moves for its own defect, the right way, on every family.

The default run plays a representative subset of `DEFECTS` on a small number of seeds; the whole
catalogue on more seeds is behind ``-m slow`` (``agentgym validate-metrics`` writes the same
matrix into docs/METRICS.md).
"""

from __future__ import annotations

import pytest

from agentgym.eval.metrics import compare
from agentgym.eval.runner import AgentSpec, EpisodeJob, play_job
from agentgym.testing.defects import CONSTRAINT_KINDS, DEFECTS, ConstraintDropper, Expect, GoalForgetter, _cutter
from agentgym.testing.validity import COLUMNS, FAMILIES, KIND_COLUMNS, NOISE, failures, render, run_matrix

SMALL = ("no-retry", "slow-retry-1", "slow-retry-2", "slow-retry-4", "goal-forgetter-active",
         "goal-forgetter-passive", "constraint-dropper-area", "constraint-dropper-time",
         "constraint-dropper-currency", "sloppy-caller-0.3", "padding-1", "corruption-truster", "verifier",
         "do-nothing", "random")


@pytest.fixture(scope="module")
def small_matrix():  # type: ignore[no-untyped-def]
    return run_matrix(seeds=150, defects=[d for d in DEFECTS if d.name in SMALL], n_boot=400)


def test_the_matrix_holds_on_every_family(small_matrix) -> None:  # type: ignore[no-untyped-def]
    assert set(small_matrix.rows) == set(FAMILIES)
    assert failures(small_matrix) == []


def test_the_matrix_shape_and_its_rendering(small_matrix) -> None:  # type: ignore[no-untyped-def]
    for family, rows in small_matrix.rows.items():
        assert list(rows) == list(SMALL)
        for cmp in rows.values():
            for key, _, _ in COLUMNS + KIND_COLUMNS:
                assert {"value", "ci", "n"} <= set(cmp["diff"][key])
        medians = [rows[f"slow-retry-{k}"]["a"]["recovery_median:tool_failure"]["value"] for k in (1, 2, 4)]
        assert medians == sorted(medians) and len(set(medians)) == 3, (family, medians)
        # Padding wastes calls and gains nothing it could be mistaken for.
        pad = rows["padding-1"]["diff"]
        assert pad["tool_efficiency"]["ci"][1] < 0
        for key in ("recovery_share", "goal_consistency"):
            assert pad[key]["ci"][0] is None or pad[key]["ci"][0] <= 0, (family, key, pad[key])
    text = render(small_matrix, command="agentgym validate-metrics", commit="abc", date="2026-01-01")
    assert "Every expectation holds." in text and text.count("| **heuristic** (reference) |") == 2 * len(FAMILIES)
    assert "▼" in text and "▲" in text


def test_the_oracle_has_the_best_recovery_and_trivial_agents_commit_nothing_consistent() -> None:
    for env_id in FAMILIES.values():
        jobs = [EpisodeJob(env_id, seed=s, noise=NOISE) for s in range(60)]
        oracle = [play_job(j, AgentSpec("oracle")) for j in jobs]
        heuristic = [play_job(j, AgentSpec("heuristic")) for j in jobs]
        cmp = compare(oracle, heuristic, n_boot=200)
        assert cmp["a"]["success"]["value"] >= 0.95
        assert cmp["a"]["recovery_share"]["value"] >= cmp["b"]["recovery_share"]["value"]
        assert cmp["a"]["recovery_rmst"]["value"] <= cmp["b"]["recovery_rmst"]["value"]
        idle = [play_job(j, AgentSpec("agentgym.agents.trivial:ConstantAgent")) for j in jobs]
        h = compare(idle, heuristic, n_boot=50)["a"]
        assert h["success"]["value"] <= 0.01
        assert h["goal_consistency"]["value"] is None  # nothing committed: n/a, not 100%


def test_the_floor_lands_where_it_belongs(small_matrix) -> None:  # type: ignore[no-untyped-def]
    # Doing nothing and acting at random score nothing a metric could be mistaken for: 0, or n/a
    # where the behaviour never happened (nothing called, nothing committed, nothing recovered).
    for family, rows in small_matrix.rows.items():
        idle, rand, ref = rows["do-nothing"]["a"], rows["random"]["a"], small_matrix.reference[family]
        for key in ("validity", "tool_correctness", "tool_efficiency", "goal_consistency"):
            assert idle[key]["value"] is None and idle[key]["n"] == 0, (family, key, idle[key])
        assert idle["recovery_share"]["value"] == 0.0 and idle["recovery_share"]["n"] > 0
        assert idle["recovery_median"]["value"] is None
        for key in ("tool_correctness", "tool_efficiency", "recovery_share", "goal_consistency"):
            assert rand[key]["value"] < ref[key]["value"] / 3, (family, key, rand[key], ref[key])


def test_absolute_expectations() -> None:
    agg = {"value": 0.0, "ci": [0.0, 0.0], "n": 10}
    na = {"value": None, "ci": [None, None], "n": 0}
    cmp = {"a": {"success": agg, "validity": na}, "diff": {"success": agg, "validity": na}}
    assert Expect("success", "at_most", bound=0.0).holds(cmp, "none")
    assert not Expect("success", "at_most", bound=-0.1).holds(cmp, "none")
    assert not Expect("validity", "at_most", bound=1.0).holds(cmp, "none")  # n/a is not "at most"
    assert Expect("validity", "n/a").holds(cmp, "none") and not Expect("success", "n/a").holds(cmp, "none")
    assert Expect("success", "down").holds(cmp, "down") and not Expect("success", "down").holds(cmp, "none")
    assert Expect("goal_consistency", "at_most", bound=0.25).describe() == "goal_consistency at most 25%"


def test_the_constraint_dropper_cuts_only_its_kind() -> None:
    brief = ("Known cuisines: thai, vegan.\nAreas: Harbor, Old Town.\nAmenities: wifi, quiet.\n"
             "Currencies: EUR, USD.")
    text = ("It should be in Old Town. The cuisine should be thai. My budget is at most 40 EUR. It should be rated "
            "at least 4.5. I need wifi. It's for Monday evening. Pay in USD, a 45-minute meeting, mail "
            "ana@example.com, a sev2 incident.")
    cut = {kind: _cutter(kind, brief)(text) for kind in CONSTRAINT_KINDS}
    assert "Old Town" not in cut["area"] and "thai" in cut["area"]
    assert "thai" not in cut["category"] and "Old Town" in cut["category"]
    assert "40" not in cut["price"] and "4.5" in cut["price"]
    assert "4.5" not in cut["rating"] and "40" in cut["rating"]
    assert "wifi" not in cut["amenity"] and "Monday" not in cut["time"] and "evening" not in cut["time"]
    assert "USD" not in cut["currency"] and "45" not in cut["duration"] and "@" not in cut["email"]
    assert "sev2" not in cut["severity"] and "Old Town" in cut["severity"]
    with pytest.raises(ValueError):
        ConstraintDropper("colour")


def test_the_goal_forgetter_rewrites_only_after_the_shift() -> None:
    shift = {"kind": "goal_shift", "detail": {"from": ["monday", "evening"], "to": ["thursday", "morning"]}}
    said = {"messages": [{"role": "user", "content": "Actually, can we make it Thursday morning instead? "
                                                      "Oh, one more thing: I need wifi."}], "noise": [shift]}
    active, passive = GoalForgetter("active"), GoalForgetter("passive")
    before = {"messages": [{"role": "user", "content": "It's for Monday evening."}], "noise": []}
    assert active._see(before) is before
    assert active._see(said)["messages"][0]["content"].startswith("Actually, can we make it Monday evening")
    assert passive._see(said)["messages"][0]["content"] == "Oh, one more thing: I need wifi."
    assert GoalForgetter.privileged and not ConstraintDropper.privileged


@pytest.mark.slow
def test_the_whole_matrix_holds() -> None:
    assert failures(run_matrix(n_boot=1000)) == []
