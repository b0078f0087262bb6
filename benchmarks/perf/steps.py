"""The best case: one repeated call per unit, interleaved, beside the floor, TextArena and GEM.

Every unit of `perf.subjects` (the floor's and the peers' step and reset; per AgentRL id, with
and without ``noise="medium"``: message step, tool step, reset) runs one short block per round,
round robin (the starting unit rotates each round), after one untimed warm-up round. Per unit:
the median of each block; the figure is the median of the block medians, min-max their range.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from perf import targets
from perf.machine import timer_overhead_ns
from perf.tables import fmt_us, md_table, ratio, verdict

PEERS = ("textarena", "gem")
PEER_NAMES = {"floor": "Gymnasium floor", "textarena": "TextArena", "gem": "GEM"}


def run(rounds: int, block: int, reset_block: int, ids: list[str] | None,
        log: Callable[..., None]) -> dict[str, Any]:
    """Time every unit; one row per unit, and the timer's own cost."""
    from perf.subjects import build_units

    log("[time] building units ...")
    units = build_units(ids)
    samples: dict[int, list[list[int]]] = {i: [] for i in range(len(units))}
    n_of = [reset_block if u.op == "reset" else block for u in units]
    log(f"[time] {len(units)} units, 1 warm-up + {rounds} rounds, blocks of {block} steps / {reset_block} resets")
    order = list(range(len(units)))
    for r in range(-1, rounds):
        t0 = time.perf_counter()
        k = r % len(order) if r >= 0 else 0
        for i in order[k:] + order[:k]:
            out = units[i].block(n_of[i])
            if r >= 0:
                samples[i].append(out)
        log(f"[time] round {r + 1}/{rounds} {'(warm-up) ' if r < 0 else ''}{time.perf_counter() - t0:.1f} s")
    rows = []
    for i, u in enumerate(units):
        meds = [statistics.median(b) / 1e3 for b in samples[i]]
        pooled = sorted(x for b in samples[i] for x in b)
        rows.append({
            "subject": u.subject, "kind": u.kind, "noise": u.noise or "off", "op": u.op, "what": u.what,
            "median_us": statistics.median(meds), "min_us": min(meds), "max_us": max(meds),
            "p90_us": pooled[int(0.9 * (len(pooled) - 1))] / 1e3, "calls": len(pooled), "stats": u.stats,
        })
    return {"rows": rows, "timer_ns": timer_overhead_ns(), "rounds": rounds, "block": block,
            "reset_block": reset_block}


def find(rows: list[dict], subject: str, op: str, noise: str = "off") -> dict | None:
    """The row of `subject`'s `op` with `noise`, or None."""
    return next((r for r in rows if r["subject"] == subject and r["op"] == op and r["noise"] == noise), None)


def base_op(op: str) -> str:
    """``reset`` or ``step`` (a message or tool step is a step)."""
    return "reset" if op == "reset" else "step"


def target_us(op: str, noise: str) -> float:
    """The best case's absolute target of `op` with `noise`."""
    return targets.RESET_TARGET_US if op == "reset" else targets.STEP_TARGET_US[noise]


def x_floor(rows: list[dict], r: dict) -> float | None:
    """`r`'s median over the floor's median of the same operation (None for the floor itself)."""
    fl = find(rows, "floor", base_op(r["op"]))
    return r["median_us"] / fl["median_us"] if fl and r["subject"] != "floor" else None


# ------------------------------------------------------------------------------ baseline
def baseline_of(result: dict[str, Any], source: str) -> dict[str, Any]:
    """This run's best-case figures as a baseline file's content."""
    rows = result["rows"]
    return {"source": source, "rows": [
        {"subject": r["subject"], "noise": r["noise"], "op": r["op"], "median_us": round(r["median_us"], 3),
         "x_floor": None if x_floor(rows, r) is None else round(x_floor(rows, r), 2)}
        for r in rows if r["kind"] in ("agentrl", "floor")]}


def load_baseline(path: Path) -> dict[str, Any] | None:
    """A baseline file (`baseline_of`'s content), or None when there is none."""
    return json.loads(path.read_text("utf-8")) if path.exists() else None


def against_baseline(result: dict[str, Any], baseline: dict[str, Any]) -> list[dict[str, Any]]:
    """Each AgentRL row's ratio to the floor over the baseline's (rows the baseline lacks left out)."""
    rows = result["rows"]
    out = []
    for b in baseline["rows"]:
        r = find(rows, b["subject"], b["op"], b["noise"])
        if r is None or r["kind"] != "agentrl" or not b.get("x_floor"):
            continue
        now = x_floor(rows, r)
        out.append({"label": f"{r['subject']} noise={r['noise']} {r['op']}", "now": now, "then": b["x_floor"],
                    "change": now / b["x_floor"]})
    return out


