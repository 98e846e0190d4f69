"""The report's table of flent flows (analysis/metrics/flent.py): per cell, flow and Flent data
series the medians over the replications of each one's sample count, mean, median and 95th
percentile."""
from __future__ import annotations

import re

from analysis.aggregate.run_analysis import CellResult
from analysis.report.metric_names import matching
from analysis.report.table import Cell, Table, count

_SERIES = re.compile(r"^(?P<flow>[^.]+)\.flent\.(?P<series>[^.]+)\.n$")


def flent_table(cells: list[CellResult]) -> Table | None:
    """None when no cell has a flent flow's series."""
    rows: list[list[Cell]] = []
    for c, m in matching(cells, _SERIES):
        prefix = f"{m['flow']}.flent.{m['series']}"
        rows.append([c.cell, m["flow"], m["series"], count(c.median(f"{prefix}.n")),
                     *(c.median(f"{prefix}.{k}") for k in ("mean", "median", "p95"))])
    if not rows:
        return None
    return Table("Flent's data series", ["cell", "flow", "series", "samples", "mean", "median",
                                         "95th percentile"], rows,
                 "From each replication's Flent data file (<test>-<time>.<flow>.flent.gz, in Flent's own "
                 "units: ms for its ping series): its tools' measurements, not the samples Flent interpolates "
                 "for its plots; medians over replications of each one's value. Open the files with Flent "
                 "itself for its plots (flent -i FILE -p PLOT).")
