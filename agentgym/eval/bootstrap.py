"""The percentile bootstrap behind every confidence interval of `agentgym.eval.metrics`.

Units (episodes, or tasks for pass^k) are resampled with replacement. A resample is held as a
row of unit counts (how often each unit was drawn), so a statistic is a function of a
``(b, n)`` count matrix that computes ``b`` resamples at once: a mean is ``W @ x / n``, a pooled
ratio ``(W @ num) / (W @ den)``, and the Kaplan-Meier statistics weight each fault by its
episode's count. Every statistic of one call sees the same resamples (`Resamples`), so a
difference of two statistics over paired units is resampled pairwise.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

__all__ = ["Resamples", "Stat", "Linear", "interval", "mean_stat", "ratio_stat", "f1_stat", "minus", "km_stats",
           "km_point", "aggregate", "bootstrap_ci", "NO_INTERVAL", "NO_VALUE"]

#: A statistic: a ``(b, n)`` matrix of unit counts -> ``(b,)`` values (NaN where undefined).
Stat = Callable[[np.ndarray], np.ndarray]
#: The aggregate of a statistic with no value (no units, or undefined).
NO_VALUE: dict[str, object] = {"value": None, "ci": [None, None], "n": 0}
_QUANTILE_EPS = 1e-9
# Bound the working arrays of one block to about this many cells.
_BLOCK_CELLS = 2_000_000


class Resamples:
    """`n_boot` resamples of `n` units, drawn from ``numpy.random.Generator(PCG64(seed))`` and
    handed out in blocks of count matrices (the same blocks on every pass).

    Args:
        n: units.
        n_boot: resamples.
        seed: the generator's seed.
        width: the widest per-unit expansion a statistic makes (faults per block row): blocks
            are sized so that ``rows * max(n, width)`` stays near a fixed number of cells.
    """

    def __init__(self, n: int, n_boot: int, seed: int, width: int = 0) -> None:
        if n_boot < 1:
            raise ValueError(f"n_boot must be positive, got {n_boot}")
        self.n, self.n_boot, self.seed = n, n_boot, seed
        self.rows = max(1, _BLOCK_CELLS // max(n, width, 1))

    def blocks(self) -> Iterator[np.ndarray]:
        """The count matrices, ``(rows, n)`` each, together `n_boot` rows."""
        rng = np.random.Generator(np.random.PCG64(self.seed))
        n, done = self.n, 0
        while done < self.n_boot:
            b = min(self.rows, self.n_boot - done)
            idx = rng.integers(0, n, size=(b, n))
            flat = (idx + (np.arange(b) * n)[:, None]).ravel()
            yield np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)
            done += b

    def evaluate(self, stats: Mapping[str, Stat]) -> dict[str, np.ndarray]:
        """Every statistic on every resample: ``{name: (n_boot,) values}``, in one pass.

        The weighted sums of every `Linear` statistic are taken in one matrix product per block
        (a product per vector would read the block once per vector)."""
        if self.n == 0:
            return {name: np.full(self.n_boot, np.nan) for name in stats}
        vectors: dict[int, np.ndarray] = {}
        for stat in stats.values():
            if isinstance(stat, Linear):
                vectors.update((id(v), v) for v in stat.vectors)
        column = {key: j for j, key in enumerate(vectors)}
        stacked = np.stack(list(vectors.values()), axis=1) if vectors else None
        parts: dict[str, list[np.ndarray]] = {name: [] for name in stats}
        for w in self.blocks():
            sums = w @ stacked if stacked is not None else None
            for name, stat in stats.items():
                if isinstance(stat, Linear):
                    value = stat.finish(*(sums[:, column[id(v)]] for v in stat.vectors))  # type: ignore[index]
                else:
                    value = stat(w)
                parts[name].append(np.asarray(value, dtype=np.float64).reshape(-1))
        return {name: np.concatenate(p) for name, p in parts.items()}


class Linear:
    """A statistic of weighted sums of per-unit values: ``finish(W @ v1, W @ v2, ...)``.

    Args:
        vectors: the per-unit values, one array each.
        finish: maps the resamples' sums, one ``(b,)`` array per vector, to ``(b,)`` values.
    """

    def __init__(self, vectors: Sequence[np.ndarray], finish: Callable[..., np.ndarray]) -> None:
        self.vectors = [np.asarray(v, dtype=np.float64) for v in vectors]
        self.finish = finish

    def __call__(self, w: np.ndarray) -> np.ndarray:
        return self.finish(*(w @ v for v in self.vectors))

    def __sub__(self, other: "Linear") -> "Linear":
        k = len(self.vectors)
        return Linear([*self.vectors, *other.vectors],
                      lambda *sums: self.finish(*sums[:k]) - other.finish(*sums[k:]))


def minus(a: Stat, b: Stat) -> Stat:
    """The statistic ``a - b`` (linear when both are, so it shares the batched products)."""
    if isinstance(a, Linear) and isinstance(b, Linear):
        return a - b
    return lambda w: a(w) - b(w)


def interval(stats: np.ndarray, alpha: float) -> tuple[float, float]:
    """The percentile interval of the finite values of `stats` ((nan, nan) when there are none)."""
    finite = stats[np.isfinite(stats)]
    if finite.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.percentile(finite, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lo), float(hi))


def aggregate(value: float | None, ci: tuple[float, float], n: int) -> dict[str, object]:
    """``{"value", "ci": [lo, hi], "n"}``; a missing or non-finite value has no interval."""
    def clean(x: float | None) -> float | None:
        return None if x is None or not math.isfinite(x) else float(x)
    v = clean(value)
    return {"value": v, "ci": [clean(ci[0]), clean(ci[1])] if v is not None else [None, None], "n": int(n)}


def mean_stat(values: np.ndarray) -> Linear:
    """The mean of per-unit values (each resample holds as many units as the sample)."""
    n = max(len(values), 1)
    return Linear([values], lambda total: total / n)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def ratio_stat(num: np.ndarray, den: np.ndarray) -> Linear:
    """The pooled ratio sum(num) / sum(den); NaN in a resample whose denominators sum to 0."""
    return Linear([num, den], _ratio)


def f1_stat(p_num: np.ndarray, p_den: np.ndarray, r_num: np.ndarray, r_den: np.ndarray) -> Linear:
    """The harmonic mean of two pooled ratios (0 when both are 0; NaN when either is undefined)."""
    def finish(pn: np.ndarray, pd: np.ndarray, rn: np.ndarray, rd: np.ndarray) -> np.ndarray:
        p, r = _ratio(pn, pd), _ratio(rn, rd)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)
        return np.where(np.isnan(p) | np.isnan(r), np.nan, out)
    return Linear([p_num, p_den, r_num, r_den], finish)


def _km_curve(times: np.ndarray, events: np.ndarray, unit: np.ndarray,
              w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kaplan-Meier survival after each distinct time, per resample.

    Returns ``(u, s, total)``: the distinct times (m,), the survival just after each (b, m), and
    the weight of all faults per resample (b,). A censoring tied with an event is still at risk
    at that time (events come first).
    """
    order = np.argsort(times, kind="stable")
    t, e, ep = times[order], events[order].astype(np.float64), unit[order]
    u, start = np.unique(t, return_index=True)
    wf = w[:, ep]
    all_t = np.add.reduceat(wf, start, axis=1)
    ev_t = np.add.reduceat(wf * e, start, axis=1)
    at_risk = np.cumsum(all_t[:, ::-1], axis=1)[:, ::-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        hazard = np.where(at_risk > 0, ev_t / np.where(at_risk > 0, at_risk, 1.0), 0.0)
    return u, np.cumprod(1.0 - hazard, axis=1), all_t.sum(axis=1)


def km_stats(times: np.ndarray, events: np.ndarray, unit: np.ndarray, tau: float,
             q: float = 0.5) -> tuple[Stat, Stat]:
    """The Kaplan-Meier `q`-quantile and restricted mean up to `tau` of fault times, as stats.

    Args:
        times: per fault, the time to recovery, or to censoring for an unrecovered fault.
        events: per fault, True when it was recovered.
        unit: per fault, the index of its episode (the resampled unit).
        tau: the horizon of the restricted mean: the area under the survival curve on [0, tau],
            the curve staying at its last value past the last observed time.
        q: the quantile (0.5: the median): the smallest time at which the survival is at most
            ``1 - q``; NaN when it never falls that low (too few faults recovered).

    Returns:
        ``(quantile, restricted_mean)``, each NaN in a resample without faults.
    """
    last: list[object] = [None, None]  # the block last seen and its curve: both statistics reuse it

    def curve(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if last[0] is not w:
            last[0], last[1] = w, _km_curve(times, events, unit, w)
        return last[1]  # type: ignore[return-value]

    def quantile(w: np.ndarray) -> np.ndarray:
        if times.size == 0:
            return np.full(w.shape[0], np.nan)
        u, s, total = curve(w)
        below = s <= 1.0 - q + _QUANTILE_EPS
        out = np.where(below.any(axis=1), u[below.argmax(axis=1)], np.nan)
        return np.where(total > 0, out, np.nan)

    def restricted_mean(w: np.ndarray) -> np.ndarray:
        if times.size == 0:
            return np.full(w.shape[0], np.nan)
        u, s, total = curve(w)
        edges = np.minimum(np.append(u, tau), tau)
        area = edges[0] + (s * np.diff(edges)).sum(axis=1)
        return np.where(total > 0, area, np.nan)

    return quantile, restricted_mean


def km_point(times: np.ndarray, events: np.ndarray, tau: float, q: float = 0.5) -> tuple[float, float]:
    """The Kaplan-Meier `q`-quantile and restricted mean of one sample (NaN where undefined)."""
    if times.size == 0:
        return (math.nan, math.nan)
    quantile, restricted_mean = km_stats(times, events, np.zeros(times.size, dtype=np.int64), tau, q)
    ones = np.ones((1, 1))
    return float(quantile(ones)[0]), float(restricted_mean(ones)[0])


#: The interval of a statistic with nothing to measure.
NO_INTERVAL = (math.nan, math.nan)


def bootstrap_ci(
    values_or_records: Any,
    statistic: str | Callable[[Any], Any] = "mean",
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a statistic, resampling units (episodes, tasks).

    Args:
        values_or_records: either per-unit values (1-D array-like; 2-D with columns
            ``numerator, denominator`` for ``"ratio"``), or a sequence of records.
        statistic: for values, ``"mean"``, ``"ratio"`` (sum of numerators over sum of
            denominators) or a vectorised callable that maps resampled values of shape
            ``(b, n, ...)`` to ``(b,)``; for records, a callable ``list[record] -> float``,
            called once per resample (slow: for ad hoc statistics only).
        n_boot: number of resamples.
        seed: seed of the ``numpy.random.Generator(PCG64(seed))`` that draws them.
        alpha: the interval covers ``1 - alpha``.

    Returns:
        ``(lo, hi)``; ``(nan, nan)`` when there are no units or the statistic is undefined in
        every resample. Resamples where it is undefined (NaN) are left out.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    data = values_or_records
    if isinstance(data, Sequence) and data and isinstance(data[0], Mapping):
        if not callable(statistic):
            raise ValueError("a statistic over records must be a callable list[record] -> float")
        recs = list(data)
        rng = np.random.Generator(np.random.PCG64(seed))
        stats = [float(statistic([recs[i] for i in rng.integers(0, len(recs), size=len(recs))]))
                 for _ in range(n_boot)]
        return interval(np.asarray(stats, dtype=np.float64), alpha)
    arr = np.asarray(data, dtype=np.float64)
    n = arr.shape[0] if arr.ndim else 0
    if n == 0:
        return NO_INTERVAL
    if statistic == "mean":
        if arr.ndim != 1:
            raise ValueError(f"'mean' wants 1-D values, got shape {arr.shape}")
        stat = mean_stat(arr)
    elif statistic == "ratio":
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"'ratio' wants (n, 2) values (numerator, denominator), got shape {arr.shape}")
        stat = ratio_stat(arr[:, 0], arr[:, 1])
    elif callable(statistic):
        rng = np.random.Generator(np.random.PCG64(seed))
        stats = np.concatenate([np.asarray(statistic(arr[rng.integers(0, n, size=(min(500, n_boot - i), n))]),
                                           dtype=np.float64).reshape(-1) for i in range(0, n_boot, 500)])
        return interval(stats, alpha)
    else:
        raise ValueError(f"statistic must be 'mean', 'ratio' or a callable, got {statistic!r}")
    return interval(Resamples(n, n_boot, seed).evaluate({"s": stat})["s"], alpha)