# ------------------------------------------------------------------------------ results
def target_rows(result: dict[str, Any], baseline: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The best case's lines of the targets table."""
    ag = [r for r in result["rows"] if r["kind"] == "agentrl"]
    out = []
    if baseline:
        cmp = against_baseline(result, baseline)
        if cmp:
            worst = max(cmp, key=lambda c: c["change"])
            ok = sum(c["change"] <= targets.BEST_CASE_SLACK for c in cmp)
            out.append(targets.row(
                f"Best case: every row's ratio to the floor <= {targets.BEST_CASE_SLACK:g}x the baseline's",
                f"worst {worst['label']}: {worst['now']:,.1f}x the floor against {worst['then']:,.1f}x "
                f"({worst['change']:.2f}x); {ok}/{len(cmp)} within", verdict(
                    worst["change"], targets.BEST_CASE_SLACK, "x", lambda v: f"{v:.2f}")))
    for noise, label in (("off", "no noise"), ("medium", "`medium` noise")):
        sel = [r for r in ag if r["op"] != "reset" and r["noise"] == noise]
        if sel:
            t = targets.STEP_TARGET_US[noise]
            worst, best = max(sel, key=lambda r: r["median_us"]), min(sel, key=lambda r: r["median_us"])
            ok = sum(r["median_us"] <= t for r in sel)
            out.append(targets.row(
                f"Best case: median step <= {t:g} us, every id, {label}",
                f"worst {fmt_us(worst['median_us'])} us ({worst['subject']} {worst['op']}), best "
                f"{fmt_us(best['median_us'])} us ({best['subject']} {best['op']}); {ok}/{len(sel)} within",
                verdict(worst["median_us"], t, "us", fmt_us)))
    sel = [r for r in ag if r["op"] == "reset"]
    if sel:
        worst, best = max(sel, key=lambda r: r["median_us"]), min(sel, key=lambda r: r["median_us"])
        ok = sum(r["median_us"] <= targets.RESET_TARGET_US for r in sel)
        out.append(targets.row(
            f"Best case: median reset <= {targets.RESET_TARGET_US:g} us",
            f"worst {fmt_us(worst['median_us'])} us ({worst['subject']} noise={worst['noise']}), best "
            f"{fmt_us(best['median_us'])} us ({best['subject']} noise={best['noise']}); {ok}/{len(sel)} within",
            verdict(worst["median_us"], targets.RESET_TARGET_US, "us", fmt_us)))
    return out


def _peer_ratio(rows: list[dict], r: dict, peer: str) -> str:
    other = find(rows, peer, base_op(r["op"]))
    return ratio(r["median_us"], other["median_us"]) if other and r["subject"] != peer else "-"


def section(result: dict[str, Any], baseline: dict[str, Any] | None) -> list[str]:
    """The best-case table and what each timed call is."""
    rows = result["rows"]
    cmp = {c["label"]: c for c in against_baseline(result, baseline)} if baseline else {}
    table = []
    for r in rows:
        tgt = res = "-"
        if r["kind"] == "agentrl":
            t = target_us(r["op"], r["noise"])
            tgt, res = f"<= {t:g} us", verdict(r["median_us"], t, "us", fmt_us)
        c = cmp.get(f"{r['subject']} noise={r['noise']} {r['op']}")
        table.append({
            "subject": PEER_NAMES.get(r["subject"], r["subject"]), "noise": r["noise"], "operation": r["op"],
            "median us": fmt_us(r["median_us"]), "min-max us": f"{fmt_us(r['min_us'])}-{fmt_us(r['max_us'])}",
            "p90 us": fmt_us(r["p90_us"]), "ops/s": f"{1e6 / r['median_us']:,.0f}",
            "x floor": ratio(r["median_us"], (find(rows, "floor", base_op(r["op"])) or {}).get("median_us"))
            if r["subject"] != "floor" else "-",
            "x TextArena": _peer_ratio(rows, r, "textarena"), "x GEM": _peer_ratio(rows, r, "gem"),
            "x floor / baseline's": f"{c['change']:.2f}x" if c else "-",
            "target": tgt, "result": res,
        })
    o = ["## Best case: one repeated call (interleaved, one process)", "",
         "What the earlier `make perf` measured, kept as the best case: one repeated read-only call with no "
         "arguments and one repeated sentence, never a whole episode (those are the real-episode tables above). "
         f"One warm-up round, then {result['rounds']} rounds; each round runs one block of every unit "
         f"({result['block']} steps or {result['reset_block']} resets; the starting unit rotates). Each call is "
         f"timed alone with `perf_counter_ns` (the timer's own {result['timer_ns']:.0f} ns is in every figure "
         "alike); resets between steps are untimed and no timed step ends an episode (noise aside). *median* is "
         "the median of the block medians, *min-max* their range, *p90* over all calls; ops/s = 1 / median. "
         "Ratios: this median over the floor's, TextArena's and GEM's median of the same operation (step or "
         "reset); *x floor / baseline's*: that ratio over the baseline's"
         + (f" ({baseline['source']})" if baseline else "") + ".", ""]
    o += md_table(table)
    o += ["", "What each timed call is:", ""]
    seen = set()
    for r in rows:
        key = (r["subject"] if r["kind"] != "agentrl" else "AgentRL/*", r["op"])
        if key not in seen:
            seen.add(key)
            o.append(f"- {PEER_NAMES.get(key[0], key[0])} {r['op']}: `{r['what']}`")
    for r in rows:
        c = r["stats"].get("counts", {})
        if r["op"] == "step:tool":
            o.append(f"- {r['subject']} noise={r['noise']} tool steps: {c['steps']} steps over {c['episodes']} "
                     f"episodes, {c['valid']}/{c['calls']} calls valid, {c['injected']} with an injected fault, "
                     f"{c['ended']} steps ended an episode; calls used: " + "; ".join(
                         f"{k} x{v}" for k, v in sorted(r["stats"]["chosen"].items(), key=lambda kv: -kv[1])[:3]))
        elif r["op"] == "step:message" and c.get("ended"):
            o.append(f"- {r['subject']} noise={r['noise']} message steps: {c['ended']} of {c['steps']} ended an "
                     "episode (noise: simulated-time budget)")
    return o + [""]
