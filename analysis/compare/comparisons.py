"""Every (pair of cells, metric): its effect, its rank test and the p-value adjusted over all
of them (Holm), and what it says in words."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.compare.adjust import holm
from analysis.compare.effect import MIN_FOR_INTERVAL, Effect, effect
from analysis.compare.rank_test import mann_whitney_p
from analysis.compare.sides import Pair

ALPHA = 0.05
# a runs-table column's unit, by the suffix of its name (analysis/README.md, "runs")
UNITS = {"_s": "s", "_ms": "ms", "_Bps": "B/s", "_pct": "%", "_bps": "bit/s"}


def unit(metric: str) -> str:
    return next((u for suffix, u in UNITS.items() if metric.endswith(suffix)), "")


@dataclass(frozen=True)
class Comparison:
    pair: Pair
    metric: str
    a: list[float]
    b: list[float]
    effect: Effect
    p: float | None
    p_adjusted: float | None

    @property
    def verdict(self) -> str:
        e = self.effect
        if not e.has_interval:
            return (f"too few replications for an interval (n = {e.n_a} and {e.n_b}; "
                    f"needs {MIN_FOR_INTERVAL} a side)")
        shown = (self.p_adjusted is not None and self.p_adjusted < ALPHA
                 and not e.difference_low <= 0 <= e.difference_high)
        if not shown:
            return "no difference shown"
        return "B higher" if e.difference > 0 else "B lower"


def compare(pairs: list[Pair], metrics: list[str]) -> list[Comparison]:
    found = []
    for pair in pairs:
        for m in metrics:
            a, b = pair.a_run.metric_values(pair.a_cell, m), pair.b_run.metric_values(pair.b_cell, m)
            if a or b:
                found.append((pair, m, a, b))
    p = [mann_whitney_p(a, b) for _, _, a, b in found]
    return [Comparison(pair, m, a, b, effect(a, b), pi, adj)
            for (pair, m, a, b), pi, adj in zip(found, p, holm(p))]
