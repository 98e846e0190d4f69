#!/usr/bin/env python3
"""Generates lte-driving.trace: a driving LTE-like downlink as a mahimahi delivery-opportunity
trace (one line per opportunity of one 1500 B packet, its time in ms), since recorded sets cannot
be redistributed here.

The process (every number is a parameter below):
- the rate is log-normal around MEAN_MBIT: its logarithm is a discretised Ornstein-Uhlenbeck
  process (an AR(1) in steps of SLOT_MS: x <- x*a + sigma*sqrt(1-a^2)*N(0,1), a = exp(-SLOT/TAU)),
  so fades last about TAU_MS and the rate's spread is SIGMA (of ln rate);
- handovers come as a Poisson process (mean gap HANDOVER_EVERY_S); each is a gap with no
  opportunities, uniform in HANDOVER_MS;
- within a slot the opportunities follow the rate exactly: each ms adds rate × 1 ms of credit, and
  an opportunity is written whenever 1500 B of credit have built up (mahimahi's own traces have
  this fine structure; the scheduler's bursts are not modelled).

Run: python3 gen_lte_driving.py > lte-driving.trace (deterministic: SEED).
"""
from __future__ import annotations

import math
import random
import sys

SEED = 31
PERIOD_S = 60
SLOT_MS = 100
MEAN_MBIT = 6.0
SIGMA = 0.7             # of ln(rate): the middle two thirds lie in about [3, 12] Mbit/s
TAU_MS = 2000           # fade correlation time
HANDOVER_EVERY_S = 15.0
HANDOVER_MS = (50, 300)
OPPORTUNITY_BITS = 1500 * 8


def rates(rng: random.Random) -> list[float]:
    """bit/s per slot of the period."""
    a = math.exp(-SLOT_MS / TAU_MS)
    x, out = 0.0, []
    median = MEAN_MBIT * 1e6 * math.exp(-SIGMA ** 2 / 2)     # so that the mean is MEAN_MBIT
    for _ in range(PERIOD_S * 1000 // SLOT_MS):
        x = a * x + SIGMA * math.sqrt(1 - a * a) * rng.gauss(0.0, 1.0)
        out.append(median * math.exp(x))
    return out


def handovers(rng: random.Random) -> list[tuple[int, int]]:
    """(start ms, end ms) of the gaps."""
    gaps, t = [], 0.0
    while True:
        t += rng.expovariate(1.0 / HANDOVER_EVERY_S)
        if t * 1000 >= PERIOD_S * 1000 - HANDOVER_MS[1]:
            return gaps
        start = int(t * 1000)
        gaps.append((start, start + rng.randint(*HANDOVER_MS)))


def opportunities(slot_rates: list[float], gaps: list[tuple[int, int]]) -> list[int]:
    times, credit = [], 0.0
    for ms in range(1, PERIOD_S * 1000 + 1):
        if any(s <= ms < e for s, e in gaps):
            credit = 0.0
            continue
        credit += slot_rates[(ms - 1) // SLOT_MS] / 1000
        while credit >= OPPORTUNITY_BITS:
            credit -= OPPORTUNITY_BITS
            times.append(ms)
    if not times or times[-1] != PERIOD_S * 1000:
        times.append(PERIOD_S * 1000)    # the last line is the period: mahimahi wraps there
    return times


def main() -> None:
    rng = random.Random(SEED)
    slot_rates = rates(rng)
    times = opportunities(slot_rates, handovers(rng))
    sys.stdout.write("".join(f"{t}\n" for t in times))


if __name__ == "__main__":
    main()
