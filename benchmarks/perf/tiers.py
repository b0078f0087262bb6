"""The hard tier beside the easy one, from the real episodes' timed calls: reset and step medians
and p90 per id and noise, and hard's median over easy's against the target (`targets.TIER_X`).

Every agent and split of a tier are pooled, as in the per-id table, so both tiers are played by the
same agents on the same seeds; a tier's figures are its own cells' calls only.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from perf import targets
from perf.tables import fmt_us, md_table, quantiles_us, verdict

#: The tiers compared: the second's medians over the first's.
EASY, HARD = "easy", "hard"


def pooled(calls: Iterable[tuple[str, str, str, list[int], list[int]]]) -> list[dict[str, Any]]:
    """Quantiles of every (id, noise, difficulty) from its cells' calls.

    Args:
        calls: per cell, ``(env_id, noise, difficulty, reset ns, step ns)``.
    """
    by: dict[tuple[str, str, str], dict[str, list[int]]] = defaultdict(lambda: {"reset": [], "step": []})
    for env_id, noise, difficulty, resets, steps in calls:
        by[(env_id, noise, difficulty)]["reset"] += resets
        by[(env_id, noise, difficulty)]["step"] += steps
    return [{"env_id": k[0], "noise": k[1], "difficulty": k[2], "reset": quantiles_us(v["reset"]),
             "step": quantiles_us(v["step"])} for k, v in sorted(by.items())]


def comparisons(tiers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per id and noise that has both tiers: easy's and hard's quantiles and hard's medians over easy's."""
    by = {(t["env_id"], t["noise"], t["difficulty"]): t for t in tiers}
    out = []
    for (env_id, noise, difficulty), easy in sorted(by.items()):
        hard = by.get((env_id, noise, HARD))
        if difficulty != EASY or hard is None or not easy["reset"]["n"] or not easy["step"]["n"]:
            continue
        out.append({"env_id": env_id, "noise": noise, "easy": easy, "hard": hard,
                    "reset_x": hard["reset"]["median"] / easy["reset"]["median"],
                    "step_x": hard["step"]["median"] / easy["step"]["median"]})
    return out


def target_rows(tiers: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The targets table's lines: hard's reset and step medians within `targets.TIER_X` of easy's
    (none when the run did not play both tiers)."""
    rows = comparisons(tiers or [])
    if not rows:
        return []
    out = []
    for op in ("reset", "step"):
        key = f"{op}_x"
        worst, best = max(rows, key=lambda r: r[key]), min(rows, key=lambda r: r[key])
        ok = sum(r[key] <= targets.TIER_X for r in rows)
        out.append(targets.row(
            f"Real episodes: the hard tier's median {op} <= {targets.TIER_X:g}x the easy tier's, every id, noise "
            "off and `medium`",
            f"worst {worst[key]:.2f}x ({fmt_us(worst['hard'][op]['median'])} us against "
            f"{fmt_us(worst['easy'][op]['median'])} us, {worst['env_id']} noise={worst['noise']}), best "
            f"{best[key]:.2f}x ({best['env_id']} noise={best['noise']}); {ok}/{len(rows)} within",
            verdict(worst[key], targets.TIER_X, "x", lambda v: f"{v:.2f}")))
    return out


def section(tiers: list[dict[str, Any]] | None) -> list[str]:
    """The table of the hard tier beside the easy one, per id and noise (nothing without both tiers)."""
    rows = comparisons(tiers or [])
    if not rows:
        return []
    table = []
    for r in rows:
        e, h = r["easy"], r["hard"]
        table.append({
            "id": r["env_id"], "noise": r["noise"],
            "easy reset median us": fmt_us(e["reset"]["median"]), "easy reset p90 us": fmt_us(e["reset"]["p90"]),
            "hard reset median us": fmt_us(h["reset"]["median"]), "hard reset p90 us": fmt_us(h["reset"]["p90"]),
            "reset hard/easy": f"{r['reset_x']:.2f}x",
            "easy step median us": fmt_us(e["step"]["median"]), "easy step p90 us": fmt_us(e["step"]["p90"]),
            "hard step median us": fmt_us(h["step"]["median"]), "hard step p90 us": fmt_us(h["step"]["p90"]),
            "step hard/easy": f"{r['step_x']:.2f}x",
            "resets (easy, hard)": f"{e['reset']['n']:,}, {h['reset']['n']:,}",
            "steps (easy, hard)": f"{e['step']['n']:,}, {h['step']['n']:,}",
            "median reset": verdict(r["reset_x"], targets.TIER_X, "x", lambda v: f"{v:.2f}"),
            "median step": verdict(r["step_x"], targets.TIER_X, "x", lambda v: f"{v:.2f}"),
        })
    return ["### The hard tier beside the easy one (every agent and split pooled)", "",
            "Each tier's figures are its own cells' calls. Target: the hard tier's median reset and median step "
            f"<= {targets.TIER_X:g}x the easy tier's (p90 shown, not judged).", "", *md_table(table), ""]
