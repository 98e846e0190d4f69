"""Aggregation across replications and fairness.

Percentiles use linear interpolation between the closest ranks (Hyndman & Fan type 7,
numpy's default): for sorted x[0..n-1], p-th percentile = x[k] + f * (x[k+1] - x[k]) with
k + f = p/100 * (n - 1).

Confidence interval of the median: percentile bootstrap. B = 2000 resamples of the n values
(drawn with replacement), the median of each, and the 2.5th and 97.5th percentiles (type 7)
of those medians give the 95 % interval. The resample indices come from
`numpy.random.default_rng([BOOTSTRAP_SEED, n])`, so an interval depends only on the values:
the same values give the same interval in every run, cell and metric. No interval for
fewer than 3 values (every resample of 1 or 2 values spans just the values)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 2004
CI_LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Summary:
    n: int          # replications with a value
    failed: int     # replications that failed or had no value: counted, not dropped
    min: float | None
    p25: float | None
    median: float | None
    p75: float | None
    max: float | None
    mean: float | None
    median_ci_low: float | None = None    # 95 % bootstrap interval of the median
    median_ci_high: float | None = None
    censored: int = 0   # of the n, times beyond the timeout (inf: analysis/metrics/censoring.py)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    if not sorted_values:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p}: expected 0..100")
    return float(_type7(np.asarray(sorted_values, dtype=float), np.asarray([p]))[0])


def _type7(x: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """Type-7 percentiles of sorted x, where x may end in inf (a censored value,
    analysis/metrics/censoring.py): between a number and inf the percentile is inf, at inf's own
    rank too, and never NaN (numpy's own interpolation gives NaN there)."""
    pos = ps / 100 * (len(x) - 1)
    k = np.floor(pos).astype(int)
    f = pos - k
    a, b = x[k], x[np.minimum(k + 1, len(x) - 1)]
    with np.errstate(invalid="ignore"):
        between = np.where(np.isinf(b), math.inf, a + f * (b - a))
    return np.where((f == 0) | (a == b), a, between)


def summarize(values: Sequence[float | None], failed: int = 0) -> Summary:
    """Summary over replications; a None value (the replication failed or the metric was
    undefined) is counted in `failed`."""
    present = sorted(float(v) for v in values if v is not None)
    failed += sum(v is None for v in values)
    if not present:
        return Summary(0, failed, None, None, None, None, None, None)
    low, high = median_ci(present)
    return Summary(n=len(present), failed=failed, min=present[0],
                   p25=percentile(present, 25), median=percentile(present, 50),
                   p75=percentile(present, 75), max=present[-1],
                   mean=sum(present) / len(present), median_ci_low=low, median_ci_high=high,
                   censored=sum(v == math.inf for v in present))


@lru_cache(maxsize=64)
def _resamples(n: int) -> np.ndarray:
    """BOOTSTRAP_RESAMPLES rows of n indices into n sorted values, each row sorted (so
    that the median of a row of sorted values is its middle element or pair)."""
    rng = np.random.default_rng([BOOTSTRAP_SEED, n])
    rows = np.sort(rng.integers(0, n, size=(BOOTSTRAP_RESAMPLES, n)), axis=1)
    rows.setflags(write=False)
    return rows


def median_ci(values: Sequence[float], level: float = CI_LEVEL) -> tuple[float | None,
                                                                         float | None]:
    """The percentile-bootstrap interval of the median (module docstring); (None, None)
    for fewer than 3 values."""
    n = len(values)
    if n < 3:
        return None, None
    x = np.sort(np.asarray(values, dtype=float))
    picked = x[_resamples(n)]          # rows are sorted: x is sorted, the indices too
    half = n // 2
    medians = picked[:, half] if n % 2 else (picked[:, half - 1] + picked[:, half]) / 2
    tail = (1 - level) / 2 * 100
    low, high = _type7(np.sort(medians), np.asarray([tail, 100 - tail]))
    return float(low), float(high)


def jain_index(values: Sequence[float]) -> float | None:
    """(Σx)² / (n Σx²): 1 when all equal, k/n when k of n share equally and the rest get 0.
    None for no values or all zero."""
    if not values:
        return None
    total_sq = sum(x * x for x in values)
    if total_sq == 0:
        return None
    return sum(values) ** 2 / (len(values) * total_sq)


def sum_of_maxima(values_by_class: dict[str, Sequence[float | None]]) -> float:
    """The report's "Σ maximum drops": for each connection class the largest value over
    the replications, summed over the classes (classes without a value add nothing)."""
    total = 0.0
    for values in values_by_class.values():
        present = [v for v in values if v is not None]
        if present:
            total += max(present)
    return total
