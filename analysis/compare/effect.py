"""The effect of B against A on one metric: the difference (B − A) and the ratio (B / A) of
the medians, each with a percentile-bootstrap interval.

Bootstrap: BOOTSTRAP_RESAMPLES (2000) times, A's n_a values and B's n_b values are each
resampled with replacement, independently (from their sorted values); the statistic of each pair of resamples (the
difference or the ratio of their medians) is kept, and its 2.5th and 97.5th percentiles
(type 7, as analysis/aggregate/statistics.py) make the 95 % interval. The indices come from
`numpy.random.default_rng([COMPARE_SEED, n_a, n_b])`, so an interval depends on the values
only: the same comparison gives the same interval on every machine. No interval with fewer
than MIN_FOR_INTERVAL values on a side (every resample of 1 or 2 values spans just the
values); no ratio when A's median, or a resample's, is 0."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from analysis.aggregate.statistics import BOOTSTRAP_RESAMPLES, CI_LEVEL, percentile

COMPARE_SEED = 2004
MIN_FOR_INTERVAL = 3


@dataclass(frozen=True, slots=True)
class Effect:
    n_a: int
    n_b: int
    median_a: float | None
    median_b: float | None
    difference: float | None          # median B − median A
    difference_low: float | None      # its 95 % bootstrap interval
    difference_high: float | None
    ratio: float | None               # median B / median A
    ratio_low: float | None
    ratio_high: float | None

    @property
    def has_interval(self) -> bool:
        return self.difference_low is not None


def _median(values: Sequence[float]) -> float | None:
    return percentile(sorted(values), 50) if values else None


def _interval(statistic: np.ndarray) -> tuple[float | None, float | None]:
    if not np.all(np.isfinite(statistic)):
        return None, None          # a censored time (inf) or a zero median in a resample
    tail = (1 - CI_LEVEL) / 2 * 100
    low, high = np.percentile(statistic, [tail, 100 - tail])
    return float(low), float(high)


def _resampled_medians(values: Sequence[float], rng: np.random.Generator) -> np.ndarray:
    x = np.sort(np.asarray(values, dtype=float))   # the order the runs table gave is no input
    picked = x[rng.integers(0, len(x), size=(BOOTSTRAP_RESAMPLES, len(x)))]
    return np.median(picked, axis=1)


def _ratio(b: float | None, a: float | None) -> float | None:
    if a is None or b is None or a == 0 or not math.isfinite(a) or not math.isfinite(b):
        return None
    return b / a


def effect(a: Sequence[float], b: Sequence[float]) -> Effect:
    """B against A (module docstring); values may hold inf (a time beyond the timeout)."""
    median_a, median_b = _median(a), _median(b)
    difference = None if median_a is None or median_b is None else median_b - median_a
    if difference is not None and not math.isfinite(difference):
        difference = None
    intervals: list[float | None] = [None] * 4
    if min(len(a), len(b)) >= MIN_FOR_INTERVAL:
        rng = np.random.default_rng([COMPARE_SEED, len(a), len(b)])
        ma, mb = _resampled_medians(a, rng), _resampled_medians(b, rng)
        with np.errstate(divide="ignore", invalid="ignore"):
            intervals = [*_interval(mb - ma),
                         *(_interval(mb / ma) if np.all(ma != 0) else (None, None))]
    return Effect(len(a), len(b), median_a, median_b, difference, intervals[0], intervals[1],
                  _ratio(median_b, median_a), intervals[2], intervals[3])
