"""Bimodal cells shown whole: the page times of every replication beside the table's value.

A cell's median hides a split between fast and slow replications (r0 s+2s HTTP/1.0 baseline:
4 pages near 7 s, 5 at 32-86 s, one timeout), and a verdict resting on such a median rests on
how the replications fell. A cell is shown when its sorted page times have a gap of a factor
GAP or more with at least two replications on each side; the strip is a log-scaled line from
1 s to LOG_TOP s, `o` a replication (`O` two or more in one column), `R` the table's value,
`>` a page beyond the axis or unfinished.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from analysis.aggregate.run_analysis import CellResult

from .measures import cell_key
from .reference import Key

GAP = 2.0
WIDTH = 48
LOG_TOP = 320.0


@dataclass(frozen=True)
class Spread:
    key: Key
    values: tuple[float, ...]      # the counted replications' page times, sorted
    reference: float | None


def bimodal(values: list[float]) -> bool:
    v = sorted(values)
    return any(v[i + 1] >= GAP * v[i] for i in range(1, len(v) - 2) if v[i] > 0)


def page_times(study: str, cell: CellResult) -> tuple[Key, list[float]] | None:
    http = cell.flows_of("http")
    if not http:
        return None
    metric = "Time" if study == "iip" else "response_time"
    values = [v for r in cell.replications if r.counts
              and (v := r.values.get(f"{http[0].name}.response_time_s")) is not None]
    return cell_key(study, cell, metric), values


def spreads(studies: list[tuple[str, list[CellResult]]], reference: dict[Key, float | None],
            wanted: set[Key]) -> list[Spread]:
    """The bimodal cells among `wanted` (cell keys, metric "") with their reference values."""
    out = []
    for study, cells in studies:
        for cell in cells:
            found = page_times(study, cell)
            if found is None or replace(found[0], metric="") not in wanted:
                continue
            key, values = found
            if len(values) >= 4 and bimodal(values):
                out.append(Spread(key, tuple(sorted(values)), reference.get(key)))
    return sorted(out, key=lambda s: (s.key.study, s.key.link, s.key.variant, s.key.workload, s.key.http))


def _column(x: float) -> int:
    if not math.isfinite(x) or x >= LOG_TOP:
        return WIDTH
    return max(0, min(WIDTH - 1, int(WIDTH * math.log(max(x, 1.0)) / math.log(LOG_TOP))))


def strip(values: tuple[float, ...], reference: float | None) -> str:
    line = [" "] * (WIDTH + 1)
    for x in values:
        c = _column(x)
        line[c] = ">" if c == WIDTH else ("O" if line[c] in "oO" else "o")
    if reference is not None:
        line[_column(reference)] = "R"
    return "[" + "".join(line[:WIDTH]) + "]" + line[WIDTH].strip()
