"""Numbers as the results print them, and Markdown tables rendered by pandas (`DataFrame.to_markdown`)."""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import numpy as np

#: A cell that reads as a number (with its unit or a thousands separator) is right-aligned.
_NUMERIC = re.compile(r"^[-+]?[\d,]*\.?\d+(e[-+]?\d+)?\s?(x|%|us|ms|s|KB|ns)?$|^-$")


def fmt_us(x: float) -> str:
    """Microseconds with three significant digits or so, thousands separated."""
    return f"{x:,.2f}" if x < 10 else f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


def ratio(a: float | None, b: float | None) -> str:
    """``a / b`` as ``12.3x`` (``1.23x`` below 10), or ``-`` when either is missing or zero."""
    if not a or not b:
        return "-"
    return f"{a / b:,.0f}x" if a / b >= 100 else f"{a / b:,.1f}x" if a / b >= 10 else f"{a / b:.2f}x"


def verdict(value: float, target: float, unit: str, fmt: Callable[[float], str] | None = None) -> str:
    """``pass``, or ``**MISS** by <excess> <unit> (<n>x the target)`` for a figure that must stay at or
    below `target` (a unit ``x`` is written on the number: ``by 51x``)."""
    fmt = fmt or (lambda v: f"{v:.3g}")
    if value <= target:
        return "pass"
    excess = f"{fmt(value - target)}x" if unit == "x" else f"{fmt(value - target)} {unit}"
    return f"**MISS** by {excess} ({value / target:.1f}x the target)"


def quantiles_us(ns: Iterable[int]) -> dict[str, float]:
    """Median, p90 and p99 (linear interpolation) of durations in ns, in us; n the count."""
    arr = np.fromiter(ns, dtype=np.float64)
    if not arr.size:
        return {"n": 0, "median": float("nan"), "p90": float("nan"), "p99": float("nan")}
    p50, p90, p99 = np.percentile(arr, (50, 90, 99)) / 1e3
    return {"n": int(arr.size), "median": float(p50), "p90": float(p90), "p99": float(p99)}


def md_table(rows: list[dict[str, Any]]) -> list[str]:
    """A Markdown table of `rows` (one dict per row, keys are the headers, values printed as given):
    columns whose every cell reads as a number are right-aligned. Returns its lines."""
    import pandas as pd

    if not rows:
        return []
    df = pd.DataFrame(rows).fillna("-").astype(str)
    df = df.apply(lambda col: col.str.replace("|", r"\|", regex=False))
    align = ["right" if all(_NUMERIC.match(v.strip()) for v in df[c]) else "left" for c in df.columns]
    text = df.to_markdown(index=False, tablefmt="pipe", colalign=align, disable_numparse=True)
    return text.splitlines()
