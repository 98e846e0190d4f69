"""Signed bias: is squall off to one side of the tables? (validation/PROTOCOL.md, "Statistics")

The median |ln r| says how far squall is from the tables, not in which direction: a family
where squall is 20 % faster everywhere and one where it is 20 % off either way look alike.
The signed median ln r, its bootstrap 95 % interval (the comparisons resampled with
replacement, a fixed seed so the report regenerates byte for byte) and the shares above and
below 0 say which it is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
SEED = 30          # issue 30; any fixed seed: the interval must not change between renders


@dataclass(frozen=True)
class SignedBias:
    median_ln: float
    low: float              # bootstrap 95 % interval of the median
    high: float
    above: float            # share of ln r > 0 (squall higher than the table)
    below: float            # share of ln r < 0


def signed_bias(logs: list[float], resamples: int = RESAMPLES, seed: int = SEED) -> SignedBias | None:
    """`logs`: ln(squall / reference) per compared value, ±inf allowed (a transfer unfinished
    at the deadline against a finite reference); None without values."""
    if not logs:
        return None
    x = np.asarray(logs, dtype=float)
    rng = np.random.default_rng(seed)
    medians = np.median(x[rng.integers(0, len(x), size=(resamples, len(x)))], axis=1)
    low, high = np.percentile(medians, [2.5, 97.5], method="lower")
    return SignedBias(float(np.median(x)), float(low), float(high),
                      float(np.mean(x > 0)), float(np.mean(x < 0)))


def signed_log(ratio: float) -> float:
    """ln r, with 0 -> -inf and inf -> +inf."""
    if ratio == 0:
        return -math.inf
    return math.inf if math.isinf(ratio) else math.log(ratio)
