"""How stable squall's verdicts are under a bootstrap over the replications
(validation/PROTOCOL.md, "Verdicts"): each cell's counted replications resampled with
replacement, the conclusions checked again, and per conclusion the share of resamples whose
verdict is the one of the data as measured. A verdict that a few replications decide (a
bimodal cell, a case near a tie) shows as a low share. The seed is fixed, so the report
regenerates byte for byte.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable

from analysis.aggregate.replication_values import ReplicationResult
from analysis.aggregate.run_analysis import CellResult
from analysis.aggregate.statistics import Summary, summarize

from .conclusions import category, cells_read, check_all
from .measures import cell_key, fitted_variant, measure
from .reference import RefRow

RESAMPLES = 100
SEED = 30


@dataclass(frozen=True)
class Stability:
    title: str
    verdict: str             # the category of the data as measured
    same: float              # share of resamples with that category
    resamples: int


class _Summaries(dict):
    """analysis' cell_summaries, each metric summarised when first asked for: the checks read a
    few of a cell's hundred metrics, and a resample summarised whole costs seconds."""

    def __init__(self, replications: list[ReplicationResult]):
        super().__init__()
        self.replications = replications
        self.names = {k for r in replications for k in r.values}

    def get(self, name, default=None):   # type: ignore[override]
        if name not in self.names:
            return default
        if not dict.__contains__(self, name):
            self[name] = summarize([r.values.get(name) if r.counts else None for r in self.replications])
        return self[name]

    def __contains__(self, name) -> bool:
        return name in self.names or dict.__contains__(self, name)


def resample_cell(cell: CellResult, rng: random.Random) -> CellResult:
    """The cell with its counted replications drawn with replacement (as many as it has)."""
    counted = [r for r in cell.replications if r.counts]
    drawn = [counted[rng.randrange(len(counted))] for _ in counted] if counted else []
    summaries: dict[str, Summary] = _Summaries(drawn)
    return CellResult(cell.cell, cell.labels, cell.flows, drawn, summaries)


def stability(reference: list[RefRow], studies: list[tuple[str, list[CellResult]]],
              resamples: int = RESAMPLES, seed: int = SEED) -> list[Stability]:
    measured = measure(studies)
    observed = [category(c.ours_holds for c in v.cases) for v in check_all(reference, measured)]
    read = cells_read(reference, measured)
    used = [(study, [c for c in cells if cell_key(study, c, "") in read and fitted_variant(c) is None])
            for study, cells in studies]
    rng = random.Random(seed)
    same = [0] * len(observed)
    for _ in range(resamples):
        drawn = [(study, [resample_cell(c, rng) for c in cells]) for study, cells in used]
        for i, v in enumerate(check_all(reference, measure(drawn))):
            same[i] += category(c.ours_holds for c in v.cases) == observed[i]
    titles = [v.title for v in check_all(reference, measured)]
    return [Stability(t, o, s / resamples, resamples) for t, o, s in zip(titles, observed, same)]


def stability_text(results: Iterable[Stability]) -> dict[str, str]:
    """title -> "holds in 97 % of 200 resamples" (nothing for a conclusion not measured)."""
    return {s.title: f"{s.verdict} in {100 * s.same:.0f} % of {s.resamples} resamples" for s in results
            if s.verdict != "not measured"}
