"""The Mann-Whitney U test (Wilcoxon rank-sum), two-sided, from its definition.

U_B = R_B − n_b (n_b + 1) / 2, R_B the sum of B's ranks in the pooled values (ties get the
mean of their ranks). Without ties and with n_a + n_b ≤ EXACT_UP_TO the p-value is exact: U's
distribution under H0 (every split of the ranks equally likely) is counted with the
generating function of the Gaussian binomial coefficient, in integers. Otherwise the normal
approximation with the tie correction of the variance and a continuity correction of ½:
z = (|U − n_a n_b / 2| − ½) / σ, σ² = n_a n_b / 12 · ((n + 1) − Σ(t³ − t) / (n (n − 1))).
p = 2 · min(P(U ≤ u), P(U ≥ u)), at most 1. A side without values has no p-value."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np

EXACT_UP_TO = 60


def _ranks(pooled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks (1-based) of the pooled values and the sizes of their groups of ties."""
    order = np.argsort(pooled, kind="mergesort")
    ranks = np.empty(len(pooled))
    _, first, counts = np.unique(pooled[order], return_index=True, return_counts=True)
    for start, count in zip(first, counts):
        ranks[order[start:start + count]] = start + (count + 1) / 2
    return ranks, counts


@lru_cache(maxsize=256)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) splits give U = 0 … m n: the coefficients of
    prod_{i=1..m} (1 − q^(n+i)) / (1 − q^i)."""
    poly = [1] + [0] * (m * n)
    for i in range(1, m + 1):
        for k in range(m * n, n + i - 1, -1):        # times (1 − q^(n+i))
            poly[k] -= poly[k - n - i]
        for k in range(i, m * n + 1):                # divided by (1 − q^i), exactly
            poly[k] += poly[k - i]
    return tuple(poly)


def _exact(u: float, m: int, n: int) -> float:
    counts = _u_counts(m, n)
    total = math.comb(m + n, m)
    k = int(round(u))
    below, above = sum(counts[:k + 1]), sum(counts[k:])
    return min(1.0, 2 * min(below, above) / total)


def _normal(u: float, m: int, n: int, ties: np.ndarray) -> float:
    total = m + n
    tie_term = float(np.sum(ties.astype(float) ** 3 - ties)) / (total * (total - 1))
    variance = m * n / 12 * ((total + 1) - tie_term)
    if variance <= 0:
        return 1.0                                    # every value equal
    z = max(abs(u - m * n / 2) - 0.5, 0) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The two-sided p-value of the hypothesis that A and B come from one distribution."""
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        return None
    ranks, ties = _ranks(np.asarray([*a, *b], dtype=float))
    u = float(ranks[m:].sum()) - n * (n + 1) / 2
    if m + n <= EXACT_UP_TO and np.all(ties == 1):
        return _exact(u, m, n)
    return _normal(u, m, n, ties)
